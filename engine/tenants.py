"""`Tenants`: one engine per tenant over one data dir or database, what a server routes each request to.

Each tenant's engine (engine/tenancy.py) is opened on the first request for it and kept until `close`; all of
them share the default engine's embedding model and clock, so a tenant costs its store and indexes, not a
second model. A request reaches exactly one tenant's engine, whose store holds that tenant's memories only.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from engine.errors import StoreError
from engine.facade import MemoryEngine
from engine.index.vector import VectorIndex
from engine.tenancy import DEFAULT_TENANT, tenant_name

VectorsOf = Callable[[str], VectorIndex]  # a tenant's vector index on a Chroma server (its own collection)


class Tenants:
    """The default tenant's engine, opened by the caller, and the others', opened beside it on first use."""

    def __init__(self, default: MemoryEngine, vectors_of: VectorsOf | None = None) -> None:
        self.default = default
        self._vectors_of = vectors_of
        self._engines: dict[str, MemoryEngine] = {DEFAULT_TENANT: default}
        self._opening = threading.Lock()
        self._closed = False

    def get(self, tenant: str | None) -> MemoryEngine:
        """The engine of `tenant` (None: `default`), opened now if it is not yet; a bad name is refused."""
        name = tenant_name(tenant)
        engine = self._engines.get(name)
        if engine is not None:
            return engine
        with self._opening:
            if self._closed:
                raise StoreError("the tenants' engines are closed")
            if name not in self._engines:
                vectors = self._vectors_of
                self._engines[name] = self.default.open_tenant(
                    name, None if vectors is None else lambda: vectors(name))
            return self._engines[name]

    def opened(self) -> list[MemoryEngine]:
        with self._opening:
            return list(self._engines.values())

    def known(self) -> list[str]:
        """Every tenant that has a store (opened here or not), `default` first."""
        return sorted(set(self.default.tenants()) | set(self._engines), key=lambda t: (t != DEFAULT_TENANT, t))

    def close(self) -> None:
        """Close every opened engine; the default one last (it holds the data dir others live under)."""
        with self._opening:
            self._closed = True
            engines, self._engines = list(self._engines.values()), {}
        for engine in reversed(engines):
            engine.close()
