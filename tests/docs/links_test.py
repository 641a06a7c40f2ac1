"""Every relative link of README.md and docs/*.md points at a file that exists, and at a
heading of that page when it names an anchor (spelled as GitHub spells heading anchors).

Under Pants a linked file must also be among this test's dependencies (tests/BUILD, the
`docs` target): a link to a file that is not fails as broken."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"\]\(([^)\s]+)\)")


def without_code_blocks(text: str) -> str:
    return re.sub(r"^```.*?^```", "", text, flags=re.M | re.S)


def prose(text: str) -> str:
    """The text links are read from: no code blocks, no inline code (a regular expression
    in backticks is no link)."""
    return re.sub(r"`[^`\n]*`", "", without_code_blocks(text))


def anchor(heading: str) -> str:
    """GitHub's anchor of a heading: a link's text kept, lower case, punctuation dropped
    but for hyphens and underscores, spaces as hyphens."""
    text = re.sub(r"\[([^]]*)\]\([^)]*\)", r"\1", heading).strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    """The anchors of a page's headings; a repeated heading gets `-1`, `-2`, ... as on GitHub."""
    seen: Counter[str] = Counter()
    found = set()
    for heading in re.findall(r"^#{1,6} +(.+?) *$", without_code_blocks(page.read_text()), re.M):
        slug = anchor(heading)
        found.add(slug if not seen[slug] else f"{slug}-{seen[slug]}")
        seen[slug] += 1
    return found


def broken(page: Path, link: str) -> str | None:
    """Why a link of the page leads nowhere, or None."""
    if re.match(r"[a-z][a-z0-9+.-]*:", link):  # https:, mailto:: not this test's to check
        return None
    path, _, fragment = link.partition("#")
    target = (page.parent / path).resolve() if path else page
    if not target.exists():
        return f"{link}: no such file"
    if fragment and (target.suffix != ".md" or fragment not in anchors(target)):
        return f"{link}: no heading of {target.name} has the anchor #{fragment}"
    return None


def test_the_pages_have_links_to_check():
    assert sum(len(LINK.findall(prose(page.read_text()))) for page in PAGES) > 20


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(ROOT)))
def test_every_relative_link_leads_to_a_file_and_heading_that_exist(page: Path):
    problems = [problem for link in LINK.findall(prose(page.read_text())) if (problem := broken(page, link))]
    assert not problems, f"{page.relative_to(ROOT)}: " + "; ".join(problems)


@pytest.mark.parametrize(
    "heading, expected",
    [
        ("The pull-request gate: `witness-gate review`", "the-pull-request-gate-witness-gate-review"),
        ("4. Under Bazel", "4-under-bazel"),
        ("`flake`: the same witness fails on some replays", "flake-the-same-witness-fails-on-some-replays"),
        ("See [the policy](policy.md) first", "see-the-policy-first"),
    ],
)
def test_an_anchor_is_spelled_as_github_spells_it(heading: str, expected: str):
    assert anchor(heading) == expected
