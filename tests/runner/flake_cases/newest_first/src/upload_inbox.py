"""A customer's uploads, kept in a spool directory named by content, and the latest served.

Written and tested where new files list first (a tmpfs lists a directory in reverse
creation order): `latest_upload` takes the first name the directory lists. File systems
promise no order (ext4's hashed directories list by a hash of the names; a fresh
directory on many others in creation order), so elsewhere it serves an older upload.
"""

from __future__ import annotations

import hashlib
import os


def store_upload(spool: str, body: str) -> str:
    name = hashlib.sha256(body.encode()).hexdigest()[:16] + ".txt"
    with open(os.path.join(spool, name), "w", encoding="utf-8") as handle:
        handle.write(body)
    return name


def latest_upload(spool: str) -> str | None:
    names = os.listdir(spool)  # bug: "newest first" is one file system's order, not a promise
    if not names:
        return None
    with open(os.path.join(spool, names[0]), encoding="utf-8") as handle:
        return handle.read()
