"""docs/layout.md names every module of the runner, its worker and the Pants plugin in its
tables, and nothing that is no module: a module added, renamed or removed fails here until
the page says so."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LAYOUT = ROOT / "docs/layout.md"


def tables() -> dict[str, set[str]]:
    """Per section whose heading names a folder (`## The worker: `runner/witness_gate/worker/``),
    the modules its tables list, one a row."""
    sections = re.split(r"^## ", LAYOUT.read_text(), flags=re.M)[1:]
    listed = {}
    for section in sections:
        folder = re.match(r"[^\n]*`([\w/]+)/`\n", section)
        if folder:
            listed[folder.group(1)] = set(re.findall(r"^\| `(\w+)` \|", section, re.M))
    return listed


def modules(folder: str) -> set[str]:
    return {path.stem for path in (ROOT / folder).glob("*.py") if not path.stem.startswith("__")}


def test_the_page_has_a_table_for_each_package():
    assert set(tables()) == {"runner/witness_gate", "runner/witness_gate/worker", "rules/witness_gate_pants"}


@pytest.mark.parametrize("folder", sorted(tables()))
def test_a_table_lists_every_module_of_its_folder_and_no_other(folder: str):
    listed, present = tables()[folder], modules(folder)
    assert present, f"{folder}: no modules found (under Pants: a dependency of tests:docs)"
    assert (
        listed == present
    ), f"docs/layout.md, {folder}: missing {sorted(present - listed)}, not a module {sorted(listed - present)}"
