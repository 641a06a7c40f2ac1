"""Debian's Bazel for the end-to-end tests: present (or a skip outside CI), with an output
root of the test's own, in an environment without Pants' PEX settings."""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path

from support.tools import missing

SOURCE = Path(__file__).resolve().parents[2]


def require_bazel() -> None:
    # CI runs as root on a fresh machine: .ci/run (and the bootstrap) installs Bazel there,
    # so a missing Bazel fails under CI=true and skips only on a developer's machine.
    bootstrap = subprocess.run([str(SOURCE / "bazel/bootstrap")], capture_output=True, text=True)
    if bootstrap.returncode != 0:
        missing(f"Bazel is not available: {bootstrap.stderr.strip()}")


def short_work_dir() -> Path:
    """A fresh directory for the repository and Bazel's output root. Short: Bazel's server
    socket lives under the output root, and a Unix socket path has at most 107 bytes."""
    return Path(tempfile.mkdtemp(prefix="wg-bazel-", dir="/tmp"))


def host_env() -> dict[str, str]:
    # The tests run from Pants' PEX: its PEX_* settings are no business of the nested tools.
    return {key: value for key, value in os.environ.items() if not key.lstrip("_").startswith("PEX")}
