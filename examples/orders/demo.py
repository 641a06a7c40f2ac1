"""The main job: the gate on a fresh copy of the orders example, twice.

First the example as shipped (pass), then with a deterministic bug in src/
(regression, blocked). Prints each command and its output.
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
BUG = ('return line["qty"] * line["price"]', 'return line["qty"] * line["price"] - (1 if line["qty"] > 3 else 0)')


def gate(root: Path, changed: str) -> int:
    (root / "changed.txt").write_text(changed)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(os.path.abspath(entry) for entry in sys.path)}
    steps = [
        ["pin", "--fixture", "tests/fixtures/orders.json", "--generator-version", "3", "--out", ".artifacts/fixture.lock"],
        ["check", "--lock", ".artifacts/fixture.lock", "--properties", "tests/properties", "--out", ".artifacts/witnesses"],
        ["classify", "--lock", ".artifacts/fixture.lock", "--witnesses", ".artifacts/witnesses", "--diff-paths", "changed.txt"],
    ]
    code = 0
    for step in steps:
        print("$ python3 -m witness_gate " + " ".join(step), flush=True)
        code = subprocess.run([sys.executable, "-m", "witness_gate", *step], cwd=root, env=env, check=False).returncode
        print(f"(exit {code})", flush=True)
        if code == 2:
            break
    return code


def main() -> int:
    if not (EXAMPLE / "tests" / "properties").is_dir():
        print(f"demo: {EXAMPLE} not found: run it from the repository root (./pants run examples/orders:gate)", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as scratch:
        shipped = Path(scratch) / "shipped"
        shutil.copytree(EXAMPLE, shipped, ignore=shutil.ignore_patterns(".artifacts", "__pycache__"))
        print("== the orders example as shipped ==")
        clean = gate(shipped, "")
        broken = Path(scratch) / "broken"
        shutil.copytree(EXAMPLE, broken, ignore=shutil.ignore_patterns(".artifacts", "__pycache__"))
        pricing = broken / "src/orders_app/pricing.py"
        pricing.write_text(pricing.read_text().replace(*BUG))
        print("\n== with a bug in src/orders_app/pricing.py ==")
        regressed = gate(broken, "src/orders_app/pricing.py\n")
    ok = clean == 0 and regressed == 1
    print(f"\ndemo: {'as expected' if ok else 'UNEXPECTED'}: shipped exit {clean} (pass), bug exit {regressed} (regression)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
