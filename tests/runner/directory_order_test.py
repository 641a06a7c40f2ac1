"""The order directories list in: the schedule's orders (`seeds`, pure), the probe's slots,
and the worker's wrapper (`worker.directory_order`) in a plain interpreter of its own, so
this test's own `os` is never touched."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from itertools import permutations
from pathlib import Path

import pytest

from witness_gate import seeds
from witness_gate.evidence import chance_of_a_false_split
from witness_gate.replay import PROBE_INTERPRETERS, probe_passes, probe_settings

LOCK = {"seed_schedule": [12345], "max_examples": 100}


@pytest.mark.parametrize("order", [seeds.AS_LISTED, seeds.REVERSED, 2, 12345, 1 << 61])
@pytest.mark.parametrize("count", [0, 1, 2, 3, 10])
def test_a_directory_order_is_a_stable_permutation(order: int, count: int):
    positions = seeds.directory_positions(order, count)
    assert sorted(positions) == list(range(count)) and positions == seeds.directory_positions(order, count)


def test_as_listed_keeps_the_file_system_s_order_and_reversed_turns_it_round():
    assert seeds.directory_positions(seeds.AS_LISTED, 4) == [0, 1, 2, 3]
    assert seeds.directory_positions(seeds.REVERSED, 4) == [3, 2, 1, 0]


def test_drawn_orders_are_the_schedule_s_and_differ_from_one_another():
    settings = seeds.directory_settings(LOCK)
    assert settings[:2] == (seeds.AS_LISTED, seeds.REVERSED) and len(set(settings)) == len(settings) == 6
    assert settings == seeds.directory_settings(dict(LOCK))  # pure
    assert seeds.directory_settings({**LOCK, "seed_schedule": [1]})[2:] != settings[2:]
    # Many of the orders of a larger directory, not one or two.
    assert len({tuple(seeds.directory_positions(order, 5)) for order in settings}) == 6


def test_the_search_s_legs_list_reversed_then_in_drawn_orders_under_their_own_secrets():
    legs = seeds.search_legs(LOCK, "tests/properties/a_props.py")
    assert legs[0] == (
        seeds.check_hash_secret(LOCK, "tests/properties/a_props.py"),
        seeds.AS_LISTED,
    )  # the whole search
    assert legs[1] == (0, seeds.REVERSED)  # randomization off; creation order on the workers' tmpfs
    assert len(set(legs)) == 4 and all(order > seeds.REVERSED for _, order in legs[2:])
    assert legs == seeds.search_legs(dict(LOCK), "tests/properties/a_props.py")  # pure
    assert seeds.search_legs(LOCK, "tests/properties/b_props.py")[2:] != legs[2:]  # each module its own draws
    assert seeds.search_leg_cases(LOCK) == 10 and seeds.search_leg_cases({**LOCK, "max_examples": 5}) == 1


def test_the_probe_meets_both_orders_of_any_two_entries():
    orders = {tuple(seeds.directory_positions(order, 2)) for order in seeds.directory_settings(LOCK)}
    assert orders == set(permutations(range(2)))


def test_the_probe_runs_the_collector_s_passes_then_the_directory_order_s_then_the_clock_s_in_its_own_interpreter():
    assert PROBE_INTERPRETERS == (("collector", "directory_order"), ("clock",))
    slots = probe_settings(LOCK, PROBE_INTERPRETERS[0])
    assert [variant for variant, _, _ in slots] == ["collector"] * 48 + ["directory_order"] * 30
    directory = [(index, setting) for variant, index, setting in slots if variant == "directory_order"]
    assert directory == [
        (index, {"directory_order": order})
        for _ in range(5)
        for index, order in enumerate(seeds.directory_settings(LOCK))
    ]
    # Each condition's slots set that condition and nothing else.
    assert all(set(setting) == {"allocate_per_mille"} for variant, _, setting in slots if variant == "collector")
    # The clock's interpreter: its eight times of day, four passes over them, and nothing else.
    assert probe_settings(LOCK, PROBE_INTERPRETERS[1]) == [
        ("clock", index, {"clock": instant})
        for _ in range(4)
        for index, instant in enumerate(seeds.clock_settings(LOCK))
    ]


def test_a_race_splits_a_probe_by_setting_by_chance_at_most_once_in_20000_probes():
    # A thread race that failed eleven times in twelve was labelled `gc` in CI: two passes
    # of the collector's twelve settings, the one passing setting passing in both.
    for conditions in PROBE_INTERPRETERS:
        for _, settings, passes, _ in probe_passes(LOCK, conditions):
            assert chance_of_a_false_split(settings, passes) <= 1 / 20_000
    assert chance_of_a_false_split(12, 2) > 1 / 100


def test_the_passes_left_out_are_read_where_the_probe_lays_them():
    # protocol.left_out reads each condition's passes from probe_passes: each block's slots
    # are its condition's settings in order, pass after pass, and the blocks cover the probe.
    for conditions in PROBE_INTERPRETERS:
        slots, covered = probe_settings(LOCK, conditions), 0
        for first, settings, passes, bursts_read in probe_passes(LOCK, conditions):
            assert first == covered
            block = slots[first : first + settings * passes]
            assert len({variant for variant, _, _ in block}) == 1
            assert bursts_read == (block[0][0] == "collector")  # the one whose bursts evidence.cause reads
            assert [index for _, index, _ in block] == list(range(settings)) * passes
            covered += settings * passes
        assert covered == len(slots)


_LISTINGS = """
import glob, json, os, pathlib, sys
from witness_gate.worker import directory_order
from os import listdir as taken_at_import  # a module that took its own reference before install
directory_order.install()
directory_order.set_order(int(sys.argv[1]))
d = sys.argv[2]
def listings():
    with os.scandir(d) as entries:
        scanned = [e.name for e in entries]
    return [
        os.listdir(d),
        scanned,
        [p.name for p in pathlib.Path(d).iterdir()],
        [os.path.basename(p) for p in glob.glob(d + "/*")],
        next(os.walk(d))[2],
        [name.decode() for name in os.listdir(d.encode())],
    ]
print(json.dumps({"first": listings(), "again": listings(), "native": taken_at_import(d)}))
"""


def _list_in(order: int, directory: Path) -> dict[str, list]:
    done = subprocess.run(
        [sys.executable, "-c", _LISTINGS, str(order), str(directory)],
        env={"PYTHONPATH": os.pathsep.join(os.path.abspath(p) for p in sys.path if p)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.mark.parametrize("order", [seeds.AS_LISTED, seeds.REVERSED, 7, 12345])
def test_every_listing_api_lists_the_same_permutation_and_again_for_an_unchanged_directory(order: int, tmp_path: Path):
    for name in ("a", "b", "c", "d"):  # created in this order
        (tmp_path / name).write_text("")
    listed = _list_in(order, tmp_path)
    native = listed["native"]
    expected: list[str | None] = [None] * len(native)
    for entry, position in zip(native, seeds.directory_positions(order, len(native))):
        expected[position] = entry
    assert sorted(native) == ["a", "b", "c", "d"]
    assert listed["first"] == [expected] * 6, listed
    assert listed["again"] == listed["first"]  # stable while the directory does not change


_OWN_ORDER = """
import json, os, sys
from witness_gate.worker import directory_order
directory_order.install()
directory_order.start_in(int(sys.argv[1]))  # a search leg's order, before any user code
directory_order.remember_listings()  # the probe's worker
d = sys.argv[2]
at_import = os.listdir(d + "/sub")
scanned = [entry.name for entry in os.scandir(d + "/spool")]
pid = os.fork()
if pid == 0:  # a probe child under another order
    directory_order.set_order(int(sys.argv[3]))
    os.mkdir(d + "/fresh")
    for name in ("x", "y", "z"):
        open(d + "/fresh/" + name, "w").close()
    open(d + "/spool/.lock", "w").close()  # a reader's lock file, listed with the rest, then gone
    locked = os.listdir(d + "/spool")
    os.remove(d + "/spool/.lock")
    print(json.dumps({
        "at_import": at_import,
        "unchanged": os.listdir(d + "/sub"),
        "fresh": os.listdir(d + "/fresh"),
        "scanned": scanned,
        "locked": locked,
        "by_bytes": [os.fsdecode(name) for name in os.listdir(os.fsencode(d + "/spool"))],
        "touched": [entry.name for entry in os.scandir(d + "/spool")],
    }))
    sys.stdout.flush()
    os._exit(0)
os.waitpid(pid, 0)
"""


def test_a_process_lists_in_its_own_order_and_a_probe_child_keeps_it_for_what_it_listed_before(tmp_path: Path):
    # A leg's worker (and the replays of its witnesses) lists everything in the leg's order; a
    # probe child under another lists a directory the process listed before, unchanged since,
    # in the process's order (one order per directory per process, as a file system's), and a
    # new one in the child's. A lock file made in the child takes its place among the spool's
    # names, which keep the process's order among themselves, before and after it is removed
    # (a memo of the time, then of the whole listing, let the probe's order in: adversarial
    # reviews' deterministic bugs behind a cache of the spool, freezable `directory_order` flakes).
    for directory in ("sub", "spool"):
        (tmp_path / directory).mkdir()
        for name in ("a", "b", "c", "d"):
            (tmp_path / directory / name).write_text("")
    done = subprocess.run(
        [sys.executable, "-c", _OWN_ORDER, str(seeds.REVERSED), str(tmp_path), str(seeds.AS_LISTED)],
        env={"PYTHONPATH": os.pathsep.join(os.path.abspath(p) for p in sys.path if p)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    listed = json.loads(done.stdout)
    native_sub, native_fresh = os.listdir(tmp_path / "sub"), os.listdir(tmp_path / "fresh")
    assert listed["at_import"] == native_sub[::-1]  # the process's own order: reversed
    assert listed["unchanged"] == native_sub[::-1]  # unchanged since: as the process listed it
    assert listed["fresh"] == native_fresh  # new in the child: the child's order, as listed
    assert listed["scanned"] == os.listdir(tmp_path / "spool")[::-1]
    assert [name for name in listed["locked"] if name != ".lock"] == listed["scanned"]
    assert len(listed["locked"]) == 5
    assert listed["touched"] == listed["scanned"]
    assert listed["by_bytes"] == listed["scanned"]  # the same directory by a bytes path


_AS_LISTED = """
import os, sys
native_listdir, native_scandir = os.listdir, os.scandir
from witness_gate.worker import directory_order
directory_order.install()
d = sys.argv[1]
assert os.listdir is not native_listdir and os.listdir.__name__ == "listdir"
assert os.listdir(d) == native_listdir(d)
assert type(os.scandir(d)) is type(native_scandir(d))  # the file system's own iterator, handed through
assert os.listdir() == native_listdir()  # no argument: the working directory, as os.listdir's own
# What user code can reach through the wrappers: the originals and the order's number, nothing
# of the runner's (no channel key, no request, no lock).
reachable = set(os.listdir.__globals__) - set(vars(__builtins__))
assert os.listdir.__closure__ is None and os.scandir.__closure__ is None, reachable
held = {k for k in reachable if not k.startswith("__")}
assert held == {
    "annotations", "functools", "os", "Iterator", "TracebackType", "Any", "seeds", "_order", "_own", "_listdir",
    "_scandir", "_stat", "_listed", "remember_listings", "start_in", "set_order", "_in_order", "_Listing",
    "_arranged", "_passed_through", "_ordered_listdir", "_ordered_scandir", "install",
}, held
print("ok")
"""


def test_as_listed_hands_the_file_system_s_listing_through_and_the_wrappers_hold_nothing_of_the_runner_s(
    tmp_path: Path,
):
    (tmp_path / "x").write_text("")
    done = subprocess.run(
        [sys.executable, "-c", _AS_LISTED, str(tmp_path)],
        env={"PYTHONPATH": os.pathsep.join(os.path.abspath(p) for p in sys.path if p)},
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
    )
    assert done.returncode == 0 and done.stdout == "ok\n", done.stderr
