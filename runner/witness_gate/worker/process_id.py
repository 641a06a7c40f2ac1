"""The process id a worker's module sees, chosen by the runner (`seeds`).

The first thing a worker does, before its main loop (`main`) and Hypothesis load: each of the
forks that skip ids then copies a small process, and user code is nowhere near yet.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal


def continue_at_offset(request_path: str) -> None:
    """Goes on as a process the request's `pid_offset` ids further on, before any user code
    is loaded: forks that many children that leave at once, then one more that carries on
    as the worker, while this process waits for it and ends as it ended. The sandbox's pid
    namespace hands out ids in order, so the pid the module sees is the one the schedule
    chose."""
    with open(request_path, encoding="utf-8") as handle:
        offset = json.load(handle)["pid_offset"]
    for _ in range(offset):
        skipped = os.fork()
        if skipped == 0:
            os._exit(0)
        os.waitpid(skipped, 0)
    worker = os.fork()
    if worker == 0:
        return
    _, status = os.waitpid(worker, 0)
    if os.WIFSIGNALED(status):  # end the same way, so the runner reads the same cause
        ended_by = os.WTERMSIG(status)
        with contextlib.suppress(OSError, ValueError):  # SIGKILL's and SIGSTOP's action cannot be set (nor need be)
            signal.signal(ended_by, signal.SIG_DFL)
        os.kill(os.getpid(), ended_by)
        os._exit(128 + ended_by)  # only if the signal did not end this process
    os._exit(os.waitstatus_to_exitcode(status))
