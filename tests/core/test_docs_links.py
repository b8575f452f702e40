"""The README stays a screen long and every page it sends a reader to exists.

The manual lives in docs/*.md, one click from the README; a moved section or a renamed
heading must not leave a link pointing nowhere. `.ci/run` runs the README's test line,
so that line must stay where its grep finds it.
"""

from __future__ import annotations

import re
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]

README = REPO_ROOT / "README.md"
CI_TEST_LINE = re.compile(r"^python3 -m venv .*python -m pytest", re.MULTILINE)  # as .ci/run greps
FENCE = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)
LINK = re.compile(r"\]\(([^)\s]+)\)")
HEADING = re.compile(r"^#+ (.*)$", re.MULTILINE)


def pages() -> list[Path]:
    return [README, *sorted((REPO_ROOT / "docs").glob("*.md"))]


def github_anchor(heading: str) -> str:
    """The id GitHub gives a heading: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    text = FENCE.sub("", page.read_text(encoding="utf-8"))
    return {github_anchor(h) for h in HEADING.findall(text)}


def test_readme_fits_on_a_screen_and_keeps_the_ci_test_line() -> None:
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 250
    assert len(CI_TEST_LINE.findall(text)) == 1


def test_every_relative_link_and_anchor_resolves() -> None:
    broken = []
    for page in pages():
        for link in LINK.findall(FENCE.sub("", page.read_text(encoding="utf-8"))):
            if re.match(r"^[a-z]+:", link):
                continue  # https:, mailto:
            path, _, anchor = link.partition("#")
            target = (page.parent / path).resolve() if path else page.resolve()
            if not target.exists():
                broken.append(f"{page.name}: {link} (no such file)")
            elif anchor and target.suffix == ".md" and anchor not in anchors(target):
                broken.append(f"{page.name}: {link} (no such heading)")
    assert not broken, broken


def test_every_docs_page_is_one_click_from_the_readme() -> None:
    linked = {(README.parent / path).resolve()
              for path in (link.partition("#")[0] for link in LINK.findall(README.read_text(
                  encoding="utf-8"))) if path}
    unlinked = [p.name for p in pages()[1:] if p.resolve() not in linked]
    assert not unlinked, f"docs pages the README does not link: {unlinked}"
