"""A PATH without some commands: one directory of links to everything else on this PATH,
for a job or launcher run on a machine that lacks them."""

from __future__ import annotations

import os
from pathlib import Path


def path_without(directory: Path, *names: str, path: str | None = None) -> str:
    """Fills `directory` with links to the commands of `path` (this PATH), first one of a
    name winning, leaving out `names`; returns it as a PATH."""
    directory.mkdir(parents=True, exist_ok=True)
    for folder in (path or os.environ["PATH"]).split(os.pathsep):
        if not Path(folder).is_dir():
            continue
        for entry in Path(folder).iterdir():
            link = directory / entry.name
            if entry.name in names or link.is_symlink() or link.exists() or not os.access(entry, os.X_OK):
                continue
            link.symlink_to(entry)
    return str(directory)
