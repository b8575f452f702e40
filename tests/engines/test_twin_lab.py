"""The engine twin lab's run: KV Studio and llama.cpp side by side on ko-chat, each number
from its own engine's bookkeeping (needs the optional llama extra; marked ``engines``)."""

from __future__ import annotations

import pytest

from kvstudio.files.loaded import load_model
from kvstudio.labs.common import Progress
from kvstudio.labs.registry import TWIN

pytest.importorskip("gguf", reason="gguf is not installed: pip install -e '.[llama]'")
pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed: "
                    "pip install -e '.[llama]'")

from kvstudio.labs.twin import TwinResult, run

pytestmark = [pytest.mark.engines, pytest.mark.slow]


def test_twin_lab_on_the_course_setting() -> None:
    model = load_model("ko-chat", dtype="float32")
    params = TWIN.check({**TWIN.defaults(), "repeats": 2})
    assert (params["prompt_tokens"], params["new_tokens"]) == (183, 64)
    items = list(run(model, params))
    assert all(isinstance(i, Progress) for i in items[:-1])
    result = items[-1]
    assert isinstance(result, TwinResult)
    assert result.identical, (result.first_diff_step, result.top2_margin)
    assert result.sampling.greedy and result.probability_gap is None
    assert result.ours.tokens == result.theirs.tokens and len(result.ours.tokens) == 64
    assert result.ours.kv_bytes_per_token == result.theirs.kv_bytes_per_token == 2048
    assert result.llama_state_bytes_per_token == 2048 + 12  # plus the cell's bookkeeping
    assert "K (f32)" in result.llama_kv_line
    for side in (result.ours, result.theirs):
        assert side.fresh_evaluated == 183
        assert side.reuse_evaluated == 183 - result.shared_prefix
        assert side.copy_crop_same
        assert len(side.round_ms) == 2 and side.ms_per_token > 0
    assert result.speed_ratio > 0


def test_twin_lab_refuses_a_prompt_too_short_for_its_checks() -> None:
    model = load_model("ko-chat", dtype="float32")
    with pytest.raises(ValueError, match="P > 40"):
        run(model, {**TWIN.defaults(), "prompt_tokens": 16})


def test_twin_lab_samples_with_one_seed_in_both_engines() -> None:
    """T > 0: both engines' logits through our sampler, seeded alike; where they part, the
    step and the probability gap there are reported (measured: T = 0.3 equal for seeds 0–9)."""
    model = load_model("ko-chat", dtype="float32")
    params = TWIN.check({**TWIN.defaults(), "temperature": 0.3, "seed": 3, "repeats": 1})
    result = list(run(model, params))[-1]
    assert isinstance(result, TwinResult)
    assert (result.sampling.temperature, result.sampling.seed) == (0.3, 3)
    assert result.top2_margin is None
    if result.identical:
        assert result.ours.tokens == result.theirs.tokens and result.probability_gap is None
    else:  # parted at a draw near an edge: the tokens before it agree
        step = result.first_diff_step
        assert step is not None and result.probability_gap is not None
        assert result.ours.tokens[:step] == result.theirs.tokens[:step]
    assert result.max_logit_gap < 5e-2
    assert TWIN.check({**TWIN.defaults()})["temperature"] == 0  # greedy unless asked
