"""An optional LLM extractor behind the same interface as the offline one.

Any OpenAI-compatible chat endpoint: `HEBBS_LLM_BASE_URL` (e.g. `http://127.0.0.1:11434/v1`),
`HEBBS_LLM_MODEL`, and `HEBBS_LLM_API_KEY` if the endpoint wants one. Never required: the offline
extractor is the default, and a document the LLM fails on (network error, bad JSON) is analysed offline
instead, counted in the summary. Only the standard library talks HTTP, so nothing is installed for it.

The model returns propositions with their entities, date, causes (another proposition by index, or a
phrase) and subject-verb-object relations; dates, entity ids, edges and structure then go through the
same pipeline as offline drafts.
"""

from __future__ import annotations

import json
import logging
import os
import re
import time
from collections.abc import Mapping, Sequence
from typing import Any

import httpx

from engine import config
from engine.errors import ExtractorError
from engine.ingest.analysis import DocumentExtractor, OfflineExtractor
from engine.ingest.budget import TimeBudget
from engine.ingest.causal import is_definite
from engine.ingest.dates import parse_datetime
from engine.ingest.documents import SourceDocument
from engine.ingest.drafts import CausalCue, Draft, Mention, Relation, Side
from engine.ingest.keywords import keywords, stem

LLM_TIMEOUT_SECONDS = 60.0  # one chat completion request

log = logging.getLogger(__name__)

_TYPES = {"person": "person", "people": "person", "organization": "organization", "organisation": "organization",
          "org": "organization", "company": "organization", "product": "product", "place": "place",
          "location": "place", "gpe": "place", "event": "event"}
SYSTEM_PROMPT = """You turn a document into atomic propositions for a memory engine. Answer with one JSON
object and nothing else:
{"propositions": [{
  "text": "one self-contained statement, close to the document's wording",
  "block": <number of the [block N] it comes from>,
  "entities": [{"name": "Meridian Analytics", "type": "person|organization|product|place|event"}],
  "subject": "the entity the statement is about, or null",
  "date": "YYYY-MM-DD when the text says when it happened, else null",
  "plan": true if it is a plan or expectation rather than something that happened,
  "event": true if something happened (an action, not a state),
  "causes": [{"proposition": <index of another proposition in your list that caused this one>,
              "cue": "because"} or {"phrase": "the event named as the cause", "cue": "due to"}],
  "relations": [{"subject": "entity", "verb": "lemma", "object": "entity"}]
}]}
Only record causes the text states explicitly."""


class LLMExtractor:
    name = "llm"

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None = None,
        timeout: float = LLM_TIMEOUT_SECONDS,
        fallback: DocumentExtractor | None = None,
    ) -> None:
        if not base_url or not model:
            raise ExtractorError(
                f"the LLM extractor needs {config.LLM_BASE_URL_ENV} and {config.LLM_MODEL_ENV} to be set"
            )
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.model = model
        self.api_key = api_key
        self.timeout = timeout
        self.fallback: DocumentExtractor = fallback or OfflineExtractor()
        self.fallbacks = 0

    @classmethod
    def from_env(cls) -> LLMExtractor:
        return cls(
            os.environ.get(config.LLM_BASE_URL_ENV, ""),
            os.environ.get(config.LLM_MODEL_ENV, ""),
            os.environ.get(config.LLM_API_KEY_ENV) or None,
        )

    def analyse(
        self, documents: Sequence[SourceDocument], known: Mapping[str, str] | None = None,
        budget: TimeBudget | None = None,
    ) -> list[list[Draft]]:
        """One request per document (each bounded by the HTTP timeout), charged to `budget` afterwards."""
        budget = budget if budget is not None else TimeBudget()
        out: list[list[Draft]] = []
        for d, doc in enumerate(documents):
            mark = time.perf_counter()
            try:
                out.append(self._analyse_one(doc))
            except (ExtractorError, OSError, ValueError, KeyError, TypeError) as exc:
                log.warning("LLM extractor failed on %s (%s); analysing it offline", doc.display, exc)
                self.fallbacks += 1
                out.append(self.fallback.analyse([doc], known)[0])
            if budget.charge(d, time.perf_counter() - mark):
                out[-1] = []
        return out

    # --- one document -------------------------------------------------------------------------------------
    def _analyse_one(self, doc: SourceDocument) -> list[Draft]:
        reply = self._chat(_document_prompt(doc))
        items = reply.get("propositions")
        if not isinstance(items, list):
            raise ExtractorError("the reply has no `propositions` list")
        valid = {i: x for i, x in enumerate(items) if isinstance(x, dict) and str(x.get("text", "")).strip()}
        position = {i: p for p, i in enumerate(valid)}  # the model's index -> ours, once blanks are dropped
        drafts = [_draft(item, doc) for item in valid.values()]
        for draft, item in zip(drafts, valid.values(), strict=True):
            draft.causes = _causes(item.get("causes"), position)
        from engine.analogy.text import EpisodeExtractor

        for draft, structure in zip(drafts, EpisodeExtractor().extract([d.text for d in drafts]), strict=True):
            draft.structure = structure
        return drafts

    def _chat(self, prompt: str) -> dict[str, Any]:
        body = json.dumps({
            "model": self.model,
            "temperature": 0,
            "response_format": {"type": "json_object"},
            "messages": [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": prompt}],
        }).encode()
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        try:
            response = httpx.post(self.url, content=body, headers=headers, timeout=self.timeout, follow_redirects=True)
        except httpx.HTTPError as exc:
            raise ExtractorError(f"cannot reach {self.url}: {exc}") from None
        if response.is_error:
            raise ExtractorError(f"{self.url} answered HTTP {response.status_code}")
        payload = json.loads(response.content.decode("utf-8"))
        try:
            content = payload["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError):
            raise ExtractorError("the reply is not an OpenAI-style chat completion") from None
        return _json_object(content)


def _document_prompt(doc: SourceDocument) -> str:
    lines = [f"Title: {doc.title}", f"Document date: {doc.date.date().isoformat()}", ""]
    for i, block in enumerate(doc.blocks):
        where = f" (section: {' > '.join(block.heading_path)})" if block.heading_path else ""
        who = f" {block.speaker}:" if block.speaker else ""
        lines.append(f"[block {i}]{where}{who} {block.text}")
    return "\n".join(lines)


def _json_object(content: str) -> dict[str, Any]:
    text = content.strip()
    fenced = re.match(r"^```(?:json)?\s*(.*?)\s*```$", text, re.S)
    if fenced:
        text = fenced.group(1)
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ExtractorError(f"the reply is not JSON ({exc.msg})") from None
    if not isinstance(value, dict):
        raise ExtractorError("the reply is not a JSON object")
    return value


def _draft(item: dict[str, Any], doc: SourceDocument) -> Draft:
    text = " ".join(str(item["text"]).split())
    block_index = item.get("block")
    if not isinstance(block_index, int) or not 0 <= block_index < len(doc.blocks):
        block_index = 0
    block = doc.blocks[block_index] if doc.blocks else None
    mentions = []
    for e in item.get("entities") or ():
        if isinstance(e, dict) and str(e.get("name", "")).strip():
            mentions.append(Mention(str(e["name"]).strip(), _TYPES.get(str(e.get("type", "")).lower(), "unknown")))
    relations = []
    for r in item.get("relations") or ():
        if isinstance(r, dict) and r.get("subject") and r.get("object") and r.get("verb"):
            relations.append(Relation(str(r["subject"]), str(r["verb"]).lower(), str(r["object"])))
    subject = item.get("subject") if isinstance(item.get("subject"), str) else None
    stated = parse_datetime(item.get("date")) if item.get("date") else None
    kws = keywords(text)
    verbs = [stem(r.verb) for r in relations]
    return Draft(
        text=text,
        block=block_index,
        heading_path=block.heading_path if block else (),
        speaker=block.speaker if block else None,
        mentions=mentions,
        subject=subject,
        plan=bool(item.get("plan")),
        event=bool(item.get("event")) and not item.get("plan"),
        relations=relations,
        keywords=kws,
        core=list(dict.fromkeys([*verbs, *keywords(subject or "")])) or kws[:4],
        root=verbs[0] if verbs else None,
        stated_date=stated,
    )


def _causes(value: object, position: Mapping[int, int]) -> list[CausalCue]:
    found: list[CausalCue] = []
    for c in value if isinstance(value, list) else ():
        if not isinstance(c, dict):
            continue
        cue = str(c.get("cue") or "because")
        target = c.get("proposition")
        if isinstance(target, int) and target in position:
            found.append(CausalCue(cue, 0.85, Side("clause", derived=position[target]), Side("self")))
        elif isinstance(c.get("phrase"), str) and c["phrase"].strip():
            phrase = c["phrase"].strip()
            words = keywords(phrase)
            side = Side("phrase", phrase, tuple(words), words[-1] if words else None, definite=is_definite(phrase))
            found.append(CausalCue(cue, 0.8, side, Side("self")))
    return found
