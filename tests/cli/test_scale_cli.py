"""`kvstudio project` and `kvstudio compare --cache paged|int8` print their tables."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvstudio.files.resources import MODELS_DIR
from tests.cli.running import run_cli


def test_project_a_preset(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(
        capsys, "project", "--preset", "llama-3.1-8b", "--context", "32768", "--batch", "8"
    )
    assert code == 0
    assert "2·32·8·128·2 = 131,072" in out
    assert "34,359,738,368 B (32.00 GiB)" in out
    assert "without GQA (H_kv = H)             524,288       137,438,953,472" in out
    assert "GiB" not in out.split("what changes")[1]  # the table: bytes only, one unit


def test_project_uses_the_config_dtype(capsys: pytest.CaptureFixture[str]) -> None:
    """ko-base's config says float32: 4 bytes a number, as the window and the cache say."""
    code, out, _ = run_cli(
        capsys, "project", "--config", str(MODELS_DIR / "ko-base"), "--context", "100",
        "--batch", "1",
    )
    assert code == 0
    assert "2·4·2·32·4 = 2,048 B (32-bit, the config dtype)" in out
    assert "= 204,800 B" in out
    table = out.split("what changes")[1].splitlines()[1:]
    rows = {line[:30].strip(): line[30:].split() for line in table}
    assert rows["8-bit cache (scales incl.)"] == ["544", "54,400"]  # the quantized lab's 544


def test_project_window_keeps_w_minus_one(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(
        capsys, "project", "--preset", "mistral-7b-v0.1", "--context", "8192", "--batch", "1"
    )
    assert code == 0
    assert "keeps W − 1 = 4,095" in out
    assert f"= {4095 * 131_072:,} B" in out


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


def test_compare_paged_takes_the_paged_labs_bounds(capsys: pytest.CaptureFixture[str]) -> None:
    """--samples and --sample-tokens are the paged lab's (the window's boxes): refused, not cut."""
    for option, value, bound in (("--samples", "65", "between 1 and 64 samples"),
                                 ("--sample-tokens", "513", "between 1 and 512 tokens")):
        code, _, err = run_cli(capsys, "compare", "--cache", "paged", option, value)
        assert code == 2 and f"{option} must be {bound}, got {value}" in err


# ---- issue 19.4: a config's numbers are checked, the file and the field named ----------------
GOOD = {
    "hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32,
    "num_key_value_heads": 8, "head_dim": 128, "intermediate_size": 14336,
    "vocab_size": 128256, "max_position_embeddings": 131072,
}
FIELDS = ("num_key_value_heads", "head_dim", "intermediate_size", "vocab_size",
          "max_position_embeddings")


def _config(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "config.json"
    path.write_text(text, encoding="utf-8")
    return path


def _with(field: str, value: str) -> str:
    """GOOD with `field` set to the JSON text `value` (Infinity, NaN: Python's json reads them)."""
    text = json.dumps({**GOOD, field: "@"})
    return text.replace('"@"', value)


def _project_error(capsys: pytest.CaptureFixture[str], path: Path) -> str:
    code, out, err = run_cli(capsys, "project", "--config", str(path))
    assert code == 2, out
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in err
    return lines[0]


@pytest.mark.parametrize("field", FIELDS)
@pytest.mark.parametrize("value", ["Infinity", "[1, 2]", '{"a": 1}'])
def test_a_config_number_of_the_wrong_kind_is_one_error_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, field: str, value: str
) -> None:
    path = _config(tmp_path, _with(field, value))
    assert f"error: {path}: {field} must be a whole number, got" in _project_error(capsys, path)


@pytest.mark.parametrize("field", ["head_dim", "num_key_value_heads", "vocab_size"])
def test_a_negative_config_number_is_refused_not_projected(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, field: str
) -> None:
    path = _config(tmp_path, _with(field, "-32"))
    line = _project_error(capsys, path)
    assert line == f"error: {path}: {field} must be between 1 and 2,147,483,647, got -32."


@pytest.mark.parametrize(
    ("field", "value", "shown"),
    [
        ("num_hidden_layers", "true", "True"),  # a bool is an int in Python: not here
        ("head_dim", "1e30", "1e+30"),  # refused like a 1e30 hidden_size
        ("hidden_size", "1e30", "1e+30"),
        ("head_dim", "NaN", "nan"),
        ("intermediate_size", '"abc"', "'abc'"),
    ],
)
def test_config_messages_name_the_file_and_the_field(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, field: str, value: str, shown: str
) -> None:
    path = _config(tmp_path, _with(field, value))
    assert _project_error(capsys, path) == (
        f"error: {path}: {field} must be a whole number, got {shown}."
    )


def test_deeply_nested_config_json_is_one_error_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    for text in ("[" * 100_000 + "]" * 100_000, _with("head_dim", "[" * 50_000 + "]" * 50_000)):
        path = _config(tmp_path, text)
        assert _project_error(capsys, path) == (
            f"error: {path} is nested thousands of levels deep; it is damaged or not a "
            "transformers config.json."
        )
