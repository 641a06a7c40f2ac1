"""A control group per worker: one budget of memory and processes for everything a worker
starts, however many processes it forks.

Resource limits (`launcher`) bound each process; a fork bomb multiplies the memory one
process may hold by the number of processes it may start, and the host's memory is what
the runner needs too. A control group bounds the sum, and the kernel's out-of-memory
killer then picks inside the group: the worker fails, never the runner.

Only root makes one here: the group goes below the runner's own group in each hierarchy
(a limit an administrator put on the runner still holds for its workers), on cgroup v1
(separate `memory` and `pids` hierarchies) or on cgroup v2 where the runner's group
already hands both controllers to its children. Elsewhere there is none, and `available`
says why. The launcher moves itself in before it drops root (the group's files are root's:
nothing the worker starts can move out), and `remove` ends what is left in it.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from pathlib import Path

_MOUNT = Path("/sys/fs/cgroup")
# Per hierarchy: (the controller's name in /proc/self/cgroup, "" for v2; its limit files in the
# order they are written, memory before its swap bound: v1 refuses memsw below the memory limit).
_V1 = (("memory", ("memory.limit_in_bytes", "memory.memsw.limit_in_bytes")), ("pids", ("pids.max",)))
_V2 = ("memory.max", "memory.swap.max", "pids.max")
_SWAP = ("memory.memsw.limit_in_bytes", "memory.swap.max")
_REMOVE_ATTEMPTS = 500


def memberships(proc_self_cgroup: str) -> dict[str, str]:
    """Each hierarchy's path of a process (pure): controller name (`""` for v2) -> path."""
    found = {}
    for line in proc_self_cgroup.splitlines():
        _, controllers, path = line.split(":", 2)
        for controller in controllers.split(",") if controllers else [""]:
            found[controller] = path
    return found


def limit_values(memory_bytes: int, processes: int) -> dict[str, str]:
    """What each limit file gets (pure): no swap beyond the memory itself."""
    return {
        "memory.limit_in_bytes": str(memory_bytes),
        "memory.memsw.limit_in_bytes": str(memory_bytes),
        "memory.max": str(memory_bytes),
        "memory.swap.max": "0",
        "pids.max": str(processes),
    }


def _places() -> list[tuple[Path, tuple[str, ...]]]:
    """Where a worker's groups go (the runner's own groups), with the limit files each takes."""
    mine = memberships(Path("/proc/self/cgroup").read_text())
    v1: list[tuple[Path, tuple[str, ...]]] = [
        (_MOUNT / controller / mine[controller].lstrip("/"), files) for controller, files in _V1 if controller in mine
    ]
    if len(v1) == len(_V1) and all((place / "cgroup.procs").exists() for place, _ in v1):
        return v1
    if "" in mine:
        place = _MOUNT / mine[""].lstrip("/")
        with contextlib.suppress(OSError):
            if {"memory", "pids"} <= set((place / "cgroup.subtree_control").read_text().split()):
                return [(place, _V2)]
    return []


def available() -> str:
    """Why this runner can make no group for its workers ("" when it can)."""
    if os.geteuid() != 0:
        return "the runner is not root"
    if not _places():
        return (
            "no cgroup v1 memory and pids hierarchies, nor a cgroup v2 group handing both controllers to its children"
        )
    return ""


def create(name: str, memory_bytes: int, processes: int) -> tuple[str, ...]:
    """Makes the group `name` with its limits in each hierarchy; its directories. Raises
    FileExistsError when the name is taken (the caller picks another)."""
    values = limit_values(memory_bytes, processes)
    made: list[Path] = []
    try:
        for place, files in _places():
            directory = place / name
            directory.mkdir(mode=0o755)
            made.append(directory)
            for file in files:
                if file not in _SWAP or (directory / file).exists():  # these exist only with swap accounting
                    (directory / file).write_text(values[file])
    except BaseException:
        remove(tuple(map(str, made)))
        raise
    return tuple(map(str, made))


def remove(directories: tuple[str, ...]) -> None:
    """Kills whatever is still in the groups (an escaped descendant), then removes them."""
    for directory in directories:
        for _ in range(_REMOVE_ATTEMPTS):
            try:
                left = Path(directory, "cgroup.procs").read_text().split()
            except FileNotFoundError:
                break
            for pid in left:
                _kill_member(directory, pid)
            try:
                os.rmdir(directory)
                break
            except OSError:  # busy until the kernel has taken the killed processes out
                time.sleep(0.01)


def _kill_member(directory: str, pid: str) -> None:
    """SIGKILLs process `pid` if it is still in the group: through a descriptor of the process,
    checked to be a member after it was opened, so an id reused meanwhile is never signalled."""
    try:
        process = os.pidfd_open(int(pid))
    except ProcessLookupError:
        return
    try:
        if pid in Path(directory, "cgroup.procs").read_text().split():
            signal.pidfd_send_signal(process, signal.SIGKILL)
    except (ProcessLookupError, FileNotFoundError):
        pass
    finally:
        os.close(process)
