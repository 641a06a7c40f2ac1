"""A freeze that expires while a test watches: written an hour ago, valid a little longer.

The expiry is the one timestamp that must follow the wall clock, so the tests that watch a
freeze run out use these steps instead of a fixed date."""

from __future__ import annotations

import json
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

_STAMP = "%Y-%m-%dT%H:%M:%SZ"


def expire_soon(freeze: Path, seconds: float) -> datetime:
    """Rewrites the freeze file to expire `seconds` from now; returns its expiry."""
    now = datetime.now(timezone.utc)
    expiry = now + timedelta(seconds=seconds)
    record = {**json.loads(freeze.read_text()), "created_at": (now - timedelta(hours=1)).strftime(_STAMP), "expires_at": expiry.strftime(_STAMP)}
    freeze.write_text(json.dumps(record))
    return expiry


def still_valid(expiry: datetime) -> bool:
    return datetime.now(timezone.utc) < expiry


def sleep_past(expiry: datetime) -> None:
    time.sleep(max(0.0, (expiry - datetime.now(timezone.utc)).total_seconds()) + 2)
