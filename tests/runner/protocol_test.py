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


def _by_slot(outcomes: list[bool], first: int = 0) -> dict[int, bool]:
    return dict(enumerate(outcomes, start=first))


def test_a_payload_after_its_history_is_left_out_only_where_it_failed_alone_in_every_slot():
    assert left_out(JOBS, 1, 0, {0: _by_slot([True] * 5)}, 5, None)
    assert not left_out(
        JOBS, 1, 0, {0: _by_slot([True, True, False, True, True])}, 5, None
    )  # alone passed once: history may tell why
    assert not left_out(JOBS, 1, 0, {0: _by_slot([False] * 5)}, 5, None)
    assert not left_out(JOBS, 1, 0, {0: _by_slot([True] * 4)}, 5, None)  # a slot unreported is no "every slot"
    assert not left_out(JOBS, 1, 0, {}, 5, None)
    # Only the same witness's same payload alone speaks for it; the other jobs are never left out.
    other = [_job("v", {"n": 1}), JOBS[1]]
    assert not left_out(other, 1, 0, {0: _by_slot([True] * 5)}, 5, None)
    assert not left_out([_job("w", {"n": 2}), JOBS[1]], 1, 0, {0: _by_slot([True] * 5)}, 5, None)
    assert not left_out(JOBS, 0, 0, {0: _by_slot([True] * 5)}, 5, None)
    assert not left_out(JOBS, 2, 0, {0: _by_slot([True] * 5)}, 5, None)


# A probe laid out as `replay.probe_passes` lays it out, with fewer passes for the
# collector: twelve collector settings in two passes (a mixed witness's cause reads their
# bursts), then six directory orders in four.
PASSES = [[0, 12, 2, 1], [24, 6, 4, 0]]


def test_the_collectors_second_pass_is_left_out_only_for_a_settled_job_whose_first_pass_agreed():
    settled, mixed = [_job("w", {"n": 1}, settled=True)], [_job("w", {"n": 1})]
    assert left_out(settled, 0, 12, {0: _by_slot([True] * 12)}, 48, PASSES)
    assert left_out(settled, 0, 23, {0: _by_slot([False] * 12)}, 48, PASSES)
    assert not left_out(settled, 0, 11, {0: _by_slot([True] * 11)}, 48, PASSES)  # the first pass always runs
    assert not left_out(
        settled, 0, 12, {0: _by_slot([True] * 11 + [False])}, 48, PASSES
    )  # a split: the second pass confirms it or breaks it
    assert not left_out(mixed, 0, 12, {0: _by_slot([True] * 12)}, 48, PASSES)  # a mixed witness's cause reads bursts
    broken = _by_slot([True] * 11 + [False] + [False])  # setting 0 failed, then passed: no split, but bursts
    assert not left_out(settled, 0, 13, {0: broken}, 48, PASSES)


def test_the_directory_orders_later_passes_are_left_out_once_no_split_by_order_can_show():
    settled, mixed = [_job("w", {"n": 1}, settled=True)], [_job("w", {"n": 1})]
    collector = _by_slot([True] * 11 + [False])  # the collector's outcomes do not speak for the order's
    agree = {**collector, **_by_slot([True] * 6, first=24)}
    split = {**collector, **_by_slot([True] * 5 + [False], first=24)}
    unfinished = {**collector, **_by_slot([True] * 5, first=24)}
    for job in (settled, mixed):  # only follows_setting reads these replays
        assert not left_out(job, 0, 24, {0: collector}, 48, PASSES)  # the first pass always runs
        assert not left_out(job, 0, 29, {0: unfinished}, 48, PASSES)
        assert left_out(job, 0, 30, {0: agree}, 48, PASSES)
        assert left_out(job, 0, 47, {0: agree}, 48, PASSES)
        assert not left_out(job, 0, 30, {0: split}, 48, PASSES)  # a split: the later passes confirm or break it
        assert not left_out(job, 0, 30, {0: unfinished}, 48, PASSES)
        assert not left_out(job, 0, 35, {0: {**split, **_by_slot([True] * 5 + [False], first=30)}}, 48, PASSES)
        # Order 0 failed, then passed: whatever comes, the outcomes no longer follow the order.
        broke = {**split, **_by_slot([False], first=30)}
        assert left_out(job, 0, 31, {0: broke}, 48, PASSES)
        assert left_out(job, 0, 47, {0: broke}, 48, PASSES)
        assert not left_out(job, 0, 48, {0: agree}, 49, PASSES)  # past every pass
