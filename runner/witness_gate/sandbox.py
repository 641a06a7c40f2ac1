"""Where code under test runs: fresh interpreters the runner confines, supervises and may kill.

The process that decides a verdict never imports a property module or the code it
tests. Each worker is a new interpreter with an environment the runner builds (a hash
secret from the seed schedule; none of the caller's variables), its standard output and
error sent to /dev/null, and a private pipe for its messages. Every deadline is the
parent's, enforced with SIGKILL: a worker that exits, crashes, hangs, ignores signals or
writes anything but well-formed messages ends its conversation with an `Ended`, which
callers count as a failure, never as a pass.

The confinement is bubblewrap's (`bwrap`), one contract stated in `_confinement`: each
worker gets its own user, PID, mount, IPC, UTS, network (and, where the kernel has one,
cgroup) namespaces; it sees the system's `/usr`, the interpreter, the runner's own import
path and the tree under test, all read-only, and writes only a private `/tmp` that dies
with it; it runs as `nobody` with no capabilities and no network, never as a user that
maps to host root (`launcher` drops a root caller's privileges before bubblewrap starts, to
a host user of the worker's own), under a seccomp filter (`seccomp`), resource limits and,
under root, a control group of its own (`cgroups`); and it is PID 2 of a
namespace whose init dies with the runner's handle on it, so one kill ends every
descendant, `setsid()` or not. The runner's files, its staging, `--out`, the changed-file
list, other suites' trees, `$PEX_ROOT` beyond the runner's own import path, the CI
checkout and the runner's `/proc` are not in the worker's world. `review` refuses to run
where the machine cannot provide this (`require_confinement`); the other commands run
local workers without it and say so (`confinement_notice`).
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import itertools
import json
import os
import secrets
import select
import shutil
import signal
import subprocess
import sys
import sysconfig
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from witness_gate import bytecode, cgroups, conditions, launcher, protocol, seccomp
from witness_gate.errors import SetupFailed, Stopped, WitnessGateError

# The worker's first act sends its standard error to /dev/null: whatever reaches the
# runner's pipe on fd 2 was written before any user code could run (bubblewrap's own
# refusal, or the interpreter failing to start), so it is quoted as the sandbox's word.
# Then it moves on to its process id (`worker.process_id`) while it is still small to fork, and
# only then loads the worker.
_BOOT = (
    "import os, sys, json; os.dup2(os.open(os.devnull, os.O_WRONLY), 2); sys.path[:] = json.loads(sys.argv[1]); "
    "from witness_gate.worker.process_id import continue_at_offset; continue_at_offset(sys.argv[2]); "
    "from witness_gate.worker.main import main; main(sys.argv[2])"
)
# -P: no '' or working directory on sys.path, so a `json.py` in the tree cannot load before
# the worker. -B: a worker writes no bytecode beside what it reads; hash-checked pycs are
# checked against their sources. Neither stops a timestamp pyc the tree ships beside a
# source from loading: `review` blocks bytecode in a patch, so the tree's is the base's.
_INTERPRETER_FLAGS = ("-P", "-S", "-s", "-B", "--check-hash-based-pycs", "always")
_MAX_MESSAGE = 32 << 20
# On top of a call's time limit, for a worker's own work that is no call: its start (a fresh
# interpreter importing Hypothesis and pytest took seconds on a 2-core machine under a CI
# run's load, past a 2 s limit) and its work between replays.
WORKER_SLACK_SECONDS = 5.0
_MAX_SANDBOX_WORDS = 2000
_EXIT_GRACE_SECONDS = 1.0
# A fixed, documented environment: the same on every machine and under every caller.
_BASE_ENV = {
    "PATH": "/usr/local/bin:/usr/bin:/bin",
    "LANG": "C.UTF-8",
    "LC_ALL": "C.UTF-8",
    "TZ": "UTC",
    "PYTHONDONTWRITEBYTECODE": "1",
}
_requests = itertools.count()
_PR_SET_CHILD_SUBREAPER = 36
_live_workers: set[int] = set()
# Directories the trusted side prepared for every confined worker (the code's third-party
# packages, `dependencies`): path inside -> host path, each bound read-only (`providing`).
_provided: dict[str, Path] = {}
# Held while a worker starts and while orphans are killed: a worker another thread has just
# started must be known as live before anyone looks for children to kill.
_children_lock = threading.Lock()
_subreaper = False
# Set once a signal stops the run (`stop_every_worker`): no worker starts after it.
_stopping: Stopped | None = None

# --- the confinement contract ----------------------------------------------------------

_NAMESPACES = (
    "--unshare-user",
    "--unshare-pid",
    "--unshare-ipc",
    "--unshare-net",
    "--unshare-uts",
    "--unshare-cgroup-try",
)
_NOBODY = "65534"
# What every interpreter needs from the system, read-only: programs and libraries, and the
# files the dynamic linker and `pwd` read. Nothing the runner or the CI job wrote.
_SYSTEM_DIRECTORIES = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
_SYSTEM_FILES = ("/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/passwd", "/etc/group")
# The worker's only writable place, private to it and gone with its namespace.
PRIVATE_TMP = Path("/tmp")
PRIVATE_TMP_BYTES = 1 << 30
# Limits on each worker's processes (`launcher` sets them before it becomes bubblewrap): what
# a test that runs away exhausts fails the worker. Open files and file size as a test suite
# never needs more; address space per process; no core files.
WORKER_LIMITS = {"RLIMIT_NOFILE": 4096, "RLIMIT_FSIZE": PRIVATE_TMP_BYTES, "RLIMIT_AS": 4 << 30, "RLIMIT_CORE": 0}
# What all of a worker's processes hold together, in a control group of its own (`cgroups`)
# where the runner is root: a fork bomb then meets the sum, never the host's memory.
WORKER_MEMORY_BYTES = 4 << 30
WORKER_PROCESSES = 1024
# Under root each worker runs as a host user of its own, from ids no system hands out (above
# systemd's container ranges, below 2^31): the process limit counts a user's processes, so a
# shared user (nobody) would give every worker, and whatever else runs as nobody, one budget.
# Under the caller's own user it would count the caller's processes too: it is set only here.
_WORKER_IDS_FROM, _WORKER_IDS = 0x70000000, 1 << 24
_DROPPED_USER_LIMITS = {"RLIMIT_NPROC": WORKER_PROCESSES}
# The launcher: the standard library, then the runner's own package (-I: no environment, no user site).
_LAUNCH = "import sys; sys.path.append(sys.argv[1]); from witness_gate.launcher import main; main(sys.argv[2])"
_REQUEST_INSIDE = "/run/witness-gate/request.json"
_BWRAP_SEARCH = "/usr/local/bin:/usr/bin:/bin"
_FIX = (
    "install Debian's `bubblewrap` and run as root or where unprivileged user namespaces are allowed "
    "(kernel.unprivileged_userns_clone=1, user.max_user_namespaces > 0)"
)


@dataclass(frozen=True)
class Confinement:
    """How this machine confines workers: the bubblewrap binary, or why there is none."""

    bwrap: str | None
    missing: str = ""


def _confinement(
    bwrap: str, binds: list[tuple[str, Path]], cwd: Path, seccomp_fd: int, environment: dict[str, str]
) -> list[str]:
    """bubblewrap's arguments for one worker: `binds` as (source, path inside) pairs, each
    bound read-only, and `environment` set for the worker alone, over the fixed one it
    inherits; everything else the worker sees is listed here and nowhere else."""
    argv = [
        bwrap,
        *_NAMESPACES,
        "--disable-userns",
        "--die-with-parent",
        "--new-session",
        "--cap-drop",
        "ALL",
        "--uid",
        _NOBODY,
        "--gid",
        _NOBODY,
        "--hostname",
        "witness-gate",
        "--seccomp",
        str(seccomp_fd),
    ]
    for directory in _SYSTEM_DIRECTORIES:  # Debian's /bin, /lib... are links into /usr
        if os.path.islink(directory):
            argv += ["--symlink", os.readlink(directory), directory]
        elif os.path.isdir(directory):
            argv += ["--ro-bind", directory, directory]
    argv += [arg for name in _SYSTEM_FILES if os.path.exists(name) for arg in ("--ro-bind", name, name)]
    argv += ["--proc", "/proc", "--dev", "/dev", "--size", str(PRIVATE_TMP_BYTES), "--tmpfs", str(PRIVATE_TMP)]
    for source, inside in binds:
        argv += ["--ro-bind", source, str(inside)]
    for name, value in environment.items():
        argv += ["--setenv", name, value]
    return [*argv, "--chdir", str(cwd), "--"]


@dataclass(frozen=True)
class _Account:
    """Under root, whom a worker runs as on the host and the control groups holding it."""

    user: int
    cgroups: tuple[str, ...]


def _account() -> _Account | None:
    """A root runner's next worker: a user of its own and, where the host has them, its
    control groups (None when the runner is not root: the worker is the caller's user)."""
    if os.geteuid() != 0:
        return None
    while True:
        user = _WORKER_IDS_FROM + secrets.randbelow(_WORKER_IDS)
        if _cgroups_missing():
            return _Account(user, ())
        try:
            return _Account(user, cgroups.create(f"witness-gate-{user}", WORKER_MEMORY_BYTES, WORKER_PROCESSES))
        except FileExistsError:  # another worker's: draw again
            continue
        except OSError as error:  # the host's doing, never the patch's: a setup failure, not a verdict
            raise SetupFailed(f"cannot make a worker's control group: {error}") from None


@functools.cache
def _cgroups_missing() -> str:
    return cgroups.available()


def _confined(
    bwrap: str,
    readable: list[tuple[Path, Path]],
    cwd: Path,
    request: Path | None,
    command: list[str],
    account: _Account | None,
    environment: dict[str, str],
) -> tuple[list[str], tuple[int, ...]]:
    """The command that runs `command` confined, and the descriptors it must inherit: the
    launcher (limits; under root, the worker's `account` and the view of what it reads, see
    `launcher`), which becomes bubblewrap, which runs `command`."""
    pairs = _outermost(readable) + ([(request, Path(_REQUEST_INSIDE))] if request is not None else [])
    sources = [str(source) for source, _ in pairs]
    try:
        view = launcher.view_root(sources) if account is not None else None
    except OSError as error:  # where the tree or the interpreter lies, never the patch's doing
        raise SetupFailed(f"cannot confine a worker: {error}") from None
    binds = [
        (launcher.view_path(view, index) if view is not None else str(source), inside)
        for index, (source, inside) in enumerate(pairs)
    ]
    filter_read, filter_write = os.pipe()
    os.write(filter_write, _seccomp_program())  # a few hundred bytes: within a pipe's buffer
    os.close(filter_write)
    spec = {
        "limits": {**WORKER_LIMITS, **(_DROPPED_USER_LIMITS if account is not None else {})},
        "cgroups": list(account.cgroups) if account is not None else [],
        "user": [account.user, account.user] if account is not None else None,
        "view_root": view,
        "view": sources if account is not None else [],
        "argv": [*_confinement(bwrap, binds, cwd, filter_read, environment), *command],
    }
    runner = str(Path(__file__).resolve().parents[1])
    return [sys.executable, "-I", "-S", "-B", "-c", _LAUNCH, runner, json.dumps(spec)], (filter_read,)


@functools.cache
def _seccomp_program() -> bytes:
    found = seccomp.program(os.uname().machine)
    if found is None:
        raise WitnessGateError(
            f"no seccomp filter for this machine ({os.uname().machine}): workers are not confined here"
        )
    return found


def _outermost(readable: list[tuple[Path, Path]]) -> list[tuple[Path, Path]]:
    """The pairs that exist, without those inside another one already bound (sorted, so a
    directory is bound before anything below it)."""
    chosen: list[tuple[Path, Path]] = []
    for source, inside in sorted(set(readable), key=lambda pair: pair[1]):
        if os.path.exists(source) and not any(inside.is_relative_to(outer) for _, outer in chosen):
            chosen.append((source, inside))
    return chosen


def _interpreter_paths() -> list[tuple[Path, Path]]:
    # The executable as the runner names it (a venv's link included), its venv and the base
    # installation its standard library comes from.
    paths = [Path(sys.executable).absolute(), Path(sys.prefix), Path(sys.base_prefix)]
    return [(path.resolve(), path) for path in paths]


_link_targets_lock = threading.Lock()


def _link_targets(directories: tuple[str, ...]) -> tuple[Path, ...]:
    """Where the symlinks inside the runner's import path lead (`_walked_link_targets`), walked
    once: the six threads of a replay round ask at once, and each would walk the whole import
    path before the cache holds it (a quarter of a regression's classify, in CPU)."""
    with _link_targets_lock:
        return _walked_link_targets(directories)


@functools.cache
def _walked_link_targets(directories: tuple[str, ...]) -> tuple[Path, ...]:
    """Where the symlinks inside the runner's import path lead: a PEX venv links its
    site-packages into `$PEX_ROOT/installed_wheels`, and a worker reads those targets (and
    nothing else of `$PEX_ROOT`). Once per process: the runner's install does not move."""
    found, pending = set(), list(directories)
    while pending:  # a directory entry's own type says whether it is a link: no stat per file
        with contextlib.suppress(OSError), os.scandir(pending.pop()) as entries:
            for entry in entries:
                if entry.is_symlink():  # a link to a directory is listed, never entered
                    with contextlib.suppress(RuntimeError):  # a loop: nothing can be imported through it
                        found.add(Path(entry.path).resolve())
                elif entry.is_dir():
                    pending.append(entry.path)
    return tuple(sorted(found))


@functools.cache
def confinement() -> Confinement:
    """Whether bubblewrap can confine a worker on this machine, tried once per process with
    the same contract every worker gets."""
    search = os.pathsep.join(filter(None, (os.environ.get("PATH"), _BWRAP_SEARCH)))
    bwrap = shutil.which("bwrap", path=search)
    if bwrap is None:
        return Confinement(None, f"bubblewrap (bwrap) is not installed: {_FIX}")
    try:
        probe = _Account(_WORKER_IDS_FROM, ()) if os.geteuid() == 0 else None
        argv, descriptors = _confined(
            bwrap, _interpreter_paths(), PRIVATE_TMP, None, [sys.executable, *_INTERPRETER_FLAGS, "-c", ""], probe, {}
        )
        try:
            done = subprocess.run(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                env=_BASE_ENV,
                timeout=60,
                start_new_session=True,
                pass_fds=descriptors,
            )
        finally:
            for descriptor in descriptors:
                os.close(descriptor)
    except WitnessGateError as error:
        return Confinement(None, str(error))
    except (OSError, subprocess.TimeoutExpired) as error:
        return Confinement(None, f"{bwrap} cannot start: {error}: {_FIX}")
    if done.returncode != 0:
        said = done.stderr.decode(errors="replace").strip().splitlines()
        why = said[-1] if said else f"exit status {done.returncode}"
        return Confinement(None, f"{bwrap} cannot create the worker's namespaces here ({why}): {_FIX}")
    return Confinement(bwrap)


def require_confinement(command: str) -> None:
    """Refuses (exit 2) to run `command` where workers cannot be confined: never a silent downgrade."""
    missing = confinement().missing
    if missing:
        raise WitnessGateError(
            f"{command} runs the code under test only inside kernel namespaces, and this machine has none for it: "
            f"{missing}"
        )


def confinement_notice() -> str | None:
    """The line every command that starts workers prints when they are confined less than
    `review` requires (no sandbox: `check`, `gate`, `classify`, `freeze` and `verify` run
    anyway), or less than this runner's user could (root without control groups)."""
    missing = confinement().missing
    if missing:
        return (
            f"sandbox: off: {missing}. The code under test ran as this user, with this user's files, processes and "
            "network in reach; `witness-gate review` refuses to run like this."
        )
    if os.geteuid() == 0 and _cgroups_missing():
        return (
            f"sandbox: each worker's memory is bounded per process ({WORKER_LIMITS['RLIMIT_AS'] >> 30} GiB), not in "
            "sum: "
            f"no control group for it ({_cgroups_missing()}); the kernel's out-of-memory killer takes workers first."
        )
    return None


def stop_every_worker(stop: Stopped) -> None:
    """Kills every live worker's process group, and makes every later start raise `stop`.
    Safe in a signal handler: it takes no lock (the interrupted thread may hold one)."""
    global _stopping
    _stopping = stop
    for pid in list(_live_workers):  # a copy made without releasing the interpreter lock
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, signal.SIGKILL)


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


@contextlib.contextmanager
def providing(directories: dict[str, Path]) -> Iterator[None]:
    """Shows every confined worker started inside the block `directories` (path inside ->
    host directory), read-only."""
    _provided.update(directories)
    try:
        yield
    finally:
        for inside in directories:
            _provided.pop(inside, None)


def worker_path(root: Path) -> list[str]:
    """The runner's own import path for a worker, without the current directory, anything
    inside the tree under review (the patch must not shadow the runner or Hypothesis), or a
    directory that holds the worker's private /tmp: bound read-only into the sandbox, /tmp
    (a runner started as `python /tmp/gate.py`) would cover the place the code under test
    writes to, and fail an honest change that writes a temporary file; the root would leave
    no place for the worker's view of the host. A runner installed there is refused."""
    here, tree = Path.cwd().resolve(), root.resolve()
    runner = Path(__file__).resolve().parents[1]  # where this package is imported from, always kept
    if _holds_private_tmp(runner):
        raise WitnessGateError(
            f"the runner is imported from {runner}, which holds {PRIVATE_TMP}, the workers' private scratch "
            "directory: install it elsewhere (a venv, a PEX)"
        )
    kept = []
    for entry in sys.path:
        resolved = Path(entry or ".").resolve()
        if resolved != runner and (
            entry in ("", ".") or resolved == here or resolved.is_relative_to(tree) or _holds_private_tmp(resolved)
        ):
            continue
        kept.append(str(resolved))
    return kept


def _holds_private_tmp(path: Path) -> bool:
    """Whether `path`, bound read-only, would cover the workers' private /tmp (it is /tmp or above it)."""
    return PRIVATE_TMP.is_relative_to(path)


# Debian's libfaketime, preloaded into the clock probe's worker alone (`worker.clock`): its
# wall clock reads the real time plus the offset FAKETIME names, read again at every call;
# its monotonic clocks stay real. Where Debian installs it for the interpreter's architecture.
_LIBFAKETIME = "/usr/lib/{}/faketime/libfaketime.so.1"


@functools.cache
def clock_environment() -> dict[str, str]:
    """The variables that give a worker a wall clock the clock probe sets: a setup failure
    (exit 2) where Debian's libfaketime is not installed, never a probe that varies nothing."""
    library = _LIBFAKETIME.format(sysconfig.get_config_var("MULTIARCH") or "")
    if not os.path.isfile(library):
        raise SetupFailed(
            f"the clock probe needs Debian's libfaketime, and {library} is missing: apt-get install libfaketime"
        )
    return {"LD_PRELOAD": library, "FAKETIME_NO_CACHE": "1", "FAKETIME_DONT_FAKE_MONOTONIC": "1", "FAKETIME": "+0"}


@dataclass(frozen=True)
class Ended:
    """Why a worker's conversation ended without the message the caller waited for."""

    kind: str  # "timeout", "exited" or "protocol"
    detail: str


def worker_environment(hash_secret: int, scratch: Path, condition: dict[str, str] | None = None) -> dict[str, str]:
    """The fixed environment, with a declared condition's variables over it (`conditions`)."""
    return {
        **conditions.apply(_BASE_ENV, condition or {}),
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
    """One supervised interpreter running `witness_gate.worker.main` on one request, confined
    when the machine can (`confinement`), with `root` (the tree under test) its only view
    of the project."""

    def __init__(self, request: dict[str, Any], hash_secret: int, root: Path, scratch: Path) -> None:
        # A probe that sets the clock runs in a worker that can have it set (`clock_environment`).
        clock = any("clock" in setting for setting in request.get("probe") or ())
        environment = clock_environment() if clock else {}
        read_end, write_end = os.pipe()
        # The channel's key goes down a pipe of its own, never into the request file (which
        # the code under test can read): only the worker's own lines verify.
        self._key = os.urandom(protocol.KEY_BYTES)
        key_read, key_write = os.pipe()
        os.write(key_write, self._key)
        os.close(key_write)
        request_path = scratch / f"request-{os.getpid()}-{next(_requests)}.json"
        bwrap = confinement().bwrap
        request_path.write_text(
            json.dumps({**request, "protocol_fd": write_end, "key_fd": key_read, "confined": bwrap is not None}),
            "utf-8",
        )
        request_path.chmod(
            0o644
        )  # whatever the umask: a root runner's worker reads it as a user of its own (`launcher`)
        if _stopping is not None:
            raise _stopping
        self._account = _account() if bwrap is not None else None
        try:
            self._process = self._start(
                bwrap, request, hash_secret, root, scratch, request_path, (write_end, key_read), environment
            )
        except BaseException:
            self._release_account()
            raise
        finally:
            for descriptor in (write_end, key_read):
                os.close(descriptor)
        self._fd = read_end
        self._exited = os.pidfd_open(self._process.pid)
        self._buffer = b""
        self._heard = False
        self._closed = False
        if _stopping is not None:  # stopped while it started, before `stop_every_worker` could see it
            self.close()
            raise _stopping

    def _start(
        self,
        bwrap: str | None,
        request: dict[str, Any],
        hash_secret: int,
        root: Path,
        scratch: Path,
        request_path: Path,
        channel: tuple[int, int],
        environment: dict[str, str],
    ) -> subprocess.Popen[bytes]:
        """The worker's process: the fixed environment (`worker_environment`) with `environment` over it."""
        import_path = worker_path(root)
        bytecode.write_for_workers(import_path)
        descriptors: tuple[int, ...]
        if bwrap is None:
            argv = [sys.executable, *_INTERPRETER_FLAGS, "-c", _BOOT, json.dumps(import_path), str(request_path)]
            home, descriptors, outside = scratch, (), environment
        else:
            # A link on the runner's import path that leads to /tmp or above it is left unbound, as
            # such an entry is (`worker_path`).
            targets = [target for target in _link_targets(tuple(import_path)) if not _holds_private_tmp(target)]
            runner = [*(Path(entry) for entry in import_path), *targets]
            readable = [
                *_interpreter_paths(),
                *((path, path) for path in runner),
                (root.resolve(), root.absolute()),
                *((host.resolve(), Path(inside)) for inside, host in _provided.items()),
            ]
            command = [sys.executable, *_INTERPRETER_FLAGS, "-c", _BOOT, json.dumps(import_path), _REQUEST_INSIDE]
            argv, descriptors = _confined(
                bwrap, readable, root.absolute(), request_path, command, self._account, environment
            )
            home, outside = PRIVATE_TMP, {}  # set inside: the launcher and bubblewrap run without it
        _adopt_orphans()
        try:
            _children_lock.acquire()
            process = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                cwd=root,
                env={**worker_environment(hash_secret, home, request.get("condition")), **outside},
                pass_fds=(*channel, *descriptors),
                start_new_session=True,
            )
            _live_workers.add(process.pid)
            return process
        finally:
            _children_lock.release()
            for descriptor in descriptors:
                os.close(descriptor)

    def _release_account(self) -> None:
        if self._account is not None:
            cgroups.remove(self._account.cgroups)

    def receive(self, seconds: float) -> dict[str, Any] | Ended:
        """The next message, or why there is none within `seconds` (the worker is then killed)."""
        deadline = time.monotonic() + seconds
        while True:
            newline = self._buffer.find(b"\n")
            if newline >= 0:
                line, self._buffer = self._buffer[:newline], self._buffer[newline + 1 :]
                self._heard = True
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
                return self._end("exited", f"ended ({_describe_status(status)}){self._sandbox_words()}")

    def _drain(self) -> None:
        while select.select([self._fd], [], [], 0)[0]:
            chunk = os.read(self._fd, 1 << 16)
            if not chunk or len(self._buffer) > _MAX_MESSAGE:
                return
            self._buffer += chunk

    def _sandbox_words(self) -> str:
        """What reached fd 2 before the worker said anything: written before user code ran."""
        if self._heard or self._process.stderr is None:
            return ""
        said = b""
        while len(said) < _MAX_SANDBOX_WORDS and select.select([self._process.stderr], [], [], 0)[0]:
            chunk = os.read(self._process.stderr.fileno(), _MAX_SANDBOX_WORDS)
            if not chunk:
                break
            said += chunk
        text = " ".join(said.decode(errors="replace").split())[:_MAX_SANDBOX_WORDS]
        return f" before it said anything: {text}" if text else ""

    def _parse(self, line: bytes) -> dict[str, Any] | Ended:
        body = protocol.opened(self._key, line)
        if body is None:
            return self._end(
                "protocol",
                f"wrote a message the worker did not sign (the code under test writing to its channel?): {line[:80]!r}",
            )
        try:
            message = json.loads(body)
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
        if self._process.stderr is not None:
            self._process.stderr.close()
        _live_workers.discard(self._process.pid)
        _kill_orphans()
        self._release_account()
        os.close(self._fd)
        os.close(self._exited)

    def __enter__(self) -> Worker:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
