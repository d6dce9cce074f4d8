"""A throwaway PostgreSQL server on loopback, in a folder of its own: what the tests, the benchmarks and a
first try of the shared store run against. `python -m engine.store.postgres.local_server DIR --port P`
starts it (or finds it running), prints its URL (`postgresql://hebbs@127.0.0.1:P/hebbs`) and returns;
`--stop` stops it. Production points `--database` at a server it runs itself.

Uses the server binaries of the machine's PostgreSQL (the newest under /usr/lib/postgresql, or `pg_ctl` on
PATH). PostgreSQL refuses to run as root: as root, the folder is given to the `postgres` user, who runs it.
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

from engine.errors import StoreError

DEBIAN_ROOT = Path("/usr/lib/postgresql")


def binaries() -> Path:
    """The folder holding initdb and pg_ctl: the newest Debian server, else the one on PATH."""
    versions = sorted(DEBIAN_ROOT.glob("*/bin/pg_ctl"), key=lambda p: int(p.parent.parent.name), reverse=True)
    if versions:
        return versions[0].parent
    found = shutil.which("initdb")
    if not found:
        raise StoreError("no PostgreSQL server binaries found (install the postgresql package)")
    return Path(found).parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class LocalServer:
    """initdb, start and stop of one server; `url` is its connection string (database `hebbs`)."""

    def __init__(self, folder: Path | None = None, port: int | None = None) -> None:
        self.folder = Path(folder) if folder else Path(tempfile.mkdtemp(prefix="hebbs-pg-"))
        self.port = port or free_port()
        self.bin = binaries()
        self._as = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []

    @property
    def data(self) -> Path:
        return self.folder / "data"

    user = "hebbs"  # the cluster's superuser (trust authentication on loopback only)

    @property
    def url(self) -> str:
        return f"postgresql://{self.user}@127.0.0.1:{self.port}/hebbs"

    def _run(self, *args: str) -> None:
        subprocess.run([*self._as, *args], check=True, capture_output=True, text=True)

    def start(self) -> LocalServer:
        self.folder.mkdir(parents=True, exist_ok=True)
        if self._as:
            shutil.chown(self.folder, "postgres", "postgres")
            closed = [p for p in self.folder.resolve().parents if not os.stat(p).st_mode & 0o001]
            if closed:
                raise StoreError(f"the postgres user cannot reach {self.folder} ({closed[0]} is closed to others): "
                                 "choose a folder under /tmp")
        fresh = not (self.data / "PG_VERSION").exists()
        if fresh:
            self._run(str(self.bin / "initdb"), "-D", str(self.data), "-U", self.user,
                      "--auth=trust", "--encoding=UTF8", "--locale=C")
        self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-l", str(self.folder / "server.log"), "-w",
                  "-o", f"-p {self.port} -k {self.folder} -c listen_addresses=127.0.0.1 -c fsync=on", "start")
        if fresh:
            import psycopg

            with psycopg.connect(self.url.rsplit("/", 1)[0] + "/postgres", autocommit=True) as conn:
                conn.execute("CREATE DATABASE hebbs")
        return self

    def stop(self, mode: str = "fast") -> None:
        """Stop the server (`immediate`: as a crash would, no checkpoint)."""
        if (self.data / "postmaster.pid").exists():
            self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", mode, "-w", "stop")

    def remove(self) -> None:
        """Stop the server at once (it is thrown away) and delete its folder."""
        self.stop("immediate")
        shutil.rmtree(self.folder, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description="Start a throwaway PostgreSQL on loopback for hebbs")
    parser.add_argument("folder", type=Path, help="its data folder (created; kept between runs)")
    parser.add_argument("--port", type=int, default=5432)
    parser.add_argument("--stop", action="store_true", help="stop the server running in the folder")
    args = parser.parse_args()
    server = LocalServer(args.folder.resolve(), args.port)
    if args.stop:
        server.stop()
        return
    if not (server.data / "postmaster.pid").exists():
        server.start()
    print(server.url, flush=True)


if __name__ == "__main__":
    main()
