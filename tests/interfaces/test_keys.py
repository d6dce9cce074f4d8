"""API keys: stored hashed, verified in constant time, the first one from HEBBS_API_KEY or made and shown
once; `hebbs keys create|list|revoke`."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from engine.tenancy import DEFAULT_TENANT
from interfaces.auth import KEYS_FILENAME, AuthenticationError, KeyRing, bearer_token
from interfaces.cli import main


def test_first_start_uses_hebbs_api_key_else_makes_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HEBBS_API_KEY", "hb_from_env_123456")
    ring = KeyRing(tmp_path / "a")
    assert ring.first_start() is None
    assert ring.verify("hb_from_env_123456") and not ring.verify("hb_from_env_12345")
    assert ring.first_start() is None  # not again: a key exists

    monkeypatch.delenv("HEBBS_API_KEY")
    fresh = KeyRing(tmp_path / "b")
    made = fresh.first_start()
    assert made is not None and made.startswith("hb_") and len(made) > 40
    assert fresh.verify(made) and fresh.first_start() is None
    stored = fresh.path.read_text()
    assert made not in stored and "sha256" in stored  # only the digest is kept
    assert oct(fresh.path.stat().st_mode & 0o777) == "0o600"


def test_bearer_header_parsing() -> None:
    assert bearer_token("Bearer abc") == "abc" and bearer_token("bearer  abc ") == "abc"
    assert bearer_token("Basic abc") is None and bearer_token("Bearer ") is None and bearer_token(None) is None


def test_keys_create_list_revoke_from_the_cli(tmp_path: Path) -> None:
    runner = CliRunner()
    data = ["--data-dir", str(tmp_path)]
    made = runner.invoke(main, [*data, "keys", "create", "--name", "agent-1", "--format", "json"])
    assert made.exit_code == 0, made.output
    created = json.loads(made.stdout)
    assert KeyRing(tmp_path).verify(created["key"])
    listed = runner.invoke(main, [*data, "keys", "list", "--format", "json"])
    assert [k["name"] for k in json.loads(listed.stdout)] == ["agent-1"]
    assert created["key"] not in listed.stdout
    revoked = runner.invoke(main, [*data, "keys", "revoke", created["id"]])
    assert revoked.exit_code == 0 and not KeyRing(tmp_path).verify(created["key"])
    unknown = runner.invoke(main, [*data, "keys", "revoke", "hb_nope"])
    assert unknown.exit_code == 2 and unknown.stderr.startswith("hebbs: error: no API key with id")


def test_a_key_stored_before_tenants_is_bound_to_default(tmp_path: Path) -> None:
    """api_keys.json written before tenants has no `tenant` field: each such key is tenant `default`'s."""
    (tmp_path / KEYS_FILENAME).write_text(json.dumps({"keys": [{
        "id": "hb_oldkey", "name": "first", "created_at": "2026-01-01T00:00:00+00:00",
        "sha256": hashlib.sha256(b"hb_oldkey_secret").hexdigest()}], "revoked": []}))
    record = KeyRing(tmp_path).find("hb_oldkey_secret")
    assert record is not None and record.tenant == DEFAULT_TENANT and not record.public()["admin"]
    made, _ = KeyRing(tmp_path).create("admin", tenant=None)
    assert made.public()["admin"] and KeyRing(tmp_path).find("hb_oldkey_secret") == record


def test_keys_on_a_shared_database_count_for_every_server_at_once(database_url: str) -> None:
    """Two connections to one database stand for two servers: a key made through either is honoured by
    both, a revocation through either refuses it on both, and concurrent changes lose nothing."""
    import threading

    from engine.store.postgres import PostgresStore

    stores = [PostgresStore(database_url), PostgresStore(database_url)]
    try:
        a, b = (KeyRing(None, s) for s in stores)
        assert a.records() == [] and not b.verify("hb_anything")
        record, key = a.create("agent")
        assert b.verify(key) and [r.id for r in b.records()] == [record.id]
        b.revoke(record.id)
        assert not a.verify(key) and not b.verify(key)
        with pytest.raises(AuthenticationError, match="revoked"):
            a.add(key, "again")  # a revoked key is never accepted again, on any server

        made: list[str] = []

        def make(ring: KeyRing) -> None:
            for _ in range(5):
                made.append(ring.create("busy")[1])

        threads = [threading.Thread(target=make, args=(ring,)) for ring in (a, b, a, b)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert len(made) == 20 and all(a.verify(k) and b.verify(k) for k in made)
    finally:
        for s in stores:
            s.close()


def test_keys_cli_on_a_database(database_url: str, tmp_path: Path) -> None:
    """`hebbs --database URL keys create|list|revoke` change the keys every server on the database checks."""
    runner = CliRunner()
    made = runner.invoke(main, ["--database", database_url, "--data-dir", str(tmp_path), "keys", "create", "--name",
                                "ops", "--format", "json"])
    assert made.exit_code == 0, made.output
    created = json.loads(made.stdout)
    listed = runner.invoke(main, ["--database", database_url, "keys", "list", "--format", "json"])
    assert [k["id"] for k in json.loads(listed.stdout)] == [created["id"]]
    assert not (tmp_path / "api_keys.json").exists()  # not to the data dir given beside the database
    assert runner.invoke(main, ["--database", database_url, "keys", "revoke", created["id"]]).exit_code == 0
    listed = runner.invoke(main, ["--database", database_url, "keys", "list", "--format", "json"])
    assert json.loads(listed.stdout) == []
    refused = runner.invoke(main, ["--database", "mysql://x", "keys", "list"])
    assert refused.exit_code == 2 and "postgresql://" in refused.stderr
