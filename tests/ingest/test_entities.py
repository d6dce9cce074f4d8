"""Entities: names, types, merging short forms, frontmatter ids, and the registry's alias resolution."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.errors import AmbiguousEntityError
from engine.ingest.entities import EntityResolver, aliases_for, mention_type
from engine.names import clean_name, normalise
from engine.store.entities import EntityRecord, EntityRegistry
from engine.store.records import RecordStore


def test_names_are_cleaned_and_normalised() -> None:
    assert clean_name("the CloudVault's") == "CloudVault"
    assert clean_name("CloudVault DPA") == "CloudVault"
    assert normalise("Harbor & Rye Bakery") == "harbor and rye bakery"
    assert normalise("bistro-lumen") == "bistro lumen"


@pytest.mark.parametrize(
    ("text", "label", "kind"),
    [
        ("Meridian Analytics", "ORG", "organization"),
        ("Kestrel Labs", "PERSON", "organization"),  # the last word says organisation
        ("Bistro Lumen", "PRODUCT", "organization"),
        ("Dana Whitfield", "PERSON", "person"),
        ("Oslo", "GPE", "place"),
        ("Meridian", "NORP", "unknown"),
        ("DPA", "ORG", None),  # an acronym of a term
        ("Data Processing Agreement", "ORG", None),
        ("2026-03-02", "DATE", None),
    ],
)
def test_mention_types(text: str, label: str, kind: str | None) -> None:
    assert mention_type(text, label) == kind


def resolver_for(*mentions: tuple[str, str, int]) -> EntityResolver:
    r = EntityResolver()
    for name, kind, times in mentions:
        for _ in range(times):
            r.observe(name, kind)
    r.finalize()
    return r


def test_short_forms_join_the_longer_name_they_start() -> None:
    r = resolver_for(
        ("Meridian Analytics", "organization", 20),
        ("Meridian", "unknown", 5),
        ("Meridian DPA Team", "organization", 1),  # a rare longer name does not make "Meridian" ambiguous
        ("Dana Whitfield", "person", 4),
        ("Whitfield", "person", 1),
    )
    assert r.canonical("Meridian") == "meridian analytics"
    assert r.canonical("Whitfield") == "dana whitfield"
    assert r.records["meridian analytics"].type == "organization"
    assert r.records["meridian analytics"].name == "Meridian Analytics"


def test_a_short_form_shared_by_two_names_stays_apart() -> None:
    r = resolver_for(("Acme Corp", "organization", 3), ("Acme Labs", "organization", 3), ("Acme", "organization", 2))
    assert r.canonical("Acme") == "acme"
    assert r.canonical("Acme Labs") == "acme labs"


def test_names_only_seen_as_nationalities_are_not_entities() -> None:
    r = resolver_for(("American", "unknown", 3))
    assert r.canonical("American") is None and not r.records


def test_frontmatter_entity_id_resolves_to_the_entity_it_names() -> None:
    r = resolver_for(("Meridian Analytics", "organization", 3), ("Bistro Lumen", "organization", 2),
                     ("Northside Family Clinic", "organization", 2))
    assert r.declared("meridian", ["meridian analytics"]) == "meridian analytics"
    assert r.declared("bistro-lumen", ["bistro lumen"]) == "bistro lumen"
    assert r.declared("northside-clinic", ["northside family clinic"]) == "northside family clinic"
    assert "bistro-lumen" in r.records["bistro lumen"].aliases
    # an id that names no entity becomes one
    assert r.declared("Project Falcon", []) == "project falcon"
    assert r.records["project falcon"].type == "topic"


@pytest.fixture
def registry(tmp_path: Path) -> EntityRegistry:
    store = RecordStore(tmp_path / "records.sqlite3")
    reg = EntityRegistry(store)
    records = [
        EntityRecord("meridian analytics", "Meridian Analytics", "organization", 10, {"meridian"}),
        EntityRecord("cloudvault", "CloudVault", "organization", 5),
        EntityRecord("atlas", "Atlas", "product", 3),
        EntityRecord("acme corp", "Acme Corp", "organization", 2),
        EntityRecord("dana whitfield", "Dana Whitfield", "person", 2),
        EntityRecord("dana scott", "Dana Scott", "person", 1),
    ]
    reg.save((r, aliases_for(r)) for r in records)
    return reg


def test_resolve_by_id_alias_and_unique_prefix(registry: EntityRegistry) -> None:
    assert registry.resolve("meridian analytics") == "meridian analytics"
    assert registry.resolve("Meridian") == "meridian analytics"  # alias, any case
    assert registry.resolve("merid") == "meridian analytics"  # unique prefix
    assert registry.resolve("cloud") == "cloudvault"
    assert registry.resolve("whitfield") == "dana whitfield"  # a person's last name
    assert registry.resolve("acme") == "acme corp"
    assert registry.resolve("nobody-knows") == "nobody-knows"  # no match: used as given


def test_an_ambiguous_name_lists_the_candidates(registry: EntityRegistry) -> None:
    with pytest.raises(AmbiguousEntityError) as err:
        registry.resolve("dana")
    assert "'dana scott' (person)" in str(err.value) and "'dana whitfield' (person)" in str(err.value)
    with pytest.raises(AmbiguousEntityError, match="'dana scott'.*'dana whitfield'"):
        registry.resolve("da")
    assert registry.resolve("a") == "a"  # one letter is too short to be a prefix


def test_an_entity_id_used_by_memories_wins_over_the_registry(registry: EntityRegistry) -> None:
    store = registry.store
    with store.transaction() as cur:
        cur.execute(
            "INSERT INTO memories (id, content, importance, context, entity_id, kind, created_at, updated_at,"
            " access_count, embedding) VALUES ('m1', 'x', 0.5, '{}', 'dana', 'episode', 0, 0, 0, x'00')"
        )
    assert registry.resolve("dana") == "dana"


def test_a_store_without_a_registry_resolves_nothing(tmp_path: Path) -> None:
    assert EntityRegistry(RecordStore(tmp_path / "r.sqlite3")).resolve("meridian") == "meridian"
