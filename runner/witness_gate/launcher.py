"""What runs between the runner and bubblewrap: limits, and under root an unprivileged user.

bubblewrap started by root makes a user namespace that maps the worker's user to host
root: the code under test is then the owner of every root-owned file the kernel exposes
(`/proc/sys/kernel/core_pattern` among them, which runs a program as host root). So a
worker is never started by root. This small program, started by the runner for each worker
(and by nothing else), does before it becomes bubblewrap:

- resource limits on the worker's processes, open files, file size, memory and core files,
  so that exhausting them fails the worker, never the runner; and the kernel's
  out-of-memory killer told to pick the worker's processes first;
- under root only: it moves itself into the worker's control groups (`cgroups`: one budget
  of memory and processes for all the worker starts);
- under root only: the paths the worker reads (the interpreter, the runner's import path,
  the tree, the request) may lie under directories only root can enter (`/root`, a
  `mkdtemp`), and bubblewrap opens every source as the user the worker runs as. So, in a
  mount namespace of its own (private: nothing reaches the host's), it opens each one, mounts
  a fresh tmpfs on a directory no source lies above (`view_root`: `/tmp` as a rule) and binds
  each path there as `<view>/<n>`, which the runner named in bubblewrap's arguments (a bind
  carries the mounts below its source, so the view must not lie below one); then it drops
  to the worker's unprivileged user and group (one of its own: the process limit counts a
  user's processes) for good (no supplementary groups, no capabilities left) and executes
  bubblewrap, whose user namespace is then an unprivileged one: no id inside maps to host root.

It imports nothing of the runner's and takes one JSON argument: {"limits": {name: value},
"cgroups": [directory, ...], "user": [uid, gid] or null, "view_root": directory or null,
"view": [path, ...], "argv": [...]}.
"""

from __future__ import annotations

import ctypes
import json
import os
import resource

# Directories every system has that only root may write and anyone may enter.
_VIEW_ROOTS = ("/tmp", "/run", "/mnt")
_CLONE_NEWNS = 0x00020000
_OOM_FIRST = "1000"
_MS_NOSUID, _MS_NODEV, _MS_BIND, _MS_REC, _MS_PRIVATE = 0x2, 0x4, 0x1000, 0x4000, 0x40000


def view_root(sources: list[str]) -> str:
    """Where the view goes (pure): the first of `_VIEW_ROOTS` that no source is or lies above."""
    for root in _VIEW_ROOTS:
        if not any(root == source or root.startswith(source.rstrip("/") + "/") for source in sources):
            return root
    raise OSError(f"every place for the worker's view lies inside a path it reads ({', '.join(sources)})")


def view_path(root: str, index: int) -> str:
    """Where the `index`-th viewed path is, for bubblewrap."""
    return f"{root}/{index}"


def _checked(result: int, what: str) -> None:
    if result != 0:
        error = ctypes.get_errno()
        raise OSError(error, f"{what}: {os.strerror(error)}")


def _mount_view(root: str, paths: list[str]) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    _checked(libc.unshare(_CLONE_NEWNS), "unshare(CLONE_NEWNS)")
    _checked(libc.mount(None, b"/", None, _MS_REC | _MS_PRIVATE, None), "making the mounts private")
    # Opened in the new namespace (a bind takes its source from the caller's own mounts), and
    # before the view covers its directory.
    opened = [os.open(path, os.O_PATH | os.O_CLOEXEC) for path in paths]
    _checked(
        libc.mount(b"witness-gate-view", root.encode(), b"tmpfs", _MS_NOSUID | _MS_NODEV, b"mode=0755,size=1m"),
        f"tmpfs on {root}",
    )
    for index, descriptor in enumerate(opened):
        target = view_path(root, index)
        if os.path.isdir(f"/proc/self/fd/{descriptor}"):
            os.mkdir(target, 0o755)
        else:
            os.close(os.open(target, os.O_CREAT | os.O_WRONLY, 0o644))
        _checked(
            libc.mount(f"/proc/self/fd/{descriptor}".encode(), target.encode(), None, _MS_BIND | _MS_REC, None),
            f"binding {paths[index]}",
        )
        os.close(descriptor)


def main(spec_text: str) -> None:
    spec = json.loads(spec_text)
    for name, value in spec["limits"].items():
        resource.setrlimit(getattr(resource, name), (value, value))
    with open("/proc/self/oom_score_adj", "w") as score:  # raising it needs no privilege
        score.write(_OOM_FIRST)
    for group in spec["cgroups"]:
        with open(os.path.join(group, "cgroup.procs"), "w") as members:
            members.write(str(os.getpid()))
    if spec["user"] is not None:
        uid, gid = spec["user"]
        _mount_view(spec["view_root"], spec["view"])
        os.setgroups([])
        os.setresgid(gid, gid, gid)
        os.setresuid(uid, uid, uid)  # every capability goes with the last root id
        if os.geteuid() == 0 or os.getegid() == 0:
            raise SystemExit("witness-gate launcher: still root after dropping privileges")
    os.execv(spec["argv"][0], spec["argv"])
