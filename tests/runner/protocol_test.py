"""What the runner and its workers say: only lines signed under the runner's key open, and
the evidence kinds are the ones a witness may hold."""

from __future__ import annotations

import json

from witness_gate.protocol import EvidenceKind, opened, sign
from witness_gate.schemas import schema_text

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


def test_every_evidence_kind_but_a_replay_that_never_ran_is_one_a_witness_may_hold():
    kinds = {value for name, value in vars(EvidenceKind).items() if name.isupper()}
    in_witness = json.loads(schema_text("witness"))["properties"]["evidence"]["properties"]["kind"]["enum"]
    assert kinds - {EvidenceKind.UNLOADABLE} == set(in_witness)
