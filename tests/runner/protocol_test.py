"""What the runner and its workers say: only lines signed under the runner's key open, and
the evidence kinds are the ones a witness may hold."""

from __future__ import annotations

import json

from witness_gate.protocol import EvidenceKind, left_out, opened, sign
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


def _job(witness: str, payload: object, history: list | None = None, fork: bool = True, settled: bool = False) -> dict:
    return {"witness": witness, "payload": payload, "history": history or [], "fork": fork, "settled": settled}


# A witness's jobs as `replay.jobs_for` lays them out: alone, after its history, in one process.
JOBS = [_job("w", {"n": 1}), _job("w", {"n": 1}, history=[{"payload": {"n": 0}}]), _job("w", {"n": 1}, fork=False)]


def test_a_payload_after_its_history_is_left_out_only_where_it_failed_alone_in_every_slot():
    assert left_out(JOBS, 1, 0, {0: [True] * 5}, 5, None)
    assert not left_out(
        JOBS, 1, 0, {0: [True, True, False, True, True]}, 5, None
    )  # alone passed once: history may tell why
    assert not left_out(JOBS, 1, 0, {0: [False] * 5}, 5, None)
    assert not left_out(JOBS, 1, 0, {0: [True] * 4}, 5, None)  # a slot unreported is no "every slot"
    assert not left_out(JOBS, 1, 0, {}, 5, None)
    # Only the same witness's same payload alone speaks for it; the other jobs are never left out.
    other = [_job("v", {"n": 1}), JOBS[1]]
    assert not left_out(other, 1, 0, {0: [True] * 5}, 5, None)
    assert not left_out([_job("w", {"n": 2}), JOBS[1]], 1, 0, {0: [True] * 5}, 5, None)
    assert not left_out(JOBS, 0, 0, {0: [True] * 5}, 5, None)
    assert not left_out(JOBS, 2, 0, {0: [True] * 5}, 5, None)


def test_the_probes_second_pass_is_left_out_only_for_a_settled_job_whose_first_pass_agreed():
    settled, mixed = [_job("w", {"n": 1}, settled=True)], [_job("w", {"n": 1})]
    assert left_out(settled, 0, 12, {0: [True] * 12}, 24, 12)
    assert left_out(settled, 0, 23, {0: [False] * 12}, 24, 12)
    assert not left_out(settled, 0, 11, {0: [True] * 11}, 24, 12)  # the first pass always runs
    assert not left_out(
        settled, 0, 12, {0: [True] * 11 + [False]}, 24, 12
    )  # a split: the second pass confirms it or breaks it
    assert not left_out(mixed, 0, 12, {0: [True] * 12}, 24, 12)  # a mixed witness's cause reads both passes' bursts
    # The directory-order probe's passes follow the collector's two: they always run.
    assert not left_out(settled, 0, 24, {0: [True] * 12}, 48, 12)
    assert not left_out(settled, 0, 47, {0: [True] * 12 + [False] * 23}, 48, 12)
