"""A clone is complete: nothing points outside the repository, and retraining says what it needs."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from kvstudio.files.resources import MODELS_DIR

REPO_ROOT = Path(__file__).resolve().parents[2]

OUTSIDE = "../" + "shared"  # the development machine's folder next to the clone
TEXT_SUFFIXES = {".py", ".md", ".toml", ".json", ".txt", ".cfg", ".ini", ".yml", ".yaml", ""}


def tracked_text_files() -> list[Path]:
    try:
        listed = subprocess.run(
            ["git", "ls-files"], cwd=REPO_ROOT, capture_output=True, text=True, check=True
        ).stdout.splitlines()
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    paths = [REPO_ROOT / name for name in listed]
    return [p for p in paths if p.is_file() and p.suffix in TEXT_SUFFIXES]


def test_no_file_points_outside_the_repository() -> None:
    offenders = []
    for path in tracked_text_files():
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        if OUTSIDE in text:
            offenders.append(str(path.relative_to(REPO_ROOT)))
    assert not offenders, f"these files point to {OUTSIDE}, which a clone lacks: {offenders}"


def test_the_data_sources_are_documented_in_the_repository() -> None:
    text = (REPO_ROOT / "docs" / "data.md").read_text(encoding="utf-8")
    for source in ("songys/Chatbot_data", "songys/Question_pair", "warnikchow/paraKQC",
                   "kakaobrain/KorNLUDatasets"):
        assert source in text
    assert "CC BY-SA 4.0" in text and "MIT" in text
    for name in ("ko-chat", "ko-base"):
        card = MODELS_DIR / name / "MODEL_CARD.md"
        if card.is_file():
            assert "docs/data.md" in card.read_text(encoding="utf-8")


def test_training_commands_take_the_data_folder_as_an_argument(
    capsys: pytest.CaptureFixture[str],
) -> None:
    pytest.importorskip("kvstudio.cli.tools.train")
    from kvstudio.cli.main import main

    with pytest.raises(SystemExit) as exit_info:
        main(["train", "tokenizer", "--out", "unused"])
    assert exit_info.value.code == 2
    assert "--data" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["train", "pretrain", "--help"])
    assert "chatbot_data/ChatbotData.csv" in capsys.readouterr().out
