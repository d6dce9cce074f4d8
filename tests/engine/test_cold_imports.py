"""Opening an engine imports only what every command needs: the heavy packages load on first use."""

from __future__ import annotations

import subprocess
import sys


def test_opening_the_engine_imports_no_heavy_package() -> None:
    code = (
        "import sys\n"
        "import engine.facade, interfaces.cli.main\n"
        "heavy = ('chromadb', 'networkx', 'onnxruntime', 'spacy', 'torch', 'sentence_transformers', 'pandas')\n"
        "print(','.join(sorted(m for m in heavy if m in sys.modules)))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert done.stdout.strip() == "", f"imported at open: {done.stdout.strip()}"
