"""`ReplicaFollower`: an engine on a store that other engines write at the same time (several `hebbs serve`
replicas on one PostgreSQL database) keeps its own in-memory indexes, the vector index included, in step
with their commits.

It reads the store's change log (`Storage.changes_since`) from the change number it last caught up to, and
hands the changed memories to `DerivedIndexes.others_changed`. It runs before each request (cheap: one read
of the store's version while no one else wrote) and, where the store pushes notifications (PostgreSQL's
LISTEN/NOTIFY), as soon as another replica commits, so a request rarely waits for it. A missed notification
or a restart loses nothing: the change number says where to resume.
"""

from __future__ import annotations

import logging
import threading

from engine.index.derived import DerivedIndexes
from engine.store.interface import Storage

log = logging.getLogger(__name__)


class ReplicaFollower:
    def __init__(self, store: Storage, indexes: DerivedIndexes) -> None:
        self._store = store
        self._indexes = indexes
        self._lock = threading.Lock()
        self._seq = store.change_seq()
        self._others = store.version()[1]

    def catch_up(self) -> None:
        """Apply every other engine's commit since the last call (none: one version read)."""
        others = self._store.version()[1]
        if others == self._others:
            return
        with self._lock:
            caught = self._store.changes_since(self._seq)
            if caught is None:
                return
            seq, changed = caught
            if changed:
                self._indexes.others_changed(changed)
            self._seq, self._others = seq, others

    def notified(self) -> None:
        """Called by the store's listener when another replica committed (on its thread)."""
        try:
            self.catch_up()
        except Exception as exc:  # noqa: BLE001 - the next request catches up again and reports
            log.warning("could not follow another replica's commit yet: %s", exc)
