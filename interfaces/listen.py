"""Binding a server port exclusively, with a one-line `ListenError` when it cannot be bound."""

from __future__ import annotations

import socket

from interfaces.auth import ListenError


def listen(host: str, port: int, what: str) -> socket.socket:
    """A listening socket on host:port, bound before the store and the model are opened, so a port in use
    ends `hebbs serve` in one line (`what`: REST or gRPC). SO_REUSEADDR only lets a restart bind while old
    connections linger in TIME_WAIT; two listeners on one port are refused by the kernel (no SO_REUSEPORT)."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        raise ListenError(f"cannot listen for {what} on {host}:{port}: {exc.strerror}") from None
    family, kind, proto, _, address = infos[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(2048)
    except OSError as exc:
        sock.close()
        raise ListenError(f"cannot listen for {what} on {host}:{port}: {exc.strerror or exc}") from None
    sock.set_inheritable(True)
    return sock
