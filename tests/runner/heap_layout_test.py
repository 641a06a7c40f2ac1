"""The memory layout forked replays start from: one per seed, whatever the worker did before.

Each case runs in an interpreter of its own (the test process's heap is pytest's): the
worker's side makes a `Layout`, then forks children between bursts of its own allocation
and freeing, as the worker's bookkeeping between replays does; each child takes the layout
and makes objects the way code under test does, and reports their identity order.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from support.tools import missing

RUNNER = Path(__file__).resolve().parents[2] / "runner"

FORKS = r"""
import gc, json, os, sys
from witness_gate.worker import heap_layout as layout, main as worker

class Row:
    def __init__(self, n):
        self.n = n

memory = layout.Layout(int(sys.argv[1]))
gc.freeze()
kept = []
orders = []
for burst in range(6):
    # The worker between forks: objects of a row's size made, some kept, some freed. It
    # never runs the code under test, so Row's first instances are made in each child, and
    # (CPython 3.13) a class's first instances were seen to take blocks that later ones and
    # an older class's do not: the worker's objects here are a new class's too.
    class Note:
        def __init__(self, n):
            self.n = n

    made = [Note(k) for k in range(burst * 41 + 3)]
    kept += made[::3]
    del made
    gc.collect()  # what the worker does before each fork (worker._forked)
    worker._clear_internal_caches()
    read_end, write_end = os.pipe()
    if os.fork() == 0:
        if sys.argv[2] == "arranged":
            memory.take_effect()
        rows = [Row(n) for n in range(4)]
        order = [row.n for row in sorted(rows, key=id)] + [row.n for row in {*rows}]
        os.write(write_end, json.dumps(order).encode())
        os._exit(0)
    os.close(write_end)
    os.wait()
    orders.append(json.loads(os.read(read_end, 4096)))
print(json.dumps(orders))
"""


def orders(seed: int, mode: str = "arranged", python: str = sys.executable) -> list[list[int]]:
    done = subprocess.run(
        [python, "-c", FORKS, str(seed), mode],
        env={**os.environ, "PYTHONPATH": str(RUNNER), "PYTHONHASHSEED": str(seed)},
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return json.loads(done.stdout)


def moves_without_the_layout(python: str) -> bool:
    return any(len({json.dumps(order) for order in orders(seed, "inherited", python)}) > 1 for seed in range(1, 21))


def test_every_fork_of_one_layout_sees_one_identity_order_whatever_the_worker_did_between():
    for seed in (1, 2, 3):
        seen = orders(seed)
        assert all(order == seen[0] for order in seen), seen


def test_the_seed_chooses_the_order():
    firsts = {json.dumps(orders(seed)[0]) for seed in range(1, 9)}
    assert len(firsts) >= 3, firsts


def test_without_the_layout_the_workers_bookkeeping_moves_the_order():
    # What the layout is for: the same forks without it see the order change.
    assert moves_without_the_layout(sys.executable)


def pyenv_python(version: str) -> str:
    root = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv"))
    found = sorted(root.glob(f"versions/{version}.*/bin/python3"))
    if not found:
        missing(f"no CPython {version} under {root}/versions")
    return str(found[-1])


@pytest.mark.parametrize("version", ["3.11", "3.12", "3.13"])
def test_the_layout_holds_on_every_supported_cpython(version):
    python = pyenv_python(version)
    seen = orders(4, python=python)
    assert all(order == seen[0] for order in seen), seen
    assert moves_without_the_layout(python)
    # Every size class of the small-object allocator, 16 to 512 bytes, has its pool (one kept block each).
    counted = subprocess.run(
        [python, "-c", "from witness_gate.worker import heap_layout as layout; print(len(layout.Layout(1)._anchors))"],
        env={**os.environ, "PYTHONPATH": str(RUNNER)},
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert counted.stdout.split() == ["32"]


STEERED = r"""
import gc, json, os, sys
from witness_gate.worker import heap_layout as layout, main as worker

memory = layout.Layout(5)
gc.freeze()
seen = []
for count in (0, 1, 300, 301, worker._YOUNG_THRESHOLD):
    gc.collect()
    read_end, write_end = os.pipe()
    if os.fork() == 0:
        memory.take_effect()
        ballast = worker._steer_collector(count)
        made = [10_000 + n for n in range(4)] + [object() for _ in range(4)]
        os.write(write_end, json.dumps([id(o) % 16384 for o in made]).encode())
        os._exit(0)
    os.close(write_end)
    os.wait()
    seen.append(json.loads(os.read(read_end, 4096)))
print(json.dumps(seen))
"""


def test_the_collector_probes_ballast_moves_no_small_object():
    # The probe moves when the collector runs, not where the call's objects land: whatever
    # the number of extra containers, the next ints and objects take the same blocks.
    done = subprocess.run(
        [sys.executable, "-c", STEERED],
        env={**os.environ, "PYTHONPATH": str(RUNNER)},
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    seen = json.loads(done.stdout)
    assert all(places == seen[0] for places in seen), seen
