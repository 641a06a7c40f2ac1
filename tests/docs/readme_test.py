"""The README a newcomer reads first: short, the labels as the runner has them, and the
two commands of a fresh clone as its first code block (`.ci/run` runs the second word for
word; tests/distribution/main_job_test.py runs what the first builds)."""

from __future__ import annotations

import re
from pathlib import Path

from witness_gate import labels

README = Path(__file__).resolve().parents[2] / "README.md"
MOST_LINES = 250  # what a newcomer reads in five minutes; the rest belongs in docs/


def test_the_readme_is_at_most_250_lines():
    count = len(README.read_text().splitlines())
    assert count <= MOST_LINES, f"README.md has {count} lines: move reference material to a page of docs/"


def test_the_first_code_block_is_the_two_commands_of_a_fresh_clone():
    first = re.search(r"^```(\w*)\n(.*?)^```", README.read_text(), re.M | re.S)
    assert first, "README.md has no code block"
    assert first.groups() == ("bash", "./pants run examples/orders:gate\n./pants test ::\n")


def test_the_label_table_names_every_label_with_its_exit():
    rows = dict(re.findall(r"^\| `(\w+)` \| [^|]+ \| (\d)\b", README.read_text(), re.M))
    assert rows == {label: str(labels.run_exit_code([label], False, False)) for label in labels.LABELS}
