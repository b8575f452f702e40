"""Our engine vs transformers on the same weights: cached and uncached, per-token time, one run.

    python benchmarks/hf_vs_ours.py        # embedded model, else a random course model
    python benchmarks/hf_vs_ours.py --model kvstudio/resources/models/ko-chat --prompt-tokens 183

The model (ours) is converted to a transformers folder in a temp directory
(``kvstudio.files.convert``), so both engines run identical weights. Rows:

- ours · Stepper: our MiniMindLM driven by our stepper, every record on;
- transformers · generate: ``model.generate`` greedy, ``min_new_tokens = N``, with
  ``use_cache`` True / False (what the course notebook times);
- transformers · Stepper: the same transformers model driven by our stepper
  through ``HFBackend`` (what KV Studio shows for a Hugging Face folder).

With ``--sampling``, also the repeated-sampling lab: 30 samples × 5 temperatures ×
32 new tokens, top-p 0.85, top-k off, batched — our ``repeated_sampling`` against
``generate(do_sample=True, num_return_sequences=30)`` on the same weights (total
seconds; the samples themselves differ, each engine has its own random numbers).

Each row is warmed up once, then the rows are timed in turn, ``--repeats``
rounds (median; interleaved so a busy neighbour slows every row alike).
ms/token = total wall time of the N-token generation / N (prefill included,
as the notebook divides). Greedy tokens are checked to be identical
across rows. Needs the optional extra: pip install -e '.[hf]'.
"""

from __future__ import annotations

import argparse
import logging
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import torch

from kvstudio.cli.tools.bench import SAMPLING_QUESTION, SAMPLING_TEMPERATURES, sampling_seconds
from kvstudio.engine.backends.hf import INSTALL_HINT, HFBackend
from kvstudio.engine.backends.minimind import LanguageModel, MiniMindBackend
from kvstudio.engine.generate import Stepper
from kvstudio.engine.records import SamplingSettings
from kvstudio.engine.tokenizer import TextTokenizer
from kvstudio.files.checkpoints import default_model, load_any
from kvstudio.files.convert import export_hf
from kvstudio.files.loaded import LoadedModel
from kvstudio.labs.common import lab_prompt_ids


def _stepper_run(
    backend: LanguageModel, tokenizer: TextTokenizer, prompt: list[int], mode: str, n: int
) -> Callable[[], list[int]]:
    def go() -> list[int]:
        stepper = Stepper(
            backend,
            tokenizer,
            prompt,
            mode=mode,  # type: ignore[arg-type]
            sampling=SamplingSettings.greedy_settings(),
            max_new_tokens=n,
            stop_at_eos=False,
        )
        for _ in stepper:
            pass
        return stepper.generated_ids[0]

    return go


def _generate(
    model: object, prompt: list[int], n: int, **options: object
) -> Callable[[], list[int]]:
    """One `generate` of exactly n new tokens per `options` (row 0's new tokens returned)."""
    ids = torch.tensor([prompt])
    mask = torch.ones_like(ids)

    def go() -> list[int]:
        with torch.inference_mode():
            out = model.generate(  # type: ignore[attr-defined]
                ids,
                attention_mask=mask,
                max_new_tokens=n,
                min_new_tokens=n,
                pad_token_id=0,
                **options,
            )
        return [int(t) for t in out[0, len(prompt) :]]

    return go


def _generate_run(
    model: object, prompt: list[int], use_cache: bool, n: int
) -> Callable[[], list[int]]:
    return _generate(model, prompt, n, do_sample=False, use_cache=use_cache)


def _sample_ours(backend: MiniMindBackend, loaded: LoadedModel) -> Callable[[], list[int]]:
    """`kvstudio bench`'s own sampling measurement (same question and settings)."""

    def go() -> list[int]:
        sampling_seconds(backend, loaded, 30, SAMPLING_TEMPERATURES, 32)
        return []

    return go


def _sample_generate(
    model: object, prompt: list[int], samples: int, n: int
) -> Callable[[], list[int]]:
    """The sampling lab with `generate`: one batch of `samples` rows per temperature."""
    runs = [
        _generate(
            model,
            prompt,
            n,
            do_sample=True,
            temperature=t,
            top_k=0,
            top_p=0.85,
            num_return_sequences=samples,
        )
        for t in SAMPLING_TEMPERATURES
    ]
    return lambda: [token for run in runs for token in run()]


def _time_rows(fns: list[Callable[[], list[int]]], repeats: int) -> list[tuple[float, list[int]]]:
    """Median seconds and the tokens of each row; rows interleaved round by round."""
    tokens = [fn() for fn in fns]  # warm-up: lazy initialisation, allocator, kernels
    times: list[list[float]] = [[] for _ in fns]
    for _ in range(repeats):
        for i, fn in enumerate(fns):
            t0 = time.perf_counter()
            tokens[i] = fn()
            times[i].append(time.perf_counter() - t0)
    return [(statistics.median(t), ids) for t, ids in zip(times, tokens, strict=True)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, default=None, help="our model folder or .pth")
    parser.add_argument("--prompt-tokens", type=int, default=183)
    parser.add_argument("--new-tokens", type=int, default=64)
    parser.add_argument("--threads", type=int, default=1, help="torch threads (default 1)")
    parser.add_argument("--repeats", type=int, default=3, help="timed rounds (median)")
    parser.add_argument(
        "--sampling", action="store_true", help="also time 30 samples × 5 temperatures × 32 tokens"
    )
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    torch.set_num_threads(args.threads)
    try:
        import transformers
    except ImportError:
        print(f"transformers is not installed; {INSTALL_HINT}", file=sys.stderr)
        return 2

    loaded = load_any(args.model) if args.model else default_model()
    prompt = lab_prompt_ids(loaded.tokenizer, args.prompt_tokens)
    n = args.new_tokens
    print(loaded.description)
    print(
        f"transformers {transformers.__version__}, torch {torch.__version__}, "
        f"{torch.get_num_threads()} thread(s), fp32 CPU, P={len(prompt)}, N={n}, batch 1"
    )
    with tempfile.TemporaryDirectory() as tmp:
        folder = export_hf(loaded.model, loaded.tokenizer, Path(tmp) / "hf")
        hf = HFBackend.from_folder(folder, dtype="float32", device="cpu")
        ours = MiniMindBackend(loaded.model)
        rows: list[tuple[str, str, Callable[[], list[int]]]] = [
            ("ours · Stepper", "cached", _stepper_run(ours, loaded.tokenizer, prompt, "cached", n)),
            ("transformers · generate", "cached", _generate_run(hf.model, prompt, True, n)),
            (
                "transformers · Stepper",
                "cached",
                _stepper_run(hf, loaded.tokenizer, prompt, "cached", n),
            ),
            (
                "ours · Stepper",
                "uncached",
                _stepper_run(ours, loaded.tokenizer, prompt, "recompute", n),
            ),
            ("transformers · generate", "uncached", _generate_run(hf.model, prompt, False, n)),
            (
                "transformers · Stepper",
                "uncached",
                _stepper_run(hf, loaded.tokenizer, prompt, "recompute", n),
            ),
        ]
        timed = _time_rows([fn for *_, fn in rows], args.repeats)
        results = [(e, m, s, t) for (e, m, _), (s, t) in zip(rows, timed, strict=True)]
        sampled: list[tuple[float, list[int]]] = []
        if args.sampling:
            question = loaded.tokenizer.chat_ids(SAMPLING_QUESTION)
            sampled = _time_rows(
                [
                    _sample_ours(ours, loaded),
                    _sample_generate(hf.model, question, 30, 32),
                ],
                args.repeats,
            )
    reference = results[0][3]
    print(f"\n{'engine':<26}{'mode':<10}{'total s':>9}{'ms/token':>10}  same tokens")
    for engine, mode, seconds, tokens in results:
        same = "yes" if tokens == reference else "NO"
        print(f"{engine:<26}{mode:<10}{seconds:>9.3f}{1000 * seconds / n:>10.2f}  {same}")
    by = {(e, m): s for e, m, s, _ in results}
    for mode in ("cached", "uncached"):
        ratio = by[("ours · Stepper", mode)] / by[("transformers · generate", mode)]
        print(f"{mode}, ours · Stepper / transformers · generate: {ratio:.2f}×")
    for engine in ("ours · Stepper", "transformers · generate", "transformers · Stepper"):
        ratio = by[(engine, "uncached")] / by[(engine, "cached")]
        print(f"uncached / cached, {engine}: {ratio:.1f}×")
    if sampled:
        print(f"\n30 samples × {len(SAMPLING_TEMPERATURES)} temperatures × 32 tokens, top-p 0.85:")
        for name, (seconds, _) in zip(
            ("ours · repeated_sampling", "transformers · generate"), sampled, strict=True
        ):
            print(
                f"  {name:<26}{seconds:>7.3f} s  "
                f"({seconds / len(SAMPLING_TEMPERATURES):.3f} s per temperature)"
            )
    return 0 if all(t == reference for *_, t in results) else 1


if __name__ == "__main__":
    sys.exit(main())
