"""API keys for `hebbs serve`: `Authorization: Bearer <key>` over REST, metadata `authorization` over gRPC.

Keys live in `<data dir>/api_keys.json`, or, on a database several servers share (PostgreSQL), in the
database (`KeyStorage`), so a key made or revoked through any server counts on every other from its next
request; either way as SHA-256 digests only (a key is 32 random bytes, so a plain
digest is enough: there is nothing to brute-force), and a presented key is compared with every stored
digest in constant time. A key is shown once, when it is created; it is never logged.

Each key is bound to one tenant (engine/tenancy.py) and reads and writes that tenant's memories only, or is an
admin key (`tenant` null), which may ask for any tenant. A key stored before tenants existed has no `tenant`
field: it is bound to `default`, the tenant that holds everything such a store had.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import os
import secrets
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from engine.errors import HebbsError, StoreError
from engine.lock import exclusive as _lock
from engine.store.interface import KeyStorage
from engine.tenancy import DEFAULT_TENANT, tenant_name

API_KEY_ENV = "HEBBS_API_KEY"  # the variable the official SDK reads, too
KEYS_FILENAME = "api_keys.json"
KEY_PREFIX = "hb_"
TENANT_HEADER = "X-Hebbs-Tenant"  # REST: the tenant a request asks for (gRPC: the request's tenant_id)


class AuthenticationError(HebbsError):
    """No API key, or one that is not (or no longer) valid."""


class UnknownKeyError(HebbsError):
    """`hebbs keys revoke` was given an id that matches no key."""


class PermissionRefusedError(HebbsError):
    """The server does not allow this (indexing outside its --index-root folders, a foreign Host or Origin)."""


class ConflictError(HebbsError):
    """The request collides with another (an idempotency key in use, or used for another operation)."""


class ListenError(HebbsError):
    """`hebbs serve` cannot listen on the address it was given (port in use, no such interface)."""


@dataclass(frozen=True, slots=True)
class KeyRecord:
    """A stored key: its public id (the first characters of the key), a name, when, the digest, and its tenant
    (None: an admin key, which may use every tenant)."""

    id: str
    name: str
    created_at: str
    sha256: str
    tenant: str | None = DEFAULT_TENANT

    def public(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name, "created_at": self.created_at, "tenant": self.tenant,
                "admin": self.tenant is None}


def _digest(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def bearer_token(header: str | None) -> str | None:
    """The key in `Bearer <key>`; None when the header is absent or of another scheme."""
    if not header:
        return None
    scheme, _, token = header.strip().partition(" ")
    return token.strip() or None if scheme.lower() == "bearer" else None


class KeyRing:
    """The API keys of one data dir, or of a database several servers share.

    Every change is a read-modify-write under an exclusive lock, so concurrent `hebbs keys` commands and
    starting servers neither lose a key nor undo a revocation: in a data dir a lock on `api_keys.json.lock`
    (the file is written to a unique temporary file, fsynced and renamed over the old one); in a shared
    database an advisory lock held by the transaction that rewrites the key document. A revoked key's digest
    is kept, and such a key is never accepted again (not even from HEBBS_API_KEY).
    """

    def __init__(self, data_dir: str | Path | None, shared: KeyStorage | None = None) -> None:
        """The keys of `data_dir`, or (`shared`) of a database several servers share."""
        if shared is None and data_dir is None:
            raise StoreError("API keys need a data dir or a shared database")
        self.path = Path(data_dir or ".") / KEYS_FILENAME
        self.shared = shared

    def records(self) -> list[KeyRecord]:
        return self._load()[0]

    def _load(self) -> tuple[list[KeyRecord], set[str]]:
        if self.shared is not None:
            return _parse(self.shared.api_keys(), "the database")
        if not self.path.exists():
            return [], set()
        try:
            text = self.path.read_text(encoding="utf-8")
        except OSError as exc:
            raise StoreError(f"cannot read the API keys in {self.path}: {exc}") from exc
        return _parse(text, str(self.path))

    @contextmanager
    def _changing(self) -> Iterator[tuple[list[KeyRecord], set[str]]]:
        """The keys and revoked digests, locked; what the block leaves in them is saved when it ends."""
        if self.shared is not None:
            with self.shared.changing_api_keys() as document:
                records, revoked = _parse(document.text, "the database")
                yield records, revoked
                document.text = _dump(records, revoked)
            return
        try:
            self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            handle = open(self.path.with_name(KEYS_FILENAME + ".lock"), "a")  # noqa: SIM115 (held below)
        except OSError as exc:
            raise StoreError(f"cannot change the API keys in {self.path.parent}: {exc.strerror or exc}") from None
        with handle:
            _lock(handle)
            records, revoked = self._load()
            yield records, revoked
            self._save(records, revoked)

    def _save(self, records: list[KeyRecord], revoked: set[str]) -> None:
        try:
            fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=f".{KEYS_FILENAME}.")
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as handle:
                    handle.write(_dump(records, revoked))
                    handle.flush()
                    os.fsync(handle.fileno())
                os.replace(tmp, self.path)
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise
            _fsync_dir(self.path.parent)
        except OSError as exc:
            raise StoreError(f"cannot write the API keys in {self.path.parent}: {exc.strerror or exc}") from None

    def add(self, key: str, name: str, tenant: str | None = DEFAULT_TENANT) -> KeyRecord:
        """Store `key` (given, e.g. from HEBBS_API_KEY) for `tenant` (None: an admin key); returns its record.
        A key stored already keeps the tenant it has."""
        tenant = None if tenant is None else tenant_name(tenant)
        if not key.strip():
            raise AuthenticationError("an API key must not be empty")
        digest = _digest(key)
        with self._changing() as (records, revoked):
            if digest in revoked:
                raise AuthenticationError("this API key was revoked; it cannot be added again")
            for record in records:
                if hmac.compare_digest(record.sha256, digest):
                    return record
            record = KeyRecord(
                id=key[: len(KEY_PREFIX) + 6], name=name, created_at=datetime.now(UTC).isoformat(timespec="seconds"),
                sha256=digest, tenant=tenant,
            )
            records.append(record)
            return record

    def create(self, name: str = "default", tenant: str | None = DEFAULT_TENANT) -> tuple[KeyRecord, str]:
        """A new random key of `tenant` (None: an admin key): its record and the key itself (shown once, never
        stored)."""
        key = KEY_PREFIX + secrets.token_urlsafe(32)
        return self.add(key, name, tenant), key

    def take(self, other: KeyRing) -> int:
        """Add `other`'s keys and revocations to these (a migration's copy: run twice, it adds nothing the
        second time); a key revoked in either stays revoked. Returns how many keys were added."""
        theirs, their_revoked = other._load()
        with self._changing() as (records, revoked):
            revoked |= their_revoked
            known = {r.sha256 for r in records}
            added = [r for r in theirs if r.sha256 not in known]
            records[:] = [r for r in records + added if r.sha256 not in revoked]
            return len(added)

    def revoke(self, key_id: str) -> KeyRecord:
        with self._changing() as (records, revoked):
            gone = [r for r in records if r.id == key_id]
            if not gone:
                raise UnknownKeyError(f"no API key with id {key_id!r}; `hebbs keys list` shows them")
            records[:] = [r for r in records if r.id != key_id]
            revoked.update(r.sha256 for r in gone)
            return gone[0]

    def find(self, key: str | None) -> KeyRecord | None:
        """The stored record of `key`, None if it is not a stored key; every digest is compared, in constant time."""
        if not key:
            return None
        digest = _digest(key)
        found = None
        for record in self.records():
            if hmac.compare_digest(record.sha256, digest):
                found = record
        return found

    def verify(self, key: str | None) -> bool:
        return self.find(key) is not None

    def first_start(self) -> str | None:
        """With no key stored: `HEBBS_API_KEY` becomes the first key (None returned), else a new key is made
        and returned so the caller can print it once."""
        if self.records():
            return None
        given = os.environ.get(API_KEY_ENV, "").strip()
        if given:
            self.add(given, API_KEY_ENV)
            return None
        return self.create("first")[1]


def _parse(text: str | None, where: str) -> tuple[list[KeyRecord], set[str]]:
    if text is None:
        return [], set()
    try:
        raw = json.loads(text)
        return [KeyRecord(**entry) for entry in raw["keys"]], set(raw.get("revoked", []))
    except (ValueError, KeyError, TypeError) as exc:
        raise StoreError(f"cannot read the API keys in {where}: {exc}") from exc


def _dump(records: list[KeyRecord], revoked: set[str]) -> str:
    return json.dumps({"keys": [asdict(r) for r in records], "revoked": sorted(revoked)}, indent=2)


def _fsync_dir(folder: Path) -> None:
    """Make a rename in `folder` durable (POSIX; a no-op where directories cannot be opened)."""
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
