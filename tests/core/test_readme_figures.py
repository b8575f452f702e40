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


@pytest.mark.numeric  # seeded figures on the shipped models, printed on another CPU
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


def test_a_last_digit_float_difference_is_not_drift_but_a_count_is() -> None:
    figures = _figures()
    same = figures.same_figure
    assert same("fp16  251,904  0.00256  same", "fp16  251,904  0.00257  same")
    assert same("int4  0.80  step 17", "int4  0.81  step 17")
    assert not same("fp16  251,904  0.00256", "fp16  251,905  0.00256")  # bytes are exact
    assert not same("fp16  0.00256", "fp16  0.00290")  # more than a last-digit change
    assert not same("int4  0.80  step 17", "int4  0.80  step 18")  # counts are exact
    assert not same("246 vs 13,728", "246 vs 13,000")
