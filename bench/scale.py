"""`pants test` of witness_properties (gated) against python_tests (plain), at scale.

    python bench/scale.py [--packages 12] [--runs 3] [--cold-runs 1] [--growth 1,12,48]

Copies this repository's working tree (the files git tracks, and untracked files it does
not ignore: the rules and the runner as they are right now) into a temporary git
repository, adds packages under scale/pkgNN/ (a ledger-balance function, a JSON fixture,
and the same four properties twice: a `witness_properties` target and a `python_tests`
target), and drives that repository's own `./pants` with pantsd warm. Gated and plain
runs alternate their order; every timed run is followed by an untimed re-run that must
be green for every target. Nothing here asserts a timing: the figures are for reading
(bench/README.md records a run). The git helpers come from tests/support/.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from string import Template

import cpu_account
from perf import CPU_MISSING, ROOT, measured, timed  # perf puts tests/ on sys.path
from support.git_repo import GitRepo

KINDS = ("gated", "plain")
TARGET_NAME = {"gated": "properties", "plain": "tests"}
# Not written into the copied pants.toml: the copy stays the project's own.
SOURCE_ROOTS = "+['/scale/*/src', '/scale/*/tests']"
REVISION_LINE = "# revision {}: bench/scale.py bumps this line, an edit that keeps the behaviour.\n"

STRATEGIES = """\
entries = st.lists(
    st.fixed_dictionaries(
        {"kind": st.sampled_from(["credit", "debit"]), "amount": st.integers(min_value=0, max_value=100_000)}
    ),
    max_size=8,
)
ledgers = entries.map(
    lambda es: {"entries": es, "claimed": sum(e["amount"] if e["kind"] == "credit" else -e["amount"] for e in es)}
)
WRONG_CLAIM = {"entries": [{"kind": "credit", "amount": 5}], "claimed": 4}
"""

IMPL = '''\
"""Ledger balances of package ${nn}: the implementation under test."""

${revision}

def signed(entry: dict) -> int:
    return entry["amount"] if entry["kind"] == "credit" else -entry["amount"]


def balance(entries: list) -> int:
    return sum(signed(entry) for entry in entries)
'''

FIXTURE = """\
[
  {"entries": [{"kind": "credit", "amount": 1500}, {"kind": "debit", "amount": 300}], "claimed": 1200},
  {"entries": [], "claimed": 0}
]
"""

WITNESS_PROPERTIES = '''\
"""Package ${nn}'s oracle: four properties of `balance`, checked by witness-gate."""

from hypothesis import strategies as st

import witness_gate
from scale_pkg${nn}.ledger import balance

${strategies}

@witness_gate.property(payloads=ledgers, rejects=[WRONG_CLAIM], fixture_payloads=True)
def prop_balance_matches_claimed(ledger: dict) -> bool:
    return balance(ledger["entries"]) == ledger["claimed"]


@witness_gate.property(payloads=ledgers)
def prop_balance_ignores_order(ledger: dict) -> bool:
    return balance(ledger["entries"]) == balance(ledger["entries"][::-1])


@witness_gate.property(payloads=ledgers)
def prop_balance_is_additive(ledger: dict) -> bool:
    half = len(ledger["entries"]) // 2
    return balance(ledger["entries"]) == balance(ledger["entries"][:half]) + balance(ledger["entries"][half:])


@witness_gate.property(payloads=ledgers)
def prop_credits_never_negative(ledger: dict) -> bool:
    return balance([e for e in ledger["entries"] if e["kind"] == "credit"]) >= 0
'''

PYTEST_PROPERTIES = '''\
"""Package ${nn}'s four properties as plain pytest and Hypothesis tests (the baseline)."""

import json
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from scale_pkg${nn}.ledger import balance

${strategies}
# As the witness-gate runner searches: 100 examples, no deadline (a loaded machine must
# not turn slowness into failures), no example database.
SEARCH = settings(max_examples=100, database=None, deadline=None)
FIXTURE = Path(__file__).parent / "fixtures" / "ledger.json"


def matches_claimed(ledger: dict) -> bool:
    return balance(ledger["entries"]) == ledger["claimed"]


@SEARCH
@given(ledgers)
def test_balance_matches_claimed(ledger):
    assert matches_claimed(ledger)


def test_fixture_ledgers_match_claimed():
    assert all(matches_claimed(ledger) for ledger in json.loads(FIXTURE.read_text()))


def test_a_wrong_claim_is_rejected():
    assert not matches_claimed(WRONG_CLAIM)


@SEARCH
@given(ledgers)
def test_balance_ignores_order(ledger):
    assert balance(ledger["entries"]) == balance(ledger["entries"][::-1])


@SEARCH
@given(ledgers)
def test_balance_is_additive(ledger):
    half = len(ledger["entries"]) // 2
    assert balance(ledger["entries"]) == balance(ledger["entries"][:half]) + balance(ledger["entries"][half:])


@SEARCH
@given(ledgers)
def test_credits_never_negative(ledger):
    assert balance([e for e in ledger["entries"] if e["kind"] == "credit"]) >= 0
'''

# Pants takes a target's source root from its BUILD file's directory, so each side has its own.
IMPL_BUILD = "python_sources()\n"

TESTS_BUILD = """\
# Generated by bench/scale.py: package ${nn}'s four properties, gated and plain.
witness_fixture(name="fixture", source="fixtures/ledger.json", generator_version=1)

witness_properties(
    name="properties",
    sources=["properties/*.py"],
    fixture=":fixture",
    dependencies=["scale/pkg${nn}/src/scale_pkg${nn}"],
)

files(name="fixture-file", sources=["fixtures/ledger.json"])

python_tests(name="tests", sources=["*_test.py"], dependencies=[":fixture-file"])
"""


# --- the scenario -------------------------------------------------------------------


def copy_working_tree(target: Path) -> None:
    """What git lists (tracked, or untracked and not ignored, so a rules module not yet
    added is there too), as it is in the working tree now; .gitignore leaves out dist/,
    .pants.d/ and .pants-bootstrap/ (the nested ./pants reinstalls the pex CLI)."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.decode()
    for relative in sorted(set(filter(None, listed.split("\0")))):
        source = ROOT / relative
        if not os.path.lexists(source):  # deleted in the working tree, not yet in the index
            continue
        (target / relative).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target / relative, follow_symlinks=False)


def write_package(root: Path, n: int) -> None:
    package = root / "scale" / f"pkg{n:02d}"
    files = {
        f"src/scale_pkg{n:02d}/BUILD": IMPL_BUILD,
        f"src/scale_pkg{n:02d}/ledger.py": IMPL,
        "tests/BUILD": TESTS_BUILD,
        "tests/fixtures/ledger.json": FIXTURE,
        f"tests/properties/pkg{n:02d}_props.py": WITNESS_PROPERTIES,
        f"tests/pkg{n:02d}_test.py": PYTEST_PROPERTIES,
    }
    values = {"nn": f"{n:02d}", "strategies": STRATEGIES, "revision": REVISION_LINE.format(0).rstrip("\n")}
    for relative, template in files.items():
        path = package / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(Template(template).substitute(values))


def impl_path(n: int) -> str:
    return f"scale/pkg{n:02d}/src/scale_pkg{n:02d}/ledger.py"


def pants_argv(store: Path, *args: str) -> list[str]:
    return ["./pants", "--no-dynamic-ui", f"--local-store-dir={store}", *args]


class Scenario:
    """The nested repository, its ./pants, and the revision of every implementation module."""

    def __init__(self, root: Path, packages: int) -> None:
        self.project = GitRepo(root)
        self.root = root
        self.revisions = [0] * packages
        self.env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
        self.env["PANTS_SOURCE_ROOT_PATTERNS"] = SOURCE_ROOTS

    def edit_and_commit(self, count: int) -> None:
        """Bumps the revision comment of the first `count` implementation modules, and
        commits: with `base = "HEAD"` the changed-file list is then empty for both kinds."""
        for index in range(count):
            old = REVISION_LINE.format(self.revisions[index])
            self.revisions[index] += 1
            self.project.edit(impl_path(index + 1), old, REVISION_LINE.format(self.revisions[index]))
        self.project.commit(f"edit {count} implementation modules")

    def run_quietly(self, argv: list[str]) -> subprocess.CompletedProcess:
        return subprocess.run(argv, cwd=self.root, env=self.env, capture_output=True, text=True, timeout=3600)

    def measure(self, argv: list[str]) -> Sample:
        [pid_file] = self.root.glob(".pids/*/pantsd/pid")
        pantsd = int(pid_file.read_text())
        if CPU_MISSING:
            cpu_before = pantsd_cpu_seconds(pantsd)
            with ProcessesPeak(pantsd) as processes:
                wall, client_kib = timed(argv, self.root, self.env)
            return Sample(wall, pantsd_cpu_seconds(pantsd) - cpu_before, client_kib, processes.peak_kib)
        # pantsd is no child of ./pants: it joins a control group of its own for the run, and
        # the client and everything it starts are counted in another (`measured`).
        account = cpu_account.Account()
        try:
            account.add(pantsd)
            try:
                with ProcessesPeak(pantsd) as processes:
                    client = measured(argv, self.root, self.env)
            finally:
                account.release(pantsd)
            assert client.cpu is not None  # CPU_MISSING is empty
            return Sample(client.wall, account.seconds() + client.cpu, client.peak_kib, processes.peak_kib)
        finally:
            account.close()

    def assert_green(self, argv: list[str], count: int) -> None:
        """An untimed re-run: exit 0 and one "succeeded" line per target. Pants never
        caches a failed test, so a red timed run is red here too."""
        done = self.run_quietly(argv)
        output = done.stdout + done.stderr
        if done.returncode != 0 or output.count(" succeeded in ") != count:
            sys.exit(f"not green: {' '.join(argv)} exited {done.returncode}\n{output[-4000:]}")


def build_scenario(work: Path, packages: int) -> Scenario:
    root = work / "repo"
    copy_working_tree(root)
    for n in range(1, packages + 1):
        write_package(root, n)
    scenario = Scenario(root, packages)
    scenario.project.git("init", "-q", "-b", "main")
    scenario.project.commit(f"this repository and {packages} scale packages")
    return scenario


# --- measuring ----------------------------------------------------------------------


@dataclass(frozen=True)
class Sample:
    seconds: float
    cpu_seconds: float  # of pantsd and of everything the run started (see HEADER)
    client_kib: int  # ru_maxrss of the ./pants client (os.wait4)
    processes_kib: int  # peak summed RSS of the processes pantsd ran (sampled)


class ProcessesPeak:
    """The peak summed RSS of pantsd's descendants, sampled every 50 ms.

    pantsd runs the sandboxed pytest and witness-gate processes, and it is no child of
    ./pants, so os.wait4 on ./pants cannot see them. pantsd's own RSS is left out: it
    grows with everything the daemon has seen, whichever kind ran last. So are its forks
    that have not exec'd yet (Python's subprocess, e.g. for git): they show pantsd's RSS."""

    def __init__(self, pantsd: int) -> None:
        self.pantsd = pantsd
        self.pantsd_cmdline = _cmdline(pantsd)
        self.peak_kib = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def __enter__(self) -> ProcessesPeak:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()

    def _sample(self) -> None:
        page_kib = os.sysconf("SC_PAGE_SIZE") // 1024
        while not self._stop.wait(0.05):
            pids = [pid for pid in _descendants(self.pantsd) if _cmdline(pid) != self.pantsd_cmdline]
            self.peak_kib = max(self.peak_kib, sum(_resident_pages(pid) for pid in pids) * page_kib)


def _descendants(pid: int) -> list[int]:
    found, pending = [], _children(pid)
    while pending:
        current = pending.pop()
        found.append(current)
        pending += _children(current)
    return found


def _children(pid: int) -> list[int]:
    try:  # listed per thread, and pantsd starts processes from many threads
        return [
            int(child)
            for task in Path(f"/proc/{pid}/task").iterdir()
            for child in (task / "children").read_text().split()
        ]
    except OSError:  # it ended while being read
        return []


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def _resident_pages(pid: int) -> int:
    try:
        return int(Path(f"/proc/{pid}/statm").read_text().split()[1])
    except (OSError, IndexError):
        return 0


def summary(samples: list[Sample]) -> Sample:
    """Median seconds; the highest peaks."""
    return Sample(
        statistics.median(s.seconds for s in samples),
        statistics.median(s.cpu_seconds for s in samples),
        max(s.client_kib for s in samples),
        max(s.processes_kib for s in samples),
    )


def pantsd_cpu_seconds(pid: int) -> float:
    """pantsd's user and system time plus that of the children it reaped (their own reaped
    children included): the CPU a run used, which, unlike wall time, another user's load
    on the machine barely moves."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return sum(int(fields[index]) for index in (11, 12, 13, 14)) / os.sysconf("SC_CLK_TCK")


class Bench:
    """Timed runs of one scenario, gated and plain in alternating order."""

    def __init__(self, scenario: Scenario, work: Path) -> None:
        self.scenario = scenario
        self.work = work
        self.store = work / "store"  # this run's own: nothing an earlier run cached can answer
        self.pairs = 0

    def order(self) -> tuple[str, ...]:
        self.pairs += 1
        return KINDS if self.pairs % 2 else KINDS[::-1]

    def test_argv(self, kind: str, count: int, store: Path | None = None) -> list[str]:
        addresses = [f"scale/pkg{n:02d}/tests:{TARGET_NAME[kind]}" for n in range(1, count + 1)]
        return pants_argv(store or self.store, "test", *addresses)

    def warm(self, store: Path) -> None:
        """`./pants --version`: another --local-store-dir makes pantsd build a new
        scheduler (several seconds), which no timed run should pay for."""
        self.scenario.run_quietly(pants_argv(store, "--version"))

    def timed_test(self, kind: str, count: int, store: Path | None = None) -> Sample:
        argv = self.test_argv(kind, count, store)
        sample = self.scenario.measure(argv)
        self.scenario.assert_green(argv, count)
        return sample

    def cold(self, count: int, runs: int) -> dict[str, list[Sample]]:
        """Each run on a fresh, empty store: every process runs, the requirement PEXes'
        builds included. pip's and PEX's caches (~/.cache/pants/named_caches) stay warm,
        so downloads from PyPI are not what is measured."""
        samples: dict[str, list[Sample]] = {kind: [] for kind in KINDS}
        for run in range(runs):
            for kind in self.order():
                store = self.work / f"cold-store-{run}-{kind}"
                self.warm(store)
                samples[kind].append(self.timed_test(kind, count, store))
                shutil.rmtree(store)
        return samples

    def bring_up_to_date(self, count: int) -> None:
        """Untimed runs of both kinds on this run's store."""
        for kind in KINDS:
            self.scenario.assert_green(self.test_argv(kind, count), count)

    def after_edit(self, count: int, runs: int) -> dict[str, list[Sample]]:
        """Each run right after its own committed edit to `count` implementation modules."""
        samples: dict[str, list[Sample]] = {kind: [] for kind in KINDS}
        for _ in range(runs):
            for kind in self.order():
                self.scenario.edit_and_commit(count)
                samples[kind].append(self.timed_test(kind, count))
        return samples

    def unchanged(self, count: int, runs: int) -> dict[str, list[Sample]]:
        self.bring_up_to_date(count)  # the kind that ran first after the last edit is a revision behind
        samples: dict[str, list[Sample]] = {kind: [] for kind in (*KINDS, "version")}
        for _ in range(runs):
            for kind in self.order():
                samples[kind].append(self.timed_test(kind, count))
            samples["version"].append(self.scenario.measure(pants_argv(self.store, "--version")))
        return samples


# --- printing -----------------------------------------------------------------------


def mib(kib: int) -> str:
    return f"{kib / 1024:.0f}"


def seconds(samples: list[Sample]) -> str:
    """The median, and the range when there are several runs: this machine is noisy."""
    values = sorted(s.seconds for s in samples)
    spread = f" ({values[0]:.2f}-{values[-1]:.2f})" if len(values) > 1 else ""
    return f"{statistics.median(values):.2f} s{spread}"


def versus(ours: float, baseline: float) -> str:
    return f"{ours:.2f} s vs {baseline:.2f} s = {ours / baseline:.2f}x"


def print_pair(name: str, samples: dict[str, list[Sample]], target: str) -> None:
    gated, plain = summary(samples["gated"]), summary(samples["plain"])
    print(
        f"{name}: gated {seconds(samples['gated'])} vs plain {seconds(samples['plain'])} = "
        f"{gated.seconds / plain.seconds:.2f}x wall (target {target})\n"
        f"  CPU {versus(gated.cpu_seconds, plain.cpu_seconds)}; peak MiB gated/plain: "
        f"processes {mib(gated.processes_kib)}/{mib(plain.processes_kib)}, client "
        f"{mib(gated.client_kib)}/{mib(plain.client_kib)}",
        flush=True,
    )


def print_unchanged(samples: dict[str, list[Sample]]) -> None:
    version = summary(samples["version"])
    for kind in KINDS:
        ours = summary(samples[kind])
        print(
            f"unchanged re-run, {kind}: {seconds(samples[kind])} vs ./pants --version {seconds(samples['version'])} = "
            f"{ours.seconds / version.seconds:.2f}x wall (target <= 1.5x)\n"
            f"  CPU {versus(ours.cpu_seconds, version.cpu_seconds)}; peak MiB processes {mib(ours.processes_kib)}, "
            f"client {mib(ours.client_kib)}",
            flush=True,
        )


def print_growth(bench: Bench, counts: list[int]) -> None:
    previous: tuple[int, Sample, Sample] | None = None
    for count in counts:
        samples = bench.after_edit(count, 1)
        gated, plain = samples["gated"][0], samples["plain"][0]
        print(
            f"growth, after an edit, {count} target(s) of each kind: gated {gated.seconds:.1f} s "
            f"({gated.seconds / count:.2f} s/target) vs plain {plain.seconds:.1f} s ({plain.seconds / count:.2f} "
            "s/target) "
            f"= {gated.seconds / plain.seconds:.2f}x wall\n"
            f"  CPU {versus(gated.cpu_seconds, plain.cpu_seconds)} ({gated.cpu_seconds / count:.2f} vs "
            f"{plain.cpu_seconds / count:.2f} s/target); peak MiB processes "
            f"{mib(gated.processes_kib)}/{mib(plain.processes_kib)}",
            flush=True,
        )
        if previous:
            print_marginal(previous, (count, gated, plain))
        previous = (count, gated, plain)


def print_marginal(smaller: tuple[int, Sample, Sample], larger: tuple[int, Sample, Sample]) -> None:
    """What each added target costs: the fixed cost of a run (pantsd, git, the first
    process's start) drops out, so this is the figure that says how the gate scales."""
    added = larger[0] - smaller[0]
    wall = [(big.seconds - small.seconds) / added for small, big in zip(smaller[1:], larger[1:])]
    cpu = [(big.cpu_seconds - small.cpu_seconds) / added for small, big in zip(smaller[1:], larger[1:])]
    print(
        f"  each target added from {smaller[0]} to {larger[0]}, gated vs plain: wall {versus(*wall)}, CPU "
        f"{versus(*cpu)}",
        flush=True,
    )


HEADER = """\
gated = the witness_properties targets, plain = the python_tests targets (the same four
properties in each package); seconds are wall-clock medians of whole ./pants runs, with
the range of the runs in brackets.
  cold: each run on a fresh, empty --local-store-dir (a new Pants scheduler, warmed by
    ./pants --version first); pip's and PEX's named caches stay warm.
  after an edit: right after a committed, behaviour-keeping edit to every implementation
    module of the run (with base = "HEAD" the changed-file list is then empty for both).
  unchanged re-run: served from cache, against ./pants --version.
  growth: after an edit, one run of each kind per count; then the cost of each added target.
CPU is pantsd's and that of every process the run started, the sandboxed workers
included, counted by a control group (bench/cpu_account.py; as root), else, where none can
be made, pantsd's reaped children's times from /proc, which miss most of what the workers
did: another user's load moves either far less than the wall time. Peak MiB "processes"
is the summed RSS of the processes pantsd ran (sampled every 50 ms); "client" is
ru_maxrss of ./pants itself from os.wait4, a thin client of pantsd."""


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--packages", type=int, default=12)
    parser.add_argument("--runs", type=int, default=3, help="runs of each kind after an edit and unchanged")
    parser.add_argument("--cold-runs", type=int, default=1)
    parser.add_argument("--growth", default="1,12,48", help="target counts of the growth rows ('' for none)")
    args = parser.parse_args(argv)
    growth = [int(count) for count in args.growth.split(",") if count]
    packages = max([args.packages, *growth])
    print(
        f"python {sys.version.split()[0]}, {os.cpu_count()} cores; {args.packages} packages of 4 properties, "
        f"median of {args.runs} runs ({args.cold_runs} cold); growth to {packages} packages",
        flush=True,
    )
    print(HEADER, flush=True)
    print(f"CPU: {'pantsd reaped children only: ' + CPU_MISSING if CPU_MISSING else 'a control group'}", flush=True)
    with tempfile.TemporaryDirectory(prefix="witness-gate-scale.") as scratch:
        work = Path(scratch)
        scenario = build_scenario(work, packages)
        bench = Bench(scenario, work)
        try:
            print_pair("cold", bench.cold(args.packages, args.cold_runs), "none")
            # The first runs on this run's store: "after an edit" finds all but the edited modules built.
            bench.warm(bench.store)
            bench.bring_up_to_date(packages)
            print_pair(
                "after an edit to every implementation module", bench.after_edit(args.packages, args.runs), "<= 1.2x"
            )
            print_unchanged(bench.unchanged(args.packages, args.runs))
            print_growth(bench, growth)
        finally:
            scenario.project.stop_pantsd()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
