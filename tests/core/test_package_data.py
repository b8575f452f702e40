"""The package carries what it runs on, and random weights are only ever asked for.

`.ci/run` builds the wheel and runs it from a folder outside the clone; these tests
check the same promises quickly: every file the app reads at run time lies inside
the package and is matched by pyproject's package-data globs, a package without its
models is one clear error, and ``--model random`` is labelled wherever it is shown.
"""

from __future__ import annotations

import fnmatch
import subprocess
from pathlib import Path

import pytest

from kvstudio.cli.main import main
from kvstudio.files import checkpoints
from kvstudio.files.resources import (
    FONT_PATH,
    MODELS_DIR,
    PROMPTS_DIR,
    RESOURCES_DIR,
    TRANSLATIONS_DIR,
)

tomllib = pytest.importorskip("tomllib")  # Python 3.11+

REPO_ROOT = Path(__file__).resolve().parents[2]
PACKAGE = REPO_ROOT / "kvstudio"


def test_the_resources_are_found_inside_the_package() -> None:
    assert RESOURCES_DIR == PACKAGE / "resources"
    assert FONT_PATH.is_file() and (TRANSLATIONS_DIR / "kvstudio_ko.qm").is_file()
    assert (PROMPTS_DIR / "lab_long.txt").is_file()
    for name in ("ko-base", "ko-chat", "ko-draft"):
        for file in ("config.json", "model.safetensors", "tokenizer.json"):
            assert (MODELS_DIR / name / file).is_file()
    assert not (REPO_ROOT / "resources").exists(), "run-time files belong in kvstudio/resources"


def test_package_data_globs_cover_every_run_time_file() -> None:
    """Every tracked file under kvstudio/resources but the translation source is in the wheel."""
    globs = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))[
        "tool"]["setuptools"]["package-data"]["kvstudio"]
    try:
        listed = subprocess.run(
            ["git", "ls-files", "kvstudio/resources"], cwd=REPO_ROOT, capture_output=True,
            text=True, check=True,
        ).stdout.split()
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    assert listed
    for path in listed:
        inside = Path(path).relative_to("kvstudio").as_posix()
        matched = any(fnmatch.fnmatch(inside, g) and inside.count("/") == g.count("/")
                      for g in globs)
        assert matched or path.endswith(".ts"), f"{path} would be missing from the wheel"


def no_models(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """A package installed without its models: an empty models folder."""
    empty = tmp_path / "models"
    empty.mkdir()
    monkeypatch.setattr(checkpoints, "MODELS_DIR", empty)
    monkeypatch.setattr("kvstudio.files.loaded.MODELS_DIR", empty)
    return empty


def test_a_missing_model_is_an_error_never_random_weights(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    empty = no_models(monkeypatch, tmp_path)
    with pytest.raises(ValueError, match="--model random") as caught:
        checkpoints.default_model()
    assert str(empty) in str(caught.value)


def test_the_command_says_how_to_get_the_models(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    no_models(monkeypatch, tmp_path)
    for argv in (["compare", "--new-tokens", "2"], ["compare", "--model", "ko-chat"]):
        code = main(argv)
        out, err = capsys.readouterr()
        assert code == 2, argv
        assert "is not in" in err and "--model random" in err and "Traceback" not in err
        assert "random-initialised" not in out


def test_random_weights_are_asked_for_and_labelled(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["compare", "--model", "random", "--prompt-tokens", "8", "--new-tokens", "3",
                 "--repeats", "1"])
    out, _ = capsys.readouterr()
    assert code == 0
    assert "RANDOM WEIGHTS" in out and "--model random" in out


def test_the_default_model_is_the_shipped_chat_model() -> None:
    loaded = checkpoints.default_model()
    assert not loaded.is_random and loaded.name == "ko-chat"
    assert loaded.source == MODELS_DIR / "ko-chat"
