"""At alpha 0.5 a look-alike from the cue's own domain whose structure maps clearly less well does not pass the story
shaped like the cue on its surface lead alone (the structural support, `strategies.structural_support`: sessions 17
and 20 as a ratio to the pool's best to a power, session 21 as the gap to the best in the pool's standard deviations,
`strategies.SUPPORT_GAP`). No models needed: the two parts of a 40-candidate pool as the story sets give them."""

from __future__ import annotations

import math

import pytest

from engine.recall.strategies import SUPPORT_GAP, pool_parts, structural_support

OTHERS = {f"m{n}": (0.10 + 0.008 * n, 0.05 + 0.005 * n) for n in range(38)}  # cosines 0.10-0.40, systematicity to 0.24


def _pool(look_structure: float, look_surface: float, lift: float = 0.0) -> dict[str, float]:
    """Thirty-eight other stories, the analog from another domain (cosine 0.25, the best structure 0.35) and a
    look-alike from the cue's domain: relevance at alpha 0.5. `lift` is added to every candidate's systematicity."""
    surface = {m: e for m, (e, _) in OTHERS.items()} | {"analog": 0.25, "look": look_surface}
    structure = {m: s + lift for m, (_, s) in OTHERS.items()} | {"analog": 0.35 + lift, "look": look_structure + lift}
    e, s = pool_parts(surface, structure, 0.5)
    return {m: 0.5 * e[m] + 0.5 * s[m] for m in surface}


def test_a_look_alike_under_a_deviation_below_the_analog_does_not_pass_it_on_two_units_of_surface() -> None:
    """A gardener who skipped feeding his roses to save money and lost the show, against a cafe owner who skipped
    cleaning the fridge to save time and failed the inspection (the analog: cosine 0.25, systematicity 0.35) and
    the same gardener who fed his roses and lost anyway (the look-alike: 0.2 cosine closer, systematicity 0.30, 0.05
    below the analog where the pool's systematicity spreads 0.065). With the ratio to the best to the power 1.5
    (session 20) the look-alike kept 79% of its two-unit surface lead and ranked first; counted in the pool's
    deviations it keeps 32% and the analog ranks first."""
    relevance = _pool(0.30, 0.45)
    assert max(relevance, key=relevance.__getitem__) == "analog"
    assert 0.25 < structural_support({m: s for m, (_, s) in OTHERS.items()} | {"analog": 0.35, "look": 0.30},
                                     0.5)["look"] < 0.4


def test_the_gate_does_not_depend_on_how_high_the_pool_maps() -> None:
    """The same gaps in a pool whose structures all map 0.3 higher (longer stories with more told relations) gate the
    surface alike and rank alike: a ratio to the best let the look-alike keep more of its surface there (0.60 / 0.65:
    92%) than in the lower pool (0.30 / 0.35: 79%)."""
    low = {m: s for m, (_, s) in OTHERS.items()} | {"analog": 0.35, "look": 0.30}
    high = {m: s + 0.3 for m, s in low.items()}
    assert structural_support(high, 0.5) == pytest.approx(structural_support(low, 0.5))
    relevance = _pool(0.30, 0.45, lift=0.3)
    assert max(relevance, key=relevance.__getitem__) == "analog"


def test_a_look_alike_that_maps_as_well_still_wins_on_its_surface() -> None:
    """Between structures that map about as well (the look-alike's 0.34 against the analog's 0.35) the surface still
    decides at alpha 0.5: the gate only weighs surface by structure, it does not replace it."""
    relevance = _pool(0.34, 0.45)
    assert max(relevance, key=relevance.__getitem__) == "look"


def test_the_gate_still_opens_towards_alpha_1() -> None:
    pool = {"a": 0.35, "b": 0.28, "c": 0.10}
    unit = (sum((v - 0.73 / 3) ** 2 for v in pool.values()) / 3) ** 0.5
    assert structural_support(pool, 0.5)["b"] == pytest.approx(math.exp(-SUPPORT_GAP * 0.07 / unit))
    assert structural_support(pool, 0.95)["b"] > 0.9
    assert structural_support(pool, 0.05)["b"] < 0.02
