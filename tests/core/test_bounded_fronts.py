"""Issue 32 ("Bounded on every front"): the checks the CLI, the window and the notebook share.

Each refusal is one sentence (a ValueError) that names what was asked and what to change,
raised before any work: a requests file's odd lines, the serving run's size, block sizes,
temperatures, config integers, NaN weights under sampling.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import torch

from kvstudio.engine import limits
from kvstudio.engine.backends.minimind import MiniMindBackend
from kvstudio.engine.config import ModelConfig
from kvstudio.engine.generate import RunSettings, Stepper
from kvstudio.engine.model import MiniMindLM
from kvstudio.engine.records import SamplingSettings
from kvstudio.engine.sampling import new_generator
from kvstudio.engine.serving.records import RequestSpec, SchedulerConfig
from kvstudio.engine.serving.request_file import build_requests, read_request_lines
from kvstudio.engine.strategies.drafters import ModelDrafter, PromptLookupDrafter
from kvstudio.engine.strategies.speculative import SpeculativeRun
from kvstudio.engine.tokenizer import TextTokenizer
from kvstudio.files import checkpoints
from kvstudio.labs import bounds
from kvstudio.labs.serving import size as serving_size
from kvstudio.labs.serving.lab import DEFAULT_NEW_TOKENS, EXAMPLE_REQUESTS, serving


def _requests_file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "r.txt"
    path.write_text(text, encoding="utf-8")
    return path


# ---- case 7: a requests file's lines -----------------------------------------------------------
@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("@" + "9" * 5000 + " hi", "line 2: '@99999999999999999999' is not an arrival step"),
        ("+5", "line 2: '+5' has no question after it"),
        ("@3 +4", "line 2: '@3 +4' has no question after it"),
        ("+abc hi", "line 2: '+abc' is not a token budget"),
        ("@3 +x 질문", "line 2: '+x' is not a token budget"),
        ("+ 질문", "line 2: '+' is not a token budget"),
        ("+" + "9" * 5000 + " hi", "line 2: '+99999999999999999999' is not a token budget"),
    ],
    ids=["huge-arrival", "bare-budget", "arrival-and-budget", "word-budget", "x-budget",
         "empty-budget", "huge-budget"],
)
def test_every_odd_request_line_is_refused_with_file_and_line(
    tmp_path: Path, line: str, message: str
) -> None:
    path = _requests_file(tmp_path, f"첫 질문\n{line}\n")
    with pytest.raises(ValueError) as caught:
        read_request_lines(path)
    text = str(caught.value)
    assert text.startswith(f"{path}, line 2: ") and message in text, text
    assert "\n" not in text and "4300" not in text and len(text) < 300


def test_a_budget_before_the_question_still_reads(tmp_path: Path) -> None:
    lines = read_request_lines(_requests_file(tmp_path, "@3 +4 질문 +5\n+7 둘째\n"))
    assert [(r.arrival, r.max_new_tokens, r.text) for r in lines] == [
        (3, 4, "질문 +5"), (0, 7, "둘째")]


# ---- case 2: the serving run's size, one rule for every front ---------------------------------
def _huge(
    tokenizer: TextTokenizer, lines: int = 256, arrival: int = 100_000
) -> tuple[RequestSpec, ...]:
    ids = tuple(tokenizer.encode("hi"))
    return tuple(RequestSpec(i, "hi", ids, arrival, 1) for i in range(lines))


def test_a_huge_serving_run_is_refused_before_any_step(
    tiny_backend: MiniMindBackend, tokenizer: TextTokenizer
) -> None:
    requests = _huge(tokenizer)
    config = SchedulerConfig(policy="continuous")
    assert serving_size.run_steps(requests, config) == 100_000 + 32 * 2
    run = serving(tiny_backend, tokenizer, requests, (config,))
    with pytest.raises(ValueError, match=r"^This serving run keeps 256 requests × up to "
                       r"100,064 steps = 25,616,384 request-step records \(about 3\.8 GiB\), "
                       "past the 1,000,000"):
        next(run)


def test_confirmed_runs_still_need_the_memory(
    tokenizer: TextTokenizer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(limits, "available_memory_bytes", lambda device="cpu": 256 * 1024**2)
    requests, configs = _huge(tokenizer), (SchedulerConfig(),)
    with pytest.raises(ValueError, match=r"GiB of memory but only 256\.0 MiB is free"):
        serving_size.check_size(requests, configs, 1, confirmed=True)
    small = _huge(tokenizer, lines=8, arrival=10)
    assert serving_size.check_size(small, configs, 3) == 8 * 3 * (10 + 2)


def test_the_shipped_example_is_far_below_the_rule(tokenizer: TextTokenizer) -> None:
    requests = build_requests(read_request_lines(EXAMPLE_REQUESTS), tokenizer, system="",
                              max_new_tokens=DEFAULT_NEW_TOKENS, max_positions=1024)
    configs = [SchedulerConfig(policy=p, chunk=c) for p, c in (("static", None),
                                                                ("continuous", 16))]
    assert serving_size.timeline_cells(requests, configs, 5) < serving_size.ASK_CELLS // 100


# ---- case 5: a serving block, one bound on every front and the model's positions -------------
def test_a_serving_block_is_bounded_once_for_every_front(tokenizer: TextTokenizer) -> None:
    assert bounds.block_size("256") == 256 == bounds.MAX_BLOCK_SIZE
    for text in ("0", "257", "16777216"):
        with pytest.raises(ValueError, match=r"must be (at least 1|at most 256 tokens)"):
            bounds.block_size(text)
    config = ModelConfig(hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                         num_key_value_heads=1, vocab_size=tokenizer.vocab_size,
                         max_position_embeddings=64)
    short = MiniMindBackend(MiniMindLM(config).init_weights(3).eval(), name="short")
    requests = (RequestSpec(0, "hi", tuple(tokenizer.encode("hi")), 0, 2),)
    with pytest.raises(ValueError, match="A block of 128 tokens is longer than the model's 64 "
                       "positions"):
        next(serving(short, tokenizer, requests, (SchedulerConfig(block_size=128),)))


# ---- case 7: NaN weights say the same under sampling as under plain decoding -----------------
NAN_MESSAGE = ("produced NaN logits at step {step}: its weights are broken (NaN or inf inside). "
               "Load another checkpoint; this one cannot generate text.")


def _nan_copy(model: MiniMindLM) -> MiniMindLM:
    broken = MiniMindLM(model.config)
    broken.load_state_dict(model.state_dict())
    with torch.no_grad():
        broken.lm_head.fill_(float("nan"))
    return broken.eval()


@pytest.mark.parametrize("temperature", [0.0, 0.8])
def test_nan_weights_give_plain_decodings_message_everywhere(
    tiny_model: MiniMindLM, tokenizer: TextTokenizer, temperature: float
) -> None:
    broken = _nan_copy(tiny_model)
    sampling = (SamplingSettings(temperature=temperature, top_k=0, top_p=0.85, seed=1)
                if temperature else SamplingSettings.greedy_settings(1))
    prompt = tokenizer.encode("안녕하세요")
    said = {}
    with pytest.raises(ValueError) as caught:  # plain decoding: the message to match
        Stepper(MiniMindBackend(broken), tokenizer, prompt,
                RunSettings(max_new_tokens=4, sampling=sampling)).step()
    said["plain"] = str(caught.value)
    requests = (RequestSpec(0, "hi", tuple(prompt), 0, 4),)
    with pytest.raises(ValueError) as caught:
        list(serving(MiniMindBackend(broken), tokenizer, requests, (SchedulerConfig(),),
                     sampling=sampling))
    said["serving"] = str(caught.value)
    with pytest.raises(ValueError) as caught:  # the target broken
        list(SpeculativeRun(broken, PromptLookupDrafter(), prompt, k=2, max_new_tokens=4,
                            sampling=sampling))
    said["target"] = str(caught.value)
    with pytest.raises(ValueError) as caught:  # the draft broken
        list(SpeculativeRun(tiny_model, ModelDrafter(broken, sampling, new_generator(0)),
                            prompt, k=2, max_new_tokens=4, sampling=sampling))
    said["draft"] = str(caught.value)
    for where in ("plain", "serving", "target"):
        assert said[where] == "The model " + NAN_MESSAGE.format(step=0), (where, said[where])
    assert said["draft"] == "The draft model " + NAN_MESSAGE.format(step=1), said["draft"]


# ---- case 4: what a config asks for, counted with the temporaries that build it --------------
def test_the_memory_check_counts_the_rope_tables_temporaries(
    monkeypatch: pytest.MonkeyPatch
) -> None:
    config = ModelConfig(max_position_embeddings=1_000_000)  # d 32: 128 MB a table
    free = 400 * 1024**2  # the 2 tables kept fit in 90 % of it; the 3.5 that build them do not
    assert config.memory_bytes < limits.MEMORY_FRACTION * free < config.load_peak_bytes
    monkeypatch.setattr(limits, "available_memory_bytes", lambda device="cpu": free)
    with pytest.raises(ValueError, match=r"1,000,000 positions\) needs about 5\d\d\.\d MiB of "
                       r"memory but only 400\.0 MiB is free"):
        checkpoints.check_model_fits(config)


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/status").exists(),
                    reason="reads the child's own peak (VmHWM) from Linux's /proc")
def test_building_a_model_peaks_within_the_count() -> None:
    """The count is an upper bound of what building the model really takes (a child's peak).

    The peak is the child's own high-water mark (VmHWM), reset once torch is imported. Not
    ru_maxrss: Linux starts a child's ru_maxrss at its parent's peak (the exec folds the
    forked copy's high-water mark in), so under a pytest worker that had already held 800 MB
    the child's delta read 256 MB for a build that takes 900 MB.
    """
    code = (
        "import torch\n"
        "from kvstudio.engine.config import ModelConfig\n"
        "from kvstudio.engine.model import MiniMindLM\n"
        "def peak():\n"
        "    with open('/proc/self/status') as status:\n"
        "        line = next(x for x in status if x.startswith('VmHWM:'))\n"
        "    return int(line.split()[1]) * 1024\n"
        "torch.zeros(1)\n"
        "try:\n"
        "    with open('/proc/self/clear_refs', 'w') as refs:\n"
        "        refs.write('5')  # the high-water mark starts again at what is resident now\n"
        "except OSError:\n"
        "    pass  # then it is the import's peak, at least what is resident: a smaller delta\n"
        "before = peak()\n"
        "MiniMindLM(ModelConfig(max_position_embeddings=2_000_000))\n"
        "print(peak() - before)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300, check=True)
    peak = int(done.stdout.split()[-1])
    config = ModelConfig(max_position_embeddings=2_000_000)
    assert peak <= config.load_peak_bytes, (peak, config.load_peak_bytes)  # the bound holds
    # …and the child did build the model: at its peak it held at least the finished model
    # (weights and both RoPE tables; measured 903 MB against 529.8 MB, and a count of 1,060 MB).
    assert peak > config.memory_bytes, (peak, config.memory_bytes)
