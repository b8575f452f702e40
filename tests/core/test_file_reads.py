"""Every text or JSON file the app reads goes through `small_files` (issue 19.4): a regular
file only, never more than a stated size, and a message that names the file.

A FIFO that could hang a reader, or ``/dev/zero`` that could fill memory, is never
opened here by code that might not be capped: the cases use a link to ``/dev/null``
(a device that reads as empty) and sparse files just past each cap.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from kvstudio.engine import small_files, tokenizer
from kvstudio.engine.config import ModelConfig
from kvstudio.engine.tokenizer import TextTokenizer
from kvstudio.training import data, evaluate, export

PACKAGE = Path(__file__).resolve().parents[2] / "kvstudio"
# Readers that are not text or JSON files a user points at, each for its reason.
NOT_TEXT_FILES = {
    "engine/small_files.py": "the one capped reader itself",
    "files/checkpoints.py": "weights: torch.load / safetensors, read by their own loaders",
    "files/pth.py": "weights: a .pth pickle for torch.load; its first MiB for pickletools",
}
READS = re.compile(r"\.read_text\(|\.read_bytes\(|json\.load\(|\bopen\([^)]*(\"r|encoding)")


def _sparse(path: Path, size: int) -> Path:
    with path.open("wb") as fh:
        fh.truncate(size)  # no disk used
    return path


def test_no_module_reads_a_file_around_the_capped_reader() -> None:
    found = []
    for source in sorted(PACKAGE.rglob("*.py")):
        name = source.relative_to(PACKAGE).as_posix()
        if name in NOT_TEXT_FILES:
            continue
        for number, line in enumerate(source.read_text(encoding="utf-8").splitlines(), 1):
            code = line.split("#")[0]
            if READS.search(code) and "/proc/meminfo" not in code:
                found.append(f"{name}:{number}: {line.strip()}")
    assert found == [], "read these through kvstudio.engine.small_files:\n" + "\n".join(found)


def test_a_tokenizer_file_is_capped(tmp_path: Path) -> None:
    huge = _sparse(tmp_path / "tokenizer.json", 16 * 1024 * 1024 + 1)
    with pytest.raises(ValueError, match=r"tokenizer\.json is larger than 16 MiB .*Qwen3"):
        TextTokenizer.from_file(huge)
    assert tokenizer.MAX_TOKENIZER_BYTES == 16 * 1024 * 1024  # the cap the file was just past
    device = tmp_path / "device" / "tokenizer.json"
    device.parent.mkdir()
    device.symlink_to("/dev/null")
    with pytest.raises(ValueError, match="not a regular file"):
        TextTokenizer.from_file(device.parent)


def test_training_data_and_prompts_are_read_capped(tmp_path: Path) -> None:
    chat_file = tmp_path / data.CHAT_FILE
    chat_file.parent.mkdir(parents=True)
    chat_file.symlink_to("/dev/null")
    with pytest.raises(ValueError, match=r"ChatbotData\.csv is not a regular file"):
        data.read_chat_pairs(tmp_path)
    prompts = tmp_path / "prompts"
    prompts.mkdir()
    (prompts / "lab_long.txt").symlink_to("/dev/null")
    with pytest.raises(ValueError, match=r"lab_long\.txt is not a regular file"):
        evaluate.read_prompts(prompts)


def test_a_training_report_is_read_as_json_with_its_name(tmp_path: Path) -> None:
    (tmp_path / "report.json").write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    with pytest.raises(ValueError, match=r"report\.json is nested thousands of levels deep"):
        export.run_config(tmp_path / "best.pt", 6400)


def test_a_model_config_message_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"hidden_size": float("nan")}), encoding="utf-8")
    with pytest.raises(ValueError) as info:
        ModelConfig.load(path)
    assert str(info.value).startswith(f"{path}: Invalid model config: hidden_size must be")
    path.write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    with pytest.raises(ValueError, match="nested thousands of levels deep"):
        ModelConfig.load(path)


def test_read_json_refuses_numbers_too_long_to_convert(tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    path.write_text('{"head_dim": ' + "9" * 5000 + "}", encoding="utf-8")
    with pytest.raises(ValueError, match=r"x\.json cannot be read as JSON"):
        small_files.read_json(path, 1 << 20, "a config.json")


def _model_folder_with_fifo_weights(tmp_path: Path) -> Path:
    import os
    import shutil

    from kvstudio.files.resources import MODELS_DIR

    folder = tmp_path / "fifo-model"
    folder.mkdir()
    for name in ("config.json", "tokenizer.json"):
        shutil.copy(MODELS_DIR / "ko-draft" / name, folder / name)
    os.mkfifo(folder / "model.safetensors")  # nobody writes: opening it would block forever
    return folder


@pytest.mark.skipif(not hasattr(__import__("os"), "mkfifo"), reason="needs FIFOs (POSIX)")
def test_weights_that_are_a_fifo_or_a_device_are_refused_at_once(tmp_path: Path) -> None:
    """Issue 32.1: safetensors blocked on a FIFO holding the GIL (the window froze, close too)."""
    import subprocess
    import sys

    folder = _model_folder_with_fifo_weights(tmp_path)
    pth = tmp_path / "fifo.pth"
    __import__("os").mkfifo(pth)
    device = tmp_path / "zero.pth"
    device.symlink_to("/dev/zero")
    # In a child with a timeout: a regression hangs the child, not the suite.
    code = (
        "import sys\n"
        "from kvstudio.files.checkpoints import load_any\n"
        "for path in sys.argv[1:]:\n"
        "    try:\n"
        "        load_any(path)\n"
        "    except ValueError as exc:\n"
        "        print(exc)\n"
    )
    done = subprocess.run([sys.executable, "-c", code, str(folder), str(pth), str(device)],
                          capture_output=True, text=True, timeout=120)
    lines = done.stdout.splitlines()
    assert done.returncode == 0 and len(lines) == 3, done.stderr
    for line in lines:
        assert "is not a regular file" in line and "does not exist" not in line, line
