"""Opening an engine imports only what every command needs: the heavy packages load on first use."""

from __future__ import annotations

import subprocess
import sys

import pytest


def test_opening_the_engine_imports_no_heavy_package() -> None:
    code = (
        "import sys\n"
        "import engine.facade, interfaces.cli.main\n"
        "heavy = ('chromadb', 'networkx', 'onnxruntime', 'spacy', 'torch', 'sentence_transformers', 'pandas',\n"
        "         'numba')\n"
        "print(','.join(sorted(m for m in heavy if m in sys.modules)))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert done.stdout.strip() == "", f"imported at open: {done.stdout.strip()}"


@pytest.mark.slow
def test_a_recall_of_a_small_store_in_a_fresh_process_does_not_import_chroma(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The `recommended` preset (`hebbs recall`'s default) searches a store of at most
    `EXACT_SEARCH_MAX_MEMORIES` exactly in the candidate table, so a cold recall there must not pay Chroma's
    import (seconds) beside the work it does; a similarity-only recall searches the vector index and does. Its
    BM25 searches score their few postings with numpy: numba (the large store's kernel) is not imported."""
    code = (
        "import sys\n"
        "from engine import MemoryEngine\n"
        "engine = MemoryEngine(sys.argv[1])\n"
        "if sys.argv[2] == 'write':\n"
        "    engine.remember('The deploy failed because the migration locked the users table.', entity_id='ops')\n"
        "    engine.remember('Caroline joined the support group in May.', entity_id='caroline')\n"
        "else:\n"
        "    found = engine.recall('why did the deploy fail?', **dict([sys.argv[2].split('=')]))\n"
        "    assert found and 'deploy' in found[0].memory.content, found\n"
        "    print('chromadb' in sys.modules, 'numba' in sys.modules)\n"
    )
    data = str(tmp_path / "data")

    def run(arg: str) -> str:
        done = subprocess.run([sys.executable, "-c", code, data, arg], capture_output=True, text=True, timeout=180)
        assert done.returncode == 0, done.stderr[-2000:]
        return done.stdout.strip()

    run("write")
    assert run("preset=recommended") == "False False"
    assert run("strategies=similarity") == "True False"
