"""Writing conversations: one `episode` memory per message, `followed_by` edges within each session.

Each message's entity is its speaker, resolved against the entity registry as a person (see
`resolve_speakers`).

A message needs no per-sentence analysis (entities, dates, causal cues: a turn is already the unit, its
speaker is its entity and its time is known), so conversations skip the spaCy extractor; each message
still gets its relational structure (the writer's structure extractor) so analogical recall finds it:
it is committed pending and extracted later (engine/structures.py).

Re-indexing: an unchanged file is not read further (its stamp is in the ledger). In a changed one, the
messages whose chained hash is unchanged (everything up to the first change: a transcript that only grew
keeps all of its old messages) keep their ids and access counts; the rest are forgotten and written anew,
with their edges, in one transaction with their ledger rows. Embeddings of unchanged texts are reused.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field

import numpy as np

from engine.api.requests import RememberRequest
from engine.errors import ValidationError
from engine.ingest.conversations import Conversation
from engine.ingest.entities import EntityResolver, resolution_rows
from engine.ingest.summary import IngestSummary, Skipped
from engine.models import Edge, EdgeType, MemoryKind
from engine.store.entities import EntityRegistry
from engine.store.ledger import MESSAGE, Ledger, LedgerRow
from engine.store.rows import AlsoWrite
from engine.validation import fit_content
from engine.writer import Writer, records_of

ORIGIN = "conversation"  # edges written with the messages (never replaced by the derived-edge pass)


@dataclass
class ConversationPlan:
    """Which messages keep their memory, which memories of the file go, and the new messages' hashes."""

    conversation: Conversation
    hashes: list[str]
    keep: dict[int, str] = field(default_factory=dict)  # position -> existing memory id
    drop: list[str] = field(default_factory=list)
    dropped_messages: int = 0  # of `drop`, messages (the rest: a document and propositions of an old index)
    reused: dict[str, np.ndarray] = field(default_factory=dict)  # `drop`'s stored vectors by content


def plan_conversation(writer: Writer, ledger: Ledger, conversation: Conversation) -> ConversationPlan:
    """What re-indexing the conversation keeps, drops and embeds; the dropped memories' vectors are read once
    here, for both `new_message_texts` and `write_conversations` (a text that did not change is not embedded
    again)."""
    hashes = conversation.hashes
    existing = ledger.messages(conversation.source)
    plan = ConversationPlan(conversation, hashes)
    for position, h in enumerate(hashes):
        if h in existing:
            plan.keep[position] = existing[h]
    kept = set(plan.keep.values())
    plan.drop = [m for m in ledger.memory_ids([conversation.source]) if m not in kept]  # also an old document's
    plan.dropped_messages = len(set(existing.values()) - kept)
    plan.reused = writer.reusable_vectors(plan.drop)
    return plan


def plan_conversations(writer: Writer, conversations: Sequence[Conversation]) -> list[ConversationPlan]:
    """Each conversation's plan, read once and handed to both `new_message_texts` and `write_conversations`
    (nothing of these files changes between)."""
    ledger = Ledger(writer.store)
    return [plan_conversation(writer, ledger, conversation) for conversation in conversations]


def new_message_texts(plans: Sequence[ConversationPlan]) -> list[list[str]]:
    """Per conversation, the texts `write_conversations` will embed, in its order: the messages the plan does
    not keep, each once, but for those reusing a dropped memory's vector (the same list as there, so the
    same model calls give each conversation the same vectors, bit for bit)."""
    out = []
    for plan in plans:
        new = (fit_content(m.content)[0] for m in plan.conversation.messages if m.position not in plan.keep)
        out.append([t for t in dict.fromkeys(new) if t not in plan.reused])
    return out


def write_conversations(
    writer: Writer, conversations: Sequence[Conversation], summary: IngestSummary, phases: dict[str, float],
    embedded: Future[list[dict[str, np.ndarray]]] | None = None,
    plans: Sequence[ConversationPlan] | None = None,
) -> None:
    """Write each new or changed conversation (see the module docstring); counts go into `summary`.
    `embedded`: per conversation, its new messages' vectors by text, embedded on another thread
    (`new_message_texts`) while the caller did other work; a text missing there is embedded here. `plans`: the
    conversations' plans as `plan_conversations` read them for that (else each is read here)."""
    ledger = Ledger(writer.store)
    ready: list[dict[str, np.ndarray]] | None = None
    speakers = resolve_speakers(writer, conversations)
    for index, conversation in enumerate(conversations):
        mark = time.perf_counter()
        plan = plans[index] if plans is not None else plan_conversation(writer, ledger, conversation)
        new = [m for m in conversation.messages if m.position not in plan.keep]
        requests: list[RememberRequest] = []
        try:  # every message is validated like any write before anything of the file changes
            for m in new:
                requests.append(RememberRequest.parse({
                    "content": fit_content(m.content)[0],
                    "context": conversation.context(m),
                    "entity_id": speakers.get(m.speaker or ""),
                    "kind": MemoryKind.EPISODE,
                    "created_at": m.at,
                }))
        except ValidationError as exc:
            failed = new[len(requests)].position + 1
            summary.skipped.append(Skipped(conversation.display, f"message {failed} cannot be stored ({exc})"))
            summary.conversations_skipped += 1
            continue
        vectors = dict(plan.reused)
        existing = set(writer.store.existing(plan.drop))
        if existing:
            writer.forget(sorted(existing), erase=False)
        memories = writer.new_memories(requests, writer.clock.now())
        phases["writing"] += time.perf_counter() - mark
        mark = time.perf_counter()
        texts = [m.content for m in memories]
        if embedded is not None:
            if ready is None:
                ready = embedded.result()
            vectors = {**{t: ready[index][t] for t in texts if t in ready[index]}, **vectors}
        embeddings, structures = writer.embed_and_extract(texts, reuse=vectors)
        phases["embedding"] += time.perf_counter() - mark
        mark = time.perf_counter()
        ids = dict(plan.keep)
        ids.update((m.position, memory.id) for m, memory in zip(new, memories, strict=True))
        edges = [
            Edge(ids[a.position], ids[b.position], EdgeType.FOLLOWED_BY, 1.0, {"origin": ORIGIN})
            for a, b in zip(conversation.messages, conversation.messages[1:], strict=False)
            if a.session_index == b.session_index and not (a.position in plan.keep and b.position in plan.keep)
        ]
        stamp = conversation.stamp
        rows = [
            LedgerRow(ids[m.position], conversation.source, MESSAGE, m.position, plan.hashes[m.position],
                      {"stamp": stamp, "session": m.session,
                       "entities": [speakers[m.speaker]] if m.speaker in speakers else []})
            for m in conversation.messages
        ]
        records = records_of(memories, embeddings, structures)
        writer.commit(records, edges, also=AlsoWrite(ledger=rows), vectors_first=True)  # one transaction
        summary.messages_added += len(memories)
        summary.messages_kept += len(plan.keep)
        summary.messages_removed += plan.dropped_messages
        phases["writing"] += time.perf_counter() - mark


def resolve_speakers(writer: Writer, conversations: Sequence[Conversation]) -> dict[str, str]:
    """Speaker name -> entity id: speakers are people in the entity registry, so "Sofia" in a chat is the
    `sofia lindqvist` the documents talk about, and aliases and prefixes resolve to her (the registry is
    saved with them)."""
    names = {m.speaker for c in conversations for m in c.messages if m.speaker}
    if not names:
        return {}
    registry = EntityRegistry(writer.store)
    resolver = EntityResolver(registry.load())
    for c in conversations:
        for m in c.messages:
            if m.speaker:
                resolver.observe(m.speaker, "person", weight=2)
    resolver.finalize()
    registry.save(resolution_rows(resolver))
    return {name: resolver.canonical(name) or name for name in names}

