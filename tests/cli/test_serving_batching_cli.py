"""`kvstudio serving`'s options from the lab's declaration, and `--sweep-batch` and
`--fit-budget`, through the one parser."""

from __future__ import annotations

import pytest

from kvstudio.cli.lab_options import lab_params
from kvstudio.cli.main import build_parser, main
from kvstudio.labs.registry import SERVING
from kvstudio.labs.serving.lab import sampling_settings, scheduler_configs


def test_the_serving_options_default_to_the_declaration() -> None:
    args = build_parser().parse_args(["serving"])
    params = lab_params(SERVING, args)
    assert set(params) == {p.name for p in SERVING.params}  # every parameter has its option
    assert SERVING.check(params) == SERVING.check(SERVING.defaults())
    assert sampling_settings(params).greedy  # temperature 0, no block budget: as the window
    assert scheduler_configs(params)[0].block_budget is None
    assert scheduler_configs(params) == scheduler_configs(SERVING.defaults())
    assert not args.plain and args.requests is None  # the command line's own settings


def test_sampled_serving_takes_the_course_filters_and_the_seed() -> None:
    sampled = sampling_settings({**SERVING.defaults(), "temperature": 0.7, "seed": 9})
    assert (sampled.temperature, sampled.seed, sampled.greedy) == (0.7, 9, False)
    budget = scheduler_configs({**SERVING.defaults(), "block_budget": 12})
    assert budget[0].block_budget == 12


def test_fit_budget_for_a_preset_needs_no_model(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["serving", "--fit-budget", "--preset", "llama-3.1-8b",
                 "--request-tokens", "4096"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "131,072 B per token (from the preset's formula)" in out
    assert "Model:" not in out  # nothing was loaded
    # (80 GiB − the preset's weights) ÷ (131,072 B · 4,096 tokens)
    assert [line.split()[-2] for line in out.splitlines() if "80 GiB GPU" in line] == ["130"]


def test_bad_batch_sizes_are_one_error_line(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        main(["serving", "--sweep-batch", "--batch-sizes", "0,4"])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert "--batch-sizes" in err and "Traceback" not in err
    code = main(["serving", "--fit-budget", "--request-tokens", "5000", "--budget-bytes",
                 "1000", "--model", "ko-chat"])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("error: ") and len(err.strip().splitlines()) == 1
