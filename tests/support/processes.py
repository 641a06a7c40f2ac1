"""The processes of this machine that mention a path: a job that stops what it started
leaves none whose command line or working directory names its checkout or its work
directory (a Pants daemon, a pip, a worker)."""

from __future__ import annotations

import os
from pathlib import Path


def mentioning(*paths: Path | str) -> dict[int, str]:
    """Live processes (pid: command line) whose command line or working directory contains
    one of `paths`, this process and its parents aside."""
    needles = [str(path) for path in paths]
    ours = {os.getpid()}
    pid = os.getpid()
    while pid > 1:  # the test's own ancestors (pytest, Pants' sandbox) may sit in a path too
        try:
            pid = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            break
        ours.add(pid)
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) in ours:
            continue
        try:
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
            try:
                cwd = os.readlink(entry / "cwd")
            except OSError:
                cwd = ""
        except OSError:  # it ended while we looked
            continue
        if state == "Z":  # ended, not yet reaped by its parent (which is not the job's)
            continue
        if any(needle in command or cwd == needle or cwd.startswith(needle + "/") for needle in needles):
            found[int(entry.name)] = command or f"(cwd {cwd})"
    return found
