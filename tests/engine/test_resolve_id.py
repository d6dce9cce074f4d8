"""Short memory ids: a unique start or end of an id resolves to the full id, like entity prefixes do."""

from __future__ import annotations

import pytest

from engine import MemoryEngine
from engine.errors import AmbiguousMemoryIdError, MemoryNotFoundError, ValidationError
from interfaces.errors import outcome_of


def test_a_full_id_a_unique_start_or_end_resolves(engine: MemoryEngine) -> None:
    memory = engine.remember("the deploy went out on Friday")
    other = engine.remember("the rollback followed on Saturday")
    assert engine.resolve_memory_id(memory.id) == memory.id
    assert engine.resolve_memory_id(memory.id[-8:]) == memory.id
    assert engine.resolve_memory_id(memory.id[-8:].lower()) == memory.id  # case does not matter
    assert engine.resolve_memory_id(f"  {other.id[-6:]} ") == other.id


def test_an_ambiguous_or_unknown_short_id_is_a_clear_error(engine: MemoryEngine) -> None:
    first = engine.remember("one")
    second = engine.remember("two")
    common = next(first.id[:n] for n in range(26, 0, -1) if second.id.startswith(first.id[:n]))
    with pytest.raises(AmbiguousMemoryIdError, match="matches several memories") as caught:
        engine.resolve_memory_id(common)
    assert first.id in str(caught.value) and second.id in str(caught.value)
    assert outcome_of(caught.value).exit_code == 2
    with pytest.raises(MemoryNotFoundError):
        engine.resolve_memory_id("ZZZZZZZZ")
    with pytest.raises(MemoryNotFoundError):
        engine.resolve_memory_id("%")  # LIKE wildcards are not patterns
    with pytest.raises(ValidationError):
        engine.resolve_memory_id("   ")
