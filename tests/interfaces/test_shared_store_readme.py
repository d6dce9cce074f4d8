"""README "Serve agents" -> "Shared store": its shell block, run by bash as a user pastes it (start a
PostgreSQL, two `hebbs serve` replicas on it, the SDK writing through one and recalling through the other),
so the commands cannot drift from what works. Only the ports and the server's folder are swapped for free
ones, so the test never meets a server a developer left running."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from tests.interfaces.conftest import free_port

pytestmark = pytest.mark.slow

README = Path(__file__).resolve().parents[2] / "README.md"
FOLDER = "/tmp/hebbs-pg"
PORTS = ("5499", "6480", "6481", "6490", "6491")


def shared_store_block() -> str:
    text = README.read_text()
    part = text[text.index("**Shared store**"):]
    found = re.search(r"```sh\n(.*?)```", part, re.S)
    assert found, "README: the Shared store commands are missing"
    return found.group(1)


def _end_group(group: int) -> None:
    """SIGTERM to the script's process group (the replicas it started), and wait until every member is gone."""
    deadline = time.monotonic() + 60
    sig = signal.SIGTERM
    while True:
        try:
            os.killpg(group, sig)
        except ProcessLookupError:
            return
        if time.monotonic() > deadline:
            sig = signal.SIGKILL
        time.sleep(0.2)
        sig = 0 if sig == signal.SIGTERM else sig


def test_the_readme_shared_store_commands_run_as_pasted() -> None:
    script = shared_store_block()
    assert FOLDER in script and all(port in script for port in PORTS)
    folder = tempfile.mkdtemp(prefix="hebbs-readme-pg-")  # under /tmp: PostgreSQL's own user must reach it
    script = script.replace(FOLDER, folder)
    for port in PORTS:
        script = re.sub(rf"\b{port}\b", str(free_port()), script)
    bin_dir = str(Path(sys.executable).parent)
    env = {k: v for k, v in os.environ.items() if not k.startswith("HEBBS_")}
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    # Output to files, not pipes: the replicas the script leaves running hold them open.
    out_file, err_file = Path(folder).with_suffix(".out"), Path(folder).with_suffix(".err")
    try:
        with out_file.open("w") as out, err_file.open("w") as err:
            shell = subprocess.Popen(["bash", "-e", "-c", script], env=env, stdout=out, stderr=err,
                                     start_new_session=True, cwd=tempfile.gettempdir())
        try:
            shell.wait(timeout=600)
        finally:
            _end_group(shell.pid)
        printed, errors = out_file.read_text(), err_file.read_text()
    finally:
        # The replicas the script sent to the background, then the database server.
        subprocess.run([sys.executable, "-m", "engine.store.postgres.local_server", folder, "--stop"], env=env,
                       capture_output=True, timeout=120)
        shutil.rmtree(folder, ignore_errors=True)
        out_file.unlink(missing_ok=True)
        err_file.unlink(missing_ok=True)
    assert shell.returncode == 0, errors[-3000:]
    assert "The Orbit launch moved to May." in printed.splitlines(), printed  # B recalls what A stored
