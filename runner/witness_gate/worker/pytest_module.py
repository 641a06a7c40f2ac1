"""A pytest module in the worker: the Hypothesis tests a team already has, run unchanged.

pytest collects the module inside the worker interpreter (its conftest files, fixtures,
parametrization, marks, the tests' own settings, profiles and `@example`s, as under plain
pytest) and the worker takes over the run loop (`pytest_runtestloop`, as pytest-xdist
does). Each `@given` test and each stateful test is an assertion named by its node id
(`given_tests`); any other test runs once and is reported (a failure blocks, as no witness).

A stateful test makes its `@given` function only when it runs (`run_state_machine_as_test`
calls Hypothesis' `get_state_machine_test`, the one way a machine's `TestCase` runs):
the worker puts its own in that place before any code of the user's is imported
(`_StateMachines`), which hands the function it makes to the search or replay that armed
it. From there a state machine is searched, shrunk and replayed through the same example
database as a `@given` test, its choice sequence the witness; a machine run by a test the
worker did not arm (a helper the test calls, the code under test) fails that test.

Hypothesis searches and shrinks as it would under pytest, with what a verdict needs put
over the test's own settings: a seed from the schedule, no deadline, no health check that
follows the clock, one bug, the test's `@example`s first and on their own, then generation
and shrinking with an example database of the worker's that records what Hypothesis saves.
That database is how a failing input leaves the test, through Hypothesis' public
`ExampleDatabase` API: the choice sequence it saves first is the original failure, the one
it keeps is the shrunk one. A replay gives a test a database that holds only that
sequence, with `Phase.reuse` alone, in a fresh interpreter: exactly that input, the way
Hypothesis re-runs a failure it remembers. The sequence is tied to the Hypothesis version,
which the lock pins. The payloads a test is replayed with are the protocol's (`protocol`).
`random` is seeded inside every case, after Hypothesis seeds it, as for properties. Only the
test module may leave a case without failing it (`assume`, a skip, choices that ran out):
the same from the code under test is a failure (`_Runtime`).
"""

from __future__ import annotations

import base64
import binascii
import functools
import os
import random
import sys
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from types import ModuleType
from typing import Any, Literal, cast, overload

from witness_gate import pytest_files
from witness_gate.errors import WitnessGateError
from witness_gate.given_tests import DeclaredTest, declared_tests, function_key
from witness_gate.protocol import EvidenceKind, call_seed, describe, failure_evidence
from witness_gate.worker import drawn_input
from witness_gate.worker.property_module import Outcome

_MAX_NOTES = 2000
# Hypothesis' own pytest plugin (its `--hypothesis-*` options), the one plugin a worker loads:
# named, since the worker turns pytest's plugin autoloading off.
HYPOTHESIS_PLUGIN = "_hypothesis_pytestplugin"


def ini_file(root: Path, module: str) -> Path | None:
    """The ini file pytest would choose for `module`, searched from its directory up to `root`
    and no further (pytest's own order)."""
    directory = (root / module).parent
    while True:
        for name, section in pytest_files.INI_FILES:
            candidate = directory / name
            if candidate.is_file() and (section is None or section in candidate.read_bytes()):
                return candidate
        if directory == root or root not in directory.parents:
            return None
        directory = directory.parent


class _Recorder:
    """The search's example database: remembers every value Hypothesis saves, and which
    first under the test's own key."""

    def __init__(self) -> None:
        from hypothesis.database import ExampleDatabase

        recorder = self

        class Database(ExampleDatabase):
            def save(self, key: bytes, value: bytes) -> None:
                recorder.saved(key, value)

            def fetch(self, key: bytes) -> Iterator[bytes]:
                yield from sorted(recorder.kept.get(key, ()))

            def delete(self, key: bytes, value: bytes) -> None:
                recorder.kept.get(key, set()).discard(value)

            def move(self, src: bytes, dest: bytes, value: bytes) -> None:
                self.delete(src, value)
                self.save(dest, value)

        self.database = Database()
        self.key: bytes | None = None
        self.first: bytes | None = None
        self.kept: dict[bytes, set[bytes]] = {}

    def saved(self, key: bytes, value: bytes) -> None:
        self.kept.setdefault(key, set()).add(value)
        # Hypothesis keeps passing cases too, under sub-keys of the test's: the `target()`
        # front and the examples it shrank past.
        if self.key is None and not key.endswith((b".pareto", b".secondary")):
            self.key, self.first = key, value

    def shrunk(self) -> bytes | None:
        """The one value Hypothesis keeps for the test: its shrunk failure."""
        kept = sorted(self.kept.get(self.key, ()), key=lambda value: (len(value), value)) if self.key else []
        return kept[0] if kept else None


def _holding(value: bytes, fetched: Callable[[], None]) -> Any:
    """A database that gives Hypothesis `value` the first time it asks, and nothing else;
    `fetched` runs as it is asked, right before Hypothesis draws from it."""
    from hypothesis.database import ExampleDatabase

    class Database(ExampleDatabase):
        given = False

        def save(self, key: bytes, value: bytes) -> None:
            pass

        def fetch(self, key: bytes) -> Iterator[bytes]:
            if not self.given:
                self.given = True
                fetched()
                yield value

        def delete(self, key: bytes, value: bytes) -> None:
            pass

        def move(self, src: bytes, dest: bytes, value: bytes) -> None:
            pass

    return Database()


class _Runtime:
    """What the worker takes from Hypothesis and pytest before any code of the user's is
    imported (code under test can replace a module's functions, not these references), and
    where their own files are: a case is left by `assume`, a skip or choices that ran out
    only when the call came from the test module itself, never from the code under test."""

    def __init__(self, root: Path, module_file: Path, oracle_conftests: frozenset[str] = frozenset()) -> None:
        import _pytest
        import hypothesis
        import pluggy  # pants: no-infer-dep (pytest's own dependency, which comes with it)
        import pytest
        from hypothesis.errors import StopTest, UnsatisfiedAssumption

        self.is_given = hypothesis.is_hypothesis_test
        self.machines = _StateMachines()
        self.skipped = pytest.skip.Exception
        self.leaving = (UnsatisfiedAssumption, StopTest, pytest.skip.Exception)
        self.module_file = os.path.realpath(module_file)
        # Each as given and as resolved: a code object's file name is the path it was imported
        # by, compared as it is (resolving it at every call of a draw costs more than the draw).
        self._root = _both(Path(root))
        # Where the interpreter's own code lives, which may be under the root (a virtual
        # environment in the repository): the standard library, the installed packages, the runner.
        self._environment = tuple(
            prefix
            for directory in (
                Path(os.__file__).parent,
                Path(hypothesis.__file__).parent.parent,
                Path(__file__).parents[2],
            )
            for prefix in _both(directory)
        )
        self._test_module = {os.path.abspath(module_file), self.module_file}
        self._traces_allocations: bool | None = None
        self._oracle_conftests = oracle_conftests
        # Regular packages, each with its `__init__.py`: `__file__` is set.
        self._internal = (
            *(
                os.path.realpath(Path(cast(str, package.__file__)).parent) + "/"
                for package in (hypothesis, _pytest, pytest, pluggy)
            ),
            os.path.realpath(__file__),
        )  # the worker's own case wrapper, which calls the test

    def traces_allocations(self) -> bool:
        """Whether a module of the repository's (the test module included) holds `tracemalloc`
        or one of its functions, as it stands now: read once, at the first replay."""
        if self._traces_allocations is None:
            namespaces = [vars(module) for module in list(sys.modules.values()) if isinstance(module, ModuleType)]
            self._traces_allocations = any(
                isinstance(namespace.get("__file__"), str)
                and namespace["__file__"].startswith(self._root)
                and drawn_input.traces_allocations(namespace)
                for namespace in namespaces
            )
        return self._traces_allocations

    def is_program(self, filename: str) -> bool:
        """Whether code from `filename` is the program's: a file of the repository's but the
        test module (the code under test, its helpers, the conftest files) and the
        interpreter's own (a virtual environment there)."""
        return (
            filename.startswith(self._root)  # not "<frozen importlib._bootstrap>", "<string>"
            and not filename.startswith(self._environment)
            and filename not in self._test_module
        )

    def left_by_the_test(self, error: BaseException, stateful: bool = False) -> bool:
        """Whether `error` leaves the case as no failure: Hypothesis' or pytest's way out of a
        case, asked for by the test module (the nearest frame that is not theirs), or, in a
        state machine's case, by Hypothesis' own machine run (its rule draws running out of
        choices, with no frame of anyone else's on the way)."""
        if not isinstance(error, self.leaving):
            return False
        asker = self._asker(error)
        return asker == self.module_file or (stateful and asker is None)

    def skipped_by_the_oracle(self, error: BaseException) -> bool:
        """Whether a plain test's `error` is a skip the oracle asked for: a mark (pytest's own
        frames alone), the test module or a conftest file of the base on its way; a skip the
        code under test raises is a failure of the test."""
        if not isinstance(error, self.skipped):
            return False
        asker = self._asker(error)
        return asker is None or asker == self.module_file or asker in self._oracle_conftests

    def skipped_by_a_mark(self, error: BaseException) -> bool:
        """Whether a skip came from pytest's own frames alone, as a skip mark's does."""
        return isinstance(error, self.skipped) and self._asker(error) is None

    def _asker(self, error: BaseException) -> str | None:
        """The real path of the nearest frame of `error`'s traceback that is not Hypothesis',
        pytest's or pluggy's own; None when all are."""
        frames = []
        traceback = error.__traceback__
        while traceback is not None:
            frames.append(traceback.tb_frame.f_code.co_filename)
            traceback = traceback.tb_next
        asker = next((name for name in reversed(frames) if not os.path.realpath(name).startswith(self._internal)), None)
        return None if asker is None else os.path.realpath(asker)


class _StateMachines:
    """Hypothesis' `get_state_machine_test`, through which every state machine runs, in the
    place Hypothesis looks it up (its module's namespace), replaced once, before any code
    of the user's is imported: the function it makes is handed to whatever the worker armed
    it with (`running`), once per armed run; unarmed, a machine fails the run it is in."""

    def __init__(self) -> None:
        import hypothesis.stateful

        self._make = hypothesis.stateful.get_state_machine_test
        self._prepare: Callable[[Any], object] | None = None
        self._made = 0
        hypothesis.stateful.get_state_machine_test = self._made_for_the_gate

    def _made_for_the_gate(self, *args: Any, **kwargs: Any) -> Any:
        function = self._make(*args, **kwargs)
        if self._prepare is None:
            raise WitnessGateError(
                "a state machine ran in a test the gate does not search as one (through a helper, or from the code "
                "under test): run it as `TestX = Machine.TestCase`, or call run_state_machine_as_test in the test "
                "function itself"
            )
        if self._made:
            raise WitnessGateError(
                "a second state machine in one test: the gate searches one machine per test; give each its own test"
            )
        self._made += 1
        self._prepare(function)
        return function

    def running(
        self, assertion_id: str, prepare: Callable[[Any], object], run: Callable[[], BaseException | None]
    ) -> BaseException | None:
        """What `run` raised, the state machine it runs prepared by `prepare`; a run that
        raised nothing yet ran no machine through Hypothesis is no search, and says so."""
        self._prepare, self._made = prepare, 0
        try:
            raised = run()
        finally:
            self._prepare = None
        if raised is None and not self._made:
            raise WitnessGateError(
                f"{assertion_id}: the stateful test ran no state machine through Hypothesis' "
                "run_state_machine_as_test, so nothing of it was searched"
            )
        return raised


class EnoughCases(BaseException):
    """Ends a search once its first cases have run: a search replayed for its first cases (what
    Hypothesis would do next, shrink, replay the failure to report it, is the runner's time,
    not the test's state), and a leg's search under another hash secret where none failed
    (`seeds.search_leg_cases`). Not an `Exception`, so Hypothesis lets it through as it does
    KeyboardInterrupt."""


class LeftFromOutside(Exception):
    """A case that the code under test left by Hypothesis' or pytest's way out of a case."""


@dataclass
class Searched:
    """One seeded search of a `@given` test: "passed", "skipped" (pytest skipped it before
    any case ran), "falsified" or "flaky", with what the example database received and the
    failing example Hypothesis printed."""

    status: str
    shrunk: bytes | None = None
    unshrunk: bytes | None = None
    example: int | None = None  # the failing call was the test's k-th `@example`
    failing_example: str | None = None


class _Counter:
    """Case numbers across the runs of one search (its `@example`s, then generation)."""

    def __init__(self) -> None:
        self.next = 0

    def take(self) -> int:
        self.next += 1
        return self.next - 1


Body = Callable[[int, Callable[[], None]], None]


class _Judged:
    """What a case's outcome means, apart from how the case ran: whether the test itself left
    it, whether it passed, what Hypothesis is shown of it, and the evidence of a failure, read
    the same in every interpreter."""

    def __init__(
        self, runtime: _Runtime, function: Any, stateful: bool, basetemp: str, fixtures: frozenset[str]
    ) -> None:
        self._runtime, self._function, self._stateful, self._basetemp = runtime, function, stateful, basetemp
        self._fixtures = fixtures  # pytest's own fixtures the test takes: not its input (`drew`)

    def left(self, error: BaseException) -> bool:
        return self._runtime.left_by_the_test(error, self._stateful)

    def passes(self, error: BaseException | None, example: int | None) -> bool:
        """Whether a case that raised `error` passed: nothing raised, a way out the test module
        asked for, or the exception its `@example(...).xfail(raises=...)` declares."""
        if error is None or self.left(error):
            return True
        expected = (
            _explicit_examples(self._function)[example].raises
            if example is not None and example < len(_explicit_examples(self._function))
            else None
        )
        return expected is not None and isinstance(error, expected)

    def as_hypothesis_sees(self, error: BaseException) -> BaseException:
        """What a case raises to Hypothesis: `error`, but a way out of a case that the code
        under test took (an `assume`, a skip, a StopTest from outside the test module) as
        the failure it is, so that Hypothesis shrinks it as one (in check and in replays alike)."""
        if isinstance(error, self._runtime.leaving) and not self.left(error):
            return LeftFromOutside(
                f"{type(error).__name__} raised outside the test module, by the code it calls: a failure of the case"
            )
        return error

    def program(self, filename: str) -> bool:
        return self._runtime.is_program(filename)

    def traces_allocations(self) -> bool:
        return self._runtime.traces_allocations()

    def drew(self, call: Callable[[], None], made_by_the_draw: Callable[[Any], bool]) -> str | None:
        """A digest of the input a case drew: the keyword arguments `call` holds (Hypothesis
        hands a test its drawn arguments so), plain values only, their containers made by the
        draw (`drawn_input`); None for a state machine, whose steps are drawn as it runs."""
        if self._stateful or not isinstance(call, functools.partial):
            return None
        return drawn_input.digest(call.keywords, self._fixtures, made_by_the_draw)

    def failure(self, error: BaseException) -> Outcome:
        return Outcome(
            False, failure_evidence(EvidenceKind.EXCEPTION, type(error).__name__, self.scrubbed(describe(error)))
        )

    def outcome(self, error: BaseException | None, example: int | None) -> Outcome:
        # A case that raised nothing passes (`passes`): only an error reaches `failure`.
        return Outcome(True, None) if self.passes(error, example) else self.failure(cast(BaseException, error))

    @overload
    def scrubbed(self, text: str) -> str: ...
    @overload
    def scrubbed(self, text: str | None) -> str | None: ...
    def scrubbed(self, text: str | None) -> str | None:
        # pytest's temporary directories live under a directory of the worker's own: the
        # evidence of one failure must read the same in every interpreter.
        return None if text is None else text.replace(self._basetemp, "<basetemp>")


class _Runs:
    """Running the item through pytest with the worker between Hypothesis and the test's body:
    the settings a verdict needs put over the test's own, and every case handed to a `Body`,
    which decides what the case is (a search's, a replay's). Its frames are the worker's own
    (`_Runtime`): they must stay in this file."""

    def __init__(
        self, item: Any, runtime: _Runtime, function: Any, stateful: bool, max_examples: int | None, judged: _Judged
    ) -> None:
        self._item, self._runtime, self._function, self._stateful = item, runtime, function, stateful
        self._max_examples, self._judged = max_examples, judged

    def under(
        self,
        settings_change: dict[str, Any],
        search_seed: int | None,
        body: Body,
        counter: _Counter,
        floor: int | None = None,
    ) -> BaseException | None:
        """Runs the item once through pytest (setup, call, teardown) with Hypothesis' settings
        changed (and `max_examples` no lower than `floor`) and every case going through `body`;
        returns what the item raised."""
        from hypothesis import settings

        def prepare(function: Any) -> Callable[[], None]:
            handle = function.hypothesis
            saved = (
                function._hypothesis_internal_use_settings,
                getattr(function, "_hypothesis_internal_use_seed", None),
                handle.inner_test,
            )
            inner = handle.inner_test

            @functools.wraps(inner)
            def case(*args: Any, **kwargs: Any) -> None:
                # A partial, not a closure: a replay reads the drawn input from it (`_Judged.drew`).
                body(counter.take(), functools.partial(inner, *args, **kwargs))

            change = dict(settings_change)
            if floor is not None:  # never fewer than the suite's, whatever profile was in force
                change["max_examples"] = max(floor, saved[0].max_examples)
            # What `hypothesis.seed` sets, set here: the decorator asks `is_hypothesis_test`,
            # which code under test can replace (and Hypothesis reads the seed only with @given).
            function._hypothesis_internal_use_seed = search_seed
            function._hypothesis_internal_use_settings = settings(saved[0], **change)
            handle.inner_test = case

            def restore() -> None:
                (
                    function._hypothesis_internal_use_settings,
                    function._hypothesis_internal_use_seed,
                    handle.inner_test,
                ) = saved

            return restore

        if self._stateful:  # its function is made, and prepared, as the machine starts
            return self._runtime.machines.running(self._item.nodeid, prepare, lambda: _run_item(self._item))
        restore = prepare(self._function)
        try:
            return _run_item(self._item)
        finally:
            restore()

    def searching(
        self, search_seed: int, database: Any, body: Callable[[bool], Body]
    ) -> tuple[str, BaseException | None]:
        """The test's `@example`s, then Hypothesis' generation and shrinking, as one search:
        ("explicit" or "generated", what the item raised); the search stops at a failing
        `@example`, as Hypothesis does. `body(explicit)` handles the cases of each part."""
        from hypothesis import Phase

        counter = _Counter()
        if _explicit_examples(self._function):  # else Hypothesis, told to run nothing, skips the test
            raised = self.under(_search_settings(None, (Phase.explicit,)), search_seed, body(True), counter)
            if raised is not None and not self._judged.left(raised):
                return "explicit", raised
        generating = _search_settings(database, (Phase.generate, Phase.shrink))
        return "generated", self.under(generating, search_seed, body(False), counter, self._max_examples)


class _Replays:
    """A witness's case again, from its payload (`protocol`): the choice sequence Hypothesis
    saved, the `@example` that failed, or the seeded search up to a case."""

    def __init__(self, assertion_id: str, runs: _Runs, judged: _Judged) -> None:
        self._assertion_id, self._runs, self._judged = assertion_id, runs, judged

    def choices(self, encoded: Any, random_seed: int) -> Outcome:
        from hypothesis import Phase

        try:
            value = base64.b64decode(encoded, validate=True)
        except (binascii.Error, TypeError, ValueError):
            return _unloadable("the witness's choices are not base64")
        watch = drawn_input.DrawWatch(self._judged.program, not self._judged.traces_allocations())
        return self._first_case(
            _search_settings(_holding(value, watch.start), (Phase.reuse,)),
            lambda case: case == 0,
            None,
            random_seed,
            "the recorded choices no longer make an input for this test (its strategies changed?)",
            watch,
        )

    def example(self, index: Any, random_seed: int) -> Outcome:
        from hypothesis import Phase

        if not isinstance(index, int) or isinstance(index, bool):
            return _unloadable("the example index is not a number")
        return self._first_case(
            _search_settings(None, (Phase.explicit,)),
            lambda case: case == index,
            index,
            random_seed,
            f"the test has no @example number {index + 1} any more",
            None,
        )

    def _first_case(
        self,
        settings_change: dict[str, Any],
        chosen: Callable[[int], bool],
        example: int | None,
        random_seed: int,
        gone: str,
        watch: drawn_input.DrawWatch | None,
    ) -> Outcome:
        """The outcome of the one case `chosen` picks; every other case passes without running
        the test's body, and a case Hypothesis runs again mirrors the chosen one's outcome.
        `watch` sees which containers the draw made; an explicit example draws none: its
        arguments are the decorator's, which a set's order may have picked."""
        seen: list[BaseException | None] = []
        drawn: list[str | None] = []

        def body(case: int, call: Callable[[], None]) -> None:
            if seen:  # Hypothesis replays a failure to report it: the same outcome, not a second call
                if seen[0] is not None:
                    raise seen[0]
                return
            if not chosen(case):
                return
            # Before the call, which may change its arguments.
            drawn[:] = [self._judged.drew(call, (lambda _: False) if watch is None else watch.made_by_the_draw)]
            if watch is not None:
                watch.stop()
            random.seed(random_seed)
            error = _outcome_of(call)
            if error is not None and self._judged.left(error):
                raise error  # no outcome: the test itself left the case
            seen.append(error)
            if error is not None:
                raise error

        try:
            self._runs.under(settings_change, None, body, _Counter())
        finally:
            if watch is not None:
                watch.stop()
        if not seen:
            return _unloadable(gone)
        return replace(self._judged.outcome(seen[0], example), drew=drawn[0])

    def search(self, search_seed: Any, calls: Any, random_seed: int) -> Outcome:
        """The seeded search again, the test's body run for its first `calls` cases only, the
        last of them under `random_seed` (the others under the seeds they had in check): as
        history, the state the witness's call met (its outcome ignored); as a witness, a
        failure that left no choice sequence (a case that ended the worker, an error
        Hypothesis does not save), the outcome of that last case."""
        if not all(isinstance(value, int) and not isinstance(value, bool) for value in (search_seed, calls)):
            return _unloadable("a search payload without a seed and a number of calls")
        last: list[BaseException | None] = []

        def body(explicit: bool) -> Body:
            def run(case: int, call: Callable[[], None]) -> None:
                if case >= calls:
                    raise EnoughCases()
                random.seed(random_seed if case == calls - 1 else call_seed(search_seed, self._assertion_id, case))
                error = _outcome_of(call)
                if case == calls - 1:
                    last[:] = [error]
                    raise EnoughCases()
                if error is not None:
                    raise self._judged.as_hypothesis_sees(error)

            return run

        self._runs.searching(search_seed, _Recorder().database, body)
        if not last:
            return _unloadable(f"the search no longer reaches case {calls - 1}")
        return self._judged.outcome(last[0], None)


class GivenTest:
    """One collected pytest item: a Hypothesis test the gate searches (an assertion: a
    `@given` test, or a stateful test, `given_tests`), or a plain test (any other, and one
    marked xfail: an expected failure is searched for nothing). What it is is read here, once,
    at collection; it answers the worker's three requests (search it, run it once, replay a
    payload) with its parts: running the item (`_Runs`), judging a case (`_Judged`) and
    replaying a witness's case (`_Replays`)."""

    def __init__(
        self,
        item: Any,
        basetemp: str,
        runtime: _Runtime,
        max_examples: int | None = None,
        declared: DeclaredTest | None = None,
    ) -> None:
        """`max_examples`: the suite's, the least a search of a test whose module sets none of
        its own runs (whatever default was in force when it was decorated); `declared`: what
        the module's source says of the test."""
        self.item, self._runtime = item, runtime
        self.assertion_id: str = item.nodeid
        function = _hypothesis_function(item.obj)
        expected_to_fail = item.get_closest_marker("xfail") is not None
        self.given = (
            runtime.is_given(item.obj) and not expected_to_fail and getattr(function, "hypothesis", None) is not None
        )
        # A machine's `TestCase` carries Hypothesis' mark; a function that runs one, the source says.
        self.stateful = (
            not self.given
            and not expected_to_fail
            and (
                getattr(item.obj, "_hypothesis_state_machine_class", None) is not None
                or (declared is not None and declared.stateful)
            )
        )
        self.searchable = self.given or self.stateful
        self.line = (
            declared.line
            if self.stateful and declared is not None and declared.line
            else int(item.reportinfo()[1] or 0) + 1
        )
        self._judged = _Judged(runtime, function, self.stateful, basetemp, _pytests_own_fixtures(item))
        self._runs = _Runs(item, runtime, function, self.stateful, max_examples, self._judged)
        self._replays = _Replays(self.assertion_id, self._runs, self._judged)

    def search(
        self,
        search_seed: int,
        announce: Callable[[int], None],
        report: Callable[[Outcome], None],
        cases: int | None = None,
    ) -> Searched:
        """Hypothesis' search and shrink under `search_seed`; `announce(case)` before each
        case runs and `report(outcome)` after it. With `cases`, the search passes once that
        many cases ran and none failed (a leg's: `seeds.search_leg_cases`); a failure among
        them is shrunk as in any search."""
        from hypothesis.errors import Flaky

        judged = self._judged
        recorder = _Recorder()
        failed: list[tuple[int, bool]] = []  # (case, explicit)
        last_error: list[BaseException] = []
        explicit_cases: list[int] = []
        announced: list[int] = []
        # This search's own: an `EnoughCases` the code under test raises is a failure like any other.
        enough = EnoughCases()

        def body(explicit: bool) -> Body:
            def run(case: int, call: Callable[[], None]) -> None:
                announce(case)
                announced.append(case)
                if explicit:
                    explicit_cases.append(case)
                random.seed(call_seed(search_seed, self.assertion_id, case))
                error = _outcome_of(call)
                if judged.passes(error, len(explicit_cases) - 1 if explicit else None):
                    report(Outcome(True, None))
                else:
                    assert error is not None
                    failed.append((case, explicit))
                    last_error[:] = [error]
                    report(judged.failure(error))
                if cases is not None and case == cases - 1 and not failed:
                    # After the case, not before it: a state machine draws its steps in the
                    # case, and a case that drew nothing where the one before drew would be
                    # Hypothesis' "inconsistent data generation".
                    raise enough
                if error is not None:
                    raise judged.as_hypothesis_sees(error)

            return run

        part, raised = self._runs.searching(search_seed, recorder.database, body)
        if isinstance(raised, self._runtime.skipped) and (not announced or judged.left(raised)):
            return Searched("skipped")  # a skip mark, or a skip the test itself asked for: not searched
        if raised is None or judged.left(raised) or raised is enough:
            if failed:  # Hypothesis fails a test whose case failed; something made it look passed
                raise WitnessGateError(
                    f"{self.assertion_id}: case {failed[0][0]} failed, yet the test passed: something in the worker "
                    "hid the failure"
                )
            return Searched("passed")
        if not failed:
            raise WitnessGateError(
                f"{self.assertion_id}: pytest or Hypothesis stopped the test outside any case: "
                f"{type(raised).__name__}: {_first_line(raised)}"
            )
        notes = judged.scrubbed(_notes(last_error[0], self.stateful) or _notes(raised, self.stateful))
        status = "flaky" if isinstance(raised, Flaky) else "falsified"
        if part == "explicit":  # Hypothesis runs `@example`s first and never shrinks them
            return Searched(status, example=explicit_cases.index(failed[0][0]), failing_example=notes)
        # Without a saved sequence (an error Hypothesis does not save, e.g. KeyboardInterrupt)
        # the runner makes the witness the search up to the failing case.
        return Searched(status, recorder.shrunk(), recorder.first, failing_example=notes)

    def run_plain(self) -> tuple[Outcome, bool]:
        """The test run once as a plain test: its outcome, and whether a mark excused it (a
        failure under an xfail mark, as pytest counts it, or a skip pytest's own frames raised,
        as a skip mark's): the runner accepts that only where the base's module carries such
        a mark for it (`given_tests.unrun_plain`), since code under test can place one."""
        error = _run_item(self.item)
        if error is None:
            return Outcome(True, None), False
        if self.item.get_closest_marker("xfail") is not None:
            return Outcome(True, None), True
        if self._runtime.skipped_by_the_oracle(error):
            return Outcome(True, None), self._runtime.skipped_by_a_mark(error)
        return self._judged.failure(error), False

    def run(self, payload: Any, fixture: Callable[[], Any] | None, random_seed: int, expect: str = "accept") -> Outcome:
        """One replay of `payload` (a witness or a history entry; see the module docstring)."""
        del fixture, expect  # a pytest test reads its fixture files itself; it has no rejects
        if not isinstance(payload, dict):
            return _unloadable("the payload is no pytest payload")
        if payload.get("run") is True:
            return self.run_plain()[0]
        if not self.searchable:
            return _unloadable("the test is no @given or stateful test any more (or is marked xfail)")
        if "choices" in payload:
            return self._replays.choices(payload["choices"], random_seed)
        if "example" in payload:
            return self._replays.example(payload["example"], random_seed)
        if "search" in payload:
            return self._replays.search(payload["search"], payload.get("calls"), random_seed)
        return _unloadable(f"unknown pytest payload {sorted(payload)}")


def _hypothesis_function(function: Any) -> Any:
    """The function `@given` made, under any decorators stacked on it (`mock.patch`, a
    logger): they copy its attributes, but Hypothesis reads its own."""
    found, seen = function, set()
    candidate = getattr(function, "__func__", function)  # a test method: the function itself
    while candidate is not None and id(candidate) not in seen:
        seen.add(id(candidate))
        if getattr(candidate, "is_hypothesis_test", False):
            found = candidate
        candidate = getattr(candidate, "__wrapped__", None)
    return found


def _explicit_examples(function: Any) -> list[Any]:
    # The `@example`s in the order Hypothesis runs them (Hypothesis' own attribute; the lock pins its version).
    return list(reversed(getattr(function, "hypothesis_explicit_examples", ())))


def _search_settings(database: Any, phases: tuple[Any, ...]) -> dict[str, Any]:
    from hypothesis import HealthCheck

    # What a verdict needs over the test's own settings: no clock (deadline, too_slow), no
    # second bug after the first, no blob in the output; max_examples stays the test's.
    return {
        "database": database,
        "deadline": None,
        "derandomize": False,
        "phases": phases,
        "report_multiple_bugs": False,
        "print_blob": False,
        "suppress_health_check": list(HealthCheck),
    }


def _outcome_of(call: Callable[[], None]) -> BaseException | None:
    try:
        call()
    except BaseException as error:  # fail closed: SystemExit and KeyboardInterrupt fail a case too
        return error
    return None


def _both(directory: Path) -> tuple[str, ...]:
    """`directory` as a prefix of the paths under it, as given and resolved."""
    return tuple({os.path.abspath(directory) + "/", os.path.realpath(directory) + "/"})


def _pytests_own_fixtures(item: Any) -> frozenset[str]:
    """The fixtures of `item` that pytest itself defines (`tmp_path`, `monkeypatch`, `request`):
    what it sets up, never chosen by the program. Every other argument is the test's input,
    a parameter (`parametrize` over a set picks by its order) and a fixture of the module's or
    a conftest's (which may pick from a set) as much as a drawn one."""
    params = getattr(getattr(item, "callspec", None), "params", {})
    definitions = item._fixtureinfo.name2fixturedefs
    return frozenset(
        name
        for name in item.fixturenames
        if name not in params
        and definitions.get(name)
        and str(getattr(definitions[name][-1].func, "__module__", "")).split(".")[0] == "_pytest"
    )


def _run_item(item: Any) -> BaseException | None:
    """pytest's setup, call and teardown of one item, each reported to pytest's hooks as its
    own run loop does (fixtures such as `tmp_path` read their reports); the first exception
    raised, if any. Everything is torn down after it, so each run starts as a lone test's."""
    import pytest

    hooks, raised = item.ihook, None
    phases: tuple[tuple[Literal["setup", "call", "teardown"], Callable[[], Any]], ...] = (
        ("setup", lambda: hooks.pytest_runtest_setup(item=item)),
        ("call", lambda: hooks.pytest_runtest_call(item=item)),
        ("teardown", lambda: hooks.pytest_runtest_teardown(item=item, nextitem=None)),
    )
    for when, phase in phases:
        if when == "call" and raised is not None:
            continue
        info = pytest.CallInfo.from_call(phase, when=when, reraise=None)
        hooks.pytest_runtest_makereport(item=item, call=info)
        if info.excinfo is not None and raised is None:
            raised = info.excinfo.value
    return raised


def _unloadable(why: str) -> Outcome:
    return Outcome(False, failure_evidence(EvidenceKind.UNLOADABLE, None, why))


def _first_line(error: BaseException) -> str:
    return (describe(error).splitlines() or [""])[0]


def _notes(error: BaseException, stateful: bool = False) -> str | None:
    """The failing example Hypothesis printed: the first of the notes it adds to the error
    (the others explain, e.g., a failure that did not come back); of a state machine, the
    steps it ran, a note each (`state = Machine()` to `state.teardown()`)."""
    notes = [note for note in getattr(error, "__notes__", []) if isinstance(note, str)]
    start = next((index for index, note in enumerate(notes) if note.startswith("state = ")), None) if stateful else None
    if start is not None:
        end = next((index for index in range(start, len(notes)) if notes[index] == "state.teardown()"), len(notes) - 1)
        notes = ["\n".join(notes[start : end + 1])]
    return describe(Exception(notes[0]))[:_MAX_NOTES] if notes else None


# --- collection --------------------------------------------------------------------


def _load_gate_profile(max_examples: int) -> None:
    from hypothesis import HealthCheck, settings

    settings.register_profile(
        "witness-gate",
        max_examples=max_examples,
        deadline=None,
        database=None,
        derandomize=False,
        print_blob=False,
        suppress_health_check=list(HealthCheck),
    )
    settings.load_profile("witness-gate")


def _guard_profiles(oracle_files: set[str]) -> None:
    """Lets only the test module, the conftest files on its way from the root (the oracle)
    and Hypothesis' plugin (the profile the base's ini names) load a Hypothesis profile:
    code under test imported first could otherwise set
    the default a test without settings of its own takes (the search also puts the suite's
    `max_examples` over any test whose module sets none: `GivenTest`)."""
    from hypothesis import settings

    load = settings.load_profile

    def guarded(name: str) -> None:
        caller = os.path.realpath(sys._getframe(1).f_code.co_filename)
        if caller not in oracle_files:
            raise WitnessGateError(
                f"{caller} loaded the Hypothesis profile {name!r}: only the test module and its conftest files may "
                "choose how the gated tests search"
            )
        load(name)

    type.__setattr__(settings, "load_profile", staticmethod(guarded))  # past the class's own immutability guard


class CollectionFailed(WitnessGateError):
    pass


def run_session(
    root: Path,
    module: str,
    source: bytes,
    max_examples: int,
    before_collection: Callable[[], None],
    loop: Callable[[list[GivenTest]], None],
) -> None:
    """Collects `module` with pytest and hands its tests to `loop`, inside pytest's session
    (fixtures of every scope live there); raises what `loop` raised. `before_collection`
    runs once pytest is configured, before any module of the user's is imported."""
    import pytest

    oracle_conftests = {
        os.path.realpath(root / path)
        for path in pytest_files.read_at_collection(module)
        if path.endswith("conftest.py")
    }
    runtime = _Runtime(root, root / module, frozenset(oracle_conftests))
    failures: list[str] = []
    raised: list[BaseException] = []
    existing: set[int] = set()  # the modules there were before pytest imported the test module
    # Read before any code of the user's runs: the tests whose module sets their max_examples, and those it
    # runs a machine in.
    declared = declared_tests(source)
    own = {key for key, test in declared.items() if test.own_max_examples}

    class Driver:
        @pytest.hookimpl(tryfirst=True)
        def pytest_configure(self, config: Any) -> None:
            # Before collection: a test that sets no max_examples gets the suite's.
            _load_gate_profile(max_examples)
            plugin = sys.modules.get(HYPOTHESIS_PLUGIN)  # the profile the base's ini names (`--hypothesis-profile`)
            _guard_profiles(
                {
                    runtime.module_file,
                    *oracle_conftests,
                    *([os.path.realpath(cast(str, plugin.__file__))] if plugin else []),
                }
            )
            before_collection()

        def pytest_collectstart(self, collector: Any) -> None:
            if isinstance(collector, pytest.Module) and os.path.realpath(collector.path) == runtime.module_file:
                existing.update(id(loaded) for loaded in list(sys.modules.values()))

        def pytest_collectreport(self, report: Any) -> None:
            if report.failed:  # the error itself, on one line, as a blocked line shows it
                crash = getattr(report.longrepr, "reprcrash", None)
                lines = [line for line in str(report.longreprtext).splitlines() if line.strip()]
                failures.append(
                    " ".join((crash.message if crash is not None else lines[-1] if lines else "an error").split())[
                        :_MAX_NOTES
                    ]
                )

        @pytest.hookimpl(tryfirst=True)
        def pytest_runtestloop(self, session: Any) -> bool:
            try:
                items = [item for item in session.items if item.nodeid.split("::", 1)[0] == module]
                # In the importlib mode pytest takes a module already in sys.modules under the
                # test module's name as it is: code imported first (by a conftest) could have put
                # a stand-in there, whose tests pass.
                if any(id(item.module) in existing for item in items):
                    raise WitnessGateError(
                        f"{module}: the module pytest collected was in sys.modules before pytest imported the test "
                        "module: something imported before it stood in for it"
                    )
                tests = [
                    GivenTest(
                        item,
                        basetemp,
                        runtime,
                        None if function_key(item.nodeid) in own else max_examples,
                        declared.get(function_key(item.nodeid)),
                    )
                    for item in items
                ]
                loop(tests)
            except BaseException as error:  # pytest would print it and carry on: the worker reports it
                raised.append(error)
            return True

    with tempfile.TemporaryDirectory(prefix="witness-gate-pytest-") as scratch:
        basetemp = str(Path(scratch) / "basetemp")
        # What pytest reads, fixed: the root, the ini file pytest would find from the module
        # (the base's: every candidate on the way is oracle, `pytest_files`), or an empty one, conftest
        # files no higher than the root, no plugin but Hypothesis' own, and the importlib import
        # mode, which puts no directory of the tree first on sys.path (where a copy of the
        # package committed beside the tests would shadow the real one).
        # --tb=no: pytest formats a failed test's report (its hooks need one) with every frame's
        # source parsed again, three quarters of a failing replay's time; the evidence is the
        # runner's own (`describe`), and a collection error's message reads the same.
        ini = ini_file(root, module)
        if ini is None:  # an empty one: pytest must not go looking for one of its own
            ini = Path(scratch) / "pytest.ini"
            ini.write_text("[pytest]\n", "utf-8")
        plugins = ("-p", HYPOTHESIS_PLUGIN) if sys.modules.get(HYPOTHESIS_PLUGIN) else ()
        args = [
            str(root / module),
            f"--rootdir={root}",
            f"--confcutdir={root}",
            "--import-mode=importlib",
            "-c",
            str(ini),
            *plugins,
            "--basetemp",
            basetemp,
            "-p",
            "no:cacheprovider",
            "-q",
            "--no-header",
            "--tb=no",
            "-W",
            "ignore::pytest.PytestAssertRewriteWarning",
        ]
        os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
        pytest.main(args, plugins=[Driver()])
    if raised:
        raise raised[0]
    if failures:
        raise CollectionFailed(f"{module}: pytest could not collect the module: {failures[0]}")
