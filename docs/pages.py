"""Writing a generated page, or checking that the committed one is current."""

from __future__ import annotations

import difflib
import sys
from pathlib import Path
from typing import Callable


def write_or_check(
    page: Path, text: str, check: bool, script: str, normalise: Callable[[str], str] = lambda text: text
) -> int:
    """Writes `text` to `page`; with `check`, returns 1 (and says so) when they differ."""
    if not check:
        page.write_text(text)
        return 0
    current = page.read_text() if page.is_file() else ""
    if normalise(current) != normalise(text):
        print(f"{script}: docs/{page.name} is stale; run it without --check", file=sys.stderr)
        diff = difflib.unified_diff(
            normalise(current).splitlines(), normalise(text).splitlines(), "committed", "fresh", lineterm=""
        )
        print("\n".join(list(diff)[:80]), file=sys.stderr)
        return 1
    return 0
