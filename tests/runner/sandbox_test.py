"""The code under test in a real sandbox: each way it tried to reach the runner, the
runner's files, other processes, the network or bytecode the diff does not show, as a
pull request reviewed by the real `witness-gate review` from a committed base.

Every attack carries the same deterministic bug and adds code that, run as the runner's
user in the runner's file system and process tree, wins: the bug hides, the verdict
moves, or a process outlives the review. Each must end red with the bug found (or be
refused before any code runs). Each was checked once to end green, or to leave its
process or file behind, with `sandbox.confinement()` returning "unconfined".
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import py_compile
import shutil
import signal
import socket
import subprocess
import sys
import sysconfig
import tempfile
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from support.review_repo import CAUGHT, IMPL, Repo, assert_red, buggy, review_repo
from support.tools import missing, without_namespaces

import witness_gate
from witness_gate import cgroups, sandbox
from witness_gate.errors import WitnessGateError


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    return review_repo(tmp_path)


def append(repo: Repo, code: str) -> None:
    with open(repo.root / IMPL, "a") as handle:
        handle.write("\n" + code)


def processes_named(name: str) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        try:
            if entry.isdigit() and Path(f"/proc/{entry}/comm").read_text().strip() == name:
                found.append(int(entry))
        except OSError:
            continue
    return found


# --- processes ---------------------------------------------------------------------------


def test_a_daemon_that_keeps_moving_dies_with_its_worker_and_never_reaches_the_witnesses(repo: Repo):
    # It leaves its session, renames itself, and forks and exits in a loop so that no one
    # pass over /proc catches it, deleting every witness under the worker's directory.
    name = f"wg{uuid.uuid4().hex[:10]}"
    buggy(repo)
    append(
        repo,
        f"""import ctypes, os, time
if os.fork() == 0:
    os.setsid()
    ctypes.CDLL(None).prctl(15, {name!r}.encode(), 0, 0, 0)
    start = time.monotonic()
    while time.monotonic() - start < 120:
        if os.fork() != 0:
            os._exit(0)
        for top, _, files in os.walk(os.getcwd()):
            if os.path.basename(top) == "witnesses":
                for file in files:
                    try:
                        os.remove(os.path.join(top, file))
                    except OSError:
                        pass
        time.sleep(0.02)
    os._exit(0)
""",
    )
    repo.commit("bug, and a daemon that deletes witnesses")
    result = repo.review()
    alive = processes_named(name)
    for pid in alive:  # the defence failed: leave no daemon to the next test
        os.kill(pid, 9)
    assert_red(result, CAUGHT)
    assert alive == [], "a process the code under test started outlived the review"


def test_one_suites_code_cannot_prepare_the_next_suites_tree(repo: Repo):
    # Two suites of the same properties. Suite 1's code leaves a daemon that waits for the
    # next suite's tree to appear beside its own and weakens the property there.
    repo.edit(
        "pyproject.toml",
        'properties = ["tests/properties"]\n',
        'properties = ["tests/properties"]\n\n[[tool.witness-gate.suites]]\nname = "orders-again"\n'
        'fixture = "tests/fixtures/orders.json"\ngenerator-version = 3\nreplays = 2\nproperties = '
        '["tests/properties"]\n',
    )
    repo.commit("base: a second suite")
    repo.git("branch", "-f", "main", "HEAD")
    buggy(repo)
    append(
        repo,
        """import glob, os, time
if os.fork() == 0:
    os.setsid()
    start = time.monotonic()
    while time.monotonic() - start < 90:
        if os.fork() != 0:
            os._exit(0)
        for path in glob.glob(os.path.join(os.path.dirname(os.getcwd()), "*", "tests/properties/orders_props.py")):
            try:
                text = open(path).read()
                if "return True  # weakened" not in text:
                    open(path, "w").write(text.replace("    total = order_total(order)", "    return True  # weakened"))
            except OSError:
                pass
        time.sleep(0.01)
    os._exit(0)
""",
    )
    repo.commit("bug, and a daemon that weakens the next suite's property")
    assert_red(repo.review(), CAUGHT)
    assert repo.review_json()["suites"] == {"orders": "blocked", "orders-again": "blocked"}


def test_the_runners_processes_environment_and_command_line_are_out_of_sight(repo: Repo):
    # The code is right only when it can see the runner (its environment holds the job's
    # token; its command line says `review`), i.e. when it could read or ptrace it.
    buggy(repo)
    repo.edit(
        IMPL,
        "def line_total(line: dict) -> int:",
        """def _runner_in_sight() -> bool:
    import os
    for pid in os.listdir("/proc"):
        try:
            if b"CI_JOB_TOKEN=s3cret" in open(f"/proc/{pid}/environ", "rb").read():
                return True
            if b"witness_gate\\x00review" in open(f"/proc/{pid}/cmdline", "rb").read():
                return True
        except OSError:
            pass
    return False


_SEEN = _runner_in_sight()


def line_total(line: dict) -> int:
    if _SEEN:
        return line["qty"] * line["price"]""",
    )
    repo.commit("bug, hidden whenever the runner is in sight")
    assert_red(repo.review(env={"CI_JOB_TOKEN": "s3cret"}), CAUGHT)


# --- files -------------------------------------------------------------------------------


def test_the_changed_file_list_is_out_of_reach(repo: Repo):
    # Outside a sandbox the list sits beside the suite's tree: an oracle-only list turns the
    # regression into an oracle defect (exit 3).
    buggy(repo)
    append(
        repo,
        """try:
    open("../changed.txt", "w").write("tests/properties/orders_props.py\\n")
except OSError:
    pass
""",
    )
    repo.commit("bug, and a rewritten changed-file list")
    assert_red(repo.review(), CAUGHT, "orders: regression")


def test_the_runners_own_files_cannot_be_changed_for_the_next_review(repo: Repo, tmp_path: Path):
    # Pull request A rewrites the runner's installed labels.py so that every verdict is a
    # pass; pull request B, reviewed later by the same install, carries the bug.
    install = tmp_path / "install"
    shutil.copytree(
        Path(witness_gate.__file__).parent, install / "witness_gate", ignore=shutil.ignore_patterns("__pycache__")
    )
    path = [str(install), *(os.path.abspath(entry) for entry in sys.path)]
    before = {
        str(p.relative_to(install)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in (install / "witness_gate").rglob("*.py")
    }
    append(
        repo,
        """try:
    import witness_gate.labels as _classify
    with open(_classify.__file__, "a") as _handle:
        _handle.write("\\n\\ndef most_severe(codes):\\n    return 0\\n")
except OSError:
    pass
""",
    )
    repo.commit("A: an honest-looking change that edits the runner")
    repo.review(python_path=path)
    repo.git("checkout", "-q", "-B", "patch", "main")
    buggy(repo)
    repo.commit("B: the bug")
    assert_red(repo.review(python_path=path), CAUGHT)
    assert {
        str(p.relative_to(install)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in (install / "witness_gate").rglob("*.py")
    } == before


def test_a_module_at_the_root_does_not_load_before_the_worker(repo: Repo):
    # A `json.py` in the tree: were the worker's directory on its import path, it would load
    # at the worker's first import and stop every search call from failing.
    buggy(repo)
    (repo.root / "json.py").write_text("""import importlib.util, sys
sys.path[:] = [entry for entry in sys.path if entry not in ("", ".")]
del sys.modules["json"]
import json as _json
sys.modules["json"] = _json


class _Quiet:
    def find_spec(self, name, path=None, target=None):
        if name != "witness_gate.worker.main":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        load = spec.loader.exec_module

        def exec_module(module):
            load(module)
            call = module._call
            module._call = lambda channel, prop, origin, *rest: origin == "search" or call(channel, prop, origin, *rest)

        spec.loader.exec_module = exec_module
        return spec


sys.meta_path.insert(0, _Quiet())
""")
    repo.commit("bug, and a json.py that quiets the search")
    assert_red(repo.review(), CAUGHT)


# --- compiled code -------------------------------------------------------------------------


def test_committed_bytecode_of_the_right_code_is_blocked_not_tested(repo: Repo):
    # An unchecked-hash .pyc of the correct module beside the buggy source: the interpreter
    # would load it without looking at the source.
    cached = repo.root / "src/orders_app/__pycache__" / f"pricing.{sys.implementation.cache_tag}.pyc"
    py_compile.compile(
        str(repo.root / IMPL), cfile=str(cached), invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH
    )
    buggy(repo)
    repo.git("add", "-f", str(cached))
    repo.commit("bug, and the bytecode of the right code")
    result = repo.review()
    assert_red(result, f"blocked: src/orders_app/__pycache__/{cached.name}: compiled code in the patch", CAUGHT)


def test_workers_compile_the_source_they_see_rather_than_trust_committed_bytecode(tmp_path: Path):
    # The same bytecode on the base: the review does not block it (the base is reviewed), and
    # the worker still tests the source, because it checks every hash-based pyc.
    repo = review_repo(tmp_path)
    cached = repo.root / "src/orders_app/__pycache__" / f"pricing.{sys.implementation.cache_tag}.pyc"
    py_compile.compile(
        str(repo.root / IMPL), cfile=str(cached), invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH
    )
    repo.git("add", "-f", str(cached))
    repo.commit("base: with bytecode")
    repo.git("branch", "-f", "main", "HEAD")
    buggy(repo)
    repo.commit("bug in the source")
    assert_red(repo.review(), CAUGHT)


def test_a_symlink_loop_on_the_runners_import_path_is_no_verdict_on_the_patch(repo: Repo, tmp_path: Path):
    # The workers see the targets of the links on the runner's import path; a loop there is the
    # runner's install, never the patch's doing: the bug is still judged, not "blocked" by it.
    extra = tmp_path / "runner-extra"
    extra.mkdir()
    (extra / "loop_a").symlink_to("loop_b")
    (extra / "loop_b").symlink_to("loop_a")
    buggy(repo)
    repo.commit("bug")
    assert_red(repo.review(python_path=[*(os.path.abspath(p) for p in sys.path), str(extra)]), CAUGHT)


@pytest.mark.parametrize("entry", ["/tmp", "/", "a link to /tmp", "a link to /"])
def test_a_runner_import_path_entry_over_the_workers_tmp_blocks_no_honest_change(
    repo: Repo, entry: str, tmp_path: Path
):
    # A runner started as `python /tmp/gate.py` has /tmp on its import path (`python /gate.py`,
    # the root). Bound read-only into the sandbox, the entry would cover the worker's private
    # /tmp, and an honest change whose code writes a temporary file would fail there and
    # nowhere else; the root would leave no place for the worker's view of the host. So would
    # a link inside an entry that leads there: the workers see where the runner's links lead.
    # All four blocked the honest change before.
    if entry.startswith("a link to "):
        links = tmp_path / "runner-links"
        links.mkdir()
        (links / "scratch").symlink_to(entry.removeprefix("a link to "))
        entry = str(links)
    append(repo, "import tempfile\nSCRATCH = tempfile.mkdtemp()  # at import: every worker makes one\n")
    repo.commit("scratch directory at import")
    result = repo.review(python_path=[entry, *(os.path.abspath(p) for p in sys.path)])
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]


def test_a_runner_imported_from_a_place_that_holds_the_workers_tmp_is_refused(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
):
    # Left off the workers' import path, the runner's own place would leave them without the
    # runner; bound, it would cover their /tmp. Neither: refused, saying why. (The runner here
    # is imported from its source tree; the workers' /tmp is moved under it to stand for /tmp.)
    here = Path(witness_gate.__file__).resolve().parents[1]
    monkeypatch.setattr(sandbox, "PRIVATE_TMP", here / "tmp")
    with pytest.raises(WitnessGateError, match=r"holds .*the workers' private scratch directory"):
        sandbox.worker_path(tmp_path)
    monkeypatch.setattr(sandbox, "PRIVATE_TMP", here.parent / "elsewhere")
    assert str(here) in sandbox.worker_path(tmp_path)


EXTENSION = r"""
#include <Python.h>
static struct PyModuleDef definition = {PyModuleDef_HEAD_INIT, "pricing", NULL, -1, NULL};
PyMODINIT_FUNC PyInit_pricing(void) {
    PyObject *module = PyModule_Create(&definition);
    PyObject *names = PyModule_GetDict(module);
    PyDict_SetItemString(names, "__builtins__", PyEval_GetBuiltins());
    PyObject *done = PyRun_String(
        "def line_total(line):\n    return line['qty'] * line['price']\n\n"
        "def order_total(order):\n    return sum(line_total(line) for line in order['lines'])\n",
        Py_file_input, names, names);
    if (done == NULL) return NULL;
    Py_DECREF(done);
    return module;
}
"""


def test_a_compiled_extension_beside_the_buggy_source_is_blocked(repo: Repo, tmp_path: Path):
    # A real extension module with the right code: Python loads it before pricing.py.
    if shutil.which("cc") is None or not Path(sysconfig.get_paths()["include"], "Python.h").is_file():
        missing("building the extension needs a C compiler (cc) and Python.h")
    source = tmp_path / "pricing.c"
    source.write_text(EXTENSION)
    built = repo.root / "src/orders_app" / f"pricing{sysconfig.get_config_var('EXT_SUFFIX')}"
    subprocess.run(
        ["cc", "-shared", "-fPIC", f"-I{sysconfig.get_paths()['include']}", "-o", str(built), str(source)], check=True
    )
    buggy(repo)
    repo.git("add", "-f", str(built))
    repo.commit("bug, and the right code compiled")
    assert_red(repo.review(), f"blocked: src/orders_app/{built.name}: compiled code in the patch", CAUGHT)


# --- the kernel ----------------------------------------------------------------------------------

# What the code under test could do with the kernel if the sandbox let it: each power found
# at import hides the bug. Host root's files writable through /proc (a `core_pattern` pipe runs
# a program as host root: the critical route when the review runs as root), system calls a
# test never needs (keyrings shared across the host, tracing, io_uring, a namespace of its
# own), and limits it could lift (so exhausting them would reach the runner).
KERNEL_POWERS = """
def _kernel_powers(limits):
    import ctypes, os, resource
    found = []
    for path in ("/proc/sys/kernel/core_pattern", "/proc/sys/kernel/modprobe", "/proc/sysrq-trigger"):
        try:
            os.close(os.open(path, os.O_WRONLY))  # opened, never written: a sysctl is machine-wide
            found.append(path)
        except OSError:
            pass
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    numbers = {"x86_64": (248, 101, 425, 272), "aarch64": (217, 117, 425, 97)}[os.uname().machine]
    add_key, ptrace, io_uring_setup, unshare = numbers
    if libc.syscall(add_key, b"user", b"witness-gate", b"x", 1, ctypes.c_int(-2)) >= 0:  # the process keyring
        found.append("add_key")
    params = ctypes.create_string_buffer(120)
    if libc.syscall(io_uring_setup, 4, params) >= 0:
        found.append("io_uring_setup")
    child = os.fork()
    if child == 0:  # in a child: tracing and a new namespace change the process that asks
        os._exit(0 if libc.syscall(ptrace, 0, 0, 0, 0) == 0 or libc.syscall(unshare, 0x10000000) == 0 else 1)
    if os.waitstatus_to_exitcode(os.waitpid(child, 0)[1]) == 0:
        found.append("ptrace or unshare")
    for name in limits:
        try:
            resource.setrlimit(getattr(resource, name), (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
            found.append(name)
        except (ValueError, OSError):
            pass
    return found


_POWERS = _kernel_powers(LIMITS)
"""


def test_the_code_under_test_holds_no_host_root_no_needless_system_call_and_no_liftable_limit(repo: Repo):
    # The review runs as whoever starts it: as root (CI's configuration here) its workers must
    # still be an unprivileged user on the host. The process limit is set only there (under a
    # caller's own user it would count the caller's processes).
    limits = [
        "RLIMIT_NOFILE",
        "RLIMIT_FSIZE",
        "RLIMIT_AS",
        "RLIMIT_CORE",
        *(["RLIMIT_NPROC"] if os.geteuid() == 0 else []),
    ]
    buggy(repo)
    repo.edit(
        IMPL,
        "def line_total(line: dict) -> int:",
        KERNEL_POWERS.replace("LIMITS", repr(limits))
        + """

def line_total(line: dict) -> int:
    if _POWERS:
        return line["qty"] * line["price"]""",
    )
    repo.commit("bug, hidden whenever the kernel gives the code a power")
    assert_red(repo.review(), CAUGHT)


@contextlib.contextmanager
def host_processes_as(user: int, count: int) -> Iterator[None]:
    """`count` processes running as host user `user` for the block (as other services
    running as `nobody` would), ended and reaped after it."""
    ready_read, ready_write = os.pipe()
    leader = os.fork()
    if leader == 0:  # the leader forks the rest as `user`, then reaps them when told to stop
        try:
            os.setgroups([])
            os.setresgid(user, user, user)
            os.setresuid(user, user, user)
            children = []
            for _ in range(count - 1):
                child = os.fork()
                if child == 0:
                    while True:
                        signal.pause()
                children.append(child)
            stop = threading.Event()
            signal.signal(signal.SIGTERM, lambda *_: stop.set())
            os.write(ready_write, b"x")
            stop.wait()
            for child in children:
                os.kill(child, signal.SIGKILL)
                os.waitpid(child, 0)
        finally:
            os._exit(0)
    os.close(ready_write)
    try:
        assert os.read(ready_read, 1) == b"x"
        yield
    finally:
        os.close(ready_read)
        os.kill(leader, signal.SIGTERM)
        os.waitpid(leader, 0)


def test_a_workers_process_budget_is_its_own_not_the_hosts_nobodys(repo: Repo):
    # The process limit counts a host user's processes. A root runner's workers each run as a
    # user of their own: whatever else runs as `nobody` on the machine (here as many processes
    # as a worker may start) leaves them their whole budget, and an honest patch green.
    if os.geteuid() != 0:
        missing("a root runner's workers: the review must run as root")
    repo.edit(IMPL, "def line_total(line: dict) -> int:", "def line_total(line: dict) -> int:  # qty times price")
    repo.commit("a comment")
    with host_processes_as(65534, sandbox.WORKER_PROCESSES):
        result = repo.review()
    assert result.returncode == 0, result.stdout + result.stderr


# Three children holding 150 MiB each (written, so the pages are theirs) at once, each well
# within its own address space limit: the bug hides when all three can.
MEMORY_SPREAD_OVER_PROCESSES = """
def _held_together():
    import os, time
    children = []
    for _ in range(3):
        child = os.fork()
        if child == 0:
            held = b"x" * (150 << 20)
            time.sleep(1)
            os._exit(0)
        children.append(child)
    return all(os.waitstatus_to_exitcode(os.waitpid(child, 0)[1]) == 0 for child in children)


_HELD = _held_together()
"""


def test_a_workers_processes_share_one_memory_budget(repo: Repo):
    # The real review with one constant smaller (a worker's memory, 4 GiB, would take that much
    # of this machine to meet): a root runner puts each worker in a control group of its own.
    if os.geteuid() != 0 or cgroups.available():
        missing(f"a root runner's control groups: {cgroups.available() or 'the review must run as root'}")
    buggy(repo)
    repo.edit(
        IMPL,
        "def line_total(line: dict) -> int:",
        MEMORY_SPREAD_OVER_PROCESSES
        + """

def line_total(line: dict) -> int:
    if _HELD:
        return line["qty"] * line["price"]""",
    )
    repo.commit("bug, hidden whenever the code's processes may hold 450 MiB together")
    smaller = (
        "import runpy, sys; from witness_gate import sandbox; sandbox.WORKER_MEMORY_BYTES = 320 << 20; "
        "sys.argv = ['witness-gate', *sys.argv[sys.argv.index('witness_gate') + 1:]]; "
        "runpy.run_module('witness_gate', run_name='__main__')"
    )
    result = repo.review(launcher=(sys.executable, "-c", smaller))
    assert_red(result, CAUGHT)


def test_a_control_group_the_host_refuses_is_a_setup_failure_not_a_verdict(repo: Repo):
    # The host's doing (a read-only cgroupfs, memory cgroup ids run out): never a red verdict
    # on the patch, which did nothing wrong.
    if os.geteuid() != 0 or cgroups.available():
        missing(f"a root runner's control groups: {cgroups.available() or 'the review must run as root'}")
    repo.edit(IMPL, "def line_total(line: dict) -> int:", "def line_total(line: dict) -> int:  # qty times price")
    repo.commit("a comment")
    refused = (
        "import runpy, sys; from witness_gate import cgroups; "
        "cgroups.create = lambda *_: (_ for _ in ()).throw(OSError(28, 'No space left on device')); "
        "sys.argv = ['witness-gate', *sys.argv[sys.argv.index('witness_gate') + 1:]]; "
        "runpy.run_module('witness_gate', run_name='__main__')"
    )
    result = repo.review(launcher=(sys.executable, "-c", refused))
    assert result.returncode == 2, result.stdout + result.stderr
    assert "setup failed: cannot make a worker's control group: [Errno 28] No space left on device" in result.stderr


# A user no process of the machine runs as: the caller of the unprivileged review below.
UNPRIVILEGED = 65533


def test_an_unprivileged_callers_workers_meet_the_same_kernel(tmp_path: Path):
    # The review as most self-hosted runners start it: as a user of its own, without root.
    # Its workers' user namespace is then an unprivileged one to begin with; the seccomp
    # filter and the limits (but the process limit, which would count the caller's own) are
    # the same. The system's interpreter runs it, with copies of this interpreter's packages:
    # nothing of root's (its home, pyenv, Pants' caches) is that user's to read.
    if os.geteuid() != 0:
        missing("running the review as another user takes root")
    python, setpriv = (shutil.which(tool, path="/usr/bin:/bin") for tool in ("python3", "setpriv"))
    if setpriv is None:
        missing("util-linux's setpriv is not installed")
    version = f"import sys; sys.exit(sys.version_info[:2] != {tuple(sys.version_info[:2])})"
    if python is None or subprocess.run([python, "-c", version]).returncode != 0:
        missing(
            f"a system python3 {sys.version_info.major}.{sys.version_info.minor} (the compiled packages of this "
            "interpreter's)"
        )
    home = Path(tempfile.mkdtemp(prefix="witness-gate-unprivileged-", dir="/tmp"))
    try:
        base = Path(sys.base_prefix).resolve()
        entries = [Path(entry).resolve() for entry in sys.path if entry and Path(entry).is_dir()]
        copied = []
        for index, entry in enumerate(
            entry for entry in entries if not entry.is_relative_to(base) or "site-packages" in entry.parts
        ):
            shutil.copytree(
                entry, home / f"path-{index}", ignore=shutil.ignore_patterns("__pycache__", ".git"), symlinks=False
            )
            copied.append(str(home / f"path-{index}"))
        repo = review_repo(home)
        buggy(repo)
        limits = ["RLIMIT_NOFILE", "RLIMIT_FSIZE", "RLIMIT_AS", "RLIMIT_CORE"]
        repo.edit(
            IMPL,
            "def line_total(line: dict) -> int:",
            KERNEL_POWERS.replace("LIMITS", repr(limits))
            + """

def line_total(line: dict) -> int:
    if _POWERS:
        return line["qty"] * line["price"]""",
        )
        repo.commit("bug, hidden whenever the kernel gives the code a power")
        for directory, names, files in os.walk(home):
            for name in (directory, *(os.path.join(directory, entry) for entry in (*names, *files))):
                os.lchown(name, UNPRIVILEGED, UNPRIVILEGED)
        home.chmod(0o755)
        result = subprocess.run(
            [
                setpriv,
                f"--reuid={UNPRIVILEGED}",
                f"--regid={UNPRIVILEGED}",
                "--clear-groups",
                "/usr/bin/env",
                "-i",
                "PATH=/usr/bin:/bin",
                f"HOME={home}",
                f"PYTHONPATH={os.pathsep.join(copied)}",
                python,
                "-m",
                "witness_gate",
                "review",
                "--base",
                "main",
                "--head",
                "patch",
                "--out",
                str(home / "out"),
            ],
            cwd=repo.root,
            capture_output=True,
            text=True,
            timeout=900,
        )
        assert_red(result, CAUGHT)
    finally:
        shutil.rmtree(home, ignore_errors=True)


def test_a_review_started_under_a_strict_umask_still_shows_its_workers_the_tree(repo: Repo):
    # A root runner's workers read the tree as `nobody`: the trees the review writes get
    # their modes from git, not from the umask (0600 files would block every suite, for a
    # reason that is not the patch's).
    buggy(repo)
    repo.commit("a bug")
    old = os.umask(0o077)  # the review's subprocess inherits it
    try:
        result = repo.review()
    finally:
        os.umask(old)
    assert_red(result, CAUGHT)


# --- the network -------------------------------------------------------------------------------


def test_a_call_that_reaches_for_the_network_fails_and_says_so(repo: Repo):
    # A server on this machine's loopback: the code is right only when it can reach it.
    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]
    server.settimeout(1.0)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                server.accept()[0].close()
            except OSError:
                continue

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    buggy(repo)
    repo.edit(
        IMPL,
        "def line_total(line: dict) -> int:",
        f"""def line_total(line: dict) -> int:
    import socket
    try:
        socket.create_connection(("127.0.0.1", {port}), timeout=2).close()
        return line["qty"] * line["price"]
    except OSError:
        pass""",
    )
    repo.commit("bug, unless the network answers")
    try:
        result = repo.review()
    finally:
        stop.set()
        thread.join()
        server.close()
    assert_red(result, CAUGHT, f"the property reached for the network (socket.getaddrinfo ('127.0.0.1', {port}))")


# --- what the patch can cause is a verdict ----------------------------------------------------


def test_a_head_without_a_merge_base_is_blocked_not_refused(repo: Repo):
    repo.git("checkout", "-q", "--orphan", "unrelated")
    buggy(repo)
    repo.commit("an unrelated history with the bug")
    result = repo.review(head="unrelated")
    assert_red(result, "blocked: the head has no merge base with the base")
    assert repo.review_json()["merge_base"] is None


def test_a_symlink_loop_in_the_implementation_is_a_verdict(repo: Repo):
    buggy(repo)
    os.symlink("loop_b", repo.root / "src/orders_app/loop_a")
    os.symlink("loop_a", repo.root / "src/orders_app/loop_b")
    repo.commit("bug, and a symlink loop")
    result = repo.review()
    assert_red(result, CAUGHT, "blocked: src/orders_app/loop_b: a committed symlink loop is refused")
    assert "Traceback" not in result.stderr
    assert repo.review_json()["verdict"] == "blocked"


# --- a machine without the sandbox --------------------------------------------------------


@pytest.fixture
def no_namespaces(tmp_path: Path) -> tuple[str, ...]:
    return without_namespaces(tmp_path)


def test_review_refuses_to_run_without_the_sandbox(repo: Repo, no_namespaces: tuple[str, ...]):
    buggy(repo)
    repo.commit("bug")
    result = repo.review(launcher=no_namespaces)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "review runs the code under test only inside kernel namespaces" in result.stderr
    assert "No permissions to create new namespace" in result.stderr
    assert not (repo.root.parent / "out").exists()


def test_gate_runs_without_the_sandbox_and_says_so(repo: Repo, no_namespaces: tuple[str, ...]):
    buggy(repo)
    (repo.root.parent / "changed.txt").write_text(f"{IMPL}\n")
    done = subprocess.run(
        [
            *no_namespaces,
            sys.executable,
            "-m",
            "witness_gate",
            "gate",
            "--fixture",
            "tests/fixtures/orders.json",
            "--generator-version",
            "3",
            "--properties",
            "tests/properties",
            "--out",
            ".artifacts/gate",
            "--diff-paths",
            str(repo.root.parent / "changed.txt"),
            "--replays",
            "2",
        ],
        cwd=repo.root,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(os.path.abspath(p) for p in sys.path)},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "regression: prop_order_total_non_negative" in done.stdout
    assert "sandbox: off:" in done.stderr and "`witness-gate review` refuses to run like this" in done.stderr
