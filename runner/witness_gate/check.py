"""`check` (spec section 2): search with Hypothesis, shrink, and retain witnesses.

Hypothesis does all searching and shrinking. With the database off and one reported
bug, the first failing call sees the original input and the last one the minimal
input (Hypothesis ends by replaying it), so both are snapshotted from the calls.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from witness_gate import lock as locks
from witness_gate import store, witness
from witness_gate.canonical import NotPlainJSON, canonical_bytes, parse_json, payload_hash, sha256_hex
from witness_gate.errors import WitnessGateError
from witness_gate.properties import LoadedProperty, PropertyTimeout, add_import_paths, discover, evaluate

_MAX_PARSED_FIXTURE = 64 << 20


class _Falsified(Exception):
    pass


def _expire(signum: int, frame: Any) -> None:
    raise PropertyTimeout()


@contextlib.contextmanager
def hangs_refused(refusal: str, seconds: float):
    """Arms SIGALRM for `time_limit` inside the block (once, not per call), and turns a
    call that ran out of time into a one-line refusal: a hang cannot be shrunk."""
    previous = signal.signal(signal.SIGALRM, _expire)
    try:
        yield
    except PropertyTimeout:
        raise WitnessGateError(f"{refusal} within {seconds:g} s: a hang cannot be checked or shrunk; fix it") from None
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@contextlib.contextmanager
def time_limit(seconds: float):
    """Raises PropertyTimeout in this (main) thread once `seconds` have passed; only
    inside `hangs_refused`, which owns the signal handler."""
    if signal.getsignal(signal.SIGALRM) is not _expire:
        raise RuntimeError("time_limit outside hangs_refused: SIGALRM would kill the process")
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)


@contextlib.contextmanager
def user_output_discarded():
    """Sends what property code prints (at the file-descriptor level) to /dev/null, so a
    chatty or hostile module cannot flood or forge the runner's own output."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = [os.dup(1), os.dup(2)]
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        yield
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for fd in (*saved, devnull):
            os.close(fd)


@dataclass(frozen=True)
class CheckResult:
    properties: int
    written: list[Path]


def load_fixture_value(lock: dict[str, Any], root: Path, needed: bool) -> Any:
    """The fixture's parsed JSON (None when it is not JSON and no property needs it).

    The bytes parsed are the bytes hashed, so the value always belongs to the pin."""
    path = locks.fixture_path(lock, root)
    if lock["fixture"]["size"] > _MAX_PARSED_FIXTURE:
        locks.verify_fixture(lock, root)
        if needed:
            raise WitnessGateError(f"{path}: fixture is over {_MAX_PARSED_FIXTURE} bytes; a property taking `fixture` cannot load it")
        return None
    data = store.read_regular_file(path, "fixture")
    if sha256_hex(data) != lock["fixture"]["sha256"]:
        locks.verify_fixture(lock, root)  # raises with the re-pin message
    try:
        return parse_json(data, str(path))
    except WitnessGateError:
        if needed:
            raise
        return None


def explicit_payloads(prop: LoadedProperty, fixture_value: Any) -> list[tuple[str, Any]]:
    """(origin, payload) pairs checked before the search; "reject" ones must fail."""
    payloads = [("example", example) for example in prop.spec.examples]
    payloads += [("reject", example) for example in prop.spec.rejects]
    if prop.spec.fixture_payloads:
        if not (isinstance(fixture_value, list) and all(isinstance(item, dict) for item in fixture_value)):
            raise WitnessGateError(f"{prop.path}: {prop.assertion_id}: fixture_payloads=True needs a fixture that is a JSON array of objects")
        payloads += [("fixture", item) for item in fixture_value]
    return payloads


def _hide_runner_from_constant_scan() -> None:
    # Hypothesis mixes literal constants from "local" (non-site-packages) modules into
    # draws. Whether this package counts as local depends on how it was installed
    # (source tree, wheel, PEX), which would make the same seed yield different
    # witnesses. Marking our own modules as already scanned keeps streams identical.
    from hypothesis.internal.conjecture import providers

    providers._seen_modules.update(
        id(module) for name, module in list(sys.modules.items()) if name == "witness_gate" or name.startswith("witness_gate.")
    )


def search(prop: LoadedProperty, fixture_value: Any, seed: int, max_examples: int, call_timeout: float = 60.0) -> witness.Failure | None:
    from hypothesis import HealthCheck, Phase, Verbosity, given, settings
    from hypothesis import seed as seeded
    from hypothesis.errors import Flaky, HypothesisException
    from hypothesis.strategies import SearchStrategy

    if not isinstance(prop.spec.payloads, SearchStrategy):
        raise WitnessGateError(f"{prop.path}: {prop.assertion_id}: payloads= must be a Hypothesis strategy")
    failing: list[tuple[bytes, dict[str, Any]]] = []

    def attempt(payload: Any) -> None:
        snapshot = canonical_bytes(payload)  # before the call: the property may mutate it
        with time_limit(call_timeout):
            outcome = evaluate(prop, json.loads(snapshot), fixture_value)
        if not outcome.passed:
            failing.append((snapshot, outcome.evidence))
            raise _Falsified()

    test = seeded(seed)(
        settings(
            database=None,
            deadline=None,
            derandomize=False,
            max_examples=max_examples,
            phases=(Phase.generate, Phase.shrink),
            report_multiple_bugs=False,
            suppress_health_check=list(HealthCheck),
            print_blob=False,
            verbosity=Verbosity.quiet,
        )(given(prop.spec.payloads)(attempt))
    )
    _hide_runner_from_constant_scan()
    try:
        test()
    except _Falsified:
        fully_shrunk = True
    except Flaky:
        # Hypothesis saw the failure come and go while shrinking: keep the last
        # failing payload anyway, marked as not fully shrunk; the replay will judge.
        if not failing:
            return None
        fully_shrunk = False
    except NotPlainJSON as error:
        raise WitnessGateError(f"{prop.path}: {prop.assertion_id}: payloads strategy drew a value that is not plain JSON: {error}") from None
    except HypothesisException as error:
        raise WitnessGateError(f"{prop.path}: {prop.assertion_id}: Hypothesis refused: {type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}") from None
    else:
        return None
    original, final = failing[0], failing[-1]
    return witness.Failure(
        payload=json.loads(final[0]),
        unshrunk_payload=json.loads(original[0]),
        evidence=final[1],
        origin="search",
        seed=seed,
        fully_shrunk=fully_shrunk,
    )


def failures_of(prop: LoadedProperty, fixture_value: Any, lock: dict[str, Any], call_timeout: float = 60.0) -> list[witness.Failure]:
    failures = []
    for index, (origin, payload) in enumerate(explicit_payloads(prop, fixture_value)):
        try:
            snapshot = canonical_bytes(payload)
        except NotPlainJSON as error:
            raise WitnessGateError(f"{prop.path}: {prop.assertion_id}: {origin} payload #{index} is not plain JSON: {error}") from None
        with time_limit(call_timeout):
            outcome = evaluate(prop, json.loads(snapshot), fixture_value, expect="reject" if origin == "reject" else "accept")
        if not outcome.passed:
            value = json.loads(snapshot)
            failures.append(witness.Failure(value, value, outcome.evidence, origin, None, True))
    for seed in lock["seed_schedule"]:
        found = search(prop, fixture_value, seed, lock["max_examples"], call_timeout)
        if found is not None:
            failures.append(found)
            break
    unique: dict[str, witness.Failure] = {}
    for failure in failures:
        unique.setdefault(payload_hash(failure.payload), failure)
    return list(unique.values())


def run(
    lock_path: Path,
    property_files: list[Path],
    out_dir: Path,
    root: Path,
    import_paths: tuple[str, ...],
    call_timeout: float = 60.0,
    fixture_just_pinned: bool = False,
) -> CheckResult:
    """`fixture_just_pinned`: the caller hashed the fixture a moment ago (gate's pin), so
    only the hash after the search is needed; on a 1 GiB fixture each hash costs ~1 s."""
    lock = locks.load(lock_path)
    locks.verify_hypothesis_version(lock, lock_path)
    if not fixture_just_pinned:
        locks.verify_fixture(lock, root)
    add_import_paths(root, import_paths)
    with user_output_discarded(), hangs_refused("importing the property modules did not finish", call_timeout):
        with time_limit(call_timeout):
            props = discover(property_files, root)
    fixture_value = load_fixture_value(lock, root, needed=any(p.spec.takes_fixture or p.spec.fixture_payloads for p in props))
    records = []
    for prop in props:
        with user_output_discarded(), hangs_refused(f"{prop.path}: {prop.assertion_id}: a call did not return", call_timeout):
            found = failures_of(prop, fixture_value, lock, call_timeout)
        records.extend(witness.build(prop, lock, failure) for failure in found)
    locks.verify_fixture(lock, root, when="during check")
    out_dir.mkdir(parents=True, exist_ok=True)  # classify reads it even when nothing failed
    written = []
    for record in records:
        path = out_dir / witness.file_name(record)
        store.save_artifact(path, "witness", record)
        written.append(path)
    return CheckResult(len(props), written)
