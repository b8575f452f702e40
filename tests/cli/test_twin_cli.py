"""`kvstudio twin`: without the llama extra it says what to install, before loading a model;
with it, the table and the ratio (the engines step of CI)."""

from __future__ import annotations

import sys

import pytest

from kvstudio.cli.main import main


def test_without_the_llama_extra_it_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "llama_cpp", None)  # as if it were not installed
    assert main(["twin"]) == 2
    out, err = capsys.readouterr()
    assert "pip install 'kvstudio[llama]'" in err and "Traceback" not in err
    assert "Model:" not in out  # said before any model loads


def test_a_prompt_too_short_for_its_checks_is_one_error_line(
    capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("llama_cpp")
    pytest.importorskip("gguf")
    assert main(["twin", "--model", "random", "--prompt-tokens", "16", "--new-tokens", "2"]) == 2
    assert "P > 40" in capsys.readouterr().err


@pytest.mark.engines
@pytest.mark.slow
def test_the_table_and_the_ratio(capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("llama_cpp")
    pytest.importorskip("gguf")
    assert main(["twin", "--prompt-tokens", "48", "--new-tokens", "8", "--repeats", "2"]) == 0
    out = capsys.readouterr().out
    assert "✓ 8/8" in out and "2,048" in out and "(n_p_eval)" in out
    assert "ours / llama.cpp = " in out and "the median of 2 interleaved rounds" in out
