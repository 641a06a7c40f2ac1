"""The worker's message channel: one signed JSON line per message.

The channel is a pipe the worker inherits, so the code under test, running in the same
process, can write to it too. Each line carries an HMAC under a key the runner hands the
worker on a pipe of its own, read and closed before any user code is imported: a line
written by anything but the worker's own `send` fails verification, and the runner ends
the worker as a protocol break. (Code that reaches into the worker's memory for the key
is written against the harness, a limit the README states.) Pure: bytes in, bytes out.
"""

from __future__ import annotations

import hashlib
import hmac

KEY_BYTES = 32
_MAC_HEX = 32  # 16 bytes of HMAC-SHA256, in hex


def sign(key: bytes, body: bytes) -> bytes:
    """The line for one message body (no newline)."""
    return _mac(key, body) + b" " + body


def opened(key: bytes, line: bytes) -> bytes | None:
    """The body of a line the key signed, or None."""
    mac, _, body = line.partition(b" ")
    if len(mac) != _MAC_HEX or not hmac.compare_digest(mac, _mac(key, body)):
        return None
    return body


def _mac(key: bytes, body: bytes) -> bytes:
    return hmac.new(key, body, hashlib.sha256).hexdigest()[:_MAC_HEX].encode()
