"""What the runner and its workers say to each other: the one place both sides agree on.

The runner (the deciding side) and a worker (`witness_gate.worker`, the side that runs user
code) share nothing else: every message, payload and piece of evidence that crosses
between them is named here, and both import it. Pure: it imports neither side.

Messages go one way, worker to runner, on a private pipe: one JSON object per line, its
`event` one of `Event`'s names. The pipe is inherited, so the code under test, running in
the same process, can write to it too. Each line carries an HMAC under a key the runner
hands the worker on a pipe of its own, read and closed before any user code is imported: a
line written by anything but the worker's own `send` fails verification, and the runner
ends the worker as a protocol break. (Code that reaches into the worker's memory for the
key is written against the harness, a limit the README states.)

Payloads of a pytest `@given` test, and of a stateful test alike (JSON, as witnesses hold
them; `given_tests`):
  {"choices": "<base64>"}        the choice sequence of a failing case (the witness; of a
                                 state machine, the rules it ran and their arguments)
  {"example": k}                 the test's k-th `@example` (explicit examples are not shrunk)
  {"search": seed, "calls": n}   the test's seeded search again, its first n cases: history,
                                 or the witness of a failure that left no choice sequence
                                 (a case that ended the worker, a KeyboardInterrupt)
  {"run": true}                  history: a plain test (neither), run once
and, announced by a search call only, {"case": n}: the case is a choice sequence only once
it ends.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
from collections.abc import Mapping, Sequence
from typing import Any

from witness_gate import seeds
from witness_gate.canonical import canonical_bytes


class Event:
    """The names of the worker's messages, with the fields each carries."""

    MODULE = (
        "module"  # the module loaded: sha256, properties [{assertion_id, line}], kind "pytest" for a pytest module,
    )
    # whose searched tests also say whether each is a state machine ("stateful": true; shown, never decided from)
    PROPERTY = "property"  # check: the calls that follow are this assertion_id's
    SEARCH = "search"  # check: a search under this seed of the schedule begins
    CALL = "call"  # check: origin and payload, before the call runs; replay: job and slot
    RESULT = "result"  # check: the announced call passed, or its evidence
    SEARCHED = (
        "searched"  # check: the property's searches ended with status (`SEARCH_STATUSES`), and a pytest test's given
    )
    # check: a pytest plain test (no @given, no state machine) ran once: assertion_id, passed, evidence, and
    # excused_by_mark (a skip or xfail mark excused it)
    PLAIN = "plain"
    MISSING = "missing"  # replay: the module has no assertion for this job
    OUTCOME = "outcome"  # replay: job and slot failed, or not, with evidence, and drew (`input_digest`, or null)
    PROBLEM = "problem"  # the module could not be run: message
    DONE = "done"  # the last message of every conversation


# Where a check call's payload came from: the property's explicit examples and rejects, the
# fixture's elements, or Hypothesis' search.
CALL_ORIGINS = ("example", "reject", "fixture", "search")
# How a property's searches ended; "skipped" only for a pytest test pytest skipped.
SEARCH_STATUSES = ("passed", "falsified", "flaky", "skipped")


# --- evidence ------------------------------------------------------------------------

_MAX_MESSAGE = 2000
_ADDRESS = re.compile(r"0x[0-9a-fA-F]{4,}")


class EvidenceKind:
    """What a failing call's evidence says happened (a witness's `evidence.kind`,
    schemas/witness.schema.json)."""

    RETURNED_FALSE = "returned_false"
    RETURNED_NON_BOOL = "returned_non_bool"
    EXCEPTION = "exception"  # any exception, SystemExit and KeyboardInterrupt included
    ACCEPTED_REJECT = "accepted_reject"  # a payload the property must reject, accepted
    FIXTURE = "fixture"  # the pinned fixture could not be read for the call
    TIMEOUT = "timeout"
    CRASHED = "crashed"
    PROTOCOL = "protocol"
    # A replay that never ran because its interpreter could not load the module (or the
    # payload): no evidence about the witness either way, so neither a pass nor a failure;
    # never in a witness.
    UNLOADABLE = "unloadable"


# The kinds of a failing call that ended the worker rather than returning (a hang the
# runner killed, a process that died, a broken message channel): the runner, not the
# property, wrote the evidence.
ENDED_CALL_KINDS = (EvidenceKind.TIMEOUT, EvidenceKind.CRASHED, EvidenceKind.PROTOCOL)


def failure_evidence(kind: str, exception_type: str | None, message: str) -> dict[str, Any]:
    return {"kind": kind, "exception_type": exception_type, "message": _clean_message(message)}


def describe(error: BaseException) -> str:
    """An exception's message as evidence holds it: no addresses, cut to length."""
    try:
        return _clean_message(str(error))
    except Exception:  # a __str__ that raises must not hide the failure
        return "<unprintable exception>"


def _clean_message(text: str) -> str:
    # Memory addresses differ from run to run; witnesses must not.
    text = _ADDRESS.sub("0x?", text)
    return text if len(text) <= _MAX_MESSAGE else text[: _MAX_MESSAGE - 3] + "..."


# --- payloads of a pytest test ---------------------------------------------------------


# The input a replayed `@given` case drew, as the worker reports it (`Outcome.drew`): the
# first 32 hex digits of a sha256.
_INPUT_DIGEST = re.compile(r"[0-9a-f]{32}")


def input_digest(encoded: str) -> str:
    return hashlib.sha256(encoded.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def is_input_digest(value: Any) -> bool:
    return isinstance(value, str) and _INPUT_DIGEST.fullmatch(value) is not None


def choices_payload(value: bytes) -> dict[str, str]:
    return {"choices": base64.b64encode(value).decode("ascii")}


def case_payload(case: int) -> dict[str, int]:
    return {"case": case}


def call_seed(search_seed: int, assertion_id: str, case: int) -> int:
    """The `random` seed of case `case` of a search: the worker seeds the case with it, the
    runner derives the same one for the history a replay gives it."""
    return seeds.call_random_seed(search_seed, assertion_id, canonical_bytes(case_payload(case)))


def left_out(
    jobs: list[dict[str, Any]],
    index: int,
    slot: int,
    failed: Mapping[int, Mapping[int, bool]],
    slots: int,
    probe_passes: Sequence[Sequence[int]] | None,
) -> bool:
    """Whether a replay interpreter leaves out job `index` at `slot`, `failed` holding each
    job's outcomes so far by slot (of `slots`). The worker skips such a replay and the
    runner expects no outcome for it: both read this, so neither side can leave out more.

    A payload after its history, where the same witness's same payload alone (the forked job
    without history) failed in every slot there: earlier calls cannot make it fail more than
    always (`evidence.replayed_variant` reads a variant after history only where the payload
    alone fails sometimes or never), and history is what makes a red module's replays cost a
    search per earlier test.

    In the probe (`probe_passes`: each condition's first slot, its number of settings and
    of passes, one pass after another, and whether a cause reads its passes' bursts), a
    later pass where the outcomes so far under that condition rule out a split by setting
    (`evidence.follows_setting` needs every setting to give the same outcome in every pass,
    and some settings to fail where others pass): its first pass gave one outcome under
    every setting, or a setting has already given both. Of a condition whose bursts a mixed
    witness's cause reads (the collector's, `evidence.cause`), only the later passes of a
    job the runner marked `settled` (its replays so far all failed, or all passed) whose
    first pass gave one outcome."""
    job = jobs[index]
    outcomes = failed.get(index, {})
    if probe_passes is not None:
        for first, settings, passes, bursts_read in probe_passes:
            if first + settings <= slot < first + settings * passes:
                if bursts_read:
                    return bool(job.get("settled")) and _one_outcome_opening(outcomes, first, settings)
                return _one_outcome_opening(outcomes, first, settings) or _a_setting_gave_both(
                    outcomes, first, settings, slot
                )
        return False
    if not job["history"] or not job["fork"]:
        return False
    return any(
        alone["fork"]
        and not alone["history"]
        and alone["witness"] == job["witness"]
        and alone["payload"] == job["payload"]
        and len(failed.get(other, {})) == slots
        and all(failed[other].values())
        for other, alone in enumerate(jobs)
    )


def _one_outcome_opening(outcomes: Mapping[int, bool], first: int, settings: int) -> bool:
    """Whether a condition's first pass, every setting of it reported, gave one outcome."""
    opening = {outcomes.get(setting) for setting in range(first, first + settings)}
    return None not in opening and len(opening) == 1


def _a_setting_gave_both(outcomes: Mapping[int, bool], first: int, settings: int, slot: int) -> bool:
    """Whether one of a condition's settings has failed and passed in the slots before `slot`."""
    seen: dict[int, set[bool]] = {}
    for earlier in range(first, slot):
        if earlier in outcomes:
            seen.setdefault((earlier - first) % settings, set()).add(outcomes[earlier])
    return any(len(both) == 2 for both in seen.values())


# --- signing -------------------------------------------------------------------------

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
