"""The CLI refuses bad input up front (issue 14.4–14.6): exit 2 and one `error:` line, before
any model work, for sizes past the positions or the memory, non-finite settings, bad thread
counts, empty or non-UTF-8 prompts, damaged checkpoints and config files."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import torch

from kvstudio.cli import common
from kvstudio.cli.main import main
from kvstudio.cli.tools import bench
from kvstudio.engine import limits
from kvstudio.engine.backends.minimind import MiniMindBackend
from kvstudio.engine.cache import paged as paged_cache
from kvstudio.engine.config import ModelConfig
from kvstudio.engine.generate import Stepper
from kvstudio.engine.model import MiniMindLM
from kvstudio.engine.records import SamplingSettings
from kvstudio.engine.tokenizer import TextTokenizer
from kvstudio.files.checkpoints import MODELS_DIR, load_model_folder
from kvstudio.labs.cache import compare, sweep
from kvstudio.labs.cache.compare import CompareResult, compare_modes
from kvstudio.labs.chat import session as chat
from kvstudio.labs.common import finish
from kvstudio.labs.sampling import temperature
from tests.cli.running import one_error_line, shipped_model_with


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["compare", "--new-tokens", "100000"], "must be between 1 and 2,048 tokens"),
        (["compare", "--prompt-tokens", "32000"], "must be between 1 and 4,096 tokens"),
        (["compare", "--cache", "static", "--max-length", "10000000"], "static cache"),
        (["sweep", "--values", "8,40000"], "must be between 1 and 4,096 tokens"),
        (["sample", "--temperatures", "nan"], "finite"),
        (["sample", "--temperatures", "inf"], "finite"),
        (["sample", "--temperatures", "1e-39"], "Temperature"),
        (["sample", "--repetition-penalty", "nan"], "finite"),
        (["sample", "--repetition-penalty", "1e-300"], "penalty must be between 0.5 and 3"),
        (["compare", "--threads", "1000"], "--threads"),
        (["compare", "--threads", "1e11"], "whole number"),
        (["sample", "--prompt", ""], "prompt is empty"),
        (["compare", "--prompt", "   "], "prompt is empty"),
        (["compare", "--new-tokens", "0"], "must be between 1 and 2,048"),
        (["compare", "--mode", "turbo"], "invalid choice"),
    ],
)
def test_mistakes_exit_2_withone_error_line(
    capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    assert message in one_error_line(capsys, argv)


def test_sizes_past_free_memory_are_refused_up_front(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(limits, "available_memory_bytes", lambda device="cpu": 4 * 1024**2)
    line = one_error_line(capsys, ["sample", "--samples", "512", "--new-tokens", "256"])
    assert "of memory" in line and "4.0 MiB is free" in line


def test_a_non_utf8_prompt_isone_error_line(tmp_path: Path) -> None:
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
        ("max_position_embeddings", -5, "max_position_embeddings must be between 1 and "),
        ("max_position_embeddings", 10**11, "must be between 1 and 16,777,216, got 1000"),
        ("hidden_size", "256", "whole number"),
        ("num_hidden_layers", True, "whole number"),
    ],
)
def test_config_sizes_are_checked_before_any_allocation(
    tmp_path: Path, field: str, value: object, message: str
) -> None:
    folder = shipped_model_with(tmp_path, "ko-chat", field, value)
    with pytest.raises(ValueError, match=message):
        load_model_folder(folder)


def test_nan_weights_are_reported_as_a_broken_model(
    tiny_config: ModelConfig, tokenizer: TextTokenizer
) -> None:
    model = MiniMindLM(tiny_config).init_weights(0).eval()
    with torch.no_grad():
        model.token_table()[5] = float("nan")  # (V, C); tied: a view of the LM head
    backend = MiniMindBackend(model, name="broken")
    ids = [5, 6, 7]
    for settings in (SamplingSettings.greedy_settings(), SamplingSettings(temperature=1.0)):
        stepper = Stepper(backend, tokenizer, ids, sampling=settings, max_new_tokens=3)
        with pytest.raises(ValueError, match="NaN logits"):
            stepper.step()
    with pytest.raises(ValueError, match="NaN logits"):
        finish(
            compare_modes(backend, tokenizer, ids, 3), CompareResult
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
    result = finish(
        compare_modes(tiny_backend, tokenizer, [5, 6, 7], 12),
        CompareResult,
    )
    assert len(result.max_abs_logit_diff) == 12 and result.identical
    assert clones["n"] == 0


# ---- issue 19.4: every input bounded before any work -------------------------------------------
SHIPPED_TURNS = MODELS_DIR.parent / "prompts" / "chat_4turns.txt"
REPO = Path(__file__).resolve().parents[2]


def _cli(*argv: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """`python -m kvstudio ARGV` in a child with a time limit: a hang fails, never blocks."""
    return subprocess.run(
        [sys.executable, "-m", "kvstudio", *argv],
        capture_output=True, text=True, check=False, timeout=timeout,
        env={"PYTHONPATH": str(REPO), "LC_ALL": "C.UTF-8", "PATH": "/usr/bin:/bin"},
    )


def _refuse_work(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make any model loading fail loudly: a check that should come first did not."""

    def loaded(args: object) -> None:
        raise AssertionError("the model was loaded: the argument was not refused first")

    monkeypatch.setattr(common, "prepare", loaded)
    monkeypatch.setattr(bench, "bench_model", loaded)


def test_a_turns_fifo_is_refused_at_once(tmp_path: Path) -> None:
    fifo = tmp_path / "turns.fifo"
    os.mkfifo(fifo)
    try:
        done = _cli("chat", "--turns", str(fifo), timeout=60)
    except subprocess.TimeoutExpired:
        pytest.fail("chat --turns FIFO hung (it waited for a writer)")
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines() == [
        f"error: {fifo} is not a regular file (a device, pipe or folder); choose a UTF-8 text "
        "file, one turn per line."
    ]


def test_a_turns_device_is_refused_at_once(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _refuse_work(monkeypatch)  # (reading /dev/zero uncapped ran out of memory at 3.2 GB)
    assert "not a regular file" in one_error_line(capsys, ["chat", "--turns", "/dev/zero"])


def test_a_turns_file_is_read_with_a_cap(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _refuse_work(monkeypatch)
    huge = tmp_path / "huge.txt"
    with huge.open("wb") as fh:  # sparse: no disk used
        fh.truncate(16 * 1024 * 1024 + 1)
    assert "is larger than 16 MiB" in one_error_line(capsys, ["chat", "--turns", str(huge)])
    assert chat.MAX_TURNS_FILE_BYTES == 16 * 1024 * 1024  # the cap the file was just past


def _many_turns(tmp_path: Path, count: int) -> Path:
    path = tmp_path / "turns.txt"
    path.write_text("\n".join(f"질문 {i}: 오늘 무엇을 할까요?" for i in range(count)),
                    encoding="utf-8")
    return path


def test_a_long_chat_is_refused_without_yes(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    ran: list[str] = []

    def no_turns(self: chat.ChatSession, text: str, **kwargs: object) -> object:
        ran.append(text)
        raise AssertionError("a turn ran before the cost was accepted")

    monkeypatch.setattr(chat.ChatSession, "run_turn", no_turns)
    line = one_error_line(capsys, ["chat", "--turns", str(_many_turns(tmp_path, 10_000)),
                                    "--context-limit", "32768"])
    assert "--yes" in line and "tokens" in line and "fewer turns" in line
    assert ran == []


@pytest.mark.parametrize(
    "argv",
    [
        ["compare", "--new-tokens", "2000", "--mode", "recompute", "--repeats", "1"],
        ["compare", "--new-tokens", "2000"],  # both modes: the recompute half costs
        ["sample", "--samples", "500", "--temperatures", ",".join(["1.0"] * 20)],
        ["sweep", "--values", "4000,4096"],
    ],
)
def test_long_runs_are_refused_without_yes(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, argv: list[str]
) -> None:
    def no_run(*args: object, **kwargs: object) -> Iterator[object]:
        raise AssertionError("the run started before its cost was accepted")
        yield  # a generator, as the labs' runs: it runs when iterated

    for module, name in (
        (compare, "compare_modes"),
        (compare, "single_mode"),
        (temperature, "temperature_lab"),
        (sweep, "sweep_with_fits"),
    ):
        monkeypatch.setattr(module, name, no_run)
    line = one_error_line(capsys, argv)
    assert "Add --yes to run it anyway" in line and "tokens" in line


def test_yes_runs_a_long_run(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    started: list[tuple[int, int]] = []

    def counted(backend: object, tokenizer: object, prompt: list[int], n: int,
                **kwargs: object) -> object:
        started.append((len(prompt), n))
        raise ValueError("stopped here by the test")

    monkeypatch.setattr(compare, "compare_modes", counted)
    line = one_error_line(capsys, ["compare", "--new-tokens", "2000", "--yes"])
    assert line == "error: stopped here by the test" and started == [(183, 2000)]


def test_long_runs_print_progress_off_a_terminal(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(common, "PROGRESS_EVERY_S", 0.0)  # a line for every item
    assert main(["chat", "--turns", str(SHIPPED_TURNS), "--rounds", "1",
                 "--max-new-tokens", "4"]) == 0
    lines = [line for line in capsys.readouterr().err.splitlines() if line.startswith("  chat,")]
    # the lab's run: the warm-up, each forward call (its turn and way), each turn done
    assert lines[0] == "  chat, warm-up: 0 of 4 (0%)"
    assert "  chat, turn 2 of 4, refeed: 1 of 4 (25%)" in lines
    assert [line for line in lines if line.startswith("  chat, turn ") and "4, " not in line
            ] == [f"  chat, turn {t} of 4: {t} of 4 ({t / 4:.0%})" for t in range(1, 5)]
    assert main(["compare", "--prompt-tokens", "8", "--new-tokens", "3"]) == 0
    # the lab's run: one progress over all five rounds, as the window shows it
    assert "  compare, recompute (round 5/5): 60 of 60 (100%)" in capsys.readouterr().err


def test_the_chat_context_limit_is_capped_at_the_model(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The default limit (1,024, the window's) on a model of 512 positions: capped, said so."""
    monkeypatch.setattr(chat, "model_positions", lambda backend: 512)  # the lab caps it
    code = main(["chat", "--turns", str(SHIPPED_TURNS), "--rounds", "1", "--max-new-tokens", "2"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert ("note: --context-limit 1,024 is more than the model's 512 positions; "
            "using 512.") in err
    assert "context limit 512" in out
    assert "must be between 16 and 32,768 tokens" in one_error_line(
        capsys, ["chat", "--turns", str(SHIPPED_TURNS), "--context-limit", "10000000"])


def test_two_static_chat_caches_must_fit_the_free_memory(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(limits, "available_memory_bytes", lambda device="cpu": 64 * 1024**2)
    line = one_error_line(capsys, ["chat", "--turns", str(SHIPPED_TURNS), "--cache", "static",
                                    "--context-limit", "32768"])
    assert "Two static caches of 32,768 tokens" in line and "64.0 MiB is free" in line


def test_a_paged_block_is_bounded_before_any_pool_is_allocated(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_pool(*args: object, **kwargs: object) -> None:
        raise AssertionError("a block pool was allocated")

    monkeypatch.setattr(paged_cache, "BlockPool", no_pool)  # the pool the paged cache makes
    for huge in ("3000000", "1000000000", "99999999999999999999999"):
        line = one_error_line(capsys, ["compare", "--cache", "paged", "--block-size", huge])
        assert line.startswith("error: argument --block-size: must be at most 256 tokens")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["chat", "--turns", "x", "--context-limit", "99999999999999999999999"],
         "argument --context-limit: context_limit must be between 16 and 32,768 tokens"),
        (["compare", "--cache", "sliding", "--window", "99999999999999999999999"],
         "argument --window: must be at most 16,777,216 tokens"),
        (["compare", "--prompt-tokens", "99999999999999999999999"],
         "--prompt-tokens: prompt_tokens must be between 1 and 4,096 tokens"),
        (["sweep", "--values", "8,99999999999999999999999"], "--values: each of values must be"),
        (["sample", "--seed", str(2**70)], "--seed: seed must be between 0 and 2,147,483,647"),
        (["sample", "--temperatures", ",".join(["1"] * 1001)], "at most 1,000 values"),
        (["project", "--context", str(10**40)],
         "--context: context must be between 16 and 1,073,741,824 tokens"),
        (["bench", "--repeats", "99999999999999999999999"], "--repeats: must be at most"),
        (["chat", "--turns", "x", "--threads", "1000"], "between 1 and"),
        (["project", "--threads", "1000"], "between 1 and"),
        (["eval-model", "m", "--threads", "1000"], "between 1 and"),
        (["chat", "--turns", "x", "--rounds", "0"], "must be between 1 and 20 rounds"),
    ],
)
def test_number_arguments_are_bounded(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, argv: list[str],
    message: str,
) -> None:
    _refuse_work(monkeypatch)
    assert message in one_error_line(capsys, argv)


def test_the_threads_check_is_one_for_every_subcommand(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _refuse_work(monkeypatch)
    lines = {
        command: one_error_line(capsys, [*command.split(), "--threads", "1000"])
        for command in ("compare", "chat --turns x", "project")
    }
    assert len({line.split(" (see: ")[0] for line in lines.values()}) == 1, lines


def test_a_non_utf8_system_message_isone_error_line() -> None:
    done = _cli("chat", "--turns", str(SHIPPED_TURNS), "--system",
                b"\xff\xfe bad".decode("utf-8", "surrogateescape"))
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines() == [
        "error: The system message is not valid UTF-8 text; set the terminal to UTF-8 or pass "
        "the text another way."
    ]
