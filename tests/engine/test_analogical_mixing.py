"""How analogical recall mixes its two parts over the candidate pool at 0 < alpha < 1 (no models needed)."""

from __future__ import annotations

import math

import pytest

from engine.recall.strategies import pool_parts, pool_spread


def test_a_part_counts_in_its_pool_standard_deviations() -> None:
    spread = pool_spread({"a": 0.30, "b": 0.32, "c": 0.34, "d": 0.36})
    assert spread["a"] == 0.0 and spread["b"] == pytest.approx(spread["c"] - spread["b"])
    assert pool_spread({"a": 0.3, "b": 0.9}) == {"a": 0.3, "b": 0.9}  # too small a pool: as it was
    assert pool_spread({"a": 0.5, "b": 0.5, "c": 0.5}) == {"a": 0.5, "b": 0.5, "c": 0.5}  # no spread


def test_a_story_that_stands_out_on_structure_beats_the_top_of_an_even_surface() -> None:
    """A pool of 40 (top_k 10): surface similarity evenly spread; one candidate's structure far above the rest.
    Min-max makes the two tops equal (1 on one part each), so the surface leader wins on its slightly better
    structure; counted in standard deviations, the structural outlier leads."""
    names = [f"m{n}" for n in range(40)]
    surface = {m: 0.30 + 0.005 * n for n, m in enumerate(names)}  # m39 looks most like the cue
    structure = {m: 0.10 for m in names} | {"m0": 0.60, "m39": 0.20}  # m0 is shaped like it
    minmax = {m: 0.5 * (surface[m] - 0.30) / 0.195 + 0.5 * (structure[m] - 0.10) / 0.5 for m in names}
    assert max(minmax, key=minmax.__getitem__) == "m39"
    e, s = pool_parts(surface, structure, 0.5)
    relevance = {m: 0.5 * e[m] + 0.5 * s[m] for m in names}
    assert max(relevance, key=relevance.__getitem__) == "m0"
    assert max(relevance.values()) == pytest.approx(1.0) and min(relevance.values()) >= 0.0


def test_in_a_small_pool_a_tiny_surface_gap_does_not_outweigh_a_clear_structural_gap() -> None:
    """Four candidates whose cosines lie within 0.03 of each other: counted in the pool's own standard deviation
    (0.011) the 0.03 surface lead was 2.7 units, more than the 0.3 structural lead (2.4); with the floor under
    the unit (POOL_SPREAD_FLOOR) it is 1 unit and the candidate shaped like the cue ranks first."""
    from engine.recall.strategies import POOL_SPREAD_FLOOR

    surface = {"shaped": 0.52, "looks": 0.55, "c": 0.53, "d": 0.54}
    structure = {"shaped": 0.50, "looks": 0.20, "c": 0.22, "d": 0.21}
    e, s = pool_parts(surface, structure, 0.5)
    relevance = {m: 0.5 * e[m] + 0.5 * s[m] for m in surface}
    assert max(relevance, key=relevance.__getitem__) == "shaped"
    assert pool_spread(surface)["looks"] == pytest.approx(0.03 / POOL_SPREAD_FLOOR)
    # a pool whose spread is above the floor is counted in its own standard deviation, as before
    wide = {"a": 0.1, "b": 0.3, "c": 0.5}
    assert pool_spread(wide)["c"] == pytest.approx(0.4 / (0.08 / 3) ** 0.5)


def test_a_surface_lead_under_a_tenth_of_cosine_does_not_outweigh_a_clear_structural_lead() -> None:
    """Forty-one stories whose cosines spread 0.3-0.42 (standard deviation 0.035): the story that looks most like
    the cue (0.08 above the one shaped like it) was 2.2 units ahead on surface against a 2.0-unit structural lead;
    counted in SURFACE_SPREAD_FLOOR units the surface lead is 0.8 and the shaped story ranks first."""
    from engine.recall.strategies import SURFACE_SPREAD_FLOOR

    names = [f"m{n}" for n in range(40)]
    surface = {m: 0.30 + 0.003 * n for n, m in enumerate(names)}
    surface["shaped"], names = 0.34, [*names, "shaped"]
    structure = {m: 0.20 + 0.002 * (n % 10) for n, m in enumerate(names)} | {"shaped": 0.36, "m39": 0.30}
    e, s = pool_parts(surface, structure, 0.5)
    relevance = {m: 0.5 * e[m] + 0.5 * s[m] for m in names}
    assert max(relevance, key=relevance.__getitem__) == "shaped"
    spread = pool_spread(surface, SURFACE_SPREAD_FLOOR)
    assert spread["m39"] - spread["shaped"] == pytest.approx((0.417 - 0.34) / SURFACE_SPREAD_FLOOR)
    # counted in the surface pool's own standard deviation, as before, the look-alike won
    e_old, s_old = pool_spread(surface), pool_spread(structure)
    old = {m: 0.5 * e_old[m] + 0.5 * s_old[m] for m in names}
    assert max(old, key=old.__getitem__) == "m39"


def test_surface_alone_does_not_carry_a_story_of_clearly_another_shape() -> None:
    """Forty stories: one shaped like the cue (systematicity 0.30, cosine 0.10: another domain) and one in the
    cue's own domain with a clearly other shape (0.09, cosine 0.66). Counted in standard deviations alone the
    look-alike's surface lead (5.6 units) outweighed the structural one (4.4); with the surface part scaled by
    the structural support (0.09 / 0.30) the story shaped like the cue ranks first at alpha 0.5."""
    from engine.recall.strategies import SURFACE_SPREAD_FLOOR

    names = [f"m{n}" for n in range(38)]
    surface = {m: 0.10 + 0.008 * n for n, m in enumerate(names)} | {"shaped": 0.10, "looks": 0.66}
    structure = {m: 0.05 + 0.003 * n for n, m in enumerate(names)} | {"shaped": 0.30, "looks": 0.09}
    e, s = pool_parts(surface, structure, 0.5)
    relevance = {m: 0.5 * e[m] + 0.5 * s[m] for m in surface}
    assert max(relevance, key=relevance.__getitem__) == "shaped"
    assert max(relevance.values()) == pytest.approx(1.0)
    # without the support the look-alike won
    e_old, s_old = pool_spread(surface, SURFACE_SPREAD_FLOOR), pool_spread(structure)
    old = {m: 0.5 * e_old[m] + 0.5 * s_old[m] for m in surface}
    assert max(old, key=old.__getitem__) == "looks"


def test_between_structures_that_map_about_as_well_the_surface_still_decides() -> None:
    surface = {"a": 0.20, "b": 0.50, "c": 0.30, "d": 0.10}
    structure = {"a": 0.40, "b": 0.38, "c": 0.10, "d": 0.05}
    e, s = pool_parts(surface, structure, 0.5)
    relevance = {m: 0.5 * e[m] + 0.5 * s[m] for m in surface}
    assert max(relevance, key=relevance.__getitem__) == "b"


def test_the_structural_support_opens_towards_alpha_1_and_closes_towards_0() -> None:
    from engine.recall.strategies import SUPPORT_GAP, structural_support

    structure = {"best": 0.6, "third": 0.2, "none": 0.0}
    unit = (sum((v - 0.8 / 3) ** 2 for v in structure.values()) / 3) ** 0.5  # the pool's standard deviation
    gap = 0.4 / unit  # "third" lies this many deviations below the best
    assert structural_support(structure, 0.5) == pytest.approx(
        {"best": 1.0, "third": math.exp(-SUPPORT_GAP * gap), "none": math.exp(-SUPPORT_GAP * 0.6 / unit)})
    assert structural_support(structure, 0.8)["third"] == pytest.approx(math.exp(-SUPPORT_GAP * 0.25 * gap))
    assert structural_support(structure, 0.2)["third"] == pytest.approx(math.exp(-SUPPORT_GAP * 4 * gap))
    assert structural_support({"a": 0.0, "b": 0.0}, 0.5) == {"a": 1.0, "b": 1.0}  # nothing maps: surface as it is
