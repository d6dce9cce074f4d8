"""128-bit identifiers that sort by creation time (ULID layout, Crockford base32 text).

48 bits of milliseconds then 80 random bits; within one millisecond the random part is incremented so
ids made by one process stay strictly increasing. Binary transports carry the same 16 bytes.
"""

from __future__ import annotations

import os
import threading
import time

_ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
_DECODE = {c: i for i, c in enumerate(_ALPHABET)}
_DECODE.update({c.lower(): i for c, i in list(_DECODE.items())})
_RANDOM_MAX = (1 << 80) - 1

_lock = threading.Lock()
_last_ms = -1
_last_rand = 0


def new_id(ms: int | None = None) -> str:
    """A new id; `ms` (milliseconds since the epoch) places it in time, e.g. for imported history."""
    global _last_ms, _last_rand
    with _lock:
        now = int(time.time() * 1000) if ms is None else ms
        if now == _last_ms and _last_rand < _RANDOM_MAX:
            _last_rand += 1
        else:
            _last_ms = now
            _last_rand = int.from_bytes(os.urandom(10), "big") >> 1  # leave headroom to increment
        value = (now << 80) | _last_rand
    return encode(value)


def encode(value: int) -> str:
    chars = []
    for _ in range(26):
        chars.append(_ALPHABET[value & 31])
        value >>= 5
    return "".join(reversed(chars))


def decode(text: str) -> int:
    """The 128-bit integer behind an id; raises ValueError on anything that is not one."""
    if len(text) != 26 or text[0] not in "01234567":
        raise ValueError(f"not a memory id: {text!r}")
    value = 0
    for c in text:
        try:
            value = (value << 5) | _DECODE[c]
        except KeyError:
            raise ValueError(f"not a memory id: {text!r}") from None
    return value


def is_valid(text: str) -> bool:
    try:
        decode(text)
    except (ValueError, TypeError):
        return False
    return True


def to_bytes(text: str) -> bytes:
    return decode(text).to_bytes(16, "big")


def from_bytes(raw: bytes) -> str:
    if len(raw) != 16:
        raise ValueError(f"a memory id is 16 bytes, got {len(raw)}")
    return encode(int.from_bytes(raw, "big"))
