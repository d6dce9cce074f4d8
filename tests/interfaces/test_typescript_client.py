"""The TypeScript client (clients/typescript): built with tsc and run by node's test runner against the session's
real `hebbs serve`; its generated request types must match the server's OpenAPI schema."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.interfaces.conftest import Served

CLIENT = Path(__file__).resolve().parents[2] / "clients" / "typescript"
NPM = shutil.which("npm")

pytestmark = pytest.mark.skipif(NPM is None and not os.environ.get("CI"), reason="node/npm not installed")


def _npm(*args: str, env: dict[str, str] | None = None, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    assert NPM is not None, "npm is needed for the TypeScript client's tests (Node 20 and npm)"
    return subprocess.run([NPM, *args], cwd=CLIENT, env=env or dict(os.environ), capture_output=True, text=True,
                          timeout=timeout, check=False)


@pytest.fixture(scope="module")
def installed() -> None:
    lock, marker = CLIENT / "package-lock.json", CLIENT / "node_modules" / ".package-lock.json"
    if not marker.exists() or marker.stat().st_mtime < lock.stat().st_mtime:
        done = _npm("ci", "--no-audit", "--no-fund")
        assert done.returncode == 0, done.stdout + done.stderr


def _shapes(schema: dict[str, Any]) -> dict[str, Any]:
    """What the generated TypeScript types encode: each route's body schema and each component's fields with
    their types and which are required. Descriptions, examples and FastAPI's own error schemas are left out,
    so a reworded help text or another FastAPI release does not count as a change of the API."""

    def shape(node: Any) -> Any:
        if isinstance(node, dict):
            return {k: shape(v) for k, v in node.items()
                    if k not in ("description", "title", "example", "examples", "default")}
        if isinstance(node, list):
            return [shape(v) for v in node]
        return node

    routes = {
        f"{method.upper()} {path}": shape(op.get("requestBody", {}))
        for path, ops in schema["paths"].items() for method, op in ops.items()
    }
    components = {name: shape(body) for name, body in schema.get("components", {}).get("schemas", {}).items()
                  if name not in ("HTTPValidationError", "ValidationError")}
    return {"routes": routes, "components": components}


def test_the_generated_types_match_the_servers_openapi_schema(served: Served) -> None:
    live = httpx.get(f"{served.rest}/openapi.json", timeout=30).json()
    committed = json.loads((CLIENT / "openapi.json").read_text(encoding="utf-8"))
    assert _shapes(committed) == _shapes(live), (
        "the REST schema changed: regenerate the client's types with "
        "`make ts-schema HEBBS_URL=<a running hebbs serve>` and commit clients/typescript/{openapi.json,src/schema.ts}")


@pytest.mark.slow
def test_every_client_method_against_a_real_server(served: Served, installed: None) -> None:
    env = {**os.environ, "HEBBS_URL": served.rest, "HEBBS_API_KEY": served.key}
    done = _npm("test", env=env)
    out = done.stdout + done.stderr
    assert done.returncode == 0, out[-4000:]
    passed = re.search(r"^# pass (\d+)$", out, re.M)
    failed = re.search(r"^# fail (\d+)$", out, re.M)
    assert passed and failed, out[-2000:]
    assert int(failed.group(1)) == 0 and int(passed.group(1)) >= 6
