"""The generated pages of docs/ match what their generators write now."""

from __future__ import annotations

import reference_pages
import walkthrough_page


def test_command_and_schema_references_are_current():
    assert reference_pages.main(["--check"]) == 0, "run: ./pants run docs/reference_pages.py"


def test_walkthrough_matches_a_fresh_run():
    assert walkthrough_page.main(["--check"]) == 0, "run: ./pants run docs/walkthrough_page.py"
