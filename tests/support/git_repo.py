"""A git repository in a temporary directory, driven the way a user drives one: commits,
edits, and (when it runs its own `./pants`) a pantsd to stop at the end."""

from __future__ import annotations

import os
import signal
import subprocess
from dataclasses import dataclass
from pathlib import Path


@dataclass
class Run:
    """A command the test ran in the repository: its exit status and what it printed."""

    code: int
    output: str


class GitRepo:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.commits: dict[str, str] = {}

    def git(self, *args: str) -> str:
        done = subprocess.run(
            ["git", "-c", "user.email=tests@witness-gate", "-c", "user.name=tests", *args],
            cwd=self.root,
            capture_output=True,
            text=True,
            check=True,
        )
        return done.stdout.strip()

    def commit(self, message: str, name: str | None = None) -> None:
        """Commits everything; `name` remembers the commit."""
        self.git("add", "-A")
        self.git("commit", "-q", "-m", message)
        if name:
            self.commits[name] = self.git("rev-parse", "HEAD")

    def edit(self, relative: str, old: str, new: str) -> None:
        path = self.root / relative
        text = path.read_text()
        assert old in text, f"{old!r} not in {relative}"
        path.write_text(text.replace(old, new, 1))

    def stop_pantsd(self) -> None:
        for pid_file in (self.root / ".pids").glob("*/pantsd/pid"):
            try:
                os.kill(int(pid_file.read_text()), signal.SIGTERM)
            except (ValueError, ProcessLookupError):
                pass
