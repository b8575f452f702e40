"""The CLI on the course preset: the embedded models by name, clean answers, the notebook."""

from __future__ import annotations

import pytest

from tests.cli.running import run_cli

pytestmark = pytest.mark.slow  # the shipped models, at the course's sizes




@pytest.mark.parametrize("name", ["ko-base", "ko-chat"])
def test_compare_accepts_the_embedded_model_names(
    capsys: pytest.CaptureFixture[str], name: str
) -> None:
    code, out, err = run_cli(capsys, "compare", "--model", name, "--new-tokens", "4")
    assert code == 0, err
    assert out.startswith(f"Model: {name}: ")
    assert "tokens fed (formula)" in out


def test_compare_runs_the_base_model_by_default(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "compare", "--new-tokens", "4")
    assert code == 0 and out.startswith("Model: ko-base: ")
    assert "Preset: course; prompt: P=183 tokens, N=4" in out


def test_compare_notebook_preset_is_the_seed_notebook(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "compare", "--preset", "notebook")
    assert code == 0
    assert "Preset: notebook; prompt: P=16 tokens, N=64 new tokens" in out
    assert "tokens fed (formula)                   79         3,040" in out  # 16+63, 16·64+2016


def test_a_prompt_cut_by_tokens_is_cut_on_a_character(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "compare", "--prompt-tokens", "16", "--new-tokens", "4")
    assert code == 0
    assert "Note: the lab text is cut to 15 tokens at a character boundary (16 asked" in out
    assert "P=15 tokens" in out
    assert "\ufffd" not in out


def test_sample_prints_clean_answers(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "sample")
    assert code == 0 and out.startswith("Model: ko-chat: ")
    assert "\ufffd" not in out
    table = out.split("most frequent answers")[1]
    for role in ("user", "assistant", "<|im_start|>", "<|im_end|>"):
        assert role not in table
    answers = [a.split("× ", 1)[1] for line in table.splitlines() for a in line.split("; ")
               if "× '" in a]
    assert answers and not any(a.strip("'").startswith(("user", "assistant")) for a in answers)
    assert ("settings: ko-chat · T 0.3, 0.85, 1.5 · top-k off · top-p 0.85 · penalty 1 · "
            "seed 42 · 30 samples · ≤ 32 tokens") in out


def test_paged_rows_say_what_they_hold(capsys: pytest.CaptureFixture[str]) -> None:
    # One timed round, no warm-up: the bytes are the same for any number of rounds.
    code, out, _ = run_cli(capsys, "compare", "--cache", "paged", "--block-size", "7",
                           "--repeats", "1", "--warmup", "0")
    assert code == 0
    row = next(line for line in out.splitlines() if "KV allocated (measured)" in line)
    assert "516,096" in row
    assert "blocks the rows hold (the pool's storage: 917,504 bytes)" in row
