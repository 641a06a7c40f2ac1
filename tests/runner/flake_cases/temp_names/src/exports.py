"""Nightly exports: each report is rendered to a temporary file, then published by name."""

from __future__ import annotations

import os
import tempfile


def render(reports: dict[str, str]) -> dict[str, str]:
    """Report title -> published file name; published in title order."""
    rendered = {}
    with tempfile.TemporaryDirectory() as scratch:
        for title, body in reports.items():
            handle, path = tempfile.mkstemp(dir=scratch, suffix=".csv")
            with os.fdopen(handle, "w") as out:
                out.write(body)
            rendered[path] = title
        # BUG: publishes in order of the temporary names (random letters), meant title order.
        return {rendered[path]: f"{index:02d}-{rendered[path]}.csv" for index, path in enumerate(sorted(rendered))}
