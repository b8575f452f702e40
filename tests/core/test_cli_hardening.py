"""The CLI refuses bad input up front (issue 14.4–14.6): exit 2 and one `error:` line, before
any model work, for sizes past the positions or the memory, non-finite settings, bad thread
counts, empty or non-UTF-8 prompts, damaged checkpoints and config files."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from kvstudio.cli import main
from kvstudio.core import experiments, limits
from kvstudio.core.backend import MiniMindBackend
from kvstudio.core.checkpoints import MODELS_DIR, load_model_folder
from kvstudio.core.config import ModelConfig
from kvstudio.core.model import MiniMindLM
from kvstudio.core.records import SamplingSettings
from kvstudio.core.stepper import Stepper
from kvstudio.core.tokenizer import TextTokenizer


def _one_error_line(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
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


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["compare", "--new-tokens", "100000"], "positions"),
        (["compare", "--prompt-tokens", "32000", "--new-tokens", "1000"], "positions"),
        (["compare", "--cache", "static", "--max-length", "10000000"], "static cache"),
        (["sweep", "--values", "8,40000"], "positions"),
        (["sample", "--temperatures", "nan"], "finite"),
        (["sample", "--temperatures", "inf"], "finite"),
        (["sample", "--temperatures", "1e-39"], "Temperature"),
        (["sample", "--repetition-penalty", "nan"], "finite"),
        (["sample", "--repetition-penalty", "1e-300"], "Repetition penalty"),
        (["compare", "--threads", "1000"], "--threads"),
        (["compare", "--threads", "1e11"], "whole number"),
        (["sample", "--prompt", ""], "prompt is empty"),
        (["compare", "--prompt", "   "], "prompt is empty"),
        (["compare", "--new-tokens", "0"], "at least 1"),
        (["compare", "--mode", "turbo"], "invalid choice"),
    ],
)
def test_mistakes_exit_2_with_one_error_line(
    capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    assert message in _one_error_line(capsys, argv)


def test_sizes_past_free_memory_are_refused_up_front(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(limits, "available_memory_bytes", lambda device="cpu": 256 * 1024**2)
    line = _one_error_line(capsys, ["sample", "--samples", "100000"])
    assert "GiB of memory" in line and "256.0 MiB is free" in line


def test_a_non_utf8_prompt_is_one_error_line(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "kvstudio", "compare", "--prompt", b"\xff\xfe".decode(
            "utf-8", "surrogateescape")],
        capture_output=True, text=True, check=False,
        env={"PYTHONPATH": str(Path(__file__).resolve().parents[2]), "LC_ALL": "C.UTF-8"},
    )
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "error: The prompt is not valid UTF-8 text; set the terminal to UTF-8 or pass the "
        "text another way."
    ]


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("hidden_size", 2**24, "GiB of memory"),  # head_dim, FFN stay 32, 704: the embedding
        ("max_position_embeddings", -5, "must be positive"),
        ("max_position_embeddings", 10**11, "GiB of memory"),
        ("hidden_size", "256", "whole number"),
        ("num_hidden_layers", True, "whole number"),
    ],
)
def test_config_sizes_are_checked_before_any_allocation(
    tmp_path: Path, field: str, value: object, message: str
) -> None:
    source = MODELS_DIR / "ko-chat"
    if not source.is_dir():
        pytest.skip("no shipped model")
    folder = tmp_path / "model"
    shutil.copytree(source, folder)
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    config[field] = value
    (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
    with pytest.raises(ValueError, match=message):
        load_model_folder(folder)


def test_nan_weights_are_reported_as_a_broken_model(
    tiny_config: ModelConfig, tokenizer: TextTokenizer
) -> None:
    model = MiniMindLM(tiny_config).init_weights(0).eval()
    with torch.no_grad():
        model.model.embed_tokens.weight[5] = float("nan")
    backend = MiniMindBackend(model, name="broken")
    ids = [5, 6, 7]
    for settings in (SamplingSettings.greedy_settings(), SamplingSettings(temperature=1.0)):
        stepper = Stepper(backend, tokenizer, ids, sampling=settings, max_new_tokens=3)
        with pytest.raises(ValueError, match="NaN logits"):
            stepper.step()
    with pytest.raises(ValueError, match="NaN logits"):
        experiments.finish(
            experiments.compare_modes(backend, tokenizer, ids, 3), experiments.CompareResult
        )


def test_compare_keeps_no_logits_per_step(
    tiny_backend: MiniMindBackend, tokenizer: TextTokenizer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only max |Δlogit| per step is kept: no logits row outlives its step."""
    clones = {"n": 0}
    real_clone = torch.Tensor.clone

    def counting_clone(self: torch.Tensor, *args: object, **kwargs: object) -> torch.Tensor:
        if self.dim() == 1 and self.shape[0] == tiny_backend.vocab_size:
            clones["n"] += 1
        return real_clone(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(torch.Tensor, "clone", counting_clone)
    result = experiments.finish(
        experiments.compare_modes(tiny_backend, tokenizer, [5, 6, 7], 12),
        experiments.CompareResult,
    )
    assert len(result.max_abs_logit_diff) == 12 and result.identical
    assert clones["n"] == 0
