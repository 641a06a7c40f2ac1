"""Bad inputs: each is one line on stderr, exit 2, and nothing is written."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import SampleRepo
from support.tools import missing

from witness_gate import sandbox
from witness_gate.errors import SetupFailed


def assert_refused(result, message: str) -> None:
    assert result.code == 2, result.stdout + result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], result.stderr


def test_pin_refuses_a_symlink_a_directory_and_a_missing_file(repo: SampleRepo):
    os.symlink("orders.json", repo.root / "tests/fixtures/link.json")
    for fixture, message in [
        ("tests/fixtures/link.json", "symlink"),
        ("tests/fixtures", "not a regular file"),
        ("nope.json", "not found"),
    ]:
        result = repo.cli("pin", "--fixture", fixture, "--generator-version", "3", "--out", repo.lock)
        assert_refused(result, message)
    assert not (repo.root / repo.lock).exists()


def test_pin_refuses_a_fixture_outside_the_root(repo: SampleRepo, tmp_path):
    outside = tmp_path / "outside.json"
    outside.write_text("[]")
    assert_refused(
        repo.cli("pin", "--fixture", str(outside), "--generator-version", "1", "--out", repo.lock),
        "outside the repository root",
    )


def test_gate_refuses_an_out_outside_the_root_before_any_work(repo: SampleRepo, tmp_path):
    # Before anything else: the missing fixture, which pinning (the first step) would refuse,
    # is never reached, and no search runs.
    (repo.root / "changed.txt").write_text("")
    result = repo.cli(
        "gate",
        "--fixture",
        "nope.json",
        "--generator-version",
        "3",
        "--properties",
        "tests/properties",
        "--out",
        str(tmp_path / "elsewhere"),
        "--diff-paths",
        "changed.txt",
    )
    assert_refused(result, "lock is outside the repository root")
    assert not (tmp_path / "elsewhere").exists() and not (tmp_path / ".elsewhere.staging").exists()


def test_check_refuses_an_assertion_id_defined_twice(repo: SampleRepo):
    assert repo.pin().code == 0
    repo.write(
        "tests/properties/zz_bad.py",
        "import witness_gate\nfrom hypothesis import strategies as st\n"
        "@witness_gate.property(payloads=st.just({}))\ndef prop_order_total_non_negative(p):\n    return True\n",
    )
    assert_refused(repo.check(), "already defined")
    assert repo.witness_files() == []


@pytest.mark.parametrize(
    "source, message",
    [
        ("def broken(:\n", "SyntaxError"),
        ("raise RuntimeError('boom at import')\n", "RuntimeError: boom at import"),
        ("import os\nos._exit(0)\n", "loading the property module failed: the worker ended (exit status 0)"),
        # The worker carries on in a child of the process the runner started (at the pid the
        # runner chose): that process must end as the worker did, by the same signal, which
        # bubblewrap reports as 128 + its number (and an unconfined worker as the signal).
        ("import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n", ("exit status 137", "killed by SIGKILL")),
        ("import os, signal\nos.kill(os.getpid(), signal.SIGTERM)\n", ("exit status 143", "killed by SIGTERM")),
        (
            "import witness_gate\n@witness_gate.property(payloads=[1, 2])\ndef prop_bad_strategy(p):\n    return "
            "True\n",
            "must be a Hypothesis strategy",
        ),
        (
            "import witness_gate\nfrom hypothesis import strategies as st\n"
            "@witness_gate.property(payloads=st.just({'x': float('nan')}))\ndef prop_nan(p):\n    return True\n",
            "not plain JSON",
        ),
    ],
)
def test_a_property_module_that_cannot_be_loaded_or_run_blocks_with_one_line(repo: SampleRepo, source, message):
    # Property modules import the code under test, so what they do at import is the
    # code's doing: a verdict (blocked, exit 1), never a refusal the code could choose.
    assert repo.pin().code == 0
    repo.write("tests/properties/zz_bad.py", source)
    result = repo.check()
    assert result.code == 1, result.stdout + result.stderr
    [line] = [line for line in result.stdout.splitlines() if line.startswith("blocked: ")]
    endings = [f"the worker ended ({ending})" for ending in message] if isinstance(message, tuple) else [message]
    assert line.startswith("blocked: tests/properties/zz_bad.py: ") and any(
        ending in line for ending in endings
    ), result.stdout
    assert repo.witness_files() == []


def test_a_property_that_exits_fails_closed(repo: SampleRepo):
    assert repo.pin().code == 0
    repo.write(
        "tests/properties/exits.py",
        "import sys, witness_gate\nfrom hypothesis import strategies as st\n"
        "@witness_gate.property(payloads=st.just({'n': 1}))\ndef prop_exits(p):\n    sys.exit(0)\n",
    )
    assert repo.check().code == 1
    assert repo.classify().code == 1
    assert repo.labels() == ["regression"]
    assert "SystemExit" in repo.report_json()["witnesses"][0]["reason"]


def test_unknown_configuration_key_is_refused(repo: SampleRepo):
    assert repo.pin().code == 0
    repo.configure('impl-prefix = ["src/"]')
    assert_refused(repo.check(), "unknown key 'impl-prefix'")


def test_classify_refuses_a_witness_of_another_fixture(repo: SampleRepo):
    repo.edit("src/orders_app/pricing.py", 'return line["qty"] * line["price"]', "return -1")
    assert repo.pin().code == 0
    assert repo.check().code == 1
    (repo.root / "tests/fixtures/orders.json").write_text("[]\n")
    assert repo.pin().code == 0
    assert_refused(repo.classify(), "witness of another fixture")


@pytest.mark.parametrize("entry, message", [("../outside", "not normalized"), ("/abs", "absolute path")])
def test_gate_refuses_an_import_path_that_leaves_the_root(repo: SampleRepo, entry: str, message: str):
    result = repo.gate(extra=("--import-path", entry))
    assert_refused(result, message)
    assert not (repo.root / ".artifacts/gate").exists()


def test_an_import_path_flag_replaces_the_configured_one(repo: SampleRepo):
    # The example imports orders_app from src/; a flag that names another directory wins,
    # so the property module cannot import its code and the run is blocked, not passed.
    result = repo.gate(extra=("--import-path", "tests"))
    assert result.code == 1 and "No module named 'orders_app'" in result.stdout, result.stdout + result.stderr
    assert "import-paths" in result.stdout  # the hint names where import paths come from


def _without_libfaketime(repo: SampleRepo, *args: str) -> subprocess.CompletedProcess[str]:
    """The CLI in the repository, with Debian's libfaketime hidden: an empty tmpfs over its
    directory, in a mount namespace of the run's own (root, as CI runs)."""
    if os.geteuid() != 0 or not shutil.which("unshare"):
        missing("hiding libfaketime needs a mount namespace of its own: run as root, with util-linux's unshare")
    try:
        library = Path(sandbox.clock_environment()["LD_PRELOAD"])
    except SetupFailed as error:
        missing(str(error))
    hide = 'mount -t tmpfs none "$1" && shift && exec "$@"'
    return subprocess.run(
        ["unshare", "--mount", "--propagation", "private", "sh", "-c", hide, "sh", str(library.parent)]
        + [repo.python, "-m", "witness_gate", *args],
        cwd=repo.root,
        env={**os.environ, "PYTHONPATH": repo.python_path},
        capture_output=True,
        text=True,
        timeout=300,
    )


CLOCK_REFUSAL = "setup failed: the clock probe needs Debian's libfaketime"


@pytest.mark.parametrize(
    "command",
    [
        ("gate", "--fixture", "tests/fixtures/orders.json", "--generator-version", "3", "--properties",
         "tests/properties", "--out", ".artifacts/gate", "--diff-paths", "changed.txt"),
        ("classify", "--lock", "nope.lock", "--witnesses", "nope", "--diff-paths", "changed.txt"),
        ("review", "--repo", ".", "--base", "HEAD", "--head", "HEAD", "--out", ".artifacts/review"),
    ],
    ids=["gate", "classify", "review"],
)  # fmt: skip
def test_a_command_that_replays_refuses_before_any_work_where_libfaketime_is_missing(repo: SampleRepo, command):
    # The clock probe's interpreter preloads it: without it the probe would vary nothing, so
    # the command stops at once (before pinning, reading the lock or searching), never after.
    (repo.root / "changed.txt").write_text("src/orders_app/pricing.py\n")
    done = _without_libfaketime(repo, *command)
    assert done.returncode == 2, done.stdout + done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and CLOCK_REFUSAL in lines[0], done.stderr
    assert not (repo.root / ".artifacts").exists()


def test_a_search_alone_needs_no_libfaketime(repo: SampleRepo):
    assert repo.pin().code == 0
    done = _without_libfaketime(repo, "check", "--lock", repo.lock, "--properties", "tests/properties", "--out", "w")
    assert done.returncode in (0, 1), done.stdout + done.stderr
    assert CLOCK_REFUSAL not in done.stderr
