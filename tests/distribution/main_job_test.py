"""The README's first command, the main job: the demo PEX (`./pants run examples/orders:gate`)
reviews an honest pull request (exit 0) and a bug with a weakened property (exit 1) in a
fresh git repository, through the runner inside the PEX as a user's CI would run it."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path


def test_the_main_job_passes_the_honest_change_and_blocks_the_attack(tmp_path: Path):
    [pex] = Path.cwd().glob("examples.orders/gate.pex")  # this test's runtime package; the example beside it
    environment = {"PATH": os.environ["PATH"], "HOME": os.environ["HOME"], "PEX_ROOT": str(tmp_path / "pex_root")}
    done = subprocess.run(
        [str(pex.absolute())], cwd=Path.cwd(), env=environment, capture_output=True, text=True, timeout=900
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert (
        "demo: as expected: honest change exit 0 (pass), bug with a weakened property exit 1 (blocked)" in done.stdout
    )
