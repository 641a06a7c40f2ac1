"""Speed and memory of witness-gate against baselines measured in the same run.

    python bench/perf.py [--runs 5] [--only pin,check,given,replay,start,paths,pants,review,pyproject,red]

Each figure is the median of `--runs` timings of the gate and of its baseline, printed
as a ratio next to its target. Nothing here asserts a timing: these machines are noisy,
so the ratios are for reading (bench/README.md records a run and explains the misses).
The red reviews also print the CPU of every process each side started (`cpu_account`, as
root), which the machine's other users barely move.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Callable, NamedTuple

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

import cpu_account  # noqa: E402
from support.git_repo import GitRepo  # noqa: E402
from support.existing_tests import EXISTING_TESTS, MODULE  # noqa: E402
from support.sample_repo import copy_example  # noqa: E402

ENV = {**os.environ, "PYTHONPATH": os.pathsep.join(os.path.abspath(p) for p in sys.path), "CI": "true"}


# Why a command's CPU cannot be counted on this machine ("" where it can, `cpu_account`).
CPU_MISSING = cpu_account.available()


class Sample(NamedTuple):
    wall: float  # seconds
    peak_kib: int  # resident, of the largest process the command waited for
    cpu: float | None  # seconds of every process the command started (None: CPU_MISSING)


def measured(argv: list[str], cwd: Path, env: dict[str, str] | None = None) -> Sample:
    """One run of a command: wall time, peak memory and, where a control group can count
    it, the CPU of every process it started."""
    done = cpu_account.run(argv, cwd, env or ENV)
    return Sample(done.wall, done.peak_kib, done.cpu)


def timed(argv: list[str], cwd: Path, env: dict[str, str] | None = None) -> tuple[float, int]:
    """Wall seconds and peak resident kilobytes of one child process."""
    sample = measured(argv, cwd, env)
    return sample.wall, sample.peak_kib


def median_of(runs: int, action: Callable[[], tuple[float, int]]) -> tuple[float, int]:
    results = [action() for _ in range(runs)]
    return statistics.median(r[0] for r in results), max(r[1] for r in results)


def median_sample(runs: int, action: Callable[[], Sample]) -> Sample:
    samples = [action() for _ in range(runs)]
    cpus = [s.cpu for s in samples if s.cpu is not None]
    return Sample(
        statistics.median(s.wall for s in samples),
        max(s.peak_kib for s in samples),
        statistics.median(cpus) if cpus else None,
    )


def cpu_versus(ours: Sample, baseline: Sample) -> str:
    """The CPU column of a figure: ours against the baseline's, or why there is none."""
    if ours.cpu is None or baseline.cpu is None:
        return f"; CPU not measured ({CPU_MISSING})"
    return f"; CPU {ours.cpu:.2f} s vs {baseline.cpu:.2f} s = {ours.cpu / baseline.cpu:.2f}x"


def report(name: str, ours: float, baseline: float, target: str, extra: str = "") -> None:
    print(
        f"{name}: {ours:.3f} s vs {baseline:.3f} s baseline = {ours / baseline:.2f}x (target {target}){extra}",
        flush=True,
    )


def cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "witness_gate", *args]


def bench_pin(work: Path, runs: int) -> None:
    fixture = work / "big.bin"
    with open(fixture, "wb") as handle:  # real bytes, not a sparse file: reads must hit the page cache
        block = os.urandom(1 << 20)
        for _ in range(1024):
            handle.write(block)
    openssl = shutil.which("openssl")
    if not openssl:
        print("pin 1 GiB: skipped (no openssl on PATH)")
        return
    timed([openssl, "dgst", "-sha256", str(fixture)], work)  # warm the page cache
    base, _ = median_of(runs, lambda: timed([openssl, "dgst", "-sha256", str(fixture)], work))
    ours, rss = median_of(
        runs,
        lambda: timed(
            cli(
                "pin",
                "--fixture",
                str(fixture),
                "--generator-version",
                "1",
                "--out",
                str(work / "big.lock"),
                "--root",
                str(work),
            ),
            work,
        ),
    )
    report("pin 1 GiB", ours, base, "<= 1.25x", f"; peak RSS {rss / 1024:.0f} MiB for a 1024 MiB file")
    fixture.unlink()


BARE_HYPOTHESIS = textwrap.dedent("""
    import sys
    sys.path[:0] = [{src!r}, {props!r}]
    from hypothesis import HealthCheck, Phase, Verbosity, given, settings, seed
    import orders_props
    prop = orders_props.prop_order_total_non_negative
    @seed(1)
    @settings(database=None, deadline=None, derandomize=False, max_examples=1000, phases=(Phase.generate, Phase.shrink),
              report_multiple_bugs=False, suppress_health_check=list(HealthCheck), print_blob=False,
              verbosity=Verbosity.quiet)
    @given(orders_props.orders)
    def test(order):
        assert prop(order)
    test()
""")


def bench_check(work: Path, runs: int) -> None:
    repo = copy_example(work / "check")
    assert repo.pin("--max-examples", "1000").code == 0
    script = BARE_HYPOTHESIS.format(src=str(repo.root / "src"), props=str(repo.root / "tests/properties"))
    base, _ = median_of(runs, lambda: timed([sys.executable, "-c", script], repo.root))
    ours, _ = median_of(
        runs,
        lambda: timed(
            cli("check", "--lock", repo.lock, "--properties", "tests/properties", "--out", ".artifacts/w"), repo.root
        ),
    )
    report("check, orders example, 1,000 examples", ours, base, "<= 1.15x")


def bench_given(work: Path, runs: int) -> None:
    """A team's existing pytest module of @given tests (support/existing_tests.py): the gate
    against plain pytest on the same module, the same max_examples (the test's own, else
    100). Green: the gate searches (pin, check) and replays nothing. Red (a bug four of the
    tests find): pytest stops at the shrunk failure; the gate then replays each witness in a
    dozen fresh interpreters, which is what tells a regression from a flake."""
    repo = copy_example(work / "given")
    (repo.root / "tests/properties/orders_props.py").unlink()
    repo.write(MODULE, EXISTING_TESTS)
    (repo.root / "changed.txt").write_text("")
    env = {**ENV, "PYTHONPATH": os.pathsep.join([str(repo.root / "src"), ENV["PYTHONPATH"]])}
    env.pop("CI")  # plain pytest as a developer runs it: Hypothesis' default profile, as the gate's
    pytest = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", MODULE]
    gate = cli(
        "gate",
        "--fixture",
        "tests/fixtures/orders.json",
        "--generator-version",
        "3",
        "--properties",
        "tests/properties",
        "--out",
        ".artifacts/gate",
        "--diff-paths",
        "changed.txt",
    )
    for state in ("green", "red"):
        if state == "red":
            repo.edit(
                "src/orders_app/pricing.py",
                'return line["qty"] * line["price"]',
                'return line["qty"] * line["price"] - (1 if line["qty"] > 3 else 0)',
            )
        base, _ = median_of(runs, lambda: timed(pytest, repo.root, env))

        def gate_afresh() -> tuple[float, int]:
            shutil.rmtree(repo.root / ".artifacts", ignore_errors=True)
            return timed(gate, repo.root)

        ours, _ = median_of(runs, gate_afresh)
        target = "<= 1.3x" if state == "green" else "none: the replays are the point"
        report(f"gate vs plain pytest, a module of 6 @given tests, {state}", ours, base, target)


def bench_replay(work: Path, runs: int) -> None:
    """What classifying one witness costs, against the two ways a person re-checks a red
    property by hand: pytest-repeat's `pytest --count=5` of the same test, and five fresh
    interpreters calling the property once each. The witness is a regression, the
    dearest case: every variant, two rounds (60 replays each), 24 interpreters."""
    repo, _ = _scale_repo(work)
    changed = repo.root / "changed.txt"
    changed.write_text("src/orders_app/pricing.py\n")
    [witness] = [json.loads(p.read_text()) for p in repo.witness_files()]
    payload = witness["payload"]
    ours, rss = median_of(runs, lambda: _classify(repo, repo.witnesses, changed))
    (repo.root / "test_replay.py").write_text(
        textwrap.dedent(f"""
        import sys
        sys.path[:0] = ["src", "tests/properties"]
        import orders_props

        def test_witness():
            assert orders_props.prop_order_total_non_negative({payload!r})
    """)
    )
    repeat = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--count=5", "test_replay.py"]
    if subprocess.run([sys.executable, "-c", "import pytest_repeat"], capture_output=True).returncode == 0:
        by_pytest, _ = median_of(runs, lambda: timed(repeat, repo.root))
        report(
            "classify one regression witness vs pytest --count=5",
            ours,
            by_pytest,
            "none: isolation is the point",
            f"; peak RSS {rss / 1024:.0f} MiB",
        )
    else:
        print("classify one regression witness vs pytest --count=5: skipped (pip install pytest pytest-repeat)")
    fresh = (
        "import sys; sys.path[:0] = ['src', 'tests/properties']; import orders_props; "
        f"orders_props.prop_order_total_non_negative({payload!r})"
    )

    def five_interpreters() -> tuple[float, int]:
        started = time.perf_counter()
        for _ in range(5):
            subprocess.run([sys.executable, "-c", fresh], cwd=repo.root, env=ENV, capture_output=True)
        return time.perf_counter() - started, 0

    by_hand, _ = median_of(runs, five_interpreters)
    report("classify one regression witness vs five fresh interpreters", ours, by_hand, "none: isolation is the point")


def bench_start(work: Path, runs: int, pex: Path | None) -> None:
    base, _ = median_of(runs, lambda: timed([sys.executable, "-c", "import typer"], work))
    ours, _ = median_of(runs, lambda: timed(cli("--help"), work))
    report("CLI start (--help), source install", ours, base, "<= 1.2x")
    if pex and pex.is_file():
        timed([str(pex), "--help"], work)  # the first start installs the PEX's venv once
        packed, _ = median_of(runs, lambda: timed([str(pex), "--help"], work))
        report("CLI start (--help), PEX", packed, base, "<= 1.2x")
        venv = work / "pex-venv"
        subprocess.run(
            [str(pex), "venv", str(venv)], env={**os.environ, "PEX_TOOLS": "1"}, check=True, capture_output=True
        )
        installed, _ = median_of(runs, lambda: timed([str(venv / "pex"), "--help"], work))
        report("CLI start (--help), PEX installed with PEX_TOOLS=1 ... venv", installed, base, "<= 1.2x")


def _scale_repo(work: Path):
    repo = copy_example(work / "scale")
    repo.edit(
        "src/orders_app/pricing.py",
        'return line["qty"] * line["price"]',
        'return line["qty"] * line["price"] - (1 if line["qty"] > 3 else 0)',
    )
    assert repo.pin().code == 0
    assert repo.check().code == 1
    empty = repo.root / "empty.txt"
    empty.write_text("")
    return repo, empty


def _classify(repo, directory: Path, changed: Path) -> tuple[float, int]:
    return timed(
        cli(
            "classify",
            "--lock",
            repo.lock,
            "--witnesses",
            str(directory.relative_to(repo.root)),
            "--diff-paths",
            str(changed.relative_to(repo.root)),
            "--out",
            ".artifacts/report.json",
        ),
        repo.root,
    )


def bench_scale_paths(work: Path, runs: int) -> None:
    """Marginal cost of classify from 1,000 to 1,000,000 changed paths against that of a
    plain loop reading the lines."""
    repo, _ = _scale_repo(work)

    def changed_list(count: int) -> Path:
        path = repo.root / f"changed-{count}.txt"
        path.write_text("".join(f"src/orders_app/module_{i}.py\n" for i in range(count)))
        return path

    few, many = changed_list(1_000), changed_list(1_000_000)
    t_few, _ = median_of(runs, lambda: _classify(repo, repo.witnesses, few))
    t_many, _ = median_of(runs, lambda: _classify(repo, repo.witnesses, many))
    loop = textwrap.dedent(f"""
        import time
        def run(path):
            started = time.perf_counter()
            with open(path, encoding="utf-8") as handle:
                paths = [line.rstrip("\\n") for line in handle]
            return time.perf_counter() - started
        print(run({str(many)!r}) - run({str(few)!r}))
    """)
    bare_lines = float(
        subprocess.run(
            [sys.executable, "-c", loop], cwd=repo.root, env=ENV, capture_output=True, text=True, check=True
        ).stdout
    )
    report("classify marginal cost, 1,000 -> 1,000,000 changed paths", t_many - t_few, bare_lines, "<= 2x")


def bench_pants(runs: int) -> None:
    pants = ROOT / "pants"
    if not pants.is_file():
        print("pants: skipped (no ./pants)")
        return
    env = dict(os.environ)
    subprocess.run(
        [str(pants), "test", "examples/orders:properties"], cwd=ROOT, env=env, capture_output=True
    )  # warm: cached now
    base, _ = median_of(runs, lambda: timed([str(pants), "--version"], ROOT, env))
    ours, _ = median_of(runs, lambda: timed([str(pants), "test", "examples/orders:properties"], ROOT, env))
    report("./pants test of an unchanged target, second run", ours, base, "<= 1.5x")


_PACKAGE = {
    "src/pkg{n:03d}/__init__.py": "",
    "src/pkg{n:03d}/ledger.py": (
        "def balance(entries: list) -> int:\n"
        "    return sum(amount if kind == 'credit' else -amount for kind, amount in entries)\n"
    ),
    "props/pkg{n:03d}_props.py": (
        "from hypothesis import strategies as st\n\nimport witness_gate\nfrom pkg{n:03d}.ledger import balance\n\n"
        "entries = st.lists(st.tuples(st.sampled_from(['credit', 'debit']), st.integers(0, 10**6)), max_size=12)\n\n\n"
        "@witness_gate.property(payloads=entries.map(lambda es: [list(e) for e in es]))\n"
        "def prop_credits_minus_debits(entries: list) -> bool:\n"
        "    return balance(entries) == sum(a for k, a in entries if k == 'credit') - sum(a for k, a in entries if k "
        "== 'debit')\n\n\n"
        "@witness_gate.property(payloads=entries.map(lambda es: [list(e) for e in es]))\n"
        "def prop_order_free(entries: list) -> bool:\n"
        "    return balance(list(reversed(entries))) == balance(entries)\n\n\n"
        "@witness_gate.property(payloads=entries.map(lambda es: [['credit', a] for _, a in es]))\n"
        "def prop_credits_never_negative(entries: list) -> bool:\n"
        "    return balance(entries) >= 0\n"
    ),
    "tests/pkg{n:03d}/test_ledger_{n:03d}.py": (
        "from hypothesis import given, settings, strategies as st\n\nfrom pkg{n:03d}.ledger import balance\n\n"
        "entries = st.lists(st.tuples(st.sampled_from(['credit', 'debit']), st.integers(0, 10**6)), max_size=12)\n\n\n"
        "@settings(max_examples=100, database=None)\n@given(entries)\n"
        "def test_credits_minus_debits(entries):\n"
        "    assert balance(entries) == sum(a for k, a in entries if k == 'credit') - sum(a for k, a in entries if k "
        "== 'debit')\n\n\n"
        "@settings(max_examples=100, database=None)\n@given(entries)\n"
        "def test_order_free(entries):\n    assert balance(list(reversed(entries))) == balance(entries)\n\n\n"
        "@settings(max_examples=100, database=None)\n@given(entries.map(lambda es: [('credit', a) for _, a in es]))\n"
        "def test_credits_never_negative(entries):\n    assert balance(entries) >= 0\n"
    ),
}


def _packages_repo(root: Path, count: int, in_pyproject: bool = False) -> tuple[GitRepo, dict]:
    """`count` packages, each a suite of three properties in the build graph, or in the
    base's pyproject.toml when `in_pyproject` (and the same three as plain @given tests); the
    base, then a pull request that edits pkg000 honestly. Returns the repository and the
    suites document of its base."""
    repo = GitRepo(root)
    files = {
        "fixtures/accounts.json": "[]\n",
        **{path.format(n=n): text.format(n=n) for n in range(count) for path, text in _PACKAGE.items()},
        **({"pyproject.toml": _pyproject_suites(count)} if in_pyproject else {}),
    }
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    repo.git("init", "-q", "-b", "main")
    repo.commit("the base: one suite per package")
    suites = [
        {
            "name": f"props.pkg{n:03d}",
            "address": f"props:pkg{n:03d}",
            "fixture": "fixtures/accounts.json",
            "generator_version": 1,
            "properties": [f"props/pkg{n:03d}_props.py"],
            "replays": 5,
            "max_examples": 100,
            "import_paths": ["src"],
            "impl": [f"src/pkg{n:03d}/__init__.py", f"src/pkg{n:03d}/ledger.py"],
            "oracle": ["fixtures/accounts.json", f"props/pkg{n:03d}_props.py"],
            "oracle_globs": [f"props/pkg{n:03d}_*.py"],
        }
        for n in range(count)
    ]
    graph = {
        "schema_version": 1,
        "commit": repo.git("rev-parse", "HEAD"),
        "freezes_dir": ".witness-gate/freezes",
        "max_freeze_hours": 168,
        "replay_timeout_seconds": 60,
        "suites": suites,
    }
    for branch, edited in (("patch", 1), ("patch4", 4)):
        repo.git("checkout", "-q", "-b", branch, "main")
        for n in range(edited):
            repo.edit(
                f"src/pkg{n:03d}/ledger.py", "    return sum(", "    # credits add, debits subtract\n    return sum("
            )
        repo.commit(f"an honest edit to {edited} package(s)")
    return repo, graph


def _pyproject_suites(count: int) -> str:
    """The packages' suites as `[tool.witness-gate]` declares them, one per package."""
    return (
        '[tool.witness-gate]\nimpl-prefixes = ["src/"]\noracle-prefixes = ["props/", "fixtures/"]\n'
        'import-paths = ["src"]\n'
    ) + "".join(
        f'\n[[tool.witness-gate.suites]]\nname = "props.pkg{n:03d}"\nfixture = "fixtures/accounts.json"\n'
        f'generator-version = 1\nproperties = ["props/pkg{n:03d}_props.py"]\n'
        for n in range(count)
    )


def _plain_pytest(repo: GitRepo, target: str, tests: int) -> tuple[list[str], dict[str, str]]:
    """Plain pytest + Hypothesis of `target` in the packages' repository, checked first to be a
    green run of its `tests` tests: the baseline's command and environment."""
    pytest = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", target]
    env = {**ENV, "PYTHONPATH": os.pathsep.join([str(repo.root / "src"), ENV["PYTHONPATH"]])}
    done = subprocess.run(pytest, cwd=repo.root, env=env, capture_output=True, text=True)
    assert done.returncode == 0 and f"{tests} passed" in done.stdout, done.stdout[-2000:]
    return pytest, env


def bench_review_pyproject(work: Path, runs: int) -> None:
    """The pull request of `bench_review` with the suites declared in the base's pyproject.toml
    (#41): each suite's closure is read from its sources, so only the changed package's suite
    should run. Against plain pytest of the changed package, in the same run."""
    times = {}
    for count in (12, 48):
        repo, _ = _packages_repo(work / f"review-pyproject-{count}", count, in_pyproject=True)
        out = repo.root.parent / f"out-pyproject-{count}"
        review = cli("review", "--base", "main", "--head", "patch", "--out", str(out))
        ours, rss = median_of(runs, lambda: timed(review, repo.root))
        verdict = json.loads((out / "review.json").read_text())
        ran = sum(1 for value in verdict["suites"].values() if value != "unaffected")
        pytest, env = _plain_pytest(repo, "tests/pkg000", 3)
        changed, _ = median_of(runs, lambda: timed(pytest, repo.root, env))
        times[count] = ours
        report(
            f"review, {count} suites in pyproject.toml, one changed package (verdict {verdict['verdict']}, {ran} suite "
            "run)",
            ours,
            changed,
            "<= 2x plain pytest of the changed package",
            f"; peak RSS {rss / 1024:.0f} MiB",
        )
    print(f"pyproject review growth from 12 to 48 suites: {times[48] / times[12]:.2f}x (target <= 1.3x)", flush=True)


def bench_review(work: Path, runs: int) -> None:
    """`review` of a pull request that edits one package of N, each package one suite of
    three properties declared in the build graph, against plain pytest + Hypothesis of the
    same properties as @given tests (100 examples each): the changed package alone (what a
    `--changed-since` run costs) and every package."""
    times = {}
    for count in (12, 48, 192):
        repo, graph = _packages_repo(work / f"review-{count}", count)
        document = repo.root.parent / f"suites-{count}.json"
        document.write_text(json.dumps(graph))
        out = repo.root.parent / f"out-{count}"
        review = cli("review", "--base", "main", "--head", "patch", "--suites", str(document), "--out", str(out))
        ours, rss = median_of(runs, lambda: timed(review, repo.root))
        verdict = json.loads((out / "review.json").read_text())
        ran = sum(1 for value in verdict["suites"].values() if value != "unaffected")
        # Every baseline must be a green run of every test it names.
        one, plain_env = _plain_pytest(repo, "tests/pkg000", 3)
        all_of_them, _ = _plain_pytest(repo, "tests", 3 * count)
        pytest = one[:-1]
        changed, _ = median_of(runs, lambda: timed(one, repo.root, plain_env))
        every, _ = median_of(runs, lambda: timed(all_of_them, repo.root, plain_env))
        times[count] = ours
        report(
            f"review, {count} suites, one changed package (verdict {verdict['verdict']}, {ran} suite run)",
            ours,
            changed,
            "<= 2x plain pytest of the changed package",
            f"; plain pytest of every package {every:.3f} s; peak RSS {rss / 1024:.0f} MiB",
        )
        if count == 12:  # affected suites run at once, up to the cores: four packages changed
            review4 = cli("review", "--base", "main", "--head", "patch4", "--suites", str(document), "--out", str(out))
            ours4, rss4 = median_of(runs, lambda: timed(review4, repo.root))
            ran4 = sum(
                1 for value in json.loads((out / "review.json").read_text())["suites"].values() if value != "unaffected"
            )
            four = [f"tests/pkg{n:03d}" for n in range(4)]
            changed4, _ = median_of(runs, lambda: timed([*pytest, *four], repo.root, plain_env))
            report(
                f"review, 12 suites, four changed packages ({ran4} suites run, {os.cpu_count()} cores)",
                ours4,
                changed4,
                "<= 2x plain pytest of the changed packages",
                f"; peak RSS {rss4 / 1024:.0f} MiB",
            )
    print(
        f"review growth from 12 to 48 suites: {times[48] / times[12]:.2f}x (target <= 1.3x); "
        f"to 192: {times[192] / times[12]:.2f}x",
        flush=True,
    )


_SHOP = {
    "pyproject.toml": (
        '[tool.witness-gate]\nimpl-prefixes = ["src/"]\noracle-prefixes = ["tests/"]\nimport-paths = ["src"]\n\n'
        '[[tool.witness-gate.suites]]\nname = "shop"\nfixture = false\ngenerator-version = 1\nproperties = ["tests"]\n'
    ),
    "src/shop/__init__.py": "",
    "src/shop/pricing.py": "def line_total(qty, price):\n    return qty * price\n",
}
_BROKEN_LINE_TOTAL = "def line_total(qty, price):\n    return qty * price - (1 if qty > 3 else 0)\n"
# Ten flakes over four modules, of two kinds real suites meet: entropy (an A/B bucket drawn
# from os.urandom: Hypothesis seeds the global `random` for each example, so a bucket drawn
# from it would never vary under plain pytest) and hash order (the first of a set of strings).
_FLAKES = (
    "def test_bucket_{k}(qty, price):\n" "    assert line_total(qty, price) - (os.urandom(1)[0] < 77) == qty * price\n",
    "def test_first_tag_{k}(qty, price):\n"
    "    assert line_total(qty, price) + len(next(iter({{'ab', 'cd'}}))) * (next(iter({{'ab', 'cd'}})) == 'cd')"
    " == qty * price\n",
)


def _shop_repo(root: Path, modules: dict[str, list[str]], broken: bool) -> GitRepo:
    """The shop: one function, `line_total`, and `modules` of @given tests over it, declared
    as one pyproject suite without fixture data; branch `patch` breaks `line_total` when
    `broken`, else edits a comment (the flakes are red on both)."""
    repo = GitRepo(root)
    header = "import os\n\nfrom hypothesis import given, strategies as st\n\nfrom shop.pricing import line_total\n"
    files = {
        **_SHOP,
        **{
            f"tests/{name}.py": header
            + "".join(f"\n\n@given(st.integers(0, 50), st.integers(0, 1000))\n{test}" for test in tests)
            for name, tests in modules.items()
        },
    }
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    repo.git("init", "-q", "-b", "main")
    repo.commit("the base")
    repo.git("checkout", "-q", "-b", "patch")
    (root / "src/shop/pricing.py").write_text(
        _BROKEN_LINE_TOTAL if broken else "# prices in cents\n" + _SHOP["src/shop/pricing.py"]
    )
    repo.commit("the pull request")
    return repo


def bench_red(work: Path, runs: int) -> None:
    """Red reviews (#41): one module of N @given tests that all call one function the pull
    request breaks (N = 1, 12, 48), and ten flakes over four modules; `review` against plain
    pytest of the same head, which also finds and shrinks every failure (Hypothesis'
    default profile, no example database: each run starts cold, as the review's search does)."""
    plain = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly", "tests"]
    per_test: dict[int, float] = {}
    cpu_per_test: dict[int, float] = {}
    scenarios = [
        (
            f"{n} failing @given test(s) in one module",
            {
                "test_shop": [
                    f"def test_line_{k}(qty, price):\n    assert line_total(qty, price) + {k} == qty * price + {k}\n"
                    for k in range(n)
                ]
            },
            True,
            n,
        )
        for n in (1, 12, 48)
    ]
    flakes: dict[str, list[str]] = {f"test_flaky_{m}": [] for m in range(4)}
    for k in range(10):
        flakes[f"test_flaky_{k % 4}"].append(_FLAKES[k % 2].format(k=k))
    scenarios.append(("ten flakes over four modules", flakes, False, 10))
    for name, modules, broken, failing in scenarios:
        repo = _shop_repo(work / f"red-{len(per_test)}", modules, broken)
        out = repo.root.parent / f"red-out-{len(per_test)}"
        review = cli("review", "--base", "main", "--head", "patch", "--out", str(out))
        env = {
            **ENV,
            "PYTHONPATH": os.pathsep.join([str(repo.root / "src"), ENV["PYTHONPATH"]]),
            "HYPOTHESIS_STORAGE_DIRECTORY": os.devnull,
        }
        env.pop("CI")  # plain pytest as a developer runs it: Hypothesis' default profile
        done = subprocess.run(plain, cwd=repo.root, env=env, capture_output=True, text=True)
        assert done.returncode == 1, done.stdout[-2000:]  # every baseline is a red run
        baseline = median_sample(runs, lambda: measured(plain, repo.root, env))

        def review_afresh() -> Sample:
            shutil.rmtree(out, ignore_errors=True)
            return measured(review, repo.root)

        ours = median_sample(runs, review_afresh)
        verdict = json.loads((out / "review.json").read_text())
        target = "<= 3x" if failing == 1 else "<= 5x"
        report(
            f"red review, {name} (verdict {verdict['verdict']})",
            ours.wall,
            baseline.wall,
            target,
            f"{cpu_versus(ours, baseline)}; peak RSS of its largest process {ours.peak_kib / 1024:.0f} MiB "
            "(target <= 512)",
        )
        if broken:
            per_test[failing] = ours.wall / failing
            if ours.cpu is not None:
                cpu_per_test[failing] = ours.cpu / failing
    print(
        f"red review, cost per failing test at 48 against at 1: {per_test[48] / per_test[1]:.2f}x (target <= 1.2x)"
        + (f"; in CPU {cpu_per_test[48] / cpu_per_test[1]:.2f}x" if cpu_per_test else ""),
        flush=True,
    )


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--only", default="pin,check,given,replay,start,paths,pants,review,pyproject,red")
    parser.add_argument("--pex", type=Path, default=ROOT / "dist" / "runner" / "witness-gate.pex")
    args = parser.parse_args(argv)
    chosen = set(args.only.split(","))
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores, median of {args.runs} runs", flush=True)
    with tempfile.TemporaryDirectory(prefix="witness-gate-perf.") as scratch:
        work = Path(scratch)
        steps = {
            "pin": lambda: bench_pin(work, args.runs),
            "check": lambda: bench_check(work, args.runs),
            "given": lambda: bench_given(work, args.runs),
            "replay": lambda: bench_replay(work, args.runs),
            "start": lambda: bench_start(work, args.runs, args.pex),
            "paths": lambda: bench_scale_paths(work / "paths", args.runs),
            "pants": lambda: bench_pants(args.runs),
            "review": lambda: bench_review(work, args.runs),
            "pyproject": lambda: bench_review_pyproject(work, args.runs),
            "red": lambda: bench_red(work, args.runs),
        }
        for name, step in steps.items():
            if name in chosen:
                step()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
