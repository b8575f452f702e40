"""`kvstudio project` and `kvstudio compare --cache paged|int8` print their tables."""

from __future__ import annotations

import pytest

from kvstudio.cli import main


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_project_a_preset(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(
        capsys, "project", "--preset", "llama-3.1-8b", "--context", "32768", "--batch", "8"
    )
    assert code == 0
    assert "2·32·8·128·2 = 131,072" in out
    assert "34,359,738,368 bytes = 32.00 GiB" in out
    assert "without GQA (H_kv = H)             524,288    128.00 GiB" in out


def test_project_the_loaded_model_checks_a_real_run(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "project", "--context", "64", "--batch", "2")
    assert code == 0
    assert "equal ✓" in out


def test_project_mistakes_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(capsys, "project", "--preset", "gpt-5")
    assert code == 2 and "No preset 'gpt-5'" in err
    code, _, err = run_cli(capsys, "project", "--config", "/no/such/folder")
    assert code == 2 and "No config.json" in err


def test_compare_paged_and_int8(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(
        capsys,
        "compare",
        "--prompt-tokens",
        "12",
        "--new-tokens",
        "4",
        "--cache",
        "paged",
        "--samples",
        "4",
        "--sample-tokens",
        "6",
    )
    assert code == 0
    assert "identical tokens:  yes" in out and "cache bytes yes" in out
    assert "(matches)" in out and "paged chooses the dynamic cache's tokens: yes" in out
    code, out, _ = run_cli(
        capsys, "compare", "--prompt-tokens", "12", "--new-tokens", "4", "--cache", "int8"
    )
    assert code == 0
    assert "cache bytes yes" in out  # measured = T · 2·L·H_kv·(d + 2)
    int8 = next(line for line in out.splitlines() if line.strip().startswith("int8"))
    assert int8.split()[1] == int8.split()[2]  # bytes = formula
