"""The upload served as the latest is the one the customer sent last.

Catches `upload_inbox` taking the first name a directory lists for the newest file: right
on a file system that lists new files first, wrong on one that lists in creation order or
by a hash of the names.
"""

import shutil
import tempfile

from hypothesis import strategies as st

import witness_gate
from upload_inbox import latest_upload, store_upload

uploads = st.lists(st.text(alphabet="abcdefgh", min_size=1, max_size=8), min_size=1, max_size=4, unique=True)


@witness_gate.property(payloads=uploads)
def prop_latest_upload_is_the_last_sent(bodies: list) -> bool:
    spool = tempfile.mkdtemp(prefix="inbox-")
    try:
        for body in bodies:
            store_upload(spool, body)
        return latest_upload(spool) == bodies[-1]
    finally:
        shutil.rmtree(spool, ignore_errors=True)
