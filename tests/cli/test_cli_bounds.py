"""Issue 32 ("Bounded on every front") on the command line: one `error:` line, exit 2, no
traceback, for every bound the window and the notebook share (``labs/bounds.py``)."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.running import one_error_line, shipped_model_with

ADDRESS_SPACE = 3 * 1024**3  # torch and ko-chat need about 1 GiB of it; 3.5 GB died past it
ROOT = Path(__file__).resolve().parents[2]




# ---- case 7: one temperature rule on every command ---------------------------------------------
@pytest.mark.parametrize("value", ["-1", "1e-9", "1000"])
def test_one_temperature_rule_on_every_command(
    capsys: pytest.CaptureFixture[str], value: str
) -> None:
    said = {
        command: one_error_line(capsys, [command, "--temperature", value])
        for command in ("serving", "speculative")
    }
    for line in said.values():
        assert "Temperature must be 0 (greedy) or between 1e-06 and 100" in line, line
    rules = {line.split(": ", 2)[-1].split(" (see: ")[0] for line in said.values()}
    assert len(rules) == 1, said  # the same sentence on both


# ---- case 5: serving's block, bounded as the window's box is -----------------------------------
@pytest.mark.parametrize("value", ["257", "16777216"])
def test_serving_block_size_is_bounded_as_in_the_window(
    capsys: pytest.CaptureFixture[str], value: str
) -> None:
    for argv in (["serving"], ["serving", "--fit-budget"]):
        line = one_error_line(capsys, [*argv, "--block-size", value])
        assert line.startswith("error: argument --block-size: must be at most 256 tokens"), line


# ---- case 7: --sweep-rounds up to 2^31 ran without a question ----------------------------------
@pytest.mark.parametrize("rounds", ["50", "20"])
def test_a_long_batch_sweep_asks_for_yes(capsys: pytest.CaptureFixture[str], rounds: str) -> None:
    line = one_error_line(capsys, ["serving", "--sweep-batch", "--sweep-rounds", rounds,
                                    "--batch-sizes", "1024,1024"])
    assert f"× {int(rounds):,} rounds feeds the model about" in line, line
    assert "Add --yes to run it anyway" in line and "--sweep-rounds" in line


def test_batch_sweep_rounds_are_bounded_as_in_the_window(
        capsys: pytest.CaptureFixture[str]) -> None:
    line = one_error_line(capsys, ["serving", "--sweep-batch", "--sweep-rounds", "2147483648"])
    assert "--sweep-rounds: repeats must be between 1 and 50 rounds" in line, line


def _cap() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))


def _capped(argv: list[str], timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """`kvstudio argv` in a child under an address-space cap (a run that grows without bound
    dies there, or meets the timeout, instead of taking the machine)."""
    env = {**os.environ, "PYTHONFAULTHANDLER": "0"}
    return subprocess.run(
        [sys.executable, "-m", "kvstudio", *argv], capture_output=True, text=True,
        timeout=timeout, preexec_fn=_cap, env=env, check=False,
    )


def _capped_each(argvs: list[list[str]],
                 timeout: float = 120) -> list[subprocess.CompletedProcess[str]]:
    """`kvstudio argv` for each of `argvs`, one after the other in one child under the same
    cap (``tests/cli/capped_child.py``: one interpreter and torch import for them all); each
    command's own exit status, stdout and stderr."""
    env = {**os.environ, "PYTHONFAULTHANDLER": "0"}
    done = subprocess.run(
        [sys.executable, "-m", "tests.cli.capped_child"], input=json.dumps(argvs),
        capture_output=True, text=True, timeout=timeout, preexec_fn=_cap, env=env,
        cwd=ROOT, check=False,
    )
    assert done.returncode == 0, (done.returncode, done.stdout[-500:], done.stderr[-2000:])
    results = json.loads(done.stdout)
    assert len(results) == len(argvs), results
    return [subprocess.CompletedProcess([sys.executable, "-m", "kvstudio", *argv],
                                        r["returncode"], r["stdout"], r["stderr"])
            for argv, r in zip(argvs, results, strict=True)]


def _one_line_exit_2(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 2, (done.returncode, done.stdout[-500:], done.stderr[-2000:])
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), done.stderr[-2000:]
    assert "Traceback" not in done.stderr
    return lines[0]


# ---- case 2: a 2.8 KB requests file that grew to 3.5 GB ----------------------------------------
@pytest.mark.slow
def test_a_huge_requests_file_is_refused_before_it_grows(tmp_path: Path) -> None:
    path = tmp_path / "r.txt"
    path.write_text("@100000 hi\n" * 256, encoding="utf-8")  # 2.8 KB
    argv = ["serving", "--requests", str(path), "--rounds", "1", "--max-new-tokens", "1",
            "--policy", "continuous"]
    line = _one_line_exit_2(_capped(argv))
    assert "256 requests × up to 100,064 steps = 25,616,384 request-step records" in line
    assert "Add --yes to run it anyway." in line


# ---- case 4: config integers, bounded before any arithmetic ------------------------------------
def _draft_with(tmp_path: Path, field: str, value: int) -> Path:
    return shipped_model_with(tmp_path, "ko-draft", field, value)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("num_hidden_layers", int("9" * 4000),
         "num_hidden_layers must be between 1 and 2,147,483,647, got a number of 41+ digits"),
        ("max_position_embeddings", 40_000_000,
         "max_position_embeddings must be between 1 and 16,777,216, got 40000000"),
    ],
    ids=["4000-digit-layers", "40M-positions"],
)
def test_config_integers_are_one_line_before_any_arithmetic(
    tmp_path: Path, field: str, value: int, message: str
) -> None:
    folder = _draft_with(tmp_path, field, value)
    argvs = [["info", "--model", str(folder)],
             ["speculative", "--draft", str(folder), "--new-tokens", "2", "--repeats", "1"]]
    for done in _capped_each(argvs):
        line = _one_line_exit_2(done)
        assert line.startswith(f"error: {folder / 'config.json'}: Invalid model config: "), line
        assert message in line, line
