"""Every figure the README and docs/*.md quote from the code equals what the code prints now."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow  # runs the shipped models at the course's sizes


def _figures() -> ModuleType:
    spec = importlib.util.spec_from_file_location("readme_figures", ROOT / "scripts" /
                                                  "readme_figures.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_marked_figures_equal_what_the_code_prints() -> None:
    figures = _figures()
    pages = figures.pages()
    names = {m.group(1) for page in pages for m in figures.MARKER.finditer(page.read_text())}
    assert names == set(figures.FIGURES)  # every figure is quoted somewhere, none unknown
    drifted = figures.run(pages, check=True)
    assert drifted == [], (
        "these figures no longer equal the code's output; run "
        f"`python scripts/readme_figures.py` and commit: {drifted}"
    )


def test_a_changed_figure_is_caught(tmp_path: Path) -> None:
    figures = _figures()
    page = tmp_path / "page.md"
    page.write_text("a <!-- figures:tokens-fed -->246 vs 13,000 tokens fed<!-- /figures --> b")
    figures.ROOT = tmp_path
    assert figures.run([page], check=True) == ["page.md: tokens-fed"]
    figures.run([page], check=False)
    assert "246 vs 13,728 tokens fed" in page.read_text()
    assert figures.run([page], check=True) == []
