"""The worker's channel: only lines signed under the runner's key open."""

from __future__ import annotations

from witness_gate.protocol import opened, sign

KEY, OTHER = b"k" * 32, b"o" * 32
BODY = b'{"event":"result","passed":false}'


def test_a_signed_line_opens_to_its_body():
    assert opened(KEY, sign(KEY, BODY)) == BODY


def test_a_line_the_worker_did_not_sign_does_not_open():
    forged = BODY.replace(b"false", b"true")
    assert opened(KEY, BODY) is None  # bare JSON, as code under test would write it
    assert opened(KEY, sign(OTHER, BODY)) is None  # another key
    assert opened(KEY, sign(KEY, BODY)[:33] + forged) is None  # a genuine MAC over another body
    assert opened(KEY, b"") is None
