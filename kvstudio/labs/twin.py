"""The engine twin lab: the same model, the same prompt, in KV Studio and in llama.cpp.

Owns `twin` and `run`: the loaded model is written as a temporary GGUF
(``files.gguf_export``), opened in llama.cpp (``engine.backends.llamacpp``, the
optional llama extra), and both engines then answer the same questions side by
side, each from its own bookkeeping:

- the tokens on P lab tokens, N new ones (eos banned until N, as
  ``stop_at_eos=False``), greedy (T = 0) or sampled with the same seed by
  KV Studio's own sampler on each engine's logits: identical, or the first
  step where they part, with the logit gap before it and there, greedy, our
  top-2 margin, sampled, the largest gap in a token's probability (at T);
- KV bytes per token: ours from our cache's used bytes over its tokens,
  llama.cpp's from its own ``llama_kv_cache: size`` line and the growth of its
  per-sequence state;
- prompt reuse: a second prompt sharing a prefix with the first, the tokens
  each engine evaluated keeping that prefix (llama.cpp's ``n_p_eval``) and
  without it;
- a copy and a crop of a sequence (our ``select_rows`` and ``crop``,
  llama.cpp's ``seq_cp`` and ``seq_rm``): continuing after either gives the
  logits of continuing straight on;
- decode ms/token on one thread, greedy, in interleaved rounds (medians).

A generator that yields `Progress`, then a `TwinResult`; it never imports Qt.
Its fronts: ``kvstudio.charts.labs.twin`` (the window's and the notebook's view) and
``kvstudio twin``. Without the llama extra, `run` says at once what to install.
"""

from __future__ import annotations

import importlib.util
import statistics
import tempfile
from collections.abc import Generator, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from kvstudio.engine.backends.llamacpp import LLAMA_MISSING, LlamaCppModel
from kvstudio.engine.backends.minimind import LanguageModel
from kvstudio.engine.cache.spec import CacheSpec
from kvstudio.engine.decode import feed
from kvstudio.engine.generate import Stepper
from kvstudio.engine.records import SamplingSettings, decode_seconds_per_token
from kvstudio.engine.tokenizer import TextTokenizer
from kvstudio.files.gguf_export import GGUF_MISSING, export_gguf
from kvstudio.files.loaded import LoadedModel
from kvstudio.labs.common import Progress, check_length, lab_prompt_ids, lab_text
from kvstudio.labs.course import COURSE

COPY_AT = 20  # the copy and crop check: 20 tokens cached, then two more fed
SAME_LOGITS = 1e-4  # continuing a copy or a crop must give the straight run's logits


@dataclass(frozen=True)
class EngineSide:
    """One engine's answers, each from its own bookkeeping."""

    name: str  # "KV Studio" or "llama.cpp"
    tokens: tuple[int, ...]
    kv_bytes_per_token: float  # as this engine reports it
    kv_source: str  # where that number was read
    reuse_evaluated: int  # tokens of the second prompt evaluated, keeping the shared prefix
    fresh_evaluated: int  # the same, from an empty cache
    copy_crop_same: bool  # continuing a copied and a cropped sequence = continuing straight
    round_ms: tuple[float, ...]  # decode ms/token, the median step of each round

    @property
    def ms_per_token(self) -> float:
        return float(statistics.median(self.round_ms))


@dataclass(frozen=True)
class TwinResult:
    prompt_tokens: int
    new_tokens: int
    sampling: SamplingSettings  # how both engines chose their tokens (greedy: T = 0)
    shared_prefix: int  # tokens the reuse check's two prompts share
    ours: EngineSide
    theirs: EngineSide
    first_diff_step: int | None  # None: every token equal
    max_logit_gap: float  # max |Δlogit| over the steps up to the first difference
    top2_margin: float | None  # greedy: our top-1 minus top-2 logit at the first difference
    probability_gap: float | None  # sampled: max |Δ softmax(logits / T)| there
    llama_state_bytes_per_token: float  # llama_state_seq_get_size's growth per token
    llama_kv_line: str  # llama.cpp's own line

    @property
    def identical(self) -> bool:
        return self.first_diff_step is None

    @property
    def speed_ratio(self) -> float:
        """Our ms/token over llama.cpp's (> 1: llama.cpp is faster)."""
        return self.ours.ms_per_token / self.theirs.ms_per_token


def _ours(backend: LanguageModel, tokenizer: TextTokenizer, ids: Sequence[int], n: int,
          sampling: SamplingSettings) -> tuple[list[int], np.ndarray, float, float]:
    """Our run: tokens, logits (n, V), decode s/token, used bytes per cached token."""
    stepper = Stepper(backend, tokenizer, list(ids), mode="cached", sampling=sampling,
                      max_new_tokens=n, stop_at_eos=False, top_n=0)
    logits = []
    for _ in range(n):
        stepper.step()
        assert stepper.last_logits is not None
        logits.append(stepper.last_logits[0].float().cpu().numpy().copy())
    last = stepper.records[-1]
    per_token = last.cache_used_bytes / last.cache_length
    seconds = decode_seconds_per_token(stepper.records) or 0.0
    return stepper.generated_ids[0], np.stack(logits), seconds, per_token


def _ours_reuse(backend: LanguageModel, first: list[int], second: list[int], keep: int) -> int:
    """Tokens of `second` our model is fed when the cache keeps `keep` tokens of `first`."""
    cache = backend.new_cache(CacheSpec("dynamic"), 1)
    with torch.inference_mode():
        feed(backend, torch.tensor([first]), cache)
        cache.crop(keep)
        fed = torch.tensor([second[keep:]])
        feed(backend, fed, cache)
    return int(fed.shape[1])


def _ours_copy_crop(backend: LanguageModel, ids: list[int]) -> bool:
    """Our row copy (select_rows) and crop: continuing either = continuing straight on."""
    head, tail = torch.tensor([ids[:COPY_AT]]), torch.tensor([ids[COPY_AT:COPY_AT + 2]])
    with torch.inference_mode():
        cache = backend.new_cache(CacheSpec("dynamic"), 1)
        feed(backend, head, cache)
        straight = feed(backend, tail, cache)[0]  # (V,)
        cache.crop(COPY_AT)
        cropped = feed(backend, tail, cache)[0]
        copy = backend.new_cache(CacheSpec("dynamic"), 1)
        feed(backend, head, copy)
        copy.select_rows(torch.tensor([0, 0]))  # row 1 is a copy of row 0
        copied = feed(backend, tail.repeat(2, 1), copy)[1]
    return all(bool((x - straight).abs().max() < SAME_LOGITS) for x in (cropped, copied))


def _llama_copy_crop(engine: LlamaCppModel, ids: list[int]) -> bool:
    """llama.cpp's seq_cp and seq_rm: continuing either = continuing straight on."""
    tail = ids[COPY_AT:COPY_AT + 2]
    engine.seq_rm(0)
    engine.seq_rm(1)
    engine.decode(ids[:COPY_AT], 0)
    straight = engine.decode(tail, 0)
    engine.seq_cp(0, 1, COPY_AT)
    copied = engine.decode(tail, 1)
    engine.seq_rm(0, COPY_AT)
    cropped = engine.decode(tail, 0)
    engine.seq_rm(1)
    return all(float(np.abs(x - straight).max()) < SAME_LOGITS for x in (copied, cropped))


def twin(
    loaded: LoadedModel, gguf_path: Path, *, prompt_tokens: int, new_tokens: int, repeats: int,
    sampling: SamplingSettings | None = None,
) -> Generator[Progress | TwinResult, None, None]:
    """Both engines on P lab tokens and N new ones, choosing by `sampling` (greedy when None);
    `repeats` interleaved timing rounds, greedy."""
    backend, tok = loaded.backend, loaded.tokenizer
    greedy = SamplingSettings.greedy_settings()
    sampling = sampling or greedy
    ids = lab_prompt_ids(tok, prompt_tokens)
    total = 2 + 2 * repeats
    with LlamaCppModel(gguf_path, n_ctx=max(512, prompt_tokens + new_tokens + 2),
                       threads=1) as engine:
        yield Progress("twin", "KV Studio", 0, total)
        our_ids, our_logits, _, our_bytes = _ours(backend, tok, ids, new_tokens, sampling)
        yield Progress("twin", "llama.cpp", 1, total)
        theirs = engine.generate(ids, new_tokens, sampling, banned=tok.eos_id)
        diff = next((i for i, (a, b) in enumerate(zip(our_ids, theirs.tokens, strict=True))
                     if a != b), None)
        upto = new_tokens if diff is None else diff + 1
        gap = max(float(np.abs(our_logits[i] - theirs.last_logits[i]).max())
                  for i in range(upto))
        margin = probability_gap = None
        if diff is not None and sampling.greedy:
            top2 = np.sort(our_logits[diff])[-2:]
            margin = float(top2[1] - top2[0])
        elif diff is not None:  # the same draw fell on another token: by how much p differs
            p_ours, p_theirs = (torch.softmax(torch.from_numpy(row) / sampling.temperature, -1)
                                for row in (our_logits[diff], theirs.last_logits[diff]))
            probability_gap = float((p_ours - p_theirs).abs().max())
        # Prompt reuse: the second prompt keeps 3/4 of the first, then other text.
        shared = max(1, prompt_tokens * 3 // 4)
        second = ids[:shared] + lab_prompt_ids(tok, prompt_tokens - shared, lab_text(short=True))
        shared = next((i for i, (a, b) in enumerate(zip(ids, second, strict=True)) if a != b),
                      prompt_tokens)
        keep = min(shared, len(second) - 1)
        reuse = engine.prompt_reuse(ids, second)
        # Sizes as llama.cpp reports them: its load line and its sequence state's growth.
        report = engine.kv_report()
        engine.seq_rm(0)
        engine.decode(ids[:COPY_AT], 0)
        small = engine.seq_state_bytes(0)
        engine.decode(ids[COPY_AT:2 * COPY_AT], 0)
        state_per_token = (engine.seq_state_bytes(0) - small) / COPY_AT
        our_copy, their_copy = _ours_copy_crop(backend, ids), _llama_copy_crop(engine, ids)
        ours_ms, theirs_ms = [], []
        for r in range(repeats):  # interleaved: a slow moment on the machine hits both
            yield Progress("twin", f"round {r + 1}: KV Studio", 2 + 2 * r, total)
            ours_ms.append(_ours(backend, tok, ids, new_tokens, greedy)[2] * 1e3)
            yield Progress("twin", f"round {r + 1}: llama.cpp", 3 + 2 * r, total)
            steps = engine.greedy(ids, new_tokens, banned=tok.eos_id).seconds[1:]
            theirs_ms.append(float(statistics.median(steps)) * 1e3 if steps else 0.0)
    ours = EngineSide("KV Studio", tuple(our_ids), our_bytes, "cache used bytes / tokens",
                      _ours_reuse(backend, ids, second, keep), len(second), our_copy,
                      tuple(ours_ms))
    llama = EngineSide("llama.cpp", tuple(theirs.tokens), report.bytes_per_token,
                       "llama_kv_cache: size / cells", reuse.evaluated_reusing,
                       reuse.evaluated_fresh, their_copy, tuple(theirs_ms))
    yield TwinResult(prompt_tokens, new_tokens, sampling, shared, ours, llama, diff, gap,
                     margin, probability_gap, state_per_token, report.line)


def check_installed() -> None:
    """A ValueError saying what to install when the llama extra (gguf, llama-cpp-python) is
    missing: asked before any work, so every front says so at once."""
    for module, missing in (("llama_cpp", LLAMA_MISSING), ("gguf", GGUF_MISSING)):
        if importlib.util.find_spec(module) is None:
            raise ValueError(missing)


def run(model: LoadedModel, params: Mapping[str, Any]) -> Iterator[Progress | TwinResult]:
    """The lab as every front runs it: the loaded model as a temporary GGUF, P and N tokens."""
    check_installed()
    p, n = params["prompt_tokens"], params["new_tokens"]
    check_length(model, p + n)
    if p <= COPY_AT * 2:
        raise ValueError(f"The twin lab needs P > {2 * COPY_AT} tokens (its copy and size "
                         "checks use the first 40).")
    return _run(model, p, n, params["repeats"], sampling_of(params))


def sampling_of(params: Mapping[str, Any]) -> SamplingSettings:
    """The twin's choice of tokens: greedy at temperature 0, else the course preset's top-k,
    top-p and penalty at this temperature and seed (MiniMind's order, in both engines)."""
    if params["temperature"] == 0:
        return SamplingSettings.greedy_settings()
    return SamplingSettings(temperature=params["temperature"], top_k=COURSE.top_k,
                            top_p=COURSE.top_p, repetition_penalty=COURSE.repetition_penalty,
                            seed=params["seed"])


def _run(model: LoadedModel, p: int, n: int, repeats: int,
         sampling: SamplingSettings) -> Iterator[Progress | TwinResult]:
    with tempfile.TemporaryDirectory(prefix="kvstudio-twin-") as folder:
        path = export_gguf(model.model, model.tokenizer, Path(folder) / "model.gguf",
                           name=model.name)
        yield from twin(model, path, prompt_tokens=p, new_tokens=n, repeats=repeats,
                        sampling=sampling)
