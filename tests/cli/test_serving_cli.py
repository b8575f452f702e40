"""`kvstudio serving` on the shipped ko-chat: every answer the tokens of its solo run (logits to
float32 rounding, the gap printed), prefix hits exact."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from core.rounding import EPS, ULPS

from tests.cli.running import run_cli

# The shipped chat model. The runs (marked `numeric`) compare batched against alone: rerun
# under other CPU kernels (tests/core/test_other_cpus.py); the refused inputs run no model.
pytestmark = pytest.mark.slow




@pytest.mark.numeric
def test_the_example_runs_identical_to_solo_with_radix_hits(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = run_cli(capsys, "serving", "--rounds", "1", "--policy", "continuous",
                             "--prefix-cache", "radix", "--chunk", "24", "--timeline")
    assert code == 0, err
    assert out.startswith("Model: ko-chat: ")
    assert "Times: model time per step, laid end to end; single measurements." in out
    assert out.count("same tokens as solo run: yes") == 6
    assert "same tokens as solo run: no" not in out
    # Beside each: the largest |Δlogit| against the solo run, within float32 rounding of
    # ko-chat's logits (|logit| < 40 on these answers).
    gaps = [float(g) for g in re.findall(r"solo run: yes \(max \|Δlogit\| ([0-9.e+-]+)\)", out)]
    assert len(gaps) == 6 and max(gaps) <= ULPS * EPS * 40
    assert re.search(r"same tokens as solo runs: 6 of 6 · max \|Δlogit\| [0-9.e+-]+ ", out)
    for field in ("prompt", "TTFT", "ITL p50", "p95", "end-to-end", "answer"):
        assert f" {field} " in out
    # The shared system prompt and template are 30 tokens: requests that arrive after the
    # first prefill hit exactly those (radix is token-exact).
    hits = [int(h) for h in re.findall(r"prefix hit (\d+)", out)]
    assert hits[0] == 0 and hits[2:] == [30] * 4
    assert "throughput" in out and "wasted (formula: 0)" in out and "peak blocks:" in out
    assert "timeline (P prefill" in out


@pytest.mark.numeric
def test_static_and_continuous_each_print_totals(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(capsys, "serving", "--rounds", "2", "--prefix-cache", "blocks",
                             "--block-size", "8", "--max-new-tokens", "6", "--policy", "both")
    assert code == 0, err
    assert "medians of 2 interleaved rounds (min–max)" in out
    assert "== static · b 8 · prefix blocks · max batch 8 ==" in out
    assert "== continuous · b 8 · prefix blocks · max batch 8 ==" in out
    assert out.count("same tokens as solo run: yes") == 12
    wasted = re.findall(r"(\d+) wasted \(formula: (\d+)\)", out)
    assert len(wasted) == 2 and all(a == b for a, b in wasted)
    assert int(wasted[0][0]) > 0 and wasted[1] == ("0", "0")  # static pads, continuous never
    hits = [int(h) for h in re.findall(r"prefix hit (\d+)", out)]
    assert set(hits) <= {0, 24}  # ⌊30 / 8⌋ · 8: whole blocks only


@pytest.mark.parametrize(
    ("content", "argv", "message"),
    [
        ("", (), "holds no requests"),
        ("@x 질문\n", (), "line 1: '@x' is not an arrival step"),
        ("질문\n", ("--chunk", "8", "--policy", "static"), "--chunk is chunked prefill"),
        ("질문\n", ("--blocks", "2"), "more than the budget of 2"),
    ],
    ids=["empty", "bad-k", "chunk-static", "budget"],
)
def test_bad_input_is_one_error_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, content: str, argv: tuple[str, ...],
    message: str,
) -> None:
    path = tmp_path / "requests.txt"
    path.write_text(content, encoding="utf-8")
    code, out, err = run_cli(capsys, "serving", "--requests", str(path), *argv)
    assert code == 2
    assert err.startswith("error: ") and err.count("\n") == 1 and message in err
    assert "solo run" not in out
