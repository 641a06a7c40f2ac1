"""The CPU a command used, every process it started included, counted by a control group.

A parent's RUSAGE_CHILDREN counts only the descendants that were waited for, each by its
own parent. The runner ends a worker by killing its process group; what the worker had
started is reparented to the runner (a child subreaper) and reaped there only when it is
still running, so a worker's own time mostly never reaches the runner's count. For one
regression's `gate`, RUSAGE_CHILDREN counted 1.4 s where the control group counted 3.3 s.
A control group counts every process that ran in it, reaped or not, and whatever the
machine's other users do.

Root only: on cgroup v1 a group of the `cpuacct` hierarchy, on v2 a group below this
process's own (its `cpu.stat`). Where neither can be made, `available()` says why, and the
figures say "CPU not measured" rather than a smaller number.
"""

from __future__ import annotations

import functools
import itertools
import os
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

_MOUNT = Path("/sys/fs/cgroup")
_numbers = itertools.count()


def _own_v2_group() -> Path | None:
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        hierarchy, controllers, path = line.split(":", 2)
        if hierarchy == "0" and not controllers:
            return _MOUNT / path.lstrip("/")
    return None


def _parent() -> tuple[Path, str]:
    """Where a group goes and the file that holds its usage: cgroup v1's cpuacct, else v2."""
    if (_MOUNT / "cpuacct" / "cpuacct.usage").exists():
        return _MOUNT / "cpuacct", "cpuacct.usage"
    own = _own_v2_group()
    if own is not None and (own / "cpu.stat").exists():
        return own, "cpu.stat"
    raise OSError("neither a cgroup v1 cpuacct hierarchy nor a cgroup v2 group with cpu.stat")


@functools.cache
def available() -> str:
    """Why a command's CPU cannot be counted here ("" where it can); tried once."""
    if os.geteuid() != 0:
        return "not root: no control group of our own"
    try:
        Account().close()
    except OSError as error:
        return str(error)
    return ""


class Account:
    """A control group of its own: `join` moves the calling process in (a child's
    `preexec_fn`), `add` another one; `seconds` is the CPU of everything that ran in it
    while it was there."""

    def __init__(self) -> None:
        self._parent, self._usage = _parent()
        self.path = self._parent / f"witness-gate-bench-{os.getpid()}-{next(_numbers)}"
        self.path.mkdir()

    def join(self) -> None:
        self.add(os.getpid())

    def add(self, pid: int) -> None:
        """Moves a running process in (a daemon: what it starts from now on is counted too)."""
        (self.path / "cgroup.procs").write_text(str(pid))

    def release(self, pid: int) -> None:
        """Moves a process back to the group this one was made in, so this one can be removed."""
        (self._parent / "cgroup.procs").write_text(str(pid))

    def seconds(self) -> float:
        text = (self.path / self._usage).read_text()
        if self._usage == "cpuacct.usage":
            return int(text) / 1e9
        usage = dict(line.split() for line in text.splitlines())
        return int(usage["usage_usec"]) / 1e6

    def close(self) -> None:
        """Removes the group; a process still in it (one the command left running, which
        the caller reports) goes back to the group this one was made in, untouched."""
        for pid in (self.path / "cgroup.procs").read_text().split():
            self.release(int(pid))
        self.path.rmdir()


@dataclass(frozen=True)
class Run:
    wall: float  # seconds
    exit_code: int
    peak_kib: int  # resident, of the largest process the command waited for
    cpu: float | None  # of every process it started, by a control group (None: `available()` says why not)
    reaped_cpu: float  # of it and the descendants it reaped (what RUSAGE_CHILDREN sees)
    output: str  # standard output and error, when captured


def run(argv: list[str], cwd: Path, env: dict[str, str], capture: bool = False) -> Run:
    """One run of a command, counted in a control group of its own where one can be made."""
    account = None if available() else Account()
    try:
        started = time.perf_counter()
        process = subprocess.Popen(
            argv,
            cwd=cwd,
            env=env,
            stdout=subprocess.PIPE if capture else subprocess.DEVNULL,
            stderr=subprocess.STDOUT if capture else subprocess.DEVNULL,
            text=True,
            preexec_fn=account.join if account is not None else None,
        )
        output = process.stdout.read() if process.stdout is not None else ""
        _, status, usage = os.wait4(process.pid, 0)
        return Run(
            time.perf_counter() - started,
            os.waitstatus_to_exitcode(status),
            usage.ru_maxrss,
            account.seconds() if account is not None else None,
            usage.ru_utime + usage.ru_stime,
            output,
        )
    finally:
        if account is not None:
            account.close()
