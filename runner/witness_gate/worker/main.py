"""The worker's main loop: runs inside a fresh interpreter (`sandbox`) and calls user code.

Nothing here decides anything. It imports one property module (`property_module`), or
has pytest collect one when it is a module of `@given` tests (`pytest_module`), calls
properties as asked and reports each call on the private message pipe (`protocol`);
the supervising runner keeps its own record of the calls, enforces every deadline and
treats silence, an early exit or a malformed message as a failure. Two modes:

- `check`: the explicit payloads, then Hypothesis' search and shrinking, for each
  property of the module; every call is announced with its payload before it runs.
- `replay`: given witness payloads (each optionally after the calls that preceded it
  in `check`), replay them in forked children at spaced slots, each call under a
  `random` seed chosen by the runner (and, in the probe, a collector setting, a
  directory order or a wall clock), then once more in this process without forking.

Before this module loads, the worker has moved on to the process id the runner chose
(`process_id`); a forked replay starts from the memory layout `heap_layout` arranges.
Directories list as the file system lists them, except in the directory-order probe's
children (`directory_order`, installed before any user code), and the wall clock reads the
real time, except in the clock probe's children (`clock`, in the probe's worker alone).
"""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import importlib
import json
import os
import random
import select
import signal
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from witness_gate import conditions, given_tests, protocol, seeds
from witness_gate.canonical import NotPlainJSON, canonical_bytes, parse_json, sha256_hex
from witness_gate.errors import WitnessGateError
from witness_gate.protocol import Event, EvidenceKind, failure_evidence
from witness_gate.store import read_regular_file
from witness_gate.worker import clock, directory_order, heap_layout, pytest_module
from witness_gate.worker.property_module import LoadedProperty, Outcome, add_import_paths, import_module, properties_of
from witness_gate.worker.pytest_module import GivenTest

# What a replay calls: a property, or a test under pytest; both answer `run`.
Assertion = LoadedProperty | GivenTest


_MAX_PARSED_FIXTURE = 64 << 20  # a property that takes the fixture gets it parsed; larger ones cannot be


class _Channel:
    def __init__(self, fd: int, key: bytes) -> None:
        self._fd, self.key = fd, key

    def send(self, message: dict[str, Any]) -> None:
        self.send_bytes(json.dumps(message, separators=(",", ":")).encode())

    def send_bytes(self, body: bytes) -> None:
        data = protocol.sign(self.key, body) + b"\n"
        while data:
            data = data[os.write(self._fd, data) :]


def _read_key(fd: int) -> bytes:
    """The channel key, from its own pipe, which is closed before any user code runs."""
    key = b""
    while len(key) < protocol.KEY_BYTES and (chunk := os.read(fd, protocol.KEY_BYTES - len(key))):
        key += chunk
    os.close(fd)
    return key


class _Falsified(Exception):
    pass


def main(request_path: str) -> None:
    request = json.loads(Path(request_path).read_text("utf-8"))
    channel = _Channel(request["protocol_fd"], _read_key(request["key_fd"]))
    _network.confined = request["confined"]
    sys.addaudithook(_network.hear)  # before any user code: an audit hook cannot be removed
    try:
        root = Path(request["root"])
        missing = conditions.machine_problem(request.get("condition") or {})
        if missing is not None:  # a silent fall-back (UTC, the C locale) would test another condition
            raise WitnessGateError(missing)
        # Hypothesis, and pytest where the module is pytest's, are the runner's, loaded before the
        # patch's import paths exist: a `hypothesis`, `pytest`, `pluggy` or plugin module in the
        # implementation cannot stand in for what runs the search or the session.
        try:
            import hypothesis.strategies  # noqa: F401
        except ImportError as error:  # no user code has run: the worker's view of the runner is short
            raise WitnessGateError(
                f"the worker cannot import the runner's Hypothesis ({error}): its sandbox does not show the runner's "
                "install"
            ) from None
        source = read_regular_file(root / request["module"], "property module")
        is_pytest_module = given_tests.is_pytest_module(source)
        if is_pytest_module:
            # Only there: a property module's search and replays never use pytest, and importing it
            # was a sixth of each worker's start (0.05 s of CPU, in every interpreter of a replay).
            _load_runner_pytest()

        directory_order.install()  # before any user code: a module's own reference to os.listdir lists through it
        directory_order.start_in(request.get("directory_order", seeds.AS_LISTED))  # a search leg's, its witness's
        if request.get("probe"):  # its forked children list in the probe's orders
            directory_order.remember_listings()
        if any("clock" in setting for setting in request.get("probe") or ()):  # and read the probe's clocks
            clock.install()
        add_import_paths(root, request["import_paths"])
        fixture = _Fixture(
            None if request["fixture_path"] is None else Path(request["fixture_path"]), request["fixture_sha256"]
        )
        if is_pytest_module:
            pytest_module.run_session(
                root,
                request["module"],
                source,
                request["max_examples"],
                _settle_constant_scan,
                lambda tests: _pytest_module(request, channel, tests, sha256_hex(source), fixture),
            )
        else:
            module, digest = import_module(root / request["module"], request["module"])
            props = properties_of(module, request["module"], digest)
            channel.send(
                {
                    "event": Event.MODULE,
                    "sha256": digest,
                    "properties": [{"assertion_id": p.assertion_id, "line": p.line} for p in props],
                }
            )
            if request["mode"] == "check":
                _check(request, channel, props, fixture)
            else:
                _replay(request, channel, {p.assertion_id: p for p in props}, fixture)
    except WitnessGateError as error:
        channel.send({"event": Event.PROBLEM, "message": str(error)})
    channel.send({"event": Event.DONE})
    # Leave at once: atexit handlers and threads of the user's module must not run after "done".
    os._exit(0)


def _load_runner_pytest() -> None:
    for name in ("pytest", "_pytest.python", "pluggy", pytest_module.HYPOTHESIS_PLUGIN):
        try:
            importlib.import_module(name)
        except ImportError:  # a runner without pytest gates no pytest module, and none of the patch's stands in
            sys.modules[name.split(".")[0]] = None  # type: ignore[assignment]


class _NetworkWatch:
    """Notices a call reaching for the network. Confined workers have none (the spec puts
    live network inputs out of scope), so such a call fails; its evidence says why rather
    than leaving a bare `ConnectionRefusedError` to look like a bug in the code."""

    _EVENTS = frozenset(
        {"socket.connect", "socket.getaddrinfo", "socket.gethostbyname", "socket.sendto", "socket.sendmsg"}
    )

    def __init__(self) -> None:
        self.reached: str | None = None
        self.confined = True

    def hear(self, event: str, args: tuple[Any, ...]) -> None:
        if event in self._EVENTS and self.reached is None:
            target = (
                args[:2] if event == "socket.getaddrinfo" else args[0] if event == "socket.gethostbyname" else args[1]
            )
            self.reached = f"{event} {target!r}"[:200]

    def run(
        self, prop: Assertion, payload: Any, fixture: _Fixture, random_seed: int, expect: str = "accept"
    ) -> Outcome:
        self.reached = None
        return self.noted(prop.run(payload, fixture.value, random_seed, expect))

    def noted(self, outcome: Outcome) -> Outcome:
        """The outcome of a call since `reached` was cleared, with the network's part said."""
        if outcome.passed or self.reached is None or outcome.evidence is None:
            return outcome
        sandboxed = "the gate's workers have no network, and " if self.confined else ""
        note = (
            f"the property reached for the network ({self.reached}); {sandboxed}live network inputs are out of "
            "scope: pin what the code reads as bytes. "
        )
        return dataclasses.replace(
            outcome,
            evidence=failure_evidence(
                outcome.evidence["kind"], outcome.evidence["exception_type"], note + outcome.evidence["message"]
            ),
        )


_network = _NetworkWatch()


class _Fixture:
    """The pinned fixture's parsed JSON, read on first use and checked against the pin."""

    def __init__(self, path: Path | None, sha256: str) -> None:
        self._path, self._sha256, self._value, self._loaded = path, sha256, None, False

    def value(self) -> Any:
        if self._path is None:
            raise WitnessGateError(
                "the suite is declared without fixture data (fixture = false): there is no fixture to read"
            )
        if not self._loaded:
            data = read_regular_file(self._path, "fixture", limit=_MAX_PARSED_FIXTURE)
            if sha256_hex(data) != self._sha256:
                raise WitnessGateError(f"{self._path}: fixture changed during the run: re-pin")
            self._value, self._loaded = parse_json(data, str(self._path)), True
        return self._value


# --- check ---------------------------------------------------------------------------


def _explicit_payloads(prop: LoadedProperty, fixture: _Fixture) -> list[tuple[str, Any]]:
    """(origin, payload) pairs checked before the search; "reject" ones must fail."""
    payloads = [("example", example) for example in prop.spec.examples]
    payloads += [("reject", example) for example in prop.spec.rejects]
    if prop.spec.fixture_payloads:
        value = fixture.value()
        if not (isinstance(value, list) and all(isinstance(item, dict) for item in value)):
            raise WitnessGateError(
                f"{prop.path}: {prop.assertion_id}: fixture_payloads=True needs a fixture that is a JSON array of "
                "objects"
            )
        payloads += [("fixture", item) for item in value]
    return payloads


def _call(
    channel: _Channel, prop: LoadedProperty, origin: str, payload: Any, fixture: _Fixture, search_seed: int
) -> bool:
    try:
        snapshot = canonical_bytes(payload)  # before the call: the property may mutate it
    except NotPlainJSON as error:
        raise WitnessGateError(
            f"{prop.path}: {prop.assertion_id}: {origin} payload is not plain JSON: {error}"
        ) from None
    expect = "reject" if origin == "reject" else "accept"
    channel.send_bytes(b'{"event":"%s","origin":"%s","payload":%s}' % (Event.CALL.encode(), origin.encode(), snapshot))
    outcome = _network.run(
        prop, json.loads(snapshot), fixture, seeds.call_random_seed(search_seed, prop.assertion_id, snapshot), expect
    )
    channel.send({"event": Event.RESULT, "passed": outcome.passed, "evidence": outcome.evidence})
    return outcome.passed


def _check(request: dict[str, Any], channel: _Channel, props: list[LoadedProperty], fixture: _Fixture) -> None:
    from hypothesis.strategies import SearchStrategy

    for prop in props:
        if prop.assertion_id in request["skip"]:
            continue
        if not isinstance(prop.spec.payloads, SearchStrategy):
            raise WitnessGateError(f"{prop.path}: {prop.assertion_id}: payloads= must be a Hypothesis strategy")
        channel.send({"event": Event.PROPERTY, "assertion_id": prop.assertion_id})
        for origin, payload in _explicit_payloads(prop, fixture):
            _call(channel, prop, origin, payload, fixture, request["seeds"][0])
        status = "passed"
        for seed in request["seeds"]:
            channel.send({"event": Event.SEARCH, "seed": seed})
            status = _search(channel, prop, fixture, seed, request["max_examples"], request.get("cases_per_search"))
            if status != "passed":
                break
        channel.send({"event": Event.SEARCHED, "status": status})


def _pytest_module(
    request: dict[str, Any], channel: _Channel, tests: list[GivenTest], digest: str, fixture: _Fixture
) -> None:
    gated = [test for test in tests if test.searchable]
    channel.send(
        {
            "event": Event.MODULE,
            "sha256": digest,
            "kind": "pytest",
            "properties": [
                {"assertion_id": test.assertion_id, "line": test.line, "stateful": test.stateful} for test in gated
            ],
        }
    )
    if request["mode"] == "check":
        _check_pytest(request, channel, tests)
    else:
        _replay(request, channel, {test.assertion_id: test for test in tests}, fixture)


def _check_pytest(request: dict[str, Any], channel: _Channel, tests: list[GivenTest]) -> None:
    """Every test in the module's order: a `@given` or stateful test searched under each
    seed of the schedule until one fails, any other run once (its outcome reported). A leg
    (`cases_per_search`) runs the plain tests only up to the last test it searches: after it,
    none can leave anything a searched test meets."""
    to_search = [
        index for index, test in enumerate(tests) if test.searchable and test.assertion_id not in request["skip"]
    ]
    end = len(tests) if request.get("cases_per_search") is None else (to_search[-1] + 1 if to_search else 0)
    for test in tests[:end]:
        if test.assertion_id in request["skip"]:
            continue
        if not test.searchable:
            _network.reached = None
            outcome, excused_by_mark = test.run_plain()
            outcome = _network.noted(outcome)
            channel.send(
                {
                    "event": Event.PLAIN,
                    "assertion_id": test.assertion_id,
                    "passed": outcome.passed,
                    "evidence": outcome.evidence,
                    "excused_by_mark": excused_by_mark,
                }
            )
            continue
        channel.send({"event": Event.PROPERTY, "assertion_id": test.assertion_id})

        def announce(case: int) -> None:
            _network.reached = None
            channel.send({"event": Event.CALL, "origin": "search", "payload": protocol.case_payload(case)})

        def report(outcome: Outcome) -> None:
            outcome = _network.noted(outcome)
            channel.send({"event": Event.RESULT, "passed": outcome.passed, "evidence": outcome.evidence})

        searched = pytest_module.Searched("passed")
        for seed in request["seeds"]:
            channel.send({"event": Event.SEARCH, "seed": seed})
            searched = test.search(seed, announce, report, request.get("cases_per_search"))
            if searched.status != "passed":
                break
        found = {
            "shrunk": protocol.choices_payload(searched.shrunk) if searched.shrunk is not None else None,
            "unshrunk": protocol.choices_payload(searched.unshrunk) if searched.unshrunk is not None else None,
            "example": searched.example,
            "failing_example": searched.failing_example,
        }
        channel.send({"event": Event.SEARCHED, "status": searched.status, "given": found})


class _FixedOrder(random.Random):
    """A `Random` that always shuffles the same way: Hypothesis' constant scan's (below)."""

    def __init__(self, x: object = None) -> None:
        super().__init__(0)


def _settle_constant_scan() -> None:
    """Hypothesis mixes literal constants from "local" (non-site-packages) modules into
    draws. Two things about that scan would make the same seed yield different witnesses:

    - Whether this package counts as local depends on how it was installed (source tree,
      wheel, PEX): our own modules are marked as already scanned.
    - It scans newly imported modules in an order an unseeded `Random()` shuffles (so that
      concurrent pytest-xdist workers share its on-disk cache). The constants are the same
      in any order, but the scan's allocations are not, and they move where the collector
      runs in every call after the scan. A failure that needs the collector at one point of
      a call was met or missed, and shrunk to another witness, from one run to the next
      (`flake_cases/gc_finalizer`: three witnesses in three runs). The scan's order is
      made fixed: `_FixedOrder` shuffles it.
    """
    from hypothesis.internal.conjecture import providers

    providers.Random = _FixedOrder  # type: ignore[misc]  # rebinds the name the scan calls, not the class
    providers._seen_modules.update(
        id(module)
        for name, module in list(sys.modules.items())
        if name == "witness_gate" or name.startswith("witness_gate.")
    )


def _search(
    channel: _Channel, prop: LoadedProperty, fixture: _Fixture, seed: int, max_examples: int, cases: int | None
) -> str:
    """Hypothesis' search and shrink: "falsified", "flaky" (the failure came and went
    while shrinking) or "passed". With `cases`, it passes once that many calls ran and none
    failed (a leg's: `seeds.search_leg_cases`). Which calls failed, the runner saw for itself."""
    from hypothesis import HealthCheck, Phase, Verbosity, given, settings
    from hypothesis import seed as seeded
    from hypothesis.errors import Flaky, HypothesisException

    calls, failed, enough = 0, False, pytest_module.EnoughCases()

    def attempt(payload: Any) -> None:
        nonlocal calls, failed
        calls += 1
        if not _call(channel, prop, "search", payload, fixture, seed):
            failed = True
            raise _Falsified()
        if calls == cases and not failed:
            raise enough

    # hypothesis types the decorator `given(...)` returns as an untyped callable.
    searched = given(prop.spec.payloads)(attempt)  # type: ignore[no-untyped-call]
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
        )(searched)
    )
    _settle_constant_scan()
    try:
        test()
    except _Falsified:
        return "falsified"
    except pytest_module.EnoughCases as ended:
        if ended is not enough:  # not this search's own: nothing of the worker's raises another
            raise
        return "passed"
    except Flaky:
        return "flaky"
    except WitnessGateError:
        raise
    except HypothesisException as error:
        first = str(error).splitlines()[0] if str(error) else ""
        raise WitnessGateError(
            f"{prop.path}: {prop.assertion_id}: Hypothesis refused: {type(error).__name__}: {first}"
        ) from None
    return "passed"


# --- replay --------------------------------------------------------------------------


def _replay(request: dict[str, Any], channel: _Channel, props: dict[str, Assertion], fixture: _Fixture) -> None:
    jobs = request["jobs"]
    for index, job in enumerate(jobs):
        if job["assertion_id"] not in props:
            channel.send({"event": Event.MISSING, "job": index})
    runnable = [index for index, job in enumerate(jobs) if job["assertion_id"] in props]
    hung = set(request["hung"])  # a witness that hung once is not replayed again
    memory = heap_layout.Layout(request["layout_seed"])  # made here, after the module loaded, for every forked replay
    # What exists now, the module and the layout's pools included, is left out of every later
    # collection (as pre-forking servers do): the collection before each fork (`_forked`)
    # then costs little, and a collection in a replay looks only at what the replay made.
    gc.freeze()

    outcomes: dict[int, dict[int, bool]] = defaultdict(dict)  # failed, by job and slot: what `protocol.left_out` reads

    def report(index: int, slot: int, outcome: Outcome) -> None:
        evidence = outcome.evidence
        if evidence is not None and evidence["kind"] == EvidenceKind.TIMEOUT:
            hung.add(jobs[index]["witness"])
        outcomes[index][slot] = not outcome.passed
        channel.send(
            {
                "event": Event.OUTCOME,
                "job": index,
                "slot": slot,
                "failed": not outcome.passed,
                "evidence": evidence,
                "drew": outcome.drew,
            }
        )

    # The probe's setting per slot (none outside it): the collector probe's extra containers
    # (seeds.collector_settings), counted here rather than in the child, where the
    # arithmetic's own ints would differ by setting, the directory-order probe's order
    # (seeds.directory_settings) and the clock probe's instant (seeds.clock_settings).
    settings = request.get("probe") or [{}] * len(request["seeds"])
    extra = [_YOUNG_THRESHOLD * setting.get("allocate_per_mille", 0) // seeds.PER_MILLE for setting in settings]
    orders = [setting.get("directory_order") for setting in settings]
    instants = [setting.get("clock") for setting in settings]

    def run(index: int, slot: int, seed: int) -> None:
        if jobs[index]["witness"] in hung:
            report(
                index,
                slot,
                _failed(EvidenceKind.TIMEOUT, "not replayed: an earlier replay of this witness hung"),
            )
        elif jobs[index]["fork"]:
            report(
                index,
                slot,
                _forked(
                    props,
                    jobs[index],
                    seed,
                    fixture,
                    request["timeout"],
                    channel.key,
                    (extra[slot], orders[slot], instants[slot]),
                    memory,
                ),
            )
        else:
            channel.send({"event": Event.CALL, "job": index, "slot": slot})
            report(index, slot, _run_job(props, jobs[index], seed, fixture))

    # Forked payloads alone, then after their history, then without forking, last: state
    # those calls leave behind would leak into later forks. The passes alone and in one
    # process spread their slots over time, so a failure that depends on the clock is seen
    # to vary in each (calls in one process with no pause between them all land in one
    # instant, and one instant makes a clock bug look certain). The pass after history runs
    # on its own, unspaced: a long history would stretch a shared pass's slots past the
    # spacing a clock is sampled at, and a variant after history is never read for time.
    spacing = request["spacing_seconds"]
    passes = [
        ([index for index in runnable if jobs[index]["fork"] and not jobs[index]["history"]], spacing),
        ([index for index in runnable if jobs[index]["fork"] and jobs[index]["history"]], 0.0),
        ([index for index in runnable if not jobs[index]["fork"]], spacing),
    ]
    slots, probe_passes = len(request["seeds"]), request.get("probe_passes")
    for batch, pause in passes:
        if not batch:
            continue
        start = time.monotonic()
        for slot, row in enumerate(request["seeds"]):
            time.sleep(max(0.0, start + slot * pause - time.monotonic()))
            for index in batch:
                if not protocol.left_out(jobs, index, slot, outcomes, slots, probe_passes):
                    run(index, slot, row[index])


def _run_job(
    props: dict[str, Assertion],
    job: dict[str, Any],
    seed: int,
    fixture: _Fixture,
    extra_containers: int = 0,
    order: int | None = None,
    instant: int | None = None,
) -> Outcome:
    """The job's history (results ignored), then its payload, `extra_containers` further
    into the collector's cycle (`_steer_collector`), with the wall clock started at `instant`
    right before it (`clock`), every call with directories listed in `order`
    (`directory_order`; only a probe's forked child is given an order or an instant: else the
    process's own): the payload's outcome. The history lists in the payload's order: a directory that has not
    changed lists the same way in both, as a file system's does (a cache the history filled
    while a directory listed one way, found stale in the payload's call because it listed
    another, made a state bug follow the order: a `flake` to freeze)."""
    if order is not None:
        directory_order.set_order(order)
    try:
        for call in job["history"]:
            earlier = props.get(call["assertion_id"])
            if earlier is not None:  # a property since removed cannot be called; its state is gone too
                earlier.run(_fresh(call["payload"]), fixture.value, call["random_seed"])
        payload = _fresh(job["payload"])
        ballast = _steer_collector(extra_containers)
        if instant is not None:
            clock.start_at(instant)
        outcome = _network.run(props[job["assertion_id"]], payload, fixture, seed, job["expect"])
        del ballast  # alive through the call: the objects that moved it within the collector's cycle
    except WitnessGateError as error:  # the fixture could not be read: fail closed
        return _failed(EvidenceKind.FIXTURE, str(error))
    return outcome


def _failed(kind: str, message: str) -> Outcome:
    """A replay the worker failed, not the code under test: no input was drawn."""
    return Outcome(False, failure_evidence(kind, None, message))


# Items of a ballast tuple: past the small-object allocator's 512 bytes, so it comes from malloc.
_LARGE_TUPLE = 100


# The young generation's threshold, read when the worker loads, before any user code can
# set it (a module that sets it to 2**31 - 1, "off", must not size the ballast).
_YOUNG_THRESHOLD = gc.get_threshold()[0]


def _steer_collector(count: int) -> list[tuple[None, ...] | None]:
    """Allocates `count` live containers, each counted by the collector, which move the call
    that far into the collector's cycle; returns them, for the caller to keep alive through
    the call. Each is too large for the small-object allocator, and the loop's own ints are
    the same for every count, so the objects the call makes land where they would have
    without them: the collector probe moves when the collector runs, not where objects land
    (an id() reused from a freed object must not come and go with it). The collector's
    thresholds are never set."""
    ballast: list[tuple[None, ...] | None] = [None] * _YOUNG_THRESHOLD  # large too, and the same for every count
    for slot in range(_YOUNG_THRESHOLD):
        if slot < count:
            ballast[slot] = (None,) * _LARGE_TUPLE
    return ballast


def _fresh(payload: Any) -> Any:
    # A copy per call: a property that mutates its payload must not change the next replay's.
    return json.loads(json.dumps(payload))


def _forked(
    props: dict[str, Assertion],
    job: dict[str, Any],
    seed: int,
    fixture: _Fixture,
    timeout: float,
    key: bytes,
    setting: tuple[int, int | None, int | None],
    memory: heap_layout.Layout,
) -> Outcome:
    """Runs the job in a forked child in a process group of its own, from the process's
    memory layout, under the probe's `setting` (extra containers, directory order, instant:
    `_run_job`);
    kills the group at the timeout. The child's result is signed like a
    channel line: the code under test, which runs in the child, cannot stand in for it by
    writing to the pipe."""
    read_end, write_end = os.pipe()
    # The worker's garbage (its bookkeeping between forks) is collected here, not in the
    # child: a collection during the call would free it, and a full one CPython's free lists
    # too, into pools ahead of the arranged ones, wherever the collector happened to run, and
    # move where the call's objects land. Every child starts right after a full collection,
    # a point of the collector's cycle the collector probe then moves (`_steer_collector`).
    # The type attribute cache goes too: it holds the names it was asked for, and a lookup in
    # the child that evicts one (where is up to the names' hashes, so the hash secret) would
    # free a string of the worker's ahead of the arranged pools.
    gc.collect()
    _clear_internal_caches()
    pid = os.fork()
    if pid == 0:  # the child: one job, then report and leave without cleanup handlers
        status = 1
        try:
            os.setpgid(0, 0)
            os.close(read_end)
            memory.take_effect()
            outcome = _run_job(props, job, seed, fixture, *setting)
            result = {"passed": outcome.passed, "evidence": outcome.evidence, "drew": outcome.drew}
            os.write(write_end, protocol.sign(key, json.dumps(result).encode()))
            status = 0
        finally:
            os._exit(status)
    os.close(write_end)
    exited = os.pidfd_open(pid)
    chunks, deadline, timed_out, done = [], time.monotonic() + timeout, False, False
    while not done:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            timed_out = True
            break
        readable = select.select([read_end, exited], [], [], remaining)[0]
        if read_end in readable:
            chunk = os.read(read_end, 1 << 16)
            chunks.append(chunk)
            done = not chunk
        # The child is gone: what it wrote is in the pipe, whoever else still holds it open.
        if exited in readable and not done:
            while select.select([read_end], [], [], 0)[0] and (chunk := os.read(read_end, 1 << 16)):
                chunks.append(chunk)
            done = True
    os.close(read_end)
    os.close(exited)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, signal.SIGKILL)  # the child, if it hung, and anything it left behind
    _, status = os.waitpid(pid, 0)
    if timed_out:
        return _failed(EvidenceKind.TIMEOUT, f"replay did not finish within {timeout:g} s")
    written = b"".join(chunks)
    body = protocol.opened(key, written)
    if written and body is None:
        return _failed(
            EvidenceKind.PROTOCOL,
            f"replay process wrote a result it did not sign ({_wait_status(status)}): {written[:80]!r}",
        )
    try:
        replayed = json.loads(body or b"")
        return Outcome(replayed["passed"], replayed["evidence"], replayed["drew"])
    except (ValueError, KeyError, TypeError):
        return _failed(EvidenceKind.CRASHED, f"replay process ended without a result ({_wait_status(status)})")


# The type attribute cache (CPython 3.13 adds sys._clear_internal_caches, which clears it
# with the interpreter's other caches; sys._clear_type_cache is deprecated from 3.13 on).
_clear_internal_caches = getattr(sys, "_clear_internal_caches", None) or sys._clear_type_cache


def _wait_status(status: int) -> str:
    if os.WIFSIGNALED(status):
        return f"killed by signal {os.WTERMSIG(status)}"
    return f"exit status {os.WEXITSTATUS(status)}"
