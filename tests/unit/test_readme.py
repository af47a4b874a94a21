"""The README is a door: short, the two commands, and links to reference pages under docs/ that exist. A
link to a page or a heading that is not there (a page renamed, a section moved) fails here, not in a
reader's browser."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
README = REPO / "README.md"
DOCS = REPO / "docs"
MAX_README_LINES = 400
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def _outside_code(text: str) -> str:
    """The text without fenced code blocks (a shell comment is not a heading, a command not a link)."""
    return re.sub(r"^```.*?^```", "", text, flags=re.M | re.S)


def _anchors(page: Path) -> set[str]:
    """GitHub's anchors for a page's headings: lower case, punctuation dropped, spaces as hyphens."""
    out = set()
    for line in _outside_code(page.read_text()).splitlines():
        if m := re.match(r"#{1,6} (.*)", line):
            slug = re.sub(r"[^\w\- ]", "", m.group(1).strip().lower()).replace(" ", "-")
            out.add(slug)
    return out


def _local_links(page: Path) -> list[str]:
    return [t for t in LINK.findall(_outside_code(page.read_text())) if not re.match(r"[a-z]+:", t)]


def test_the_readme_is_at_most_400_lines_and_names_the_two_commands():
    text = README.read_text()
    assert len(text.splitlines()) <= MAX_README_LINES, f"README.md is {len(text.splitlines())} lines"
    assert "make demo" in text and "make test" in text


@pytest.mark.parametrize("page", [README, *sorted(DOCS.glob("*.md"))], ids=lambda p: p.name)
def test_every_local_link_reaches_a_file_and_heading_that_exist(page: Path):
    broken = []
    for target in _local_links(page):
        path, _, anchor = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        if not dest.exists():
            broken.append(f"{target}: no such file")
        elif anchor and dest.suffix == ".md" and anchor not in _anchors(dest):
            broken.append(f"{target}: no heading #{anchor} in {dest.relative_to(REPO)}")
    assert not broken, f"{page.relative_to(REPO)}: " + "; ".join(broken)


def test_every_docs_page_is_linked_from_the_readme():
    linked = {(README.parent / t.partition("#")[0]).resolve() for t in _local_links(README)}
    orphans = [p.name for p in sorted(DOCS.glob("*.md")) if p.resolve() not in linked]
    assert not orphans, f"docs pages the README does not link: {orphans}"
