"""The third-party packages the code under test needs, as the base declares them.

The workers have the runner's own packages and nothing else: a project's dependencies come
from a requirements file of the base (`requirements` in `[tool.witness-gate]`), every line
pinned by hash (`pip install --require-hashes`), and only as wheels (`--only-binary :all:`:
installing runs no code of theirs). The trusted side installs them, outside the sandbox,
with the interpreter the runner's own comes from, into a directory of the review's; each
worker sees it read-only at `INSIDE`, the first entry of its import path (a module the head
adds under the tree's import paths cannot shadow a package the base declares). A head that edits
the file edits a gate control (an oracle edit), so what it declares is always the base's.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from witness_gate.errors import WitnessGateError

INSIDE = "/run/witness-gate/dependencies"
_PIP_SECONDS = 900


def install(requirements: bytes, where: str, target: Path) -> None:
    """Installs the packages `requirements` (the bytes of the base's file `where`) pins into
    `target`, readable by every user (a root runner's workers read it as `nobody`); refuses
    (exit 2) when pip cannot: a setup failure, never a verdict on the patch."""
    target.mkdir(parents=True)
    listing = target.parent / "requirements.txt"
    listing.write_bytes(requirements)
    python = getattr(sys, "_base_executable", None) or sys.executable  # a venv's (a PEX's) base interpreter has pip
    # -I, and a directory of the review's own as the working directory: `-m pip` would
    # otherwise import a `pip` package from the CI checkout (the head's files), as root.
    argv = [python, "-I", "-m", "pip", "install", "--require-hashes", "--only-binary", ":all:", "--no-deps", "--no-compile",
            "--disable-pip-version-check", "--no-input", "--target", str(target), "-r", str(listing)]
    try:
        done = subprocess.run(argv, cwd=target.parent, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=_PIP_SECONDS,
                              env={key: value for key, value in os.environ.items() if key != "PYTHONPATH"})
    except (OSError, subprocess.TimeoutExpired) as error:
        raise WitnessGateError(f"setup failed: installing the base's {where}: {error}") from None
    if done.returncode != 0:
        said = [line for line in (done.stderr or done.stdout).splitlines() if line.strip()]
        raise WitnessGateError(f"setup failed: pip could not install the base's {where} (every line pinned by hash, wheels only): "
                               f"{said[-1] if said else f'exit status {done.returncode}'}")
    for directory, _, files in os.walk(target):
        os.chmod(directory, 0o755)
        for name in files:
            os.chmod(os.path.join(directory, name), 0o644)
