"""Service settings assembled from a drop-in directory.

Each settings update is written to the drop-in directory as it arrives, one file per
update, and the effective settings are the files applied oldest first, so the newest
update wins. The directory is read with os.listdir, reversed, because on the developer's
machine (/tmp is a tmpfs, which lists the newest file first) that gave the oldest first.
Other file systems list in other orders (ext4 by a hash of the names), and there an
older update wins.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile


def _drop_in(directory: str, update: dict) -> None:
    fd, _ = tempfile.mkstemp(prefix="update-", suffix=".json", dir=directory)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        json.dump(update, handle)


def effective_settings(defaults: dict, updates: list[dict]) -> dict:
    """The defaults with every update applied in the order they arrived."""
    directory = tempfile.mkdtemp(prefix="drop-in-")
    try:
        for update in updates:
            _drop_in(directory, update)
        settings = dict(defaults)
        for name in reversed(os.listdir(directory)):  # bug: taken for newest first, as tmpfs lists
            with open(os.path.join(directory, name), encoding="utf-8") as handle:
                settings.update(json.load(handle))
        return settings
    finally:
        shutil.rmtree(directory, ignore_errors=True)
