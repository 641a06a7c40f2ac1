"""Speed and memory of witness-gate against baselines measured in the same run.

    python bench/perf.py [--runs 5] [--only pin,check,replay,start,paths,pants]

Each figure is the median of `--runs` timings of the gate and of its baseline, printed
as a ratio next to its target. Nothing here asserts a timing: these machines are noisy,
so the ratios are for reading (bench/README.md records a run and explains the misses).
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
from typing import Callable

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from support.sample_repo import copy_example  # noqa: E402

ENV = {**os.environ, "PYTHONPATH": os.pathsep.join(os.path.abspath(p) for p in sys.path), "CI": "true"}


def timed(argv: list[str], cwd: Path, env: dict[str, str] | None = None) -> tuple[float, int]:
    """Wall seconds and peak resident kilobytes of one child process."""
    started = time.perf_counter()
    process = subprocess.Popen(argv, cwd=cwd, env=env or ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    elapsed = time.perf_counter() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    return elapsed, usage.ru_maxrss


def median_of(runs: int, action: Callable[[], tuple[float, int]]) -> tuple[float, int]:
    results = [action() for _ in range(runs)]
    return statistics.median(r[0] for r in results), max(r[1] for r in results)


def report(name: str, ours: float, baseline: float, target: str, extra: str = "") -> None:
    print(f"{name}: {ours:.3f} s vs {baseline:.3f} s baseline = {ours / baseline:.2f}x (target {target}){extra}", flush=True)


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
    ours, rss = median_of(runs, lambda: timed(cli("pin", "--fixture", str(fixture), "--generator-version", "1", "--out", str(work / "big.lock"), "--root", str(work)), work))
    report("pin 1 GiB", ours, base, "<= 1.25x", f"; peak RSS {rss / 1024:.0f} MiB for a 1024 MiB file")
    fixture.unlink()


BARE_HYPOTHESIS = textwrap.dedent('''
    import sys
    sys.path[:0] = [{src!r}, {props!r}]
    from hypothesis import HealthCheck, Phase, Verbosity, given, settings, seed
    import orders_props
    prop = orders_props.prop_order_total_non_negative
    @seed(1)
    @settings(database=None, deadline=None, derandomize=False, max_examples=1000, phases=(Phase.generate, Phase.shrink),
              report_multiple_bugs=False, suppress_health_check=list(HealthCheck), print_blob=False, verbosity=Verbosity.quiet)
    @given(orders_props.orders)
    def test(order):
        assert prop(order)
    test()
''')


def bench_check(work: Path, runs: int) -> None:
    repo = copy_example(work / "check")
    assert repo.pin("--max-examples", "1000").code == 0
    script = BARE_HYPOTHESIS.format(src=str(repo.root / "src"), props=str(repo.root / "tests/properties"))
    base, _ = median_of(runs, lambda: timed([sys.executable, "-c", script], repo.root))
    ours, _ = median_of(runs, lambda: timed(cli("check", "--lock", repo.lock, "--properties", "tests/properties", "--out", ".artifacts/w"), repo.root))
    report("check, orders example, 1,000 examples", ours, base, "<= 1.15x")


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
    (repo.root / "test_replay.py").write_text(textwrap.dedent(f'''
        import sys
        sys.path[:0] = ["src", "tests/properties"]
        import orders_props

        def test_witness():
            assert orders_props.prop_order_total_non_negative({payload!r})
    '''))
    repeat = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--count=5", "test_replay.py"]
    if subprocess.run([sys.executable, "-c", "import pytest_repeat"], capture_output=True).returncode == 0:
        by_pytest, _ = median_of(runs, lambda: timed(repeat, repo.root))
        report("classify one regression witness vs pytest --count=5", ours, by_pytest, "none: isolation is the point",
               f"; peak RSS {rss / 1024:.0f} MiB")
    else:
        print("classify one regression witness vs pytest --count=5: skipped (pip install pytest pytest-repeat)")
    fresh = f"import sys; sys.path[:0] = ['src', 'tests/properties']; import orders_props; orders_props.prop_order_total_non_negative({payload!r})"

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
        subprocess.run([str(pex), "venv", str(venv)], env={**os.environ, "PEX_TOOLS": "1"}, check=True, capture_output=True)
        installed, _ = median_of(runs, lambda: timed([str(venv / "pex"), "--help"], work))
        report("CLI start (--help), PEX installed with PEX_TOOLS=1 ... venv", installed, base, "<= 1.2x")


def _scale_repo(work: Path):
    repo = copy_example(work / "scale")
    repo.edit("src/orders_app/pricing.py", 'return line["qty"] * line["price"]', 'return line["qty"] * line["price"] - (1 if line["qty"] > 3 else 0)')
    assert repo.pin().code == 0
    assert repo.check().code == 1
    empty = repo.root / "empty.txt"
    empty.write_text("")
    return repo, empty


def _classify(repo, directory: Path, changed: Path) -> tuple[float, int]:
    return timed(cli("classify", "--lock", repo.lock, "--witnesses", str(directory.relative_to(repo.root)), "--diff-paths",
                     str(changed.relative_to(repo.root)), "--out", ".artifacts/report.json"), repo.root)


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
    loop = textwrap.dedent(f'''
        import time
        def run(path):
            started = time.perf_counter()
            with open(path, encoding="utf-8") as handle:
                paths = [line.rstrip("\\n") for line in handle]
            return time.perf_counter() - started
        print(run({str(many)!r}) - run({str(few)!r}))
    ''')
    bare_lines = float(subprocess.run([sys.executable, "-c", loop], cwd=repo.root, env=ENV, capture_output=True, text=True, check=True).stdout)
    report("classify marginal cost, 1,000 -> 1,000,000 changed paths", t_many - t_few, bare_lines, "<= 2x")


def bench_pants(runs: int) -> None:
    pants = ROOT / "pants"
    if not pants.is_file():
        print("pants: skipped (no ./pants)")
        return
    env = dict(os.environ)
    subprocess.run([str(pants), "test", "examples/orders:properties"], cwd=ROOT, env=env, capture_output=True)  # warm: cached now
    base, _ = median_of(runs, lambda: timed([str(pants), "--version"], ROOT, env))
    ours, _ = median_of(runs, lambda: timed([str(pants), "test", "examples/orders:properties"], ROOT, env))
    report("./pants test of an unchanged target, second run", ours, base, "<= 1.5x")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--only", default="pin,check,replay,start,paths,pants")
    parser.add_argument("--pex", type=Path, default=ROOT / "dist" / "runner" / "witness-gate.pex")
    args = parser.parse_args(argv)
    chosen = set(args.only.split(","))
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores, median of {args.runs} runs", flush=True)
    with tempfile.TemporaryDirectory(prefix="witness-gate-perf.") as scratch:
        work = Path(scratch)
        steps = {
            "pin": lambda: bench_pin(work, args.runs),
            "check": lambda: bench_check(work, args.runs),
            "replay": lambda: bench_replay(work, args.runs),
            "start": lambda: bench_start(work, args.runs, args.pex),
            "paths": lambda: bench_scale_paths(work / "paths", args.runs),
            "pants": lambda: bench_pants(args.runs),
        }
        for name, step in steps.items():
            if name in chosen:
                step()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
