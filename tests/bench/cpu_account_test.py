"""The benchmarks' CPU column counts every process a command started, reaped or not."""

from __future__ import annotations

import os
import subprocess
import sys

import cpu_account
from support.tools import missing

# Forks a child that burns CPU and leaves without being waited for: its parent exits first,
# so the child is reaped by init, never by the command's parent (as a worker's processes
# are reaped by no one who reports to the runner).
_ORPHANED_WORK = """
import os, time
if os.fork() == 0:
    end = time.process_time() + 0.4
    while time.process_time() < end:
        pass
    os._exit(0)
time.sleep(0.6)
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
