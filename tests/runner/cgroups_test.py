"""A root runner's worker in a control group of its own (`cgroups`): the memory and the
processes of everything it starts are one budget, met by the worker, never the host."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from support.tools import missing
from witness_gate import cgroups, sandbox


def test_a_process_groups_are_read_per_hierarchy():
    found = cgroups.memberships("9:name=systemd:/\n8:pids:/\n4:memory:/ci/job\n2:cpu,cpuacct:/\n0::/ci/job\n")
    assert found == {"name=systemd": "/", "pids": "/", "memory": "/ci/job", "cpu": "/", "cpuacct": "/", "": "/ci/job"}


def test_swap_adds_nothing_to_the_memory_budget():
    values = cgroups.limit_values(1 << 30, 64)
    assert (
        values["memory.limit_in_bytes"] == values["memory.memsw.limit_in_bytes"] == values["memory.max"] == str(1 << 30)
    )
    assert values["memory.swap.max"] == "0" and values["pids.max"] == "64"


@pytest.fixture
def group():
    if os.geteuid() != 0:
        missing("control groups are made by a root runner")
    if cgroups.available():
        missing(f"a root runner's control groups: {cgroups.available()}")
    made = cgroups.create(f"witness-gate-test-{uuid.uuid4().hex[:8]}", 96 << 20, 16)
    yield made
    cgroups.remove(made)
    assert not any(os.path.exists(directory) for directory in made)


def launched(groups: tuple[str, ...], code: str) -> subprocess.CompletedProcess:
    """`code` run by the launcher exactly as a worker's bubblewrap is (limits, the groups)."""
    spec = {
        "limits": sandbox.WORKER_LIMITS,
        "cgroups": list(groups),
        "user": None,
        "view_root": None,
        "view": [],
        "argv": [sys.executable, "-I", "-c", code],
    }
    runner = str(Path(sandbox.__file__).resolve().parents[1])
    return subprocess.run(
        [sys.executable, "-I", "-S", "-B", "-c", sandbox._LAUNCH, runner, json.dumps(spec)],
        capture_output=True,
        text=True,
        timeout=120,
    )


# Each child holds 48 MiB (written, so the pages are its own), well within its own address
# space limit; three of them hold more than the group's 96 MiB.
SPREAD_OVER_CHILDREN = """
import os, time
children = []
for _ in range(3):
    child = os.fork()
    if child == 0:
        held = b"x" * (48 << 20)
        time.sleep(2)  # all three hold theirs at once
        os._exit(0)
    children.append(child)
print(sum(os.waitstatus_to_exitcode(os.waitpid(child, 0)[1]) == 0 for child in children))
"""


def test_memory_spread_over_processes_meets_one_budget(group: tuple[str, ...]):
    done = launched(group, SPREAD_OVER_CHILDREN)
    assert done.stdout.strip() != "3", done.stdout + done.stderr  # the kernel killed a child (or all)


FORK_MANY = """
import os, time
started = 0
try:
    for _ in range(40):
        if os.fork() == 0:
            os.close(1), os.close(2)  # the caller stops waiting: these stay behind
            time.sleep(60)
            os._exit(0)
        started += 1
except BlockingIOError:
    pass
print(started)
"""


def test_processes_meet_the_groups_budget_and_none_outlives_it(group: tuple[str, ...]):
    done = launched(group, FORK_MANY)
    assert int(done.stdout) < 16, done.stdout + done.stderr
    left = [pid for directory in group for pid in Path(directory, "cgroup.procs").read_text().split()]
    assert left  # the sleeping children outlived the launcher: `remove` (the fixture) must end them
