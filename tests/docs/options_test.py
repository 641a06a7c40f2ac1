"""Every option the README and the pages of docs/ set exists, and says what they say.

The `[witness-gate]` options of the plugin are listed, with their help, in docs/targets.md
(generated from the plugin, and checked current by the plugin suite); the
`[tool.witness-gate]` keys of the runner are the ones its configuration parser knows."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from witness_gate.config import parse_config

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def toml_blocks() -> list[tuple[str, str]]:
    return [(page.name, block) for page in PAGES for block in re.findall(r"```toml\n(.*?)```", page.read_text(), re.S)]


def plugin_options() -> dict[str, str]:
    rows = re.findall(
        r"^\| `--witness-gate-([a-z-]+)` \| [^|]* \| (.*) \|$", (ROOT / "docs/targets.md").read_text(), re.M
    )
    return {name.replace("-", "_"): text for name, text in rows}


def test_the_pages_set_options_of_both_kinds():
    tables = [(page, tomllib.loads(block)) for page, block in toml_blocks()]
    assert {page for page, table in tables if "witness-gate" in table} == {"pants.md", "adopt.md"}
    assert {page for page, table in tables if "witness-gate" in table.get("tool", {})} >= {"adopt.md", "replay.md"}


@pytest.mark.parametrize("page, block", toml_blocks())
def test_every_option_a_page_sets_exists(page: str, block: str):
    known = plugin_options()
    table = tomllib.loads(block)
    for key in table.get("witness-gate", {}):
        assert key in known, f"{page}: [witness-gate] {key} is no option of the plugin"
    if "witness-gate" in table.get("tool", {}):
        parse_config(block.encode(), page)  # refuses an unknown key or a bad value


def test_the_skip_option_says_what_the_gate_does_with_it():
    assert plugin_options()["skip"].startswith("Refused: the gate has no off switch.")
    page = " ".join((ROOT / "docs/pants.md").read_text().split())  # as read, whatever the line breaks
    assert "`[witness-gate].skip` (which Pants gives every test tool) makes `pants test` fail" in page
