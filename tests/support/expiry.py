"""A freeze seen expired by a shifted clock, not by waiting for it to run out.

The gate under `pants test` and `bazel test` runs in a process whose environment the tool
builds from what it is told to pass. A test hands that process Debian's libfaketime (what
`faketime` preloads) reading its offset from a file: the environment, and so every cache
key, is the same on each run, and only the file's content moves the clock. A run with the
offset at zero sees the freeze as it is; a run with the clock moved past the freeze's
expiry sees it expired, deterministically, however slow the machine."""

from __future__ import annotations

import json
import math
import shlex
import shutil
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

from support.tools import missing

_STAMP = "%Y-%m-%dT%H:%M:%SZ"
# Debian's faketime(1) preloads this; the dynamic linker expands $LIB (lib/x86_64-linux-gnu).
LIBFAKETIME = "/usr/$LIB/faketime/libfaketime.so.1"


def expires_at(freeze: Path) -> datetime:
    """The freeze's expiry as the runner reads it: the file's whole-second timestamp."""
    return datetime.strptime(json.loads(freeze.read_text())["expires_at"], _STAMP).replace(tzinfo=timezone.utc)


def still_valid(expiry: datetime) -> bool:
    # Both sides whole seconds: a precise "now" against a truncated stamp would call a freeze
    # valid for up to a second after the runner sees it expired.
    return datetime.now(timezone.utc).replace(microsecond=0) < expiry


class ShiftedClock:
    """The wall clock of every process started with `env()`, moved by what `file` says."""

    def __init__(self, directory: Path) -> None:
        self.file = directory / "faketime"
        self._write(0)
        self._check()

    def env(self) -> dict[str, str]:
        # The monotonic clock moves by the same constant offset (durations and timeouts are
        # untouched): libfaketime 0.9.10 with FAKETIME_DONT_FAKE_MONOTONIC fails every absolute
        # sleep on that clock with EINVAL, and CPython's time.sleep is one, so a review that
        # waited on a child (subprocess's wait) stopped with "[Errno 22] Invalid argument".
        return {"LD_PRELOAD": LIBFAKETIME, "FAKETIME_TIMESTAMP_FILE": str(self.file)}

    def real(self) -> None:
        self._write(0)

    def past(self, expiry: datetime, margin_seconds: int = 60) -> None:
        """Moves the clock to `margin_seconds` past `expiry`, for the processes started next."""
        self._write(math.ceil((expiry - datetime.now(timezone.utc)).total_seconds()) + margin_seconds)

    def _write(self, seconds: int) -> None:
        self.file.write_text(f"{seconds:+d}\n")

    def _check(self) -> None:
        """Libfaketime must move a real process's clock a day ahead, or the test is no test, and
        leave its sleeps working, or the process under the clock fails for the clock's sake."""
        self._write(86400)
        try:
            shown = subprocess.run(
                [sys.executable, "-c", "import time; time.sleep(0.001); print(time.time())"],
                env=self.env(),
                capture_output=True,
                text=True,
                timeout=60,
            )
            real = datetime.now(timezone.utc).timestamp()
            if shown.returncode != 0 or not shown.stdout.strip() or abs(float(shown.stdout) - real - 86400) > 60:
                missing(
                    f"Debian's libfaketime ({LIBFAKETIME}) did not shift the clock, or broke time.sleep "
                    "(apt-get install faketime): "
                    f"{shown.stderr.strip()}"
                )
        finally:
            self._write(0)


def env_passing(directory: Path, variables: dict[str, str]) -> str:
    """A directory whose `env` passes `variables` through `env -i`, to put first on PATH.

    The pull-request job starts the review with `env -i PATH=... HOME=...`, so that no
    variable of the job reaches it; a clock shifted by the environment (ShiftedClock.env())
    would stop there too. This `env` adds the clock's variables after `-i`, and only there:
    the job's own steps (pip, the base's Pants or Bazel) keep the real clock."""
    real = shutil.which("env")
    assert real is not None, "no env on PATH"
    passed = " ".join(shlex.quote(f"{name}={value}") for name, value in variables.items())
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "env").write_text(
        f'#!/bin/sh\nif [ "$1" = "-i" ]; then\n  shift\n  exec {shlex.quote(real)} -i {passed} "$@"\nfi\n'
        f'exec {shlex.quote(real)} "$@"\n'
    )
    (directory / "env").chmod(0o755)
    return str(directory)
