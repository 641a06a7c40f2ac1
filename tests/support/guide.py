"""The fenced blocks of docs/adopt.md that the adoption tests write and run verbatim.

A block is marked by the comment on the line before it: `<!-- file: PATH -->` (a file of the
Pants repository, or of the library both repositories share), `<!-- bazel-file: PATH -->`
(a file of the repository that uses Bazel without Pants) or `<!-- run: NAME -->` (commands).
"""

from __future__ import annotations

import re
from pathlib import Path

GUIDE = Path(__file__).resolve().parents[2] / "docs/adopt.md"
# The ledger library of the guide's section 1: its implementation, and a bug in it that the
# property catches (a credit above 5,000 counts one less).
IMPL = "src/ledger/balance.py"
BUG = ('return sum(entry["amount"]', 'return sum(entry["amount"] - (1 if entry["amount"] > 5000 else 0)')
# An honest change: the same balance, the sign taken from the other kind.
HONEST = (
    'entry["amount"] if entry["kind"] == "credit" else -entry["amount"]',
    '-entry["amount"] if entry["kind"] == "debit" else entry["amount"]',
)
# The same bug drawn from `random`: a flake of the changed code, which the base's never has.
FLAKY = (
    'return sum(entry["amount"]',
    'import random\n    return sum(entry["amount"] - (1 if entry["amount"] > 5000 and random.random() < 0.4 else 0)',
)


def guide_blocks(kind: str, section: str = "") -> dict[str, str]:
    """The guide's fenced blocks marked `<!-- KIND: NAME -->`, by name; with `section`, only
    those under the `## ` heading that starts with it."""
    text = GUIDE.read_text()
    if section:
        [text] = [part for part in re.split(r"^## ", text, flags=re.M) if part.startswith(section)]
    return dict(re.findall(rf"<!-- {kind}: (\S+) -->\n```\w*\n(.*?)```", text, re.S))


def commands(name: str) -> list[str]:
    """One shell command per logical line of a run block (backslash continuations joined)."""
    return [line.strip() for line in guide_blocks("run")[name].replace("\\\n", " ").splitlines() if line.strip()]
