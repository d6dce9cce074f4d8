"""`pip install .` is the library and the `hebbs` CLI: Streamlit and FastAPI are not installed (they come with
the `[workbench]` and `[serve]` extras) and importing the library loads none of them, nor torch (which the
bundled model's package still installs). Checked in a fresh venv; pip's cache and configured indexes are
reused."""

from __future__ import annotations

import os
import shutil
import subprocess
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

PROBE = """
import importlib.util, sys
installed = [m for m in ("streamlit", "fastapi", "pyvis", "hebbs") if importlib.util.find_spec(m) is not None]
assert not installed, f"the core install pulled in {installed}"
import engine, engine.facade, engine.ingest.pipeline, engine.recall.recaller, interfaces.cli.main
from engine import MemoryEngine
loaded = sorted(m for m in ("streamlit", "fastapi", "torch", "starlette", "grpc") if m in sys.modules)
assert not loaded, f"importing the library loaded {loaded}"
assert engine.__file__.startswith(sys.prefix), engine.__file__  # the installed copy, not the source tree
print("ok")
"""


@pytest.mark.slow
def test_the_core_install_imports_without_the_extras(tmp_path: Path) -> None:
    target = tmp_path / "venv"
    try:
        venv.EnvBuilder(with_pip=True).create(target)
    except (OSError, subprocess.CalledProcessError) as exc:
        pytest.skip(f"no venv can be created here: {exc}")
    python = target / "bin" / "python"
    source = tmp_path / "source"  # a copy: building in the work tree would leave build/ and egg-info there
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(
        ".*", "__pycache__", "build", "dist", "*.egg-info", "tests", "notebooks", "benchmarks", "clients", "docs",
        "hebbs-data", "artifacts", "sample_data"))
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    install = subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", "--no-compile", "--disable-pip-version-check", str(source)],
        capture_output=True, text=True, timeout=1800, env=env, cwd=tmp_path, check=False,
    )
    assert install.returncode == 0, install.stdout[-2000:] + install.stderr[-4000:]
    probe = subprocess.run([str(python), "-c", PROBE], capture_output=True, text=True, timeout=300, env=env,
                           cwd=tmp_path, check=False)
    assert probe.returncode == 0 and probe.stdout.strip() == "ok", probe.stdout + probe.stderr[-3000:]
    cli = subprocess.run([str(target / "bin" / "hebbs"), "--help"], capture_output=True, text=True, timeout=300,
                         env=env, cwd=tmp_path, check=False)
    assert cli.returncode == 0 and "recall" in cli.stdout, cli.stderr[-2000:]
