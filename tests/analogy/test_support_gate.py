"""At alpha 0.5 a look-alike from the cue's own domain whose structure maps clearly less well does not pass the story
shaped like the cue on its surface lead alone (the structural support's power, `strategies.SUPPORT_POWER`, session 20).
No models needed: the two parts of a 40-candidate pool as the story sets give them."""

from __future__ import annotations

import pytest

from engine.recall.strategies import SUPPORT_POWER, pool_parts, structural_support


def _pool(look_structure: float, look_surface: float) -> dict[str, float]:
    """Thirty-eight other stories (cosines 0.10-0.40, systematicity 0.05-0.24), the analog from another domain
    (cosine 0.25, the best structure 0.35) and a look-alike from the cue's domain: relevance at alpha 0.5."""
    names = [f"m{n}" for n in range(38)]
    surface = {m: 0.10 + 0.008 * n for n, m in enumerate(names)} | {"analog": 0.25, "look": look_surface}
    structure = {m: 0.05 + 0.005 * n for n, m in enumerate(names)} | {"analog": 0.35, "look": look_structure}
    e, s = pool_parts(surface, structure, 0.5)
    return {m: 0.5 * e[m] + 0.5 * s[m] for m in surface}


def test_a_look_alike_with_four_fifths_of_the_structure_does_not_pass_the_analog_on_two_units_of_surface() -> None:
    """A gardener who skipped feeding his roses to save money and lost the show, against a cafe owner who skipped
    cleaning the fridge to save time and failed the inspection (the analog: cosine 0.25, systematicity 0.35) and
    the same gardener who fed his roses and lost anyway (the look-alike: 0.2 cosine closer, 80% of the structure).
    With the support to the power 1 the look-alike kept 80% of its two-unit surface lead and ranked first; to the
    power 1.5 it keeps 72% and the analog ranks first."""
    relevance = _pool(0.28, 0.45)
    assert max(relevance, key=relevance.__getitem__) == "analog"
    assert structural_support({"analog": 0.35, "look": 0.28}, 0.5)["look"] == pytest.approx(0.8**SUPPORT_POWER)


def test_a_look_alike_that_maps_as_well_still_wins_on_its_surface() -> None:
    """Between structures that map about as well (the look-alike's 0.34 against the analog's 0.35) the surface still
    decides at alpha 0.5: the gate only weighs surface by structure, it does not replace it."""
    relevance = _pool(0.34, 0.45)
    assert max(relevance, key=relevance.__getitem__) == "look"


def test_the_gate_still_opens_towards_alpha_1() -> None:
    assert structural_support({"a": 0.35, "b": 0.28}, 0.95)["b"] > 0.98
    assert structural_support({"a": 0.35, "b": 0.28}, 0.05)["b"] < 0.02
