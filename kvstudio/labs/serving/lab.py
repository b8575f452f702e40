"""The serving lab: many requests, one model, one block pool, step by step.

Owns `serving`: a generator that runs a set of requests (`load_requests`:
a requests file, a shared system prompt) under each scheduler configuration
asked for (static or continuous batching, chunked prefill, a prefix cache,
a block size and budget), k times interleaved (configuration 1, 2, …, then
again) so every time is a median of k; and each request once alone (batch of
one, whole prefill, no prefix cache) to show that batching changed no token,
and by how much it moved the logits (float32 rounding: a product rounds a row
differently in a batch of another size, ``MiniMindLM.forward_packed``).
It yields `Progress`, and the first round's `ServingStep`s as they happen,
and yields a `ServingResult` last (``serving_records.py``): per request its
prefix hit, TTFT, inter-token latency p50/p95, end-to-end time and the solo
check (same tokens, max |Δlogit|); per scheduler the totals (throughput, wasted
token slots beside their formula, peak blocks and bytes). `run` is the lab as
every front runs it (``SERVING.run``: the window, the notebook, ``kvstudio serving``):
a requests file under its schedulers (its system prompt: `shared_system`, every front's
rule), then the batch sweep (``batching.py``); `sweep` is that sweep alone.

It never imports Qt and never prints.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Generator, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from kvstudio.engine import formulas
from kvstudio.engine.backends.minimind import LanguageModel
from kvstudio.engine.records import SamplingSettings
from kvstudio.engine.serving.engine import LLMEngine, solo_run
from kvstudio.engine.serving.records import RequestSpec, SchedulerConfig, ServingStep
from kvstudio.engine.serving.request import Request, max_logit_gap
from kvstudio.engine.serving.request_file import RequestLine, build_requests, read_request_lines
from kvstudio.engine.tokenizer import TextTokenizer
from kvstudio.files.loaded import LoadedModel
from kvstudio.files.resources import PROMPTS_DIR
from kvstudio.labs.common import Progress, Spread, answer_text, spread
from kvstudio.labs.course import COURSE
from kvstudio.labs.serving import batching
from kvstudio.labs.serving import size as serving_size
from kvstudio.labs.serving.records import (
    RequestOutcome,
    RunTotals,
    SchedulerRun,
    ServingResult,
)

EXAMPLE_REQUESTS = PROMPTS_DIR / "serving_requests.txt"
# The example's shared system prompt (the requests file holds only the questions).
EXAMPLE_SYSTEM = "당신은 친절한 한국어 도우미입니다. 짧고 알기 쉽게 답하세요."
DEFAULT_NEW_TOKENS = COURSE.answer_tokens  # a request's budget unless its line says +N
MAX_PATH_CHARS = 4096  # PATH_MAX on Linux: a longer "path" is no path


def load_requests(
    path: Path,
    tokenizer: TextTokenizer,
    backend: LanguageModel,
    *,
    system: str = "",
    max_new_tokens: int = DEFAULT_NEW_TOKENS,
    chat: bool | None = None,
    lines: Sequence[RequestLine] | None = None,
) -> tuple[RequestSpec, ...]:
    """The requests of the file at `path`, as the model will be fed them (ValueError for a
    bad file: empty, binary, too many lines, a bad @K, a prompt past the model's positions).

    `chat`: ChatML with the system prompt (default: when the tokenizer has the chat tokens).
    `lines`: the file's lines when already read (`read_request_lines`, before a model loads).
    """
    if lines is None:
        lines = read_request_lines(path)
    return build_requests(
        lines, tokenizer, system=system, max_new_tokens=max_new_tokens,
        max_positions=backend.max_positions,
        chat=tokenizer.has_chat_tokens if chat is None else chat, where=str(path),
    )


def serving(
    backend: LanguageModel,
    tokenizer: TextTokenizer,
    requests: Sequence[RequestSpec],
    configs: Sequence[SchedulerConfig],
    *,
    system: str = "",
    sampling: SamplingSettings | None = None,
    repeats: int = 1,
    confirmed: bool = False,
) -> Generator[Progress | ServingStep | ServingResult, None, None]:
    """Run `requests` under every config, `repeats` times interleaved; see the module doc.

    A run past `serving_size.ASK_CELLS` request-step records is refused unless
    `confirmed` (the command line's ``--yes``); every front refuses it the same way."""
    if not configs:
        raise ValueError("Name at least one scheduler to run.")
    if repeats < 1:
        raise ValueError(f"Repeat the run at least once, got {repeats}.")
    serving_size.check_size(requests, configs, repeats, confirmed=confirmed,
                            device=backend.device)
    settings = sampling or SamplingSettings.greedy_settings()
    for config in configs:  # every refusal before any work
        LLMEngine(backend, requests, config, settings)
    total = len(requests) + repeats * len(configs)
    done = 0
    solo: list[Request] = []  # each request alone, with its logits for the comparison
    for request in requests:
        solo.append(solo_run(backend, request, settings, keep_logits=True))
        done += 1
        yield Progress("serving", f"request {request.index + 1} alone", done, total)
    rounds: list[list[tuple[LLMEngine, tuple[ServingStep, ...]]]] = [[] for _ in configs]
    for repeat in range(repeats):
        for c, config in enumerate(configs):
            # The first round keeps the logits the solo comparison reads (a copy per token).
            engine = LLMEngine(backend, requests, config, settings, keep_logits=repeat == 0)
            steps: list[ServingStep] = []
            for step in engine.steps():
                steps.append(step)
                if repeat == 0:
                    yield step
            rounds[c].append((engine, tuple(steps)))
            done += 1
            yield Progress("serving", f"{config.policy}, round {repeat + 1}", done, total)
    runs = tuple(
        _scheduler_run(config, runs_of_config, tokenizer, solo)
        for config, runs_of_config in zip(configs, rounds, strict=True)
    )
    yield ServingResult(
        model=backend.name,
        system=system,
        requests=tuple(requests),
        runs=runs,
        repeats=repeats,
        greedy=settings.greedy,
        sampling=settings,
        bytes_per_token=formulas.model_bytes_per_token(backend),
    )


# ---- from steps to figures -----------------------------------------------------------------
def step_clock(steps: Sequence[ServingStep]) -> tuple[list[float], list[float]]:
    """(start, end) time of every step: the steps' model time laid end to end."""
    ends = np.cumsum([s.elapsed_s for s in steps]).tolist()
    starts = [end - s.elapsed_s for end, s in zip(ends, steps, strict=True)]
    return starts, ends


def token_steps(steps: Sequence[ServingStep], request: int) -> list[int]:
    """The steps at which `request` produced a token."""
    return [s.step for s in steps if s.requests[request].token is not None]


def static_padding_formula(steps: Sequence[ServingStep], answers: Sequence[int]) -> int:
    """Static batching's wasted slots by the arithmetic: per batch (the requests admitted
    in one step), Σ (P_max − P_r) + Σ (n_max − n_r), with P_r the prompt tokens row r
    prefilled (prefix hits left out) and n_r the tokens it generated."""
    wasted = 0
    for s in steps:
        if not s.admitted:
            continue
        prefilled = [s.requests[r].tokens_fed for r in s.admitted]
        generated = [answers[r] for r in s.admitted]
        wasted += sum(max(prefilled) - p for p in prefilled)
        wasted += sum(max(generated) - n for n in generated)
    return wasted


def _request_times(
    steps: Sequence[ServingStep], request: RequestSpec
) -> tuple[float, float | None, float | None, float]:
    """(TTFT, ITL p50, ITL p95, end-to-end) of one request in one run, seconds."""
    starts, ends = step_clock(steps)
    produced = token_steps(steps, request.index)
    arrived = starts[request.arrival] if request.arrival < len(starts) else 0.0
    gaps = [ends[b] - ends[a] for a, b in itertools.pairwise(produced)]
    p50 = float(np.percentile(gaps, 50)) if gaps else None
    p95 = float(np.percentile(gaps, 95)) if gaps else None
    return ends[produced[0]] - arrived, p50, p95, ends[produced[-1]] - arrived


def _maybe_spread(values: list[float | None]) -> Spread | None:
    present = [v for v in values if v is not None]
    return spread(present) if present else None


def _scheduler_run(
    config: SchedulerConfig,
    rounds: list[tuple[LLMEngine, tuple[ServingStep, ...]]],
    tokenizer: TextTokenizer,
    solo: Sequence[Request],
) -> SchedulerRun:
    first, steps = rounds[0]
    outcomes = []
    for served in first.requests:
        request = served.spec
        times = [_request_times(round_steps, request) for _, round_steps in rounds]
        assert served.first_token_step is not None and served.finish_step is not None
        outcomes.append(RequestOutcome(
            request=request,
            answer_ids=tuple(served.output_token_ids),
            answer_text=answer_text(tokenizer, served.output_token_ids),
            solo_ids=tuple(solo[request.index].output_token_ids),
            prefix_hit=served.prefix_hit,
            first_token_step=served.first_token_step,
            finish_step=served.finish_step,
            preemptions=served.num_preemptions,
            ttft_s=spread([t[0] for t in times]),
            itl_p50_s=_maybe_spread([t[1] for t in times]),
            itl_p95_s=_maybe_spread([t[2] for t in times]),
            e2e_s=spread([t[3] for t in times]),
            max_abs_logit_diff=max_logit_gap(served, solo[request.index]),
        ))
    answers = [len(o.answer_ids) for o in outcomes]
    produced = sum(answers)
    totals_s = [sum(s.elapsed_s for s in round_steps) for _, round_steps in rounds]
    totals = RunTotals(
        steps=len(steps),
        answer_tokens=produced,
        prefill_tokens=sum(s.prefill_tokens for s in steps),
        decode_tokens=sum(s.decode_tokens for s in steps),
        padding_slots=sum(s.padding_slots for s in steps),
        padding_formula=(static_padding_formula(steps, answers)
                         if config.policy == "static" else 0),
        prefix_hit_tokens=sum(s.prefix_hit_tokens for s in steps),
        preemptions=sum(len(s.preempted) for s in steps),
        peak_blocks=max(s.blocks_used for s in steps),
        peak_cache_bytes=max(s.cache_bytes for s in steps),
        block_bytes=first.kv_cache_manager.block_nbytes,
        total_s=spread(totals_s),
        throughput_tps=spread([produced / t for t in totals_s if t > 0] or [0.0]),
    )
    return SchedulerRun(config=config, steps=steps, outcomes=tuple(outcomes), totals=totals)


# ---- the lab as every front runs it -------------------------------------------------------
def requests_path(value: object) -> Path | None:
    """The requests file `value` names (None or "": the shipped example)."""
    if value is None or value == "":
        return None
    if not isinstance(value, str | os.PathLike) or len(str(value)) > MAX_PATH_CHARS:
        raise ValueError("requests must be the path of a requests file, or None for the "
                         "shipped example.")
    path = Path(value).expanduser()
    if not path.is_file():
        raise ValueError(f"No requests file at {path}: give a text file with one question a "
                         "line, or None for the shipped example.")
    return path


def sampling_settings(params: Mapping[str, Any]) -> SamplingSettings:
    """Greedy, or with `temperature` above 0 the course's top-k/top-p and `seed`
    (each request samples with its own generator from it)."""
    temperature, seed = params["temperature"], params["seed"]
    if temperature != 0:  # -1 is refused by the one rule, never greedy
        return SamplingSettings(temperature=temperature, top_k=COURSE.top_k,
                                top_p=COURSE.top_p, seed=seed)
    return SamplingSettings.greedy_settings(seed)


def scheduler_configs(params: Mapping[str, Any]) -> tuple[SchedulerConfig, ...]:
    """One configuration per policy (`policies`, else the one `policy`); chunked prefill
    is a continuous policy, so a static one runs without it."""
    return tuple(
        SchedulerConfig(policy=policy, max_batch=params["max_batch"],
                        chunk=None if policy == "static" or not params["chunk"]
                        else params["chunk"],
                        block_size=params["block_size"],
                        block_budget=params["block_budget"] or None,
                        prefix_cache=params["prefix"])
        for policy in params.get("policies") or (params["policy"],)
    )


def shared_system(text: str, path: Path | None) -> str:
    """The system prompt every request shares: `text`; left blank, the example's with the
    shipped example (`path` None) and none with one's own requests file (every front)."""
    return text.strip() or (EXAMPLE_SYSTEM if path is None else "")


def run(model: LoadedModel, params: Mapping[str, Any]) -> Iterator[object]:
    """The requests of `params["requests"]` (a file's path; None: the shipped example)
    under one scheduler, then one decode step timed per batch size (`sweep`); it ends with
    a `batching.ServingLabResult`. Checked here, before anything runs: a bad file or a run
    too large is one message. A model the serving engine cannot run gets the sweep only.

    `rounds` times the requests, `repeats` the sweep (`context` tokens a row); `block_budget`
    0 is no limit; `temperature` and `seed` make `sampling_settings`; `system` is read by
    `shared_system`. A front's own settings (SERVING's declared `extras`; without them, the
    window's): `requests`, `policies` (several schedulers, one after the other), `plain` (no
    chat template), `confirmed` and `confirm_hint` (past the size rule: the command line's
    --yes).
    """
    path = requests_path(params.get("requests"))
    sizes = batching.check_batch_sizes(params["batch_sizes"]) if params["batch_sizes"] else ()
    configs = scheduler_configs(params)
    confirmed = params.get("confirmed", False)
    rounds = params["rounds"]  # the requests' rounds (the sweep's: repeats)
    backend, tokenizer = model.backend, model.tokenizer
    requests_run: Iterator[object] | None = None
    if batching.runs_requests(backend):
        system = shared_system(params["system"], path)
        requests = load_requests(EXAMPLE_REQUESTS if path is None else path, tokenizer,
                                 backend, system=system, max_new_tokens=params["answer_tokens"],
                                 chat=False if params.get("plain") else None)
        serving_size.check_size(requests, configs, rounds, confirmed=confirmed,
                                confirm_hint=params.get("confirm_hint", ""),
                                device=backend.device)
        requests_run = serving(backend, tokenizer, requests, configs, system=system,
                               sampling=sampling_settings(params), repeats=rounds,
                               confirmed=confirmed)
    elif not sizes:
        raise ValueError(
            "The requests run on KV Studio's own models (ko-base, ko-chat, a model folder "
            "or a MiniMind .pth); give batch sizes to sweep this model.")
    return batching.serving_lab(requests_run, sweep(model, params) if sizes else None)


def sweep(model: LoadedModel,
          params: Mapping[str, Any]) -> Iterator[Progress | batching.BatchSweepResult]:
    """The lab's second part alone, as `run` ends (``kvstudio serving --sweep-batch``): one
    decode step timed at each of `batch_sizes`, `repeats` rounds, `context` tokens a row;
    it ends with a `batching.BatchSweepResult`."""
    return batching.batch_sweep(model.backend, model.tokenizer,
                                batch_sizes=batching.check_batch_sizes(params["batch_sizes"]),
                                rounds=params["repeats"], context=params["context"])
