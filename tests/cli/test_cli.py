"""The `kvstudio` command: the lab tables print, and mistakes exit 2 with one clear line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from kvstudio.cli.main import build_parser, main
from tests.cli.running import run_cli


def test_compare_prints_the_lab_table(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "compare", "--prompt-tokens", "12", "--new-tokens", "4")
    assert code == 0
    assert "tokens fed (measured)" in out and "tokens fed (formula)" in out
    fed = next(line for line in out.splitlines() if "tokens fed (formula)" in line).split()
    assert fed[3:5] == ["15", "54"]  # P+(N−1) and P·N+N(N−1)/2 for P=12, N=4
    assert "identical tokens:  yes" in out
    assert "formulas match:    tokens fed yes, cache bytes yes" in out
    # The speed line: the window's two ratios, each named (one definition: decode_ratio)
    decode = next(line for line in out.splitlines() if line.strip().startswith("decode (ms/token)"))
    cached_ms, recompute_ms = (float(v.replace(",", "")) for v in decode.split()[2:4])
    speed = next(line for line in out.splitlines() if line.strip().startswith("speed:"))
    ratio = float(speed.split("recompute / cached: ")[1].split("×")[0])
    assert ratio == pytest.approx(recompute_ms / cached_ms, rel=0.02, abs=0.06)  # 2-place medians
    assert "× per decoded token, " in speed and "× in total time (medians of 5 rounds)" in speed


def test_compare_single_mode_and_sliding(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(
        capsys, "compare", "--prompt", "안녕하세요", "--new-tokens", "3", "--mode", "recompute"
    )
    assert code == 0 and "tokens fed" in out
    code, out, _ = run_cli(
        capsys,
        "compare",
        "--prompt-tokens",
        "10",
        "--new-tokens",
        "6",
        "--cache",
        "sliding",
        "--window",
        "8",
    )
    assert code == 0 and "cache bytes yes" in out


def _row(out: str, label: str) -> list[str]:
    return next(line for line in out.splitlines() if line.strip().startswith(label)).split()


def test_compare_static_prints_allocated_and_used_each_against_its_formula(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = run_cli(
        capsys, "compare", "--prompt-tokens", "12", "--new-tokens", "4",
        "--cache", "static", "--max-length", "64",
    )
    assert code == 0
    _, info, _ = run_cli(capsys, "info")
    per_token = int(next(line for line in info.splitlines() if "bytes per token" in line)
                    .split("= ")[1].split()[0].replace(",", ""))
    allocated, used = per_token * 64, per_token * 15  # M = 64 preallocated; P + N − 1 = 15 used
    assert _row(out, "KV allocated (measured)")[3] == f"{allocated:,}"
    assert _row(out, "KV allocated (formula)")[3] == f"{allocated:,}"
    assert "2·L·M·H_kv·d·bytes" in out and "·64·" in out
    assert _row(out, "KV used (measured)")[3] == f"{used:,}"
    assert _row(out, "KV used (formula)")[3] == f"{used:,}"
    assert "cache bytes yes (allocated yes, used yes)" in out


def test_sample_prints_distinct_counts(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(
        capsys, "sample", "--temperatures", "0,1.2", "--samples", "4", "--new-tokens", "4"
    )
    assert code == 0
    assert "distinct" in out
    greedy_row = next(line for line in out.splitlines() if line.strip().startswith("0 "))
    assert "1/4" in greedy_row  # temperature 0: four identical answers


def test_sweep_and_info(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "sweep", "--values", "2,3", "--fixed", "4")
    assert code == 0 and "recompute" in out
    code, out, _ = run_cli(capsys, "info")
    assert code == 0 and "bytes per token" in out


def test_bench_runs_small(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out, _ = run_cli(
        capsys,
        "bench",
        "--threads",
        "1",
        "--repeats",
        "1",
        "--prompt-tokens",
        "8",
        "--new-tokens",
        "4",
        "--samples",
        "2",
        "--temperatures",
        "2",
        "--sample-tokens",
        "3",
        "--json",
        str(tmp_path / "bench.json"),
    )
    assert code == 0
    assert "records overhead" in out and "cached decode" in out
    assert "records alone over that loop" in out
    saved = json.loads((tmp_path / "bench.json").read_text(encoding="utf-8"))
    assert saved["results"][0]["bare_sampling_ms"] > 0


@pytest.mark.parametrize(
    "argv, message",
    [
        (["compare", "--model", "/no/such/model"], "does not exist"),
        (["compare", "--model", "/no/such/model.pth"], "does not exist"),
        (["bench", "--threads", "x"], "--threads"),
    ],
)
def test_errors_exit_2_without_traceback(
    capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    code, _, err = run_cli(capsys, *argv)
    assert code == 2
    assert err.startswith("error:") and message in err
    assert "Traceback" not in err


def test_bad_arguments_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["compare", "--new-tokens", "0"])
    assert info.value.code == 2
    with pytest.raises(SystemExit):
        main(["sample", "--temperatures", "hot"])


def test_python_dash_m_works() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "kvstudio", "--help"], capture_output=True, text=True, check=True
    )
    assert "compare" in out.stdout and "sample" in out.stdout


def test_training_subcommands_are_registered() -> None:
    parser = build_parser()
    args = parser.parse_args(["eval-model", "some/folder"])
    assert callable(getattr(args, "handler", None) or getattr(args, "func", None))


# A subcommand module that cannot be imported (here `convert`, whose files import lost a
# name) used to be skipped with a log line, so its subcommand just disappeared.
BROKEN_SUBCOMMAND = """
import kvstudio.files.convert as files_convert
del files_convert.export_hf
from kvstudio.cli.main import build_parser
parser = build_parser()
print("built:", sorted(parser._subparsers._group_actions[0].choices))
"""


def test_a_broken_subcommand_module_fails_loudly() -> None:
    root = Path(__file__).resolve().parents[2]
    out = subprocess.run(
        [sys.executable, "-c", BROKEN_SUBCOMMAND], capture_output=True, text=True, cwd=root,
        timeout=120,
    )
    assert out.returncode != 0, out.stdout
    assert "ImportError" in out.stderr and "export_hf" in out.stderr, out.stderr
