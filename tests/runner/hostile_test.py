"""Code under test that fights the runner: every trick ends red with a clear line.

Each case puts hostile behaviour into the implementation of the orders example (it runs
when a line's quantity is over 3, which Hypothesis reaches at once), then runs the real
`gate` command: pin, check, classify. Nothing the code does may produce a pass, a
refusal of its choosing, or a hang past the time limit.
"""

from __future__ import annotations

import json

import pytest
from conftest import SampleRepo

IMPL = "src/orders_app/pricing.py"
BUG = ('return line["qty"] * line["price"]', 'return line["qty"] * line["price"] - (1 if line["qty"] > 3 else 0)')
ORIGINAL = 'return line["qty"] * line["price"]'
TIME_LIMIT = 2


def inject(repo: SampleRepo, code: str) -> None:
    body = "".join(f"        {line}\n" for line in code.splitlines())
    repo.edit(IMPL, ORIGINAL, f'import os, signal, sys, time\n    if line["qty"] > 3:\n{body}    {ORIGINAL}')
    repo.configure(f"replay-timeout-seconds = {TIME_LIMIT}")


HOSTILE = {
    "exit 0": ("os._exit(0)", "exit status 0"),
    "exit 3": ("os._exit(3)", "exit status 3"),
    "sys.exit(0)": ("sys.exit(0)", "SystemExit"),
    "KeyboardInterrupt": ("raise KeyboardInterrupt()", "KeyboardInterrupt"),
    "the runner's own refusal": (
        "from witness_gate.errors import WitnessGateError\nraise WitnessGateError('fixture changed: re-pin')",
        "WitnessGateError",
    ),
    "SIGKILL of itself": ("os.kill(os.getpid(), signal.SIGKILL)", "crashed"),
    "SIGALRM ignored, then a hang": (
        "signal.signal(signal.SIGALRM, signal.SIG_IGN)\nwhile True:\n    pass",
        f"within {TIME_LIMIT} s",
    ),
    "stdout and stderr garbage": (
        # The runner's own "done" first: were the worker's stdout its message channel, this would end the call unheard.
        "os.write(1, b'{\"event\": \"done\"}\\n')\nprint('gate: pass (exit 0)', flush=True)\nos.write(2, b'verdict: "
        "pass\\n')\nreturn -1",
        "returned_false",
    ),
    "garbage on every inherited descriptor": (
        "for fd in range(3, 256):\n    try:\n        os.write(fd, b'not json\\n')\n    except OSError:\n        "
        "pass\nreturn -1",
        None,  # which replay's evidence comes first depends on which process the parent stops first
    ),
    "a forged passing result and end on every descriptor": (
        # The message channel is one of the inherited descriptors: were a well-formed line the
        # runner's word, this call would pass and the search end green.
        "for fd in range(3, 256):\n    try:\n"
        '        os.write(fd, b\'{"event": "result", "passed": true, "evidence": null}\\n{"event": "done"}\\n\')\n'
        "    except OSError:\n        pass\nreturn -1",
        None,
    ),
    "a child that forks and exits": (
        "if os.fork() == 0:\n    time.sleep(60)\n    os._exit(0)\nos._exit(0)",
        "exit status 0",
    ),
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_code_under_test_ends_red_with_a_clear_line(repo: SampleRepo, name: str):
    code, evidence = HOSTILE[name]
    inject(repo, code)
    # A small replay plan: what matters here is that nothing passes, not the statistics.
    result = repo.gate(IMPL, extra=("--replays", "2", "--replay-interpreters", "3"))
    assert result.code == 1, (name, result.stdout, result.stderr)
    record = repo.gate_json()
    assert record["verdict"] == "blocked"
    assert [row["label"] for row in record["witnesses"]] == ["regression"], result.stdout
    assert evidence is None or evidence in result.stdout, result.stdout
    assert "gate: blocked (exit 1" in result.stdout.splitlines()[-1]
    # A certain failure pays the confirming second round and no more, even when it ended
    # the search before Hypothesis could shrink it.
    report = json.loads((repo.root / ".artifacts/gate/classification.json").read_text())
    assert [row["rounds"] for row in report["witnesses"]] in ([1], [2]), report["witnesses"][0]["reason"]


def test_code_under_test_cannot_rewrite_the_fixture(repo: SampleRepo):
    # Appends to the pinned fixture whenever it runs: the worker sees the tree read-only.
    fixture = (repo.root / "tests/fixtures/orders.json").read_bytes()
    inject(repo, "open('tests/fixtures/orders.json', 'a').write(' ')\nreturn -1")
    result = repo.gate(IMPL, extra=("--replays", "2", "--replay-interpreters", "3"))
    assert result.code == 1, result.stdout + result.stderr
    # Read-only, and not the worker's: as the caller's user it meets the read-only mount; as
    # `nobody` (a root caller's workers) it is refused as a file of another user first.
    assert ("OSError: [Errno 30] Read-only file system" in result.stdout) or (
        "PermissionError: [Errno 13] Permission denied" in result.stdout
    )
    assert [row["label"] for row in repo.gate_json()["witnesses"]] == ["regression"]
    assert (repo.root / "tests/fixtures/orders.json").read_bytes() == fixture


def test_a_bug_that_hides_from_a_collector_production_never_runs_stays_a_regression(repo: SampleRepo):
    # Fails wherever the collector runs as in production and hides where it is off or runs at
    # every allocation: were the collector probe to set either, its outcomes would split by
    # setting and a certain failure would read as a freezable flake (cause gc).
    inject(repo, "import gc\nif gc.isenabled() and gc.get_threshold()[0] > 1:\n    return -1")
    result = repo.gate(IMPL, extra=("--replays", "2", "--replay-interpreters", "3"))
    assert result.code == 1, result.stdout + result.stderr
    [row] = repo.gate_json()["witnesses"]
    assert (row["label"], row["cause"]) == ("regression", "deterministic"), result.stdout


TELLS_THE_PROBES_CLOCK = {
    # The kernel stamps a file with the real time; the probe moves the wall clock alone.
    "by a file's time": "import tempfile\nwith tempfile.NamedTemporaryFile() as f:\n"
    "    probed = abs(os.stat(f.name).st_mtime - time.time()) > 60",
    # Its times of day are in the request the worker reads, and follow from the lock anyway.
    "by the probe's request": 'import json\nprobed = any("clock" in setting for setting in '
    'json.load(open("/run/witness-gate/request.json")).get("probe") or ())',
}


@pytest.mark.parametrize("tells", TELLS_THE_PROBES_CLOCK.values(), ids=list(TELLS_THE_PROBES_CLOCK))
def test_a_bug_that_hides_from_the_clock_probe_in_the_morning_stays_a_regression(repo: SampleRepo, tells: str):
    # Fails on every call under the real clock; under a clock the clock probe set, only in the
    # afternoon (UTC). The probe's times of day split, so were the probe to decide, a certain
    # failure would read as a freezable flake (cause time): it names the cause, never the label.
    inject(repo, f"{tells}\nif not (probed and time.gmtime().tm_hour < 12):\n    return -1")
    result = repo.gate(IMPL, extra=("--replays", "2", "--replay-interpreters", "3"))
    assert result.code == 1, result.stdout + result.stderr
    [row] = repo.gate_json()["witnesses"]
    assert (row["label"], row["cause"]) == ("regression", "time"), result.stdout
    assert "under the real clock, and fails at 4 of the 8 times of day" in row["reason"], row["reason"]


def test_a_module_that_loads_in_the_search_but_not_in_the_replays_is_unclassified_not_a_regression(repo: SampleRepo):
    # Nothing was replayed, so nothing failed: the witness has no replay evidence at all.
    repo.edit(
        IMPL,
        '"""The implementation under test: order totals."""',
        '''"""The implementation under test: order totals."""
import json
if json.load(open("/run/witness-gate/request.json"))["mode"] == "replay":
    raise ImportError("pricing is unavailable in replays")''',
    )
    repo.edit(IMPL, *BUG)
    result = repo.gate(IMPL, extra=("--replays", "2", "--replay-interpreters", "3"))
    assert result.code != 0, result.stdout + result.stderr
    [row] = repo.gate_json()["witnesses"]
    assert row["label"] == "unclassified", result.stdout
    assert "not replayed: the replay interpreter could not load the module" in result.stdout
    assert "ImportError: pricing is unavailable in replays" in result.stdout


@pytest.mark.parametrize(
    "code, evidence",
    [
        ("os._exit(0)", "replay process ended without a result (exit status 0)"),
        ("while True:\n    pass", f"replay did not finish within {TIME_LIMIT} s"),
    ],
    ids=["exits", "hangs"],
)
def test_code_that_fails_differently_in_forked_replays_is_still_a_regression(
    repo: SampleRepo, code: str, evidence: str
):
    # Replays run in children forked from the interpreter that imported the module, then in
    # that interpreter itself: code that ends or hangs only in a forked child must not make
    # those replays count as passes (it returns a wrong total everywhere else).
    repo.edit(
        IMPL,
        '"""The implementation under test: order totals."""',
        '"""The implementation under test: order totals."""\nimport os\n_IMPORTED_BY = os.getpid()',
    )
    inject(
        repo,
        f"if os.getpid() != _IMPORTED_BY:\n{''.join(f'    {line}' + chr(10) for line in code.splitlines())}return -1",
    )
    result = repo.gate(IMPL, extra=("--replays", "2", "--replay-interpreters", "3"))
    assert result.code == 1, result.stdout + result.stderr
    assert [row["label"] for row in repo.gate_json()["witnesses"]] == ["regression"], result.stdout
    report = (repo.root / ".artifacts/gate/classification.json").read_text()
    assert evidence in report, report


def test_replays_a_worker_leaves_out_beyond_the_shared_rule_count_as_failures(repo: SampleRepo):
    # The module runs in the replay interpreter, so it can rewrite the rule the worker reads
    # (`protocol.left_out`) to leave out every replay: the runner reads its own copy of the
    # rule, and a replay it expected and never heard of is a failure with that reason, so the
    # bug stays a regression instead of a witness with no replays at all.
    repo.edit(
        IMPL,
        '"""The implementation under test: order totals."""',
        '''"""The implementation under test: order totals."""
from witness_gate import protocol
protocol.left_out = lambda *args: True''',
    )
    repo.edit(IMPL, *BUG)
    result = repo.gate(IMPL, extra=("--replays", "2", "--replay-interpreters", "3"))
    assert result.code == 1, result.stdout + result.stderr
    [row] = repo.gate_json()["witnesses"]
    assert (row["label"], row["cause"]) == ("regression", "deterministic"), result.stdout
    assert "the replay interpreter finished without reporting this replay" in result.stdout, result.stdout
