"""The benchmarks' CPU column counts every process a command started, reaped or not."""

from __future__ import annotations

import os
import subprocess
import sys

import cpu_account
from support.tools import missing

# Forks a child that burns CPU and leaves without being reaped by its parent: the parent
# waits for it to end without reaping it (WNOWAIT) and exits first, so init reaps the child,
# never the command's parent (as a worker's processes are reaped by no one who reports to
# the runner). Waiting for the end, not for a while, keeps this exact under any load.
_ORPHANED_WORK = """
import os, time
child = os.fork()
if child == 0:
    end = time.process_time() + 0.4
    while time.process_time() < end:
        pass
    os._exit(0)
os.waitid(os.P_PID, child, os.WEXITED | os.WNOWAIT)
os._exit(0)
"""


def test_a_child_reaped_by_no_one_is_counted():
    why = cpu_account.available()
    if why:
        missing(f"no control group for the CPU column: {why}")
    account = cpu_account.Account()
    try:
        process = subprocess.Popen([sys.executable, "-c", _ORPHANED_WORK], preexec_fn=account.join)
        _, _, usage = os.wait4(process.pid, 0)
        counted = account.seconds()
    finally:
        account.close()
    reaped = usage.ru_utime + usage.ru_stime
    assert counted >= 0.35, (counted, reaped)
    assert reaped < 0.2, (counted, reaped)  # what the reaped children's times alone would have said


def test_a_process_left_running_is_moved_out_not_killed():
    why = cpu_account.available()
    if why:
        missing(f"no control group for the CPU column: {why}")
    account = cpu_account.Account()
    left = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"], preexec_fn=account.join)
    try:
        account.close()
        assert not account.path.exists()
        assert left.poll() is None
    finally:
        left.kill()
        left.wait()
