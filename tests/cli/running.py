"""Running the ``kvstudio`` command in-process, as the CLI tests do.

Owns `run_cli` (exit code, stdout, stderr) and `one_error_line` (a refused command: exit
status 2 and exactly one ``error:`` line on stderr, no traceback), so every CLI test reads
a refusal the same way; and `shipped_model_with`, a copy of a shipped model whose
config.json says something else.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from kvstudio.cli.main import main
from kvstudio.files.checkpoints import MODELS_DIR


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """`kvstudio argv` in this process: (exit code, stdout, stderr)."""
    try:
        code = main(list(argv))
    except SystemExit as exc:  # argparse's own errors: one `error:` line, status 2
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def one_error_line(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    """The one ``error:`` line a refused `kvstudio argv` prints (exit status 2 asserted)."""
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse's mistakes
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    assert code == 2, (out, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert "Traceback" not in err
    return lines[0]


def shipped_model_with(tmp_path: Path, name: str, field: str, value: Any) -> Path:
    """A copy of the shipped model `name` in `tmp_path` with config.json's `field` = `value`
    (skips the test where the model is not shipped)."""
    source = MODELS_DIR / name
    if not source.is_dir():
        pytest.skip(f"no shipped {name}")
    folder = tmp_path / name
    shutil.copytree(source, folder)
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    config[field] = value
    (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
    return folder
