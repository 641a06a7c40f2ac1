"""`check` (spec section 2): search with Hypothesis, shrink, and retain witnesses.

Hypothesis does all searching and shrinking, in one worker interpreter per property
module (`sandbox`, `witness_gate.worker`), under a hash secret from the seed schedule and a `random`
seed per call. This process runs no user code: it follows the worker's announced calls
and keeps its own record of them. With the database off and one reported bug, the first
failing search call sees the original input and the last one the minimal input, so both
payloads, and the calls that preceded each in that process (its history), come from
that record. A call that hangs is killed at the time limit, and one that ends its
process (any exit status, a signal) or garbles the message pipe fails there: either is
a failure of that payload, retained as a witness; the module's remaining properties
are searched in a new worker. A module that cannot be loaded is a blocking problem.
Where the lock declares production conditions (`conditions`), each module is searched
once under each, in the declared order, and each witness records its condition. Under
each, the whole search's first cases run again in legs under other hash secrets
(`search_module`), and a witness records the secret it was found under.
"""

from __future__ import annotations

import collections
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar, cast, overload

from witness_gate import lock as locks
from witness_gate import conditions, given_tests, protocol, seeds, store, witness
from witness_gate.canonical import NotPlainJSON, canonical_bytes, sha256_hex
from witness_gate.errors import WitnessGateError
from witness_gate.lock import relative_to_root
from witness_gate.protocol import (
    CALL_ORIGINS,
    ENDED_CALL_KINDS,
    SEARCH_STATUSES,
    Event,
    EvidenceKind,
    failure_evidence,
)
from witness_gate.sandbox import WORKER_SLACK_SECONDS, Ended, Worker


@dataclass(frozen=True)
class CheckResult:
    properties: int
    written: list[Path]
    # Module-level failures (could not be imported, stopped answering): each blocks the run.
    problems: list[str]
    # The Hypothesis tests of pytest modules searched (@given tests and state machines;
    # their assertion ids are node ids, `given_tests`), which of them are state machines (as
    # the worker said: shown, never decided from), and those pytest skipped (a skip mark, a
    # skip the test asked for).
    given: tuple[str, ...] = ()
    skipped: tuple[str, ...] = ()
    # Their modules' plain tests (neither), by node id: whether each passed (under every
    # declared condition). They run once, in order (state they leave is part of the next
    # test's history); each that failed blocks (`plain_failures`: its first failure's text).
    plain: dict[str, bool] = field(default_factory=dict)
    # Cases each searched @given test ran (the fewest under any condition), counted here from
    # the calls announced; and why each @given test the base's modules declare was not
    # searched (`given_tests.unsearched`): a gated test that was not searched is no pass.
    cases: dict[str, int] = field(default_factory=dict)
    unsearched: list[str] = field(default_factory=list)
    stateful: tuple[str, ...] = ()
    plain_failures: dict[str, str] = field(default_factory=dict)
    # The pytest modules that ran with nothing to search (no @given test, no state machine).
    nothing_to_search: tuple[str, ...] = ()


class _Garbled(Exception):
    """A message from the worker that does not follow the protocol."""


_T = TypeVar("_T")


@overload
def _field(message: dict[str, Any], name: str, kind: type[_T]) -> _T: ...
@overload
def _field(message: dict[str, Any], name: str, kind: tuple[type, ...]) -> Any: ...
def _field(message: dict[str, Any], name: str, kind: type | tuple[type, ...]) -> Any:
    value = message.get(name)
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise _Garbled(f"{message.get('event')!r} message without a valid {name!r}")
    return value


def _follow(session: _Session, worker: Worker, timeout: float) -> Ended | str | None:
    """The conversation with one worker: reads its messages into `session` until "done"
    (None), a problem the worker reports (its text), or the end of the conversation
    (`Ended`, with the pending call failed). A message that breaks the protocol ends it."""
    started = False
    while True:
        # The first message comes once the worker started and loaded the module: the
        # limit is a call's, so its start gets the slack replays give it too.
        message = worker.receive(timeout if started else timeout + WORKER_SLACK_SECONDS)
        started = True
        if isinstance(message, Ended):
            session.ended(message, timeout)
            return message
        try:
            event = message["event"]
            if event == Event.DONE:
                return None
            if event == Event.PROBLEM:
                return _field(message, "message", str)[:2000]
            session.on(event, message)
        except (_Garbled, NotPlainJSON) as error:
            worker.close()
            ended = Ended("protocol", f"broke the message protocol: {error}")
            session.ended(ended, timeout)
            return ended


@dataclass
class _Retained:
    """The witnesses one worker's failing calls make, kept apart from the messages that
    announce them: a failing call outside a search is a witness at once; a search's is made
    when the search ends, from its first failing call (the original input) and its last
    (the minimal one: the database is off and one bug is reported)."""

    hash_secret: int
    condition: dict[str, str]
    directory_order: int
    failures: list[witness.Failure] = field(default_factory=list)
    first_failing: tuple[witness.Call, dict[str, Any]] | None = None
    last_failing: tuple[witness.Call, dict[str, Any]] | None = None
    origin: str = "search"  # of the current search's failure: "example" when an `@example` failed
    failing_example: str = ""  # as Hypothesis printed it

    def failed(self, assertion_id: str, call: witness.Call, evidence: dict[str, Any], origin: str) -> None:
        if origin == "search":
            self.first_failing = self.first_failing or (call, evidence)
            self.last_failing = (call, evidence)
        else:
            self.failures.append(
                witness.Failure(
                    assertion_id,
                    call,
                    call,
                    evidence,
                    origin,
                    None,
                    True,
                    self.hash_secret,
                    self.condition,
                    directory_order=self.directory_order,
                )
            )

    def found_by_pytest(self, given: Any) -> None:
        """Puts the payloads a @given test's database received in place of the case numbers
        its calls were announced with: the choices of the first and of the kept failure, or
        the `@example` that failed (the call order the runner saw decides which call is which)."""
        if self.last_failing is None:
            return
        if not isinstance(given, dict):
            raise _Garbled("a pytest search without what it found")
        example, notes = given.get("example"), given.get("failing_example")
        if notes is not None and not isinstance(notes, str):
            raise _Garbled("a failing example that is not text")
        self.failing_example = (notes or "")[:2000]
        assert self.first_failing is not None
        if example is not None:
            if not isinstance(example, int) or isinstance(example, bool):
                raise _Garbled("an example number that is not a number")
            (call, evidence) = self.first_failing
            self.origin = "example"
            self.first_failing = self.last_failing = (
                witness.Call({"example": example}, call.random_seed, call.history),
                evidence,
            )
            return
        shrunk, unshrunk = given.get("shrunk"), given.get("unshrunk")
        if (
            shrunk is None
        ):  # Hypothesis saved nothing for it (e.g. KeyboardInterrupt): the search to the case is the witness
            return
        if not (_choices(shrunk) and _choices(unshrunk)):
            raise _Garbled("a failing pytest search with malformed choices")
        (final, evidence), (original, first_evidence) = self.last_failing, self.first_failing
        self.last_failing = (witness.Call(shrunk, final.random_seed, final.history), evidence)
        self.first_failing = (witness.Call(unshrunk, original.random_seed, original.history), first_evidence)

    def retain_search(self, assertion_id: str, seed: int, fully_shrunk: bool, pytest: bool) -> None:
        """The search under `seed` ended: its failure, if any, becomes a witness."""
        if self.last_failing is None:
            return
        assert self.first_failing is not None
        if pytest and isinstance(self.last_failing[0].payload, dict) and "case" in self.last_failing[0].payload:
            self._ended_pytest_search(seed)
            fully_shrunk = False
        (final, evidence), (original, _) = self.last_failing, self.first_failing
        origin, self.origin = self.origin, "search"
        # Hypothesis' printout belongs to this search alone: a later search that ends the worker
        # prints none, and must not show this one's.
        printed, self.failing_example = self.failing_example, ""
        self.failures.append(
            witness.Failure(
                assertion_id,
                final,
                original,
                evidence,
                origin,
                seed if origin == "search" else None,
                fully_shrunk,
                self.hash_secret,
                self.condition,
                printed if pytest else None,
                self.directory_order,
            )
        )

    def _ended_pytest_search(self, seed: int) -> None:
        """A case that left no choices behind (it ended the worker, or Hypothesis saved nothing
        for it): its witness is the search that led to it, run again up to that case (`protocol`)."""
        assert self.first_failing is not None and self.last_failing is not None
        failing = []
        for call, evidence in (self.first_failing, self.last_failing):
            payload = {"search": seed, "calls": call.payload["case"] + 1}
            failing.append((witness.Call(payload, call.random_seed, call.history[:-1]), evidence))
        self.first_failing, self.last_failing = failing


@dataclass
class _Session:
    """What one worker did, as its messages say and the runner checks them: the runner's
    own record of the calls (each call's history and `random` seed are the runner's, never
    the worker's), and what the module's tests reported. The witnesses the failing calls
    make are `_Retained`'s."""

    lock: dict[str, Any]
    retained: _Retained
    properties: dict[str, int] = field(default_factory=dict)  # assertion id -> line
    finished: set[str] = field(default_factory=set)
    history: collections.deque[dict[str, Any]] = field(default_factory=collections.deque)
    current: str | None = None
    seed: int = 0
    pending: witness.Call | None = None
    pending_origin: str = ""
    call_failed_by_ending: bool = False  # the conversation ended inside a call, which failed
    # A pytest module (`given_tests`): the current test's searches so far as [seed, cases run],
    # and the outcomes of its plain tests, which run once (one that fails blocks).
    pytest: bool = False
    searches: list[list[int]] = field(default_factory=list)
    plain: dict[str, bool] = field(default_factory=dict)
    plain_failures: dict[str, str] = field(default_factory=dict)  # what each failing plain test raised
    stateful: set[str] = field(default_factory=set)  # the searched tests that are state machines, as the worker said
    skipped: set[str] = field(default_factory=set)  # @given tests pytest skipped before any case
    excused: set[str] = field(default_factory=set)  # plain tests a skip or xfail mark excused
    cases: dict[str, int] = field(default_factory=dict)  # @given test -> cases its searches ran

    def __post_init__(self) -> None:
        self.history = collections.deque(maxlen=self.lock["history_limit"])
        self.seed = self.lock["seed_schedule"][0]

    def on(self, event: Any, message: dict[str, Any]) -> None:
        """One message of the worker's, other than "done" and "problem"."""
        handlers = {
            Event.MODULE: self._module,
            Event.PROPERTY: self._property,
            Event.SEARCH: self._search,
            Event.CALL: self._call,
            Event.RESULT: self._result,
            Event.SEARCHED: self._searched,
            Event.PLAIN: self._plain,
        }
        handler = handlers.get(event) if isinstance(event, str) else None  # JSON's other values are no event
        if handler is None or (event == Event.PLAIN and not self.pytest):  # plain tests are a pytest module's
            raise _Garbled(f"unknown event {event!r}")
        handler(message)

    def _module(self, message: dict[str, Any]) -> None:
        self.pytest = message.get("kind") == "pytest"
        for entry in _field(message, "properties", list):
            if not isinstance(entry, dict):
                raise _Garbled("malformed property list")
            line, assertion_id = _field(entry, "line", int), _field(entry, "assertion_id", str)
            self.properties[assertion_id] = max(line, 1)
            if "stateful" in entry and _field(entry, "stateful", bool):
                self.stateful.add(assertion_id)

    def _property(self, message: dict[str, Any]) -> None:
        self.current = _field(message, "assertion_id", str)
        if self.current not in self.properties:
            raise _Garbled(f"unknown property {self.current!r}")
        self.seed = self.lock["seed_schedule"][0]
        self.retained.first_failing = self.retained.last_failing = None
        self.searches = []

    def _search(self, message: dict[str, Any]) -> None:
        self.seed = _field(message, "seed", int)
        if self.seed not in self.lock["seed_schedule"]:
            raise _Garbled("search seed not in the schedule")
        self.searches.append([self.seed, 0])

    def _call(self, message: dict[str, Any]) -> None:
        if self.current is None or self.pending is not None:
            raise _Garbled("call outside a property or before the previous result")
        origin = _field(message, "origin", str)
        if origin not in CALL_ORIGINS or "payload" not in message:
            raise _Garbled("call without a known origin or a payload")
        snapshot = canonical_bytes(message["payload"])
        history = tuple(self.history)
        if self.pytest:  # a case is replayed after the test's searches that led to it (`protocol`)
            if not self.searches or message["payload"] != protocol.case_payload(self.searches[-1][1]):
                raise _Garbled("a pytest call out of order")
            history += tuple(self._search_entry(seed, calls) for seed, calls in self.searches)
            self.searches[-1][1] += 1
        self.pending = witness.Call(
            message["payload"], seeds.call_random_seed(self.seed, self.current, snapshot), history
        )
        self.pending_origin = origin

    def _result(self, message: dict[str, Any]) -> None:
        if self.pending is None:
            raise _Garbled("result without a call")
        passed = _field(message, "passed", bool)
        evidence = message.get("evidence")
        if not passed:
            if not (isinstance(evidence, dict) and set(evidence) == {"kind", "exception_type", "message"}):
                raise _Garbled("failure without evidence")
            self._failed(
                self.pending,
                failure_evidence(
                    str(evidence["kind"])[:200], _short(evidence["exception_type"]), str(evidence["message"])
                ),
            )
        if not self.pytest:
            self.history.append(
                {
                    "assertion_id": self.current,
                    "payload": self.pending.payload,
                    "random_seed": self.pending.random_seed,
                }
            )
        self.pending = None

    def _searched(self, message: dict[str, Any]) -> None:
        status = _field(message, "status", str)
        if self.current is None or status not in SEARCH_STATUSES or (status == "skipped" and not self.pytest):
            raise _Garbled("searched outside a property or with an unknown status")
        if self.pytest and status in ("passed", "skipped") and self.retained.last_failing is not None:
            raise _Garbled(
                f"a @given test's search {status} after a case failed: something in the worker hid the failure"
            )
        if status == "skipped":
            self.skipped.add(self.current)
        elif self.pytest:
            self.cases[self.current] = sum(calls for _, calls in self.searches)
        if self.pytest:
            self.retained.found_by_pytest(message.get("given"))
        self.retained.retain_search(self.current, self.seed, status == "falsified", self.pytest)
        self.history.extend(self._search_entry(seed, calls) for seed, calls in self.searches)
        self.finished.add(self.current)
        self.current = None

    def _plain(self, message: dict[str, Any]) -> None:
        assertion_id, passed = _field(message, "assertion_id", str), _field(message, "passed", bool)
        if self.current is not None or assertion_id in self.properties:
            raise _Garbled("a plain test inside a @given test's search")
        self.plain[assertion_id] = passed
        if _field(message, "excused_by_mark", bool):
            self.excused.add(assertion_id)
        if not passed:
            evidence = message.get("evidence")
            if not (isinstance(evidence, dict) and set(evidence) == {"kind", "exception_type", "message"}):
                raise _Garbled("a failed plain test without evidence")
            said = " ".join(str(evidence["message"])[:2000].split())  # on one line, as a blocking line shows it
            self.plain_failures[assertion_id] = (
                f"{_short(evidence['exception_type']) or str(evidence['kind'])[:200]}: {said}"
            )
        self.finished.add(assertion_id)
        self.history.append({"assertion_id": assertion_id, "payload": {"run": True}, "random_seed": 0})

    def _search_entry(self, seed: int, calls: int) -> dict[str, Any]:
        # The `random` seed its last case ran under, which a replay gives that case again.
        # `current` is the property the searches ran for (a search is announced within one).
        last_seed = protocol.call_seed(seed, cast(str, self.current), calls - 1) if calls else 0
        return {"assertion_id": self.current, "payload": {"search": seed, "calls": calls}, "random_seed": last_seed}

    def _failed(self, call: witness.Call, evidence: dict[str, Any]) -> None:
        # A call is refused outside a property (`_call`), so `current` names the one that failed.
        self.retained.failed(cast(str, self.current), call, evidence, self.pending_origin)

    def ended(self, ended: Ended, timeout: float) -> None:
        """The conversation ended. A pending call ended the worker: it failed with one of
        `protocol.ENDED_CALL_KINDS`, and a search it belonged to stops there, unshrunk."""
        if self.pending is None or self.current is None:
            return
        if ended.kind == "timeout":
            evidence = failure_evidence(
                EvidenceKind.TIMEOUT, None, f"the call did not return within {timeout:g} s; the runner killed it"
            )
        elif ended.kind == "exited":
            evidence = failure_evidence(
                EvidenceKind.CRASHED, None, f"the call ended the worker process: it {ended.detail}"
            )
        else:
            evidence = failure_evidence(
                EvidenceKind.PROTOCOL, None, f"the call broke the runner's message channel: it {ended.detail}"
            )
        self._failed(self.pending, evidence)
        if self.pending_origin == "search":
            self.retained.retain_search(self.current, self.seed, False, self.pytest)
        self.finished.add(self.current)
        self.pending = None
        self.call_failed_by_ending = True


def _choices(value: Any) -> bool:
    return isinstance(value, dict) and set(value) == {"choices"} and isinstance(value["choices"], str)


def _short(value: Any) -> str | None:
    return None if value is None else str(value)[:200]


@dataclass
class ModuleSearch:
    """What searching one property module found."""

    properties: dict[str, int] = field(default_factory=dict)  # assertion id -> line
    failures: list[witness.Failure] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    plain: dict[str, bool] = field(default_factory=dict)  # a pytest module's plain tests: passed?
    plain_failures: dict[str, str] = field(default_factory=dict)  # those that failed: what they raised
    stateful: set[str] = field(default_factory=set)  # its searched tests that are state machines
    skipped: set[str] = field(default_factory=set)  # its @given tests pytest skipped
    excused: set[str] = field(default_factory=set)  # its plain tests a skip or xfail mark excused
    cases: dict[str, int] = field(default_factory=dict)  # its @given tests searched: cases run


@dataclass(frozen=True)
class ModuleUnderSearch:
    """What every worker of one module's search under one declared condition shares."""

    module: str  # repository-relative
    lock: dict[str, Any]
    root: Path
    import_paths: tuple[str, ...]
    timeout: float  # per call
    scratch: Path
    condition: dict[str, str]


def search_module(target: ModuleUnderSearch) -> ModuleSearch:
    """One property module, searched under one condition (`conditions`): the whole search
    under the module's hash secret, as the file system lists directories, then its legs, at
    once, under the other secrets and directory orders of `seeds.search_legs`: each the
    first cases of every search, the tests in the whole search's order (a test may need what
    an earlier one left), so a failure that needs a hash or directory order is met whatever
    the input. A failure a leg finds is kept only for a test the whole search passed and no
    earlier leg failed. Only the whole search
    says what ran (plain tests and their outcomes, cases, skips); a leg adds its witnesses
    and problems."""
    legs = list(
        dict.fromkeys(
            (conditions.hash_secret(target.condition, secret), order)
            for secret, order in seeds.search_legs(target.lock, target.module)
        )
    )
    found = _search_under(target, legs[0], set(), None)
    done = found.skipped | {failure.assertion_id for failure in found.failures}
    if found.problems or set(found.properties) <= done | set(found.plain) or len(legs) == 1:
        return found  # blocked already, or nothing left a leg could search
    cases = seeds.search_leg_cases(target.lock)
    # What the whole search left out after it too: a test whose call ended its worker (a new
    # worker searched the tests after it). Every other test runs, a failing or skipped one
    # included: a later test may need what it left behind (a leg that left out a skipped
    # test made the next a `regression` no freeze could clear: an adversarial review).
    ended = {failure.assertion_id for failure in found.failures if failure.evidence["kind"] in ENDED_CALL_KINDS}

    def search_leg(leg: tuple[int, int]) -> ModuleSearch:
        return _search_under(target, leg, ended, cases)

    with ThreadPoolExecutor(max_workers=len(legs) - 1) as pool:
        searched = list(pool.map(search_leg, legs[1:]))
    for (secret, order), result in zip(legs[1:], searched):
        found.failures.extend(failure for failure in result.failures if failure.assertion_id not in done)
        done |= {failure.assertion_id for failure in result.failures}
        found.problems.extend(
            f"{problem} (in the search's leg under hash secret {secret}, directory order {order})"
            for problem in result.problems
        )
    return found


def _search_under(
    target: ModuleUnderSearch, leg: tuple[int, int], left_out: set[str], cases: int | None
) -> ModuleSearch:
    """The module's tests and properties but `left_out`, searched in workers under one hash
    secret and directory order (`leg`), each search for its first `cases` only when given (a
    leg's: then the plain tests after the last test it searches are left out too)."""
    module, lock, root, condition = target.module, target.lock, target.root, target.condition
    hash_secret, order = leg
    found = ModuleSearch()
    finished = set(left_out)
    while True:
        request = {
            "mode": "check",
            "root": str(root.absolute()),
            "import_paths": list(target.import_paths),
            "module": module,
            "fixture_path": locks.absolute_or_none(locks.fixture_path(lock, root)),
            "fixture_sha256": lock["fixture"]["sha256"],
            "seeds": lock["seed_schedule"],
            "max_examples": lock["max_examples"],
            "skip": sorted(finished),
            "condition": condition,
            "pid_offset": seeds.check_pid_offset(lock, module),
        }
        if cases is not None:
            request["cases_per_search"] = cases
        if order != seeds.AS_LISTED:
            request["directory_order"] = order
        session = _Session(lock, _Retained(hash_secret, condition, order))
        with Worker(request, hash_secret, root, target.scratch) as worker:
            ended = _follow(session, worker, target.timeout)
        found.properties.update(session.properties)
        found.failures.extend(session.retained.failures)
        found.plain.update(session.plain)
        found.plain_failures.update(session.plain_failures)
        found.stateful |= session.stateful
        found.skipped |= session.skipped
        found.excused |= session.excused
        found.cases.update(session.cases)
        finished |= session.finished
        if ended is None:
            return found
        if isinstance(ended, str):
            found.problems.append(ended)
        elif not session.properties and not session.plain:
            found.problems.append(f"{module}: loading the property module failed: the worker {ended.detail}")
        elif not session.call_failed_by_ending:
            found.problems.append(f"{module}: the worker {ended.detail} outside any property call")
        elif not set(found.properties) <= finished:
            continue  # a new worker searches the properties left
        return found


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
    if not fixture_just_pinned:
        locks.verify_fixture(lock, root)
    modules = [(relative_to_root(path, root, "property module"), path) for path in property_files]
    sources = {module: store.read_regular_file(path, "property module") for module, path in modules}
    digests = {module: sha256_hex(source) for module, source in sources.items()}
    # The tests each pytest module declares the gate searches, read from the base's source (`given_tests`).
    given_declared = {
        module: given_tests.declared_searched_tests(source)
        for module, source in sources.items()
        if given_tests.is_pytest_module(source)
    }
    plain_declared = {module: given_tests.declared_plain_tests(sources[module]) for module in given_declared}
    records: list[witness.Witness] = []
    problems: list[str] = []
    owners: dict[str, str] = {}
    plain: dict[str, bool] = {}
    skipped: set[str] = set()
    excused: set[str] = set()
    cases: dict[str, int] = {}
    plain_failures: dict[str, str] = {}
    stateful: set[str] = set()
    nothing_to_search: list[str] = []
    with tempfile.TemporaryDirectory(prefix="witness-gate-check-") as scratch:
        declared = "conditions" in lock
        for module, _ in modules:
            properties, failures, module_problems = {}, [], []
            for condition in locks.search_conditions(lock):  # in the declared order
                found = search_module(
                    ModuleUnderSearch(module, lock, root, import_paths, call_timeout, Path(scratch), condition)
                )
                properties.update(found.properties)
                failures += found.failures
                plain.update(
                    {test: plain.get(test, True) and passed for test, passed in found.plain.items()}
                )  # passed under every condition
                for (
                    test,
                    plain_failure,
                ) in found.plain_failures.items():  # the first condition to fail it names the failure
                    plain_failures.setdefault(
                        test,
                        (f"{plain_failure} (under {conditions.describe(condition)})" if declared else plain_failure)[
                            :2300
                        ],
                    )
                stateful |= found.stateful
                skipped |= found.skipped
                excused |= found.excused
                cases.update({test: min(ran, cases.get(test, ran)) for test, ran in found.cases.items()})
                module_problems += [
                    f"{problem} (under {conditions.describe(condition)})" if declared else problem
                    for problem in found.problems
                ]
            problems += module_problems
            for assertion_id in properties:
                if assertion_id in owners:
                    raise WitnessGateError(
                        f"{module}: assertion id {assertion_id!r} is already defined in {owners[assertion_id]}"
                    )
                owners[assertion_id] = module
            # A module that declares @given tests but had none collected is incomplete
            # (`unsearched`), never "nothing to check": the code under test may have caused it.
            ran_plain = any(test.split("::", 1)[0] == module for test in plain)
            if not properties and not module_problems and not ran_plain and not given_declared.get(module):
                raise WitnessGateError(
                    f"{module}: no witness_gate.property and no test found: there is nothing to check"
                )
            if not properties and ran_plain and not given_declared.get(module):
                nothing_to_search.append(module)
            # One witness per property, payload and declared condition (the witness hash covers
            # all three): two properties failing on one payload are two failures, and so is one
            # payload failing under two conditions (kept as one, the first condition's `flake`
            # stood in for a later one's `regression`, which a base's freeze then covered).
            source = witness.PropertySource(module, digests[module], properties)
            unique: dict[str, witness.Witness] = {}
            for failure in failures:
                record = witness.build(source, lock, failure)
                unique.setdefault(record.file_name, record)
            records.extend(unique.values())
    # Code under test runs with the user's rights: a fixture or property module that moved
    # while it ran is its doing, so it blocks (a verdict), never a refusal it could choose.
    try:
        locks.verify_fixture(lock, root, when="during check")
    except WitnessGateError as error:
        problems.append(f"{error}; the code under test may have written it")
    for module, path in modules:
        if sha256_hex(store.read_regular_file(path, "property module")) != digests[module]:
            problems.append(
                f"{module}: the property module changed while check ran; the code under test may have written it"
            )
    out_dir.mkdir(parents=True, exist_ok=True)  # classify reads it even when nothing failed
    written = []
    for record in records:
        path = out_dir / record.file_name
        store.save_artifact(path, "witness", record.to_json())
        written.append(path)
    given = tuple(sorted(a for a in owners if "::" in a and a not in skipped))
    unsearched = [
        reason
        for module, tests in given_declared.items()
        for reason in given_tests.unsearched(module, tests, cases, skipped, set(plain))
    ]
    unsearched += [
        reason
        for module, tests in plain_declared.items()
        for reason in given_tests.unrun_plain(module, tests, set(plain), excused)
    ]
    return CheckResult(
        len(owners),
        written,
        problems,
        given,
        tuple(sorted(skipped)),
        plain,
        cases,
        unsearched,
        tuple(sorted(stateful & set(given))),
        dict(sorted(plain_failures.items())),
        tuple(nothing_to_search),
    )
