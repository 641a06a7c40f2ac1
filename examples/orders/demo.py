"""The main job: `witness-gate review` on two pull requests against the orders example.

The example is committed as `main` in a fresh git repository. Pull request one changes
the implementation honestly (green). Pull request two is the patch the spec warns of: a
deterministic bug in src/ and, in the same commit, the property weakened until it
passes. The review runs the base's property on the head's implementation, so the bug is
still caught (every replay fails), and the weakened property is an oracle edit mixed
with an implementation change: red, with the reasons. Prints each command and output.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

# `./pants run` starts in the build root; the example's files are read from there.
EXAMPLE = Path.cwd() / "examples" / "orders"
IMPL = "src/orders_app/pricing.py"
ORACLE = "tests/properties/orders_props.py"
BUG = ('return line["qty"] * line["price"]', 'return line["qty"] * line["price"] - (1 if line["qty"] > 3 else 0)')
WEAKEN = ('    return total == order["claimed_total"]', "    return True")
HONEST = ('"""The implementation under test: order totals."""', '"""Order totals, line by line."""')


def git(root: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.email=demo@witness-gate", "-c", "user.name=demo", *args],
        cwd=root,
        check=True,
        capture_output=True,
    )


def pull_request(root: Path, branch: str, edits: list[tuple[str, tuple[str, str]]]) -> int:
    git(root, "checkout", "-q", "-B", branch, "main")
    for path, (old, new) in edits:
        target = root / path
        target.write_text(target.read_text().replace(old, new, 1))
        print(f"  edit {path}: {old.strip()!r} -> {new.strip()!r}")
    git(root, "commit", "-q", "-am", branch)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(os.path.abspath(entry) for entry in sys.path)}
    command = ["review", "--base", "main", "--head", branch, "--out", f"../{branch}-review"]
    print("$ witness-gate " + " ".join(command), flush=True)
    code = subprocess.run([sys.executable, "-m", "witness_gate", *command], cwd=root, env=env, check=False).returncode
    print(f"(exit {code})", flush=True)
    return code


def main() -> int:
    if not (EXAMPLE / "tests" / "properties").is_dir():
        print(
            f"demo: {EXAMPLE} not found: run it from the repository root (./pants run examples/orders:gate)",
            file=sys.stderr,
        )
        return 2
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch) / "orders"
        shutil.copytree(
            EXAMPLE, root, ignore=shutil.ignore_patterns(".artifacts", "__pycache__", "BUILD", "BUILD.bazel", "demo.py")
        )
        git(root, "init", "-q", "-b", "main")
        git(root, "add", "-A")
        git(root, "commit", "-q", "-m", "the orders example")
        print("== pull request 1: an honest change to the implementation ==")
        honest = pull_request(root, "honest-change", [(IMPL, HONEST)])
        print("\n== pull request 2: a bug, and the property weakened in the same commit ==")
        attack = pull_request(root, "bug-and-weakened-property", [(IMPL, BUG), (ORACLE, WEAKEN)])
    ok = honest == 0 and attack == 1
    print(
        f"\ndemo: {'as expected' if ok else 'UNEXPECTED'}: honest change exit {honest} (pass), bug with a weakened "
        f"property exit {attack} (blocked)"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
