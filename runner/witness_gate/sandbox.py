"""Where code under test runs: fresh interpreters the runner supervises and may kill.

The process that decides a verdict never imports a property module or the code it
tests. Each worker is a new interpreter in a session of its own, with an environment
the runner builds (a hash secret from the seed schedule; none of the caller's
`PYTHON*`, `PEX_*`, `HYPOTHESIS_*` or `PANTS_*` variables), its standard output and
error sent to /dev/null, and a private pipe for its messages. Every deadline is the
parent's, enforced with SIGKILL on the worker's whole process group: a worker that
exits, crashes, hangs, ignores signals or writes anything but well-formed messages ends
its conversation with an `Ended`, which callers count as a failure, never as a pass.
"""

from __future__ import annotations

import contextlib
import ctypes
import itertools
import json
import os
import select
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

_BOOT = "import sys, json; sys.path[:] = json.loads(sys.argv[1]); from witness_gate.worker import main; main(sys.argv[2])"
_MAX_MESSAGE = 32 << 20
_EXIT_GRACE_SECONDS = 1.0
# A fixed, documented environment: the same on every machine and under every caller.
_BASE_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "TZ": "UTC", "PYTHONDONTWRITEBYTECODE": "1"}
_requests = itertools.count()
_PR_SET_CHILD_SUBREAPER = 36
_live_workers: set[int] = set()
# Held while a worker starts and while orphans are killed: a worker another thread has just
# started must be known as live before anyone looks for children to kill.
_children_lock = threading.Lock()
_subreaper = False


def _adopt_orphans() -> None:
    """Makes this process the reaper of its descendants: a worker's child that double-forks
    and calls setsid() is reparented here, not to init, and `_kill_orphans` can end it."""
    global _subreaper
    if not _subreaper:
        _subreaper = ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0


def _kill_orphans() -> None:
    """SIGKILLs every child of this process that is not a live worker (escaped descendants)."""
    with _children_lock:
        _kill_orphans_locked()


def _kill_orphans_locked() -> None:
    # Workers start sessions of their own, and so does anything escaping one with setsid():
    # a child outside this process's session is a worker's descendant, never the caller's.
    me, session = str(os.getpid()), str(os.getsid(0))
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) in _live_workers:
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as handle:
                fields = handle.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        if fields[1].decode() == me and fields[3].decode() != session and fields[0] != b"Z":
            with contextlib.suppress(OSError):
                os.kill(int(entry), signal.SIGKILL)
                os.waitpid(int(entry), 0)


def worker_path(root: Path) -> list[str]:
    """The runner's own import path for a worker, without the current directory or anything
    inside the tree under review: the patch must not shadow the runner or Hypothesis."""
    here, tree = Path.cwd().resolve(), root.resolve()
    runner = Path(__file__).resolve().parents[1]  # where this package is imported from, always kept
    kept = []
    for entry in sys.path:
        resolved = Path(entry or ".").resolve()
        if resolved != runner and (entry in ("", ".") or resolved == here or resolved.is_relative_to(tree)):
            continue
        kept.append(str(resolved))
    return kept


@dataclass(frozen=True)
class Ended:
    """Why a worker's conversation ended without the message the caller waited for."""

    kind: str  # "timeout", "exited" or "protocol"
    detail: str


def worker_environment(hash_secret: int, scratch: Path) -> dict[str, str]:
    return {
        **_BASE_ENV,
        "HOME": str(scratch),
        "PYTHONHASHSEED": str(hash_secret),
        "HYPOTHESIS_STORAGE_DIRECTORY": str(scratch / "hypothesis"),
    }


def _describe_status(status: int) -> str:
    if status < 0:
        try:
            return f"killed by {signal.Signals(-status).name}"
        except ValueError:
            return f"killed by signal {-status}"
    return f"exit status {status}"


class Worker:
    """One supervised interpreter running `witness_gate.worker` on one request."""

    def __init__(self, request: dict[str, Any], hash_secret: int, root: Path, scratch: Path) -> None:
        read_end, write_end = os.pipe()
        request_path = scratch / f"request-{os.getpid()}-{next(_requests)}.json"
        request_path.write_text(json.dumps({**request, "protocol_fd": write_end}), "utf-8")
        _adopt_orphans()
        try:
            _children_lock.acquire()
            self._process = subprocess.Popen(
                [sys.executable, "-S", "-s", "-B", "-c", _BOOT, json.dumps(worker_path(root)), str(request_path)],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                cwd=root,
                env=worker_environment(hash_secret, scratch),
                pass_fds=(write_end,),
                start_new_session=True,
            )
            _live_workers.add(self._process.pid)
        finally:
            _children_lock.release()
            os.close(write_end)
        self._fd = read_end
        self._exited = os.pidfd_open(self._process.pid)
        self._buffer = b""
        self._closed = False

    def receive(self, seconds: float) -> dict[str, Any] | Ended:
        """The next message, or why there is none within `seconds` (the worker is then killed)."""
        deadline = time.monotonic() + seconds
        while True:
            newline = self._buffer.find(b"\n")
            if newline >= 0:
                line, self._buffer = self._buffer[:newline], self._buffer[newline + 1 :]
                return self._parse(line)
            if len(self._buffer) > _MAX_MESSAGE:
                return self._end("protocol", f"wrote a message over {_MAX_MESSAGE} bytes")
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return self._end("timeout", f"sent nothing for {seconds:g} s")
            readable, _, _ = select.select([self._fd, self._exited], [], [], remaining)
            end_of_pipe = False
            if self._fd in readable:
                chunk = os.read(self._fd, 1 << 16)
                if chunk:
                    self._buffer += chunk
                    continue
                end_of_pipe = True
            if self._exited in readable or end_of_pipe:
                # Exited, or every writer closed the pipe: take what is already there, then stop.
                self._drain()
                if b"\n" in self._buffer:
                    continue
                # The pipe closes a moment before the exit is seen: give the exit that moment.
                exiting = self._exited in readable or select.select([self._exited], [], [], _EXIT_GRACE_SECONDS)[0]
                status = self._process.wait() if exiting else None
                if status is None:
                    return self._end("protocol", "closed its message pipe")
                return self._end("exited", f"ended ({_describe_status(status)})")

    def _drain(self) -> None:
        while select.select([self._fd], [], [], 0)[0]:
            chunk = os.read(self._fd, 1 << 16)
            if not chunk or len(self._buffer) > _MAX_MESSAGE:
                return
            self._buffer += chunk

    def _parse(self, line: bytes) -> dict[str, Any] | Ended:
        try:
            message = json.loads(line)
        except (ValueError, UnicodeDecodeError):
            return self._end("protocol", f"wrote a malformed message: {line[:80]!r}")
        if not isinstance(message, dict) or not isinstance(message.get("event"), str):
            return self._end("protocol", f"wrote a message without an event: {line[:80]!r}")
        return message

    def _end(self, kind: str, detail: str) -> Ended:
        self.close()
        return Ended(kind, detail)

    def close(self) -> None:
        """Kills the worker's process group (whatever it is doing) and releases its pipes."""
        if self._closed:
            return
        self._closed = True
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self._process.pid, signal.SIGKILL)
        self._process.wait()
        _live_workers.discard(self._process.pid)
        _kill_orphans()
        os.close(self._fd)
        os.close(self._exited)

    def __enter__(self) -> Worker:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
