"""`kvstudio bench` / `python -m kvstudio.cli.tools.bench`: how fast the engine is, measured, not
asserted.

Owns the benchmark: on the course model (fp32, batch 1, P=183, N=64 by default)
it measures cached decode ms/token with every record on, recompute ms/token,
time to first token, the overhead of the stepper's records against a bare
loop (model + argmax, nothing else; and model + the stepper's own greedy
sampling, which also ranks the top-10 candidates) on the same model, and 30 samples × 5
temperatures × 32 new tokens as batches, for 1 and 2 torch threads.

Runs are interleaved (bare, stepper, bare, …) and the median of the repeats is
reported (the project's one timing policy, as the window, the labs and
`compare --repeats` report), so a busy second core disturbs both sides alike.
The records' overhead is also given in process CPU time, which another process
on the machine barely disturbs. The bare loop calls the model itself on purpose:
it is "our own bare loop", the reference the one decode loop
(``engine/decode.py``) and its records are measured against, and the only token
loop left outside that module (``tests/core/test_one_decode_loop.py`` allows it).
Targets from the issue are printed next to the numbers; nothing here fails a
test on wall-clock time.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from statistics import median

import torch

from kvstudio.cli import args as cli_args
from kvstudio.engine import limits
from kvstudio.engine.backends.minimind import MiniMindBackend
from kvstudio.engine.cache.base import CacheLayer, KVCache
from kvstudio.engine.cache.kinds import make_cache
from kvstudio.engine.config import ModelConfig
from kvstudio.engine.generate import Stepper
from kvstudio.engine.model import MiniMindLM
from kvstudio.engine.records import SamplingSettings, decode_seconds_per_token
from kvstudio.engine.sampling import sample_next
from kvstudio.files.checkpoints import default_model, load_any, train_fallback_tokenizer
from kvstudio.files.loaded import LoadedModel, from_minimind
from kvstudio.files.resources import RANDOM_MODEL_NAME
from kvstudio.labs.common import lab_prompt_ids
from kvstudio.labs.sampling.sample import repeated_sampling

log = logging.getLogger(__name__)

TARGET_CACHED_MS = 1.6  # cached decode ms/token, records on, one thread
TARGET_OVERHEAD = 0.10  # records may cost at most 10% over a bare loop
TARGET_SAMPLING_S = 1.5  # 30 samples × 5 temperatures × 32 tokens, batched
SAMPLING_TEMPERATURES = (0.3, 0.7, 1.0, 1.3, 1.6)
SAMPLING_QUESTION = "KV 캐시가 무엇인가요?"  # the chat question sampled 30 times
STEPPER_TOP_N = 10  # candidates each timed step reports (the window shows 10)
MAX_REPEATS = 1000  # the best of more repeats than this changes nothing


@dataclass(frozen=True)
class BenchResult:
    """Best of the repeats, for one torch thread count."""

    threads: int
    prompt_tokens: int
    new_tokens: int
    bare_decode_ms: float  # bare loop: model + argmax, per decode token (wall)
    bare_sampling_ms: float  # bare loop: model + the stepper's greedy sample_next, no records
    cached_decode_ms: float  # stepper, cached, every record built, per decode token (wall)
    cached_step_ms: float  # the same run's StepRecord.elapsed_s (forward + sampling only)
    recompute_decode_ms: float  # stepper, recompute, per decode token (wall)
    ttft_ms: float  # cached prefill step (StepRecord.elapsed_s of step 0)
    records_overhead: float  # cached_decode_ms / bare_decode_ms − 1 (wall time)
    records_only_overhead: float  # cached_decode_ms / bare_sampling_ms − 1 (wall time)
    records_overhead_cpu: float  # the same ratio in process CPU time
    stepper_alone_us: float  # one decode step with the model replaced by fixed logits (µs)
    sampling_seconds: float  # samples × temperatures × tokens, one batch per temperature
    sampling_shape: tuple[int, int, int]  # (samples, temperatures, new tokens)


def bench_model(path: str | None = None) -> tuple[LoadedModel, str]:
    """The model to time: `path`, else the shipped model; ``random``: a random course model
    with the course vocabulary (V = 6400)."""
    if path is not None and path != RANDOM_MODEL_NAME:
        loaded = load_any(path)
        return loaded, loaded.name
    if path is None:
        loaded = default_model()
        return loaded, loaded.name
    # Keep the course vocabulary (6400) so the LM head costs what it costs in class;
    # ids beyond the small fallback tokenizer decode as "" (timing is unaffected).
    tokenizer = train_fallback_tokenizer()
    model = MiniMindLM(ModelConfig()).init_weights(0).eval()
    label = "random-initialised course model (seed 0, vocab 6400)"
    loaded = from_minimind(model, tokenizer, label, origin="random",
                           requested=RANDOM_MODEL_NAME, is_random=True)
    return loaded, label


def bare_decode(
    model: MiniMindLM,
    prompt: torch.Tensor,
    new_tokens: int,
    *,
    sampling: bool = False,
    banned_token: int | None = None,
) -> tuple[float, float]:
    """(wall, CPU) seconds per decode token of the plainest cached loop: forward + argmax.

    With `sampling` the argmax is replaced by the stepper's own greedy sampling
    (`sample_next` with `banned_token` (eos) banned, top-10 candidates and their
    probabilities), still without any record: the loop the records are added to.
    """
    greedy = SamplingSettings.greedy_settings()

    def choose(logits: torch.Tensor) -> torch.Tensor:  # (1, V) → (1, 1)
        if not sampling:
            return logits.argmax(-1, keepdim=True)
        out = sample_next(logits, greedy, None, top_n=STEPPER_TOP_N, banned_token=banned_token)
        return out.token_ids[:, None]

    with torch.inference_mode():
        cache = make_cache(model.config.num_hidden_layers)
        token = choose(model(prompt, cache, logits_to_keep=1)[:, -1])  # (1, 1)
        start, cpu = time.perf_counter(), time.process_time()
        for _ in range(new_tokens - 1):
            token = choose(model(token, cache, logits_to_keep=1)[:, -1])
        token.tolist()  # like the stepper, bring the last id to Python
        steps = max(new_tokens - 1, 1)
        return (time.perf_counter() - start) / steps, (time.process_time() - cpu) / steps


def stepper_decode(
    backend: MiniMindBackend, loaded: LoadedModel, prompt: list[int], new_tokens: int, mode: str
) -> tuple[float, float, float, float]:
    """Per decode token: wall s, CPU s, the median decode step's StepRecord.elapsed_s (the
    course's ms/token); and the prefill's s."""
    stepper = Stepper(backend, loaded.tokenizer, prompt,
                      mode="cached" if mode == "cached" else "recompute",
                      sampling=SamplingSettings.greedy_settings(), max_new_tokens=new_tokens,
                      stop_at_eos=False, top_n=STEPPER_TOP_N)
    first = stepper.step()
    start, cpu = time.perf_counter(), time.process_time()
    rest = list(stepper)
    steps = max(len(rest), 1)
    wall, cpu = (time.perf_counter() - start) / steps, (time.process_time() - cpu) / steps
    step = decode_seconds_per_token([first, *rest]) or 0.0
    return wall, cpu, step, first.elapsed_s


class _FixedLogits(MiniMindBackend):
    """The same backend with the forward pass replaced by fixed logits.

    Timing a run on it isolates what the stepper itself costs per step (sampling,
    measuring, records), a number another process on the machine barely disturbs.
    """

    def __init__(self, model: MiniMindLM, name: str) -> None:
        super().__init__(model, name)
        self._logits = torch.randn(1, self.vocab_size, generator=torch.Generator().manual_seed(0))

    def forward_last(
        self, input_ids: torch.Tensor, cache: KVCache[CacheLayer] | None, window: int | None
    ) -> torch.Tensor:
        return self._logits.expand(input_ids.shape[0], -1).to(self.device)


def stepper_alone_seconds(loaded: LoadedModel, prompt: list[int], new_tokens: int) -> float:
    """Seconds per decode step of a cached greedy run on `_FixedLogits` (records on)."""
    return stepper_decode(
        _FixedLogits(loaded.model, loaded.name), loaded, prompt, new_tokens, "cached"
    )[0]


def sampling_seconds(
    backend: MiniMindBackend,
    loaded: LoadedModel,
    samples: int,
    temperatures: Sequence[float],
    new_tokens: int,
) -> float:
    """Wall time of the whole repeated-sampling experiment (exactly `new_tokens` per row)."""
    prompt = loaded.tokenizer.chat_ids(SAMPLING_QUESTION)
    start = time.perf_counter()
    for _ in repeated_sampling(backend, loaded.tokenizer, prompt, temperatures, samples,
                               new_tokens, settings=SamplingSettings(temperature=1.0, top_p=0.85),
                               stop_at_eos=False):
        pass
    return time.perf_counter() - start


def run_bench(
    loaded: LoadedModel,
    *,
    threads: Sequence[int] = (1, 2),
    prompt_tokens: int = 183,
    new_tokens: int = 64,
    repeats: int = 5,
    samples: int = 30,
    temperatures: Sequence[float] = SAMPLING_TEMPERATURES,
    sample_tokens: int = 32,
) -> list[BenchResult]:
    """Measure everything once per thread count; returns one `BenchResult` each."""
    backend = MiniMindBackend(loaded.model, name=loaded.name)
    prompt = lab_prompt_ids(loaded.tokenizer, prompt_tokens)
    prompt_t = torch.tensor([prompt])
    eos = loaded.tokenizer.eos_id if loaded.tokenizer.eos_id is not None else backend.eos_token_id
    before = torch.get_num_threads()
    results = []
    try:
        for n_threads in threads:
            torch.set_num_threads(n_threads)
            # Warm-up: first calls pay for allocator growth and kernel selection.
            bare_decode(loaded.model, prompt_t, 4)
            stepper_decode(backend, loaded, prompt, 4, "cached")
            stepper_decode(backend, loaded, prompt, 2, "recompute")
            bare, bare_cpu, cached_wall, cached_cpu, cached_step, ttft = [], [], [], [], [], []
            recompute, bare_sampling = [], []
            for _ in range(repeats):
                wall, cpu = bare_decode(loaded.model, prompt_t, new_tokens)
                bare.append(wall)
                bare_cpu.append(cpu)
                sampled = bare_decode(
                    loaded.model, prompt_t, new_tokens, sampling=True, banned_token=eos
                )
                bare_sampling.append(sampled[0])
                wall, cpu, step, first = stepper_decode(
                    backend, loaded, prompt, new_tokens, "cached"
                )
                cached_wall.append(wall)
                cached_cpu.append(cpu)
                cached_step.append(step)
                ttft.append(first)
            for _ in range(max(1, repeats // 2)):
                recompute.append(
                    stepper_decode(backend, loaded, prompt, new_tokens, "recompute")[0]
                )
            alone = median(
                [stepper_alone_seconds(loaded, prompt, new_tokens) for _ in range(3 * repeats)]
            )
            sampling = [
                sampling_seconds(backend, loaded, samples, temperatures, sample_tokens)
                for _ in range(max(1, repeats // 2))
            ]
            bare_ms = median(bare) * 1e3
            bare_sampling_ms = median(bare_sampling) * 1e3
            cached_ms = median(cached_wall) * 1e3
            results.append(
                BenchResult(
                    threads=n_threads,
                    prompt_tokens=prompt_tokens,
                    new_tokens=new_tokens,
                    bare_decode_ms=bare_ms,
                    bare_sampling_ms=bare_sampling_ms,
                    cached_decode_ms=cached_ms,
                    cached_step_ms=median(cached_step) * 1e3,
                    recompute_decode_ms=median(recompute) * 1e3,
                    ttft_ms=median(ttft) * 1e3,
                    records_overhead=cached_ms / bare_ms - 1.0,
                    records_only_overhead=cached_ms / bare_sampling_ms - 1.0,
                    records_overhead_cpu=median(cached_cpu) / median(bare_cpu) - 1.0,
                    stepper_alone_us=alone * 1e6,
                    sampling_seconds=median(sampling),
                    sampling_shape=(samples, len(temperatures), sample_tokens),
                )
            )
    finally:
        torch.set_num_threads(before)
    return results


def format_results(results: Sequence[BenchResult], label: str) -> str:
    lines = [f"Model: {label}"]
    if results:
        r0 = results[0]
        s, k, n = r0.sampling_shape
        lines.append(
            f"fp32, batch 1, P={r0.prompt_tokens}, N={r0.new_tokens}; sampling {s} samples × "
            f"{k} temperatures × {n} tokens (batched, top-p 0.85); each time is the median "
            "of the interleaved repeats, as in the window, the labs and `compare --repeats`"
        )
    lines.append("")
    header = f"  {'':<36}" + "".join(f"{f'{r.threads} thread(s)':>14}" for r in results)
    lines.append(header + "   target (1 thread)")

    def row(name: str, values: list[str], target: str = "") -> None:
        lines.append(f"  {name:<36}" + "".join(f"{v:>14}" for v in values) + f"   {target}")

    row("cached decode, records on (ms/tok)", [f"{r.cached_decode_ms:.3f}" for r in results],
        f"≤ {TARGET_CACHED_MS}")
    row("  forward+sampling, median step (ms/tok)",
        [f"{r.cached_step_ms:.3f}" for r in results])
    row("bare loop: model + argmax (ms/tok)", [f"{r.bare_decode_ms:.3f}" for r in results])
    row("records overhead vs bare loop (wall)", [f"{r.records_overhead:+.1%}" for r in results],
        f"≤ {TARGET_OVERHEAD:.0%}")
    row("records overhead (process CPU time)", [f"{r.records_overhead_cpu:+.1%}" for r in results])
    row("bare loop + stepper's greedy sampling", [f"{r.bare_sampling_ms:.3f}" for r in results])
    row("  records alone over that loop (wall)",
        [f"{r.records_only_overhead:+.1%}" for r in results])
    row("stepper alone, model replaced (µs/step)", [f"{r.stepper_alone_us:.0f}" for r in results])
    row("  as a share of a bare decode step",
        [f"{r.stepper_alone_us / 1e3 / r.bare_decode_ms:.1%}" for r in results])
    row("recompute decode (ms/tok)", [f"{r.recompute_decode_ms:.2f}" for r in results])
    row("TTFT, cached prefill (ms)", [f"{r.ttft_ms:.2f}" for r in results])
    row("repeated sampling, total (s)", [f"{r.sampling_seconds:.3f}" for r in results],
        f"≤ {TARGET_SAMPLING_S}")
    return "\n".join(lines)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--model", default=None,
                   help="model folder or .pth (default: the embedded course model; "
                   "'random': random weights, course vocabulary)")
    p.add_argument("--threads", default="1,2", help="torch thread counts to try (default 1,2)")
    p.add_argument("--prompt-tokens", type=cli_args.tokens, default=183)
    p.add_argument("--new-tokens", type=cli_args.tokens, default=64)
    p.add_argument(
        "--repeats", type=cli_args.bounded(1, MAX_REPEATS), default=5,
        help="runs per measurement (median)",
    )
    p.add_argument("--samples", type=cli_args.rows, default=30)
    p.add_argument(
        "--temperatures", type=cli_args.bounded(1, len(SAMPLING_TEMPERATURES)), default=5,
        help="how many temperatures",
    )
    p.add_argument("--sample-tokens", type=cli_args.tokens, default=32)
    p.add_argument("--json", default=None, help="also write the numbers to this JSON file")


def run_from_args(args: argparse.Namespace) -> int:
    try:
        threads = [int(t) for t in str(args.threads).split(",") if t.strip()]
    except ValueError as exc:
        raise ValueError(
            f"--threads takes comma-separated counts like 1,2; got {args.threads!r}"
        ) from exc
    if not threads or min(threads) < 1:
        raise ValueError("--threads needs positive counts, e.g. 1,2.")
    if max(threads) > max(2, limits.max_threads()):  # 1,2 is the default even on one core
        raise ValueError(f"--threads counts go up to {limits.max_threads()} (the CPU cores here).")
    if min(args.prompt_tokens, args.new_tokens, args.repeats, args.samples) < 1:
        raise ValueError("--prompt-tokens, --new-tokens, --repeats and --samples must be ≥ 1.")
    if not 1 <= args.temperatures <= len(SAMPLING_TEMPERATURES):
        raise ValueError(f"--temperatures must be 1 … {len(SAMPLING_TEMPERATURES)}.")
    loaded, label = bench_model(args.model)
    results = run_bench(loaded, threads=threads, prompt_tokens=args.prompt_tokens,
                        new_tokens=args.new_tokens, repeats=args.repeats, samples=args.samples,
                        temperatures=SAMPLING_TEMPERATURES[: args.temperatures],
                        sample_tokens=args.sample_tokens)
    print(format_results(results, label))
    if args.json:
        Path(args.json).write_text(
            json.dumps({"model": label, "results": [asdict(r) for r in results]}, indent=2) + "\n",
            encoding="utf-8",
        )
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m kvstudio.cli.tools.bench", description=__doc__)
    add_arguments(parser)
    args = parser.parse_args(list(argv) if argv is not None else None)
    try:
        return run_from_args(args)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
