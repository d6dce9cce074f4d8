"""`ingest_paths`: documents in, memories and edges out, idempotently.

Steps: discover and read files (bad ones become `Skipped` lines) -> skip documents whose content hash is
unchanged -> write new or changed conversations (JSON chats: one memory per message, no sentence
analysis; see `engine.ingest.conversation_writer`) -> then batch after batch of documents
(`INGEST_DOCUMENT_BATCH`): analyse (spaCy, or the LLM extractor; a file over its time budget is skipped),
embed, resolve entities against the registry and what the run has seen so far, date each proposition,
forget what changed, commit memories, ledger rows and the registry in one transaction -> re-resolve the
run's entities once all are seen (rewriting the few documents whose entities changed) -> recompute
derived edges.

An interruption keeps every committed batch, each document whole; the ledger knows what is done, so a
rerun analyses only the rest, and the edge pass (marked dirty until it completes) runs again.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import logging
import os
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np

from engine import config
from engine.analogy.text import EXTRACTOR_META_KEY, merged_structure
from engine.api.requests import RememberRequest
from engine.errors import ValidationError
from engine.ingest import budget, salience
from engine.ingest.analysis import DocumentExtractor, OfflineExtractor
from engine.ingest.budget import TimeBudget
from engine.ingest.conversation_writer import ORIGIN as CONVERSATION_ORIGIN
from engine.ingest.conversation_writer import (
    ConversationPlan,
    new_message_texts,
    plan_conversations,
    write_conversations,
)
from engine.ingest.conversations import Conversation
from engine.ingest.dates import event_time
from engine.ingest.documents import SourceDocument, discover, read_document
from engine.ingest.drafts import Draft
from engine.ingest.entities import EntityResolver, resolution_rows
from engine.ingest.linking import count_edges, derive_edges, relink
from engine.ingest.summary import IngestSummary, Skipped
from engine.models import Memory, MemoryKind, iso
from engine.store.entities import EntityRegistry
from engine.store.interface import Storage
from engine.store.ledger import DOCUMENT, MESSAGE, PROPOSITION, Ledger, LedgerRow, LinkRow
from engine.store.rows import AlsoWrite, MemoryRecord, to_micros
from engine.validation import fit_content
from engine.writer import Writer

# Documents analysed, embedded and committed together, batch after batch: an interrupted run keeps every
# batch it finished, and a crash loses at most the one in progress.
INGEST_DOCUMENT_BATCH = 8

# Bump when the analysis changes, so documents indexed by an older version are analysed again (their
# unchanged propositions still keep their ids).
PIPELINE_VERSION = "1"
LINKS_META_KEY = "ingest_links"
MAX_PROPOSITION_CHARS = 2000
EMBED_DOCUMENT_CHARS = 600

PhaseProgress = Callable[[str, int, int], None]  # (phase, done, total)

log = logging.getLogger(__name__)


@dataclass
class PlannedProposition:
    draft: Draft
    position: int
    entity_id: str | None
    content: str
    context: dict[str, Any]
    content_hash: str
    analysis: dict[str, Any]
    structure: dict[str, Any]


@dataclass
class DocumentPlan:
    doc: SourceDocument
    stamp: str
    entity_id: str | None
    propositions: list[PlannedProposition] = field(default_factory=list)
    keep: dict[str, str] = field(default_factory=dict)  # content hash -> existing memory id
    drop: list[str] = field(default_factory=list)  # memory ids to forget (changed or removed, old document)


def make_extractor(choice: DocumentExtractor | str | None = None) -> DocumentExtractor:
    """`offline` (spaCy, the default), `llm` (OpenAI-compatible endpoint from the environment), or an instance."""
    if choice is not None and not isinstance(choice, str):
        return choice
    name = (choice or os.environ.get(config.INGEST_EXTRACTOR_ENV) or "offline").strip().lower()
    if name == "offline":
        return OfflineExtractor()
    if name == "llm":
        from engine.ingest.llm import LLMExtractor

        return LLMExtractor.from_env()
    raise ValidationError(f"unknown extractor {name!r}; expected offline or llm")


def document_stamp(doc: SourceDocument, extractor: str) -> str:
    """What decides whether a document must be analysed again: its bytes, its date, the analysis version."""
    key = f"{doc.content_hash}|{iso(doc.date)}|{PIPELINE_VERSION}|{extractor}"
    return hashlib.sha256(key.encode()).hexdigest()


def ingest_paths(
    writer: Writer,
    paths: Sequence[str | Path],
    *,
    progress: PhaseProgress | None = None,
    extractor: DocumentExtractor | str | None = None,
    file_seconds: float | None = None,
) -> IngestSummary:
    """Index files and folders through `writer` (the engine's write path); see the module docstring.
    `file_seconds`: the per-file analysis time budget (None: `HEBBS_INDEX_FILE_SECONDS` or the default;
    0: no limit)."""
    started = time.perf_counter()
    chosen = make_extractor(extractor)
    seconds = budget.file_seconds(file_seconds)
    run = _Run(writer, chosen, progress or (lambda phase, done, total: None), IngestSummary(extractor=chosen.name),
               seconds)

    fresh, conversations, present = run.timed("reading", run.read, paths)
    opening = writer.indexes.open_vectors_meanwhile() if fresh else None
    if fresh or conversations:
        run.timed("loading models", run.load_models)
    written = run.index(fresh, conversations)
    run.timed("writing", run.reconcile, written)
    run.timed("linking", run.link)
    if opening is not None:
        opening.join()

    summary = run.summary
    for type_, n in writer.store.count_edges_by_type(CONVERSATION_ORIGIN).items():
        summary.edges[type_] = summary.edges.get(type_, 0) + n
    summary.documents_indexed = len(written) + len(conversations) - summary.conversations_skipped
    summary.conversations = len(conversations) - summary.conversations_skipped
    summary.entities = writer.store.count_entities()  # entities with memories: the count `stats` shows
    summary.propositions_total = Ledger(writer.store).count_propositions(present)
    summary.messages_total = Ledger(writer.store).role_counts(present).get(MESSAGE, 0)
    summary.phase_seconds = dict(run.phases)
    summary.seconds = time.perf_counter() - started
    return summary


@dataclass
class _Analysed:
    """A batch of documents analysed (None: skipped), whose new texts are being embedded."""

    docs: list[SourceDocument]
    drafts: list[list[Draft] | None]
    todo: list[str]
    embedded: Future[np.ndarray] | None


@dataclass
class _Written:
    doc: SourceDocument
    drafts: list[Draft]
    plan: DocumentPlan
    names: tuple[str | None, ...] | None  # how its names resolved when it was planned (None: plan it again)


@dataclass
class _Run:
    """The state of one `ingest_paths` call, step by step."""

    writer: Writer
    extractor: DocumentExtractor
    tick: PhaseProgress
    summary: IngestSummary
    file_seconds: float | None = None
    phases: dict[str, float] = field(default_factory=lambda: defaultdict(float))
    resolver: EntityResolver = field(default_factory=EntityResolver)
    vectors: dict[str, np.ndarray] = field(default_factory=dict)  # text -> embedding, for this run's writes

    def timed(self, phase: str, step: Callable[..., Any], *args: Any) -> Any:
        mark = time.perf_counter()
        try:
            return step(*args)
        finally:
            self.phases[phase] += time.perf_counter() - mark

    def read(self, paths: Sequence[str | Path]) -> tuple[list[SourceDocument], list[Conversation], list[str]]:
        """Documents to analyse and conversations to write (new or changed), and the sources of every
        readable file; forgets documents that disappeared from the folders."""
        store, ledger = self.writer.store, Ledger(self.writer.store)
        files, skipped, roots = discover(paths)
        self.summary.skipped.extend(skipped)
        indexed = ledger.documents()
        chats = ledger.conversations()
        fresh: list[SourceDocument] = []
        conversations: list[Conversation] = []
        present: list[str] = []
        for i, (path, display) in enumerate(files):
            doc = read_document(path, display)
            self.tick("reading", i + 1, len(files))
            if isinstance(doc, Skipped):
                self.summary.skipped.append(doc)
                continue
            present.append(doc.source)
            if isinstance(doc, Conversation):
                if chats.get(doc.source) == doc.stamp and doc.source not in indexed:
                    self.summary.documents_unchanged += 1
                else:
                    conversations.append(doc)
            elif indexed.get(doc.source, ("", ""))[1] == document_stamp(doc, self.extractor.name):
                self.summary.documents_unchanged += 1
            else:
                fresh.append(doc)
        gone = [s for s in sorted({*indexed, *chats}) if _under(s, roots) and s not in present and not Path(s).exists()]
        if fresh or gone or conversations:  # (messages' speakers count as entity mentions)
            store.set_meta(LINKS_META_KEY, "dirty")
        if gone:
            roles = ledger.role_counts(gone)
            doomed = ledger.memory_ids(gone)
            self.summary.propositions_removed += roles.get(PROPOSITION, 0)
            self.summary.messages_removed += roles.get(MESSAGE, 0)
            self.writer.forget(sorted(store.existing(doomed)), erase=False)
            self.summary.documents_removed = len(gone)
        return fresh, conversations, present

    def load_models(self) -> None:
        """Load spaCy and the embedder up front (once per process), so the time they take is reported apart."""
        if isinstance(self.extractor, OfflineExtractor):
            from engine.ingest.nlp import load

            load()
        self.tick("loading models", 0, 1)
        self.writer.embed(["warm up"])
        self.tick("loading models", 1, 1)

    def index(self, fresh: list[SourceDocument], conversations: Sequence[Conversation] = ()) -> list[_Written]:
        """Write the conversations, then batch after batch of documents: analyse, embed, resolve entities,
        commit. A worker thread embeds one batch while the next is analysed (onnxruntime releases the GIL).
        Each batch is committed as soon as its vectors are there, so an interrupted run keeps every batch it
        finished and a rerun analyses only the rest. (A third thread parsing with spaCy ahead was measured no
        faster on 2 shared cores, and 0.65x with int8: the threads' Python parts queue for the GIL.) With
        documents to analyse, the messages are embedded by the worker while the first batch is analysed and
        written right after it, still before any document: their embedding left the main thread idle."""
        store = self.writer.store
        registry = EntityRegistry(store)
        records = registry.load()
        self.resolver = EntityResolver(records)
        known = {r.name: r.type for r in records}
        vectors = self.vectors = self.writer.reusable_vectors(
            Ledger(store).memory_ids(d.source for d in fresh), MemoryKind.PROPOSITION
        )
        written: list[_Written] = []
        pending: _Analysed | None = None
        size = INGEST_DOCUMENT_BATCH
        chunks = [fresh[start : start + size] for start in range(0, len(fresh), size)]
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="hebbs-embed") as worker:
            plans = plan_conversations(self.writer, conversations) if chunks and conversations else None
            messages = self._embed_messages(plans, worker) if plans else None
            if not chunks:
                self._write_conversations(conversations, None)
            for i, chunk in enumerate(chunks):
                analysed = self.timed("analysing", self._analyse_batch, chunk, known, vectors, worker)
                if i == 0:
                    self._write_conversations(conversations, messages, plans)
                if pending is not None:
                    written += self._commit(pending, vectors)
                pending = analysed
                self.tick("analysing", min((i + 1) * size, len(fresh)), len(fresh))
            if pending is not None:
                written += self._commit(pending, vectors)
        self.summary.llm_fallbacks = int(getattr(self.extractor, "fallbacks", 0))
        return written

    def _embed_messages(self, plans: Sequence[ConversationPlan],
                        worker: ThreadPoolExecutor) -> Future[list[dict[str, np.ndarray]]]:
        """The conversations' new messages (by their plans, which `write_conversations` then follows too), sent to
        the worker to embed: one model call per conversation, as `write_conversations` would make (the same
        vectors to the last bit), each conversation's by text."""
        per_conversation = new_message_texts(plans)

        def embed() -> list[dict[str, np.ndarray]]:
            return [dict(zip(texts, self.writer.embed(texts), strict=True)) if texts else {}
                    for texts in per_conversation]

        return worker.submit(embed)

    def _write_conversations(self, conversations: Sequence[Conversation],
                             embedded: Future[list[dict[str, np.ndarray]]] | None,
                             plans: Sequence[ConversationPlan] | None = None) -> None:
        write_conversations(self.writer, conversations, self.summary, self.phases, embedded, plans)
        self.tick("writing", len(conversations), len(conversations))

    def _analyse_batch(self, chunk: list[SourceDocument], known: dict[str, str], vectors: dict[str, np.ndarray],
                       worker: ThreadPoolExecutor) -> _Analysed:
        """Drafts per document of the batch (None for one skipped with its reason), and its new texts sent
        to the worker to embed."""
        drafts = self._analyse_chunk(chunk, known)
        texts: dict[str, None] = {}
        for doc, doc_drafts in zip(chunk, drafts, strict=True):
            if doc_drafts is None:
                continue
            if not doc_drafts:
                texts[embedding_text(doc)] = None
            for d in doc_drafts:
                texts[proposition_content(d)] = None
                for m in d.mentions:
                    if m.type not in ("unknown", "topic"):
                        known.setdefault(m.name, m.type)
        todo = [t for t in texts if t not in vectors]
        return _Analysed(chunk, drafts, todo, worker.submit(self.writer.embed, todo) if todo else None)

    def _commit(self, batch: _Analysed, vectors: dict[str, np.ndarray]) -> list[_Written]:
        """Wait for the batch's vectors, resolve its entities with everything seen so far, and commit it
        (memories, ledger rows and the registry in one transaction per batch)."""
        if batch.embedded is not None:
            mark = time.perf_counter()
            vectors.update(zip(batch.todo, batch.embedded.result(), strict=True))
            self.phases["embedding"] += time.perf_counter() - mark
        mark = time.perf_counter()
        done = [(doc, ds) for doc, ds in zip(batch.docs, batch.drafts, strict=True) if ds is not None]
        for _, doc_drafts in done:
            for d in doc_drafts:
                for m in d.mentions:
                    self.resolver.observe(m.name, m.type, m.weight)
                if d.speaker:
                    self.resolver.observe(d.speaker, "person")
        self.resolver.finalize()
        ledger = Ledger(self.writer.store)
        plans = [_plan(doc, ds, self.resolver, ledger, self.extractor.name) for doc, ds in done]
        self.phases["analysing"] += time.perf_counter() - mark
        if plans:
            _write(self.writer, plans, vectors, self.summary, self.phases, self.resolver)
        return [_Written(doc, ds, plan, _resolved_names(doc, ds, self.resolver))
                for (doc, ds), plan in zip(done, plans, strict=True)]

    def _analyse_chunk(self, chunk: list[SourceDocument], known: dict[str, str]) -> list[list[Draft] | None]:
        """A document that makes the extractor fail, or goes over the time budget, is skipped with the
        reason, not the whole run."""
        limit = TimeBudget(self.file_seconds)
        try:
            out: list[list[Draft] | None] = list(_analyse(self.extractor, chunk, known, limit))
        except Exception:
            if len(chunk) == 1:
                raise
            out = []
            for doc in chunk:
                alone = TimeBudget(self.file_seconds)
                try:
                    out.append(_analyse(self.extractor, [doc], known, alone)[0])
                except Exception as exc:  # one document's problem, reported in the summary
                    self.summary.skipped.append(Skipped(doc.display, f"could not be analysed ({exc})"))
                    out.append(None)
                    continue
                if alone.over:
                    limit.over.add(len(out) - 1)
        for d in sorted(limit.over):
            self.summary.skipped.append(Skipped(chunk[d].display, limit.reason()))
            out[d] = None
        return out

    def reconcile(self, written: list[_Written]) -> None:
        """Entities are resolved batch by batch, each with what the run had seen so far; a later batch can
        change an earlier decision ("Dana" joins "Dana Whitfield", seen later). Plan every document again
        with the run's final resolution and rewrite the few whose entities or dates changed, so a completed
        run equals one that resolved all its documents at once. Names no memory refers to any more go."""
        if not written:
            return
        self.resolver.finalize()
        ledger = Ledger(self.writer.store)
        changed = []
        for item in written:
            if item.names is not None and item.names == _resolved_names(item.doc, item.drafts, self.resolver):
                continue  # every name resolves as when it was written: planning it again would give the same plan
            plan = _plan(item.doc, item.drafts, self.resolver, ledger, self.extractor.name)
            if plan.entity_id != item.plan.entity_id or plan.drop or len(plan.keep) != len(plan.propositions):
                changed.append(plan)
        if changed:
            scratch = IngestSummary()  # the first write counted these documents' propositions already
            for start in range(0, len(changed), INGEST_DOCUMENT_BATCH):
                _write(self.writer, changed[start : start + INGEST_DOCUMENT_BATCH], self.vectors, scratch,
                       defaultdict(float), self.resolver)
        else:
            EntityRegistry(self.writer.store).save(resolution_rows(self.resolver))
        EntityRegistry(self.writer.store).purge_unreferenced()

    def link(self) -> None:
        """Derived edges over everything ingested; also after a run that failed before this step."""
        store = self.writer.store
        if store.get_meta(LINKS_META_KEY) != "clean":
            self.tick("linking", 0, 1)
            self.summary.edges = relink(self.writer)
            salience.update(self.writer)
            store.set_meta(LINKS_META_KEY, "clean")
            self.tick("linking", 1, 1)
        else:
            self.summary.edges = count_edges(store)
        if store.get_meta(EXTRACTOR_META_KEY) != "episode":
            store.set_meta(EXTRACTOR_META_KEY, "episode")


def _analyse(extractor: DocumentExtractor, docs: list[SourceDocument], known: dict[str, str],
             limit: TimeBudget) -> list[list[Draft]]:
    """The extractor's drafts, with the time budget when it takes one (an extractor written before budgets
    existed is called as it was, unlimited)."""
    if "budget" in inspect.signature(extractor.analyse).parameters:
        return extractor.analyse(docs, known, budget=limit)
    return extractor.analyse(docs, known)


def embedding_text(doc: SourceDocument) -> str:
    """What a document without propositions is embedded from: its title and opening."""
    return doc.text[:EMBED_DOCUMENT_CHARS]


def document_vector(plan: DocumentPlan, vectors: dict[str, np.ndarray]) -> np.ndarray | None:
    """A document's embedding: the normalised mean of its propositions' embeddings. It covers the whole
    document (the model would read only its first 256 tokens) and costs no model call."""
    rows = [vectors[p.content] for p in plan.propositions if p.content in vectors]
    if not rows:
        return None
    mean = np.mean(np.stack(rows), axis=0)
    norm = float(np.linalg.norm(mean))
    return (mean / norm).astype(np.float32) if norm > 0 else None


def proposition_vectors(plan: DocumentPlan, vectors: dict[str, np.ndarray]) -> np.ndarray | None:
    """The document's propositions' embeddings in order (its plot's rows, engine/analogy/plot.py); None unless
    every one was embedded."""
    if not plan.propositions or any(p.content not in vectors for p in plan.propositions):
        return None
    return np.stack([vectors[p.content] for p in plan.propositions])


def proposition_content(d: Draft) -> str:
    content = d.text if len(d.text) <= MAX_PROPOSITION_CHARS else d.text[: MAX_PROPOSITION_CHARS - 1] + "…"
    return f"{d.speaker}: {content}" if d.speaker else content


def _under(source: str, roots: Sequence[Path]) -> bool:
    return any(source.startswith(str(root) + os.sep) for root in roots)


def _resolved_names(
    doc: SourceDocument, drafts: list[Draft], resolver: EntityResolver
) -> tuple[str | None, ...] | None:
    """The canonical id of every name `_plan` resolves for the document, in order: when it is the same
    after the run's final resolution, the document's plan is the same too. None for a document with a
    declared entity (`_plan` records the declaration in the resolver, so it is always planned again)."""
    if doc.entity_id:
        return None
    names: list[str | None] = []
    for d in drafts:
        names += [m.name for m in d.mentions]
        names += [d.subject, d.speaker]
        names += [n for r in d.relations for n in (r.subject, r.object)]
    return tuple(resolver.canonical(n) for n in names)


def _plan(
    doc: SourceDocument, drafts: list[Draft], resolver: EntityResolver, ledger: Ledger, extractor: str
) -> DocumentPlan:
    """Entity, time, content and hash of each proposition; which existing ones are kept or dropped."""
    canonical = [[resolver.canonical(m.name) for m in d.mentions] for d in drafts]
    subjects = [resolver.canonical(d.subject) for d in drafts]
    if doc.entity_id:
        doc_entity: str | None = resolver.declared(doc.entity_id, [c for cs in canonical for c in cs if c])
    else:
        counts = Counter(s for s in subjects if s) or Counter(c for cs in canonical for c in cs if c)
        doc_entity = counts.most_common(1)[0][0] if counts else None
    plan = DocumentPlan(doc, document_stamp(doc, extractor), doc_entity)
    last_event: datetime | None = None
    occurrences: Counter[str] = Counter()
    existing = ledger.propositions(doc.source)
    for position, (d, mention_ids, subject) in enumerate(zip(drafts, canonical, subjects, strict=True)):
        block = doc.blocks[d.block] if d.block < len(doc.blocks) else None
        message_time = block.time if block is not None else None
        if d.derived_from is not None and d.derived_from < len(plan.propositions):
            parent = plan.propositions[d.derived_from]
            d.when, d.time_source = parent.draft.when, parent.draft.time_source
        elif d.stated_date is not None:
            d.when, d.time_source = d.stated_date, "text"
            last_event = d.when
        else:
            found = event_time(d.text, doc.date, last_event, plan=d.plan, fallback=message_time,
                               fallback_source="message" if message_time else "document")
            d.when, d.time_source = found.when, found.source
            if found.source == "text":
                last_event = found.when
        if doc.entity_id:
            entity = doc_entity
        else:
            speaker = resolver.canonical(d.speaker) if d.speaker else None
            entity = subject or next((c for c in mention_ids if c and c != speaker), None) or speaker or doc_entity
            if d.derived_from is not None and not subject and d.derived_from < len(plan.propositions):
                entity = plan.propositions[d.derived_from].entity_id
        content = proposition_content(d)
        assert d.when is not None
        base = hashlib.sha256(json.dumps(
            [content, list(d.heading_path), entity, iso(d.when), d.derived_from is not None], ensure_ascii=False
        ).encode()).hexdigest()
        occurrences[base] += 1
        content_hash = base if occurrences[base] == 1 else f"{base}:{occurrences[base]}"
        entities = sorted({c for c in [*mention_ids, subject] if c})
        relations = []
        for r in d.relations:
            s, o = resolver.canonical(r.subject), resolver.canonical(r.object)
            if s and o and s != o:
                relations.append({**r.to_dict(), "subject": s, "object": o})
        context: dict[str, Any] = {
            "source": doc.display,
            "title": doc.title,
            "heading_path": list(d.heading_path),
            "position": position,
            "time_source": d.time_source,
            "entities": entities[:20],
            "content_hash": content_hash,
        }
        if d.speaker:
            context["speaker"] = d.speaker
        if d.derived_from is not None:
            context["clause_of_position"] = d.derived_from
        analysis = {
            "kw": d.keywords,
            "core": d.core,
            "root": d.root,
            "event": d.event,
            "plan": d.plan,
            "reporting": d.reporting,
            "explicit_time": d.time_source == "text",
            "heading": list(d.heading_path),
            "block": d.block,
            "derived_from": d.derived_from,
            "causes": [c.to_dict() for c in d.causes],
            "relations": relations,
            "entities": entities,
        }
        plan.propositions.append(
            PlannedProposition(d, position, entity, content, context, content_hash, analysis, d.structure)
        )
        if content_hash in existing:
            plan.keep[content_hash] = existing[content_hash]
    plan.drop = [mid for h, mid in existing.items() if h not in plan.keep]
    return plan


def _write(writer: Writer, batch: Sequence[DocumentPlan], vectors: dict[str, np.ndarray],
           summary: IngestSummary, phases: dict[str, float], resolver: EntityResolver) -> None:
    """Forget what changed, then embed and commit the batch's new memories with their ledger rows and the
    entity registry as resolved so far, in one transaction: a document is stored whole or not at all."""
    mark = time.perf_counter()
    store = writer.store
    indexed = Ledger(store).documents()
    drop = [mid for p in batch for mid in p.drop]
    drop += [indexed[p.doc.source][0] for p in batch if p.doc.source in indexed]
    drop = sorted(store.existing(drop))
    if drop:
        writer.forget(drop, erase=False)
    now = writer.clock.now()
    items: list[tuple[RememberRequest, dict[str, Any], LedgerRow, str]] = []
    kept_rows: list[LedgerRow] = []
    for p in batch:
        text, truncated = fit_content(p.doc.text)
        doc_context: dict[str, Any] = {
            "source": p.doc.display,
            "title": p.doc.title,
            "format": p.doc.format,
            "date_source": p.doc.date_source,
            "propositions": len(p.propositions),
            "content_hash": p.stamp,
        }
        tags = p.doc.metadata.get("tags")
        if isinstance(tags, list):
            doc_context["tags"] = [str(t) for t in tags[:20]]
        if truncated:
            doc_context["truncated"] = True
        entities = [p.entity_id] if p.entity_id else []
        centroid = document_vector(p, vectors)
        vector_key = embedding_text(p.doc)
        if centroid is not None:
            vector_key = f"\0document:{p.doc.source}"  # not a text: never sent to the model
            vectors[vector_key] = centroid
        items.append((_request(text, doc_context, p.entity_id, MemoryKind.DOCUMENT, p.doc.date),
                      merged_structure([prop.structure for prop in p.propositions], proposition_vectors(p, vectors)),
                      LedgerRow("", p.doc.source, DOCUMENT, -1, p.stamp, {"entities": entities}),
                      vector_key))
        for prop in p.propositions:
            row = LedgerRow("", p.doc.source, PROPOSITION, prop.position, prop.content_hash, prop.analysis)
            if prop.content_hash in p.keep:
                kept_rows.append(LedgerRow(p.keep[prop.content_hash], row.source, row.role, row.position,
                                           row.content_hash, row.analysis))
                continue
            items.append((_request(prop.content, prop.context, prop.entity_id, MemoryKind.PROPOSITION,
                                   prop.draft.when), prop.structure, row, prop.content))
    memories = writer.new_memories([item for item, _, _, _ in items], now)
    missing = [t for _, _, _, t in items if t not in vectors]
    if missing:  # only when an extractor changed a text after analysis
        vectors.update(zip(missing, writer.embed(missing), strict=True))
    records = [MemoryRecord(m, vectors[t], s) for m, (_, s, _, t) in zip(memories, items, strict=True)]
    rows = kept_rows + [
        LedgerRow(m.id, r.source, r.role, r.position, r.content_hash, r.analysis)
        for m, (_, _, r, _) in zip(memories, items, strict=True)
    ]

    # The batch's own derived edges (each proposition to its document, and those among the batch's
    # propositions) commit with it, so a run interrupted after this batch leaves its documents linked; the
    # final linking pass replaces them with the whole corpus's derivation. The vectors go in first, so the
    # records commit marked synced: one transaction per batch, as `remember` does (`Writer.commit`).
    writer.commit(records, derive_edges(_link_rows(store, memories, items, kept_rows)),
                 also=AlsoWrite(ledger=rows, entities=resolution_rows(resolver)), vectors_first=True)
    added = sum(1 for _, _, r, _ in items if r.role == PROPOSITION)
    summary.propositions_added += added
    summary.propositions_kept += len(kept_rows)
    summary.propositions_removed += sum(len(p.drop) for p in batch)
    phases["writing"] += time.perf_counter() - mark


def _link_rows(store: Storage, memories: Sequence[Memory],
               items: Sequence[tuple[RememberRequest, dict[str, Any], LedgerRow, str]],
               kept: Sequence[LedgerRow]) -> list[LinkRow]:
    """What the linker reads, for one batch before it is committed: its new memories and the kept ones."""
    rows = [LinkRow(m.id, r.source, r.role, r.position, r.analysis, m.entity_id, to_micros(m.created_at))
            for m, (_, _, r, _) in zip(memories, items, strict=True)]
    found = store.get_many([r.memory_id for r in kept])
    rows += [LinkRow(r.memory_id, r.source, r.role, r.position, r.analysis, found[r.memory_id].entity_id,
                     to_micros(found[r.memory_id].created_at)) for r in kept if r.memory_id in found]
    return rows


def _request(content: str, context: dict[str, Any], entity_id: str | None, kind: MemoryKind,
             created_at: datetime | None) -> RememberRequest:
    """A memory of a document, validated like every other write."""
    return RememberRequest.parse(
        {"content": content, "context": context, "entity_id": entity_id, "kind": kind, "created_at": created_at}
    )
