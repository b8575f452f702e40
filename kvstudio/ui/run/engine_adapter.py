"""The one place where the window meets the engine's names.

Owns the small value types the window passes around (`ModelChoice`,
`RunSettings`, `RunRequest`, `RunInfo`, `AnswerCounts`), the bridge between a
`ModelChoice` and the one loaded-model type (`kvstudio.files.loaded.LoadedModel`:
`load_model`, `loader_arguments`, `choice_of`, `with_choice`, `wrap_model`) and
thin functions that call the engine, labs and files: encode a prompt, make a
stepper, run repeated sampling. If a core name changes, only this module
changes. It imports no Qt, so it can be tested and reused headless.

It imports torch (and the core modules that need it) only when a function
needs them, on the worker thread: the window's value types come without
torch, so the window is on screen before torch has loaded (start-up).
"""

from __future__ import annotations

import logging
import statistics
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Literal

from kvstudio.charts import weights_notice
from kvstudio.engine import formulas
from kvstudio.engine.cache.spec import CacheSpec
from kvstudio.engine.costs import RunCost, StepTimes, generation_cost
from kvstudio.engine.limits import set_torch_threads
from kvstudio.engine.records import MODES, Mode, SamplingSettings
from kvstudio.files.loaded import LoadedModel
from kvstudio.files.resources import RANDOM_MODEL_NAME
from kvstudio.labs.course import COURSE

if TYPE_CHECKING:
    from kvstudio.engine.cache.layout import CachePlan
    from kvstudio.engine.generate import Stepper
    from kvstudio.engine.model import MiniMindLM
    from kvstudio.engine.tokenizer import TextTokenizer
    from kvstudio.files.loaded import Origin

log = logging.getLogger(__name__)

ChoiceKind = Literal["embedded-chat", "embedded-base", "folder", "pth", "random"]
CHOICE_KINDS: tuple[ChoiceKind, ...] = ("embedded-chat", "embedded-base", "folder", "pth", "random")
DEFAULT_PROMPT = COURSE.question  # the course preset's question (kvstudio.labs.course)


@dataclass(frozen=True)
class ModelChoice:
    """Which model the user picked: an embedded one, a folder, a .pth + tokenizer folder, or
    random weights (only when asked for: ``--model random``)."""

    kind: ChoiceKind = "embedded-chat"
    path: str = ""  # model folder or .pth file
    tokenizer_path: str = ""  # tokenizer folder (for .pth only)


@dataclass(frozen=True)
class RunSettings:
    """Everything that defines a run besides the prompt."""

    mode: Mode = "cached"
    sampling: SamplingSettings = field(default_factory=lambda: COURSE.sampling)
    max_new_tokens: int = COURSE.new_tokens
    cache: CacheSpec = field(default_factory=CacheSpec)
    stop_at_eos: bool = COURSE.live_stop_at_eos  # False: eos banned, the run goes to N


@dataclass(frozen=True)
class RunRequest:
    """A prompt plus settings: the worker starts a new run whenever this changes."""

    prompt: str
    use_chat_template: bool
    settings: RunSettings


@dataclass(frozen=True)
class RunInfo:
    """What the window needs to know about a run when it starts."""

    run_id: int
    request: RunRequest
    prompt_ids: tuple[int, ...]
    prompt_pieces: tuple[str, ...]  # text each prompt token adds (Hangul whole, maybe "")
    num_layers: int
    num_kv_heads: int
    head_dim: int
    dtype_bytes: int
    eos_id: int | None = None  # the end-of-answer token the run stops at (None: unknown)
    eos_text: str = ""  # its text, e.g. "<|im_end|>"
    plan: CachePlan | None = None  # per-layer kinds (hybrid models); None: every layer alike
    model: str = ""  # the model's name ("": not known)

    @property
    def mode(self) -> Mode:
        return self.request.settings.mode

    @property
    def prompt_len(self) -> int:
        return len(self.prompt_ids)

    @property
    def max_new_tokens(self) -> int:
        return self.request.settings.max_new_tokens

    def formula_cumulative(self, steps: int) -> list[int]:
        """The course formula's running total of tokens fed, for `steps` steps."""
        if steps < 1:
            return []
        return formulas.tokens_fed_cumulative(self.mode, self.prompt_len, steps)

    def formula_cache_bytes(self, tokens: int) -> int:
        return formulas.cache_bytes(
            self.num_layers, tokens, self.num_kv_heads, self.head_dim, self.dtype_bytes
        )

    def cache_plan(self) -> CachePlan:
        """What each layer keeps: the model's own plan, or every layer as the cache spec says."""
        from kvstudio.engine.cache.layout import uniform_plan

        return self.plan or uniform_plan(self, self.request.settings.cache)

    def formula_used_bytes(self, positions: int) -> int:
        """The per-layer formula Σ_l 2·T_l·H_kv·d·bytes after `positions` cached positions."""
        return self.cache_plan().used_bytes(positions)


@dataclass(frozen=True)
class AnswerCounts:
    """Distinct answers over repeated samples: per temperature, (answer, count), most first."""

    temperatures: tuple[float, ...]
    counts: tuple[tuple[tuple[str, int], ...], ...]  # one tuple per temperature
    samples_per_temperature: int
    prompt: str = ""  # the text as typed (for saving and the slide pack)
    answer_tokens: int = 0  # the most tokens an answer could have (0 = not known)
    sampling: SamplingSettings | None = None  # the other knobs (top-k, top-p, seed…)
    use_chat_template: bool = False
    model: str = ""  # the model that wrote the answers ("": not known, e.g. an old file)

    def distinct(self, index: int) -> int:
        return len(self.counts[index])


@dataclass(frozen=True)
class SamplingProgress:
    done: int
    total: int


def parse_temperatures(text: str) -> tuple[float, ...]:
    """"0.5, 1.0 1.5;2" → (0.5, 1.0, 1.5, 2.0): commas, spaces or semicolons separate;
    empty → () meaning "the current temperature"."""
    parts = [p for p in text.replace(";", ",").replace(" ", ",").split(",") if p]
    try:
        values = tuple(float(p) for p in parts)
    except ValueError as exc:
        raise ValueError(
            f"Could not read the temperatures {text!r}: write numbers separated by commas, "
            "e.g. 0.5, 1.0, 1.5."
        ) from exc
    if any(v < 0 for v in values):
        raise ValueError("Temperatures must be 0 (greedy) or positive.")
    return values


# ---- models --------------------------------------------------------------------------------


def loader_arguments(choice: ModelChoice) -> tuple[str, str | None]:
    """The window's choice as what `kvstudio.files.loaded.load_model` takes: the name or
    path a user would type, and the tokenizer folder of a .pth (None: its own folder)."""
    if choice.kind == "embedded-chat":
        return "ko-chat", None
    if choice.kind == "embedded-base":
        return "ko-base", None
    if choice.kind == "random":
        return RANDOM_MODEL_NAME, None
    if choice.kind == "pth":
        return choice.path, choice.tokenizer_path or None
    return choice.path, None


def choice_of(model: LoadedModel) -> ModelChoice:
    """The window's description of how `model` was asked for (the model box, the settings)."""
    if model.origin == "random":
        return ModelChoice("random")
    if model.origin == "embedded":
        return ModelChoice("embedded-base" if model.requested == "ko-base" else "embedded-chat")
    if model.origin == "pth":
        return ModelChoice("pth", model.requested, model.tokenizer_path)
    return ModelChoice("folder", model.requested)


def with_choice(model: LoadedModel, choice: ModelChoice) -> LoadedModel:
    """`model` described as if loaded from `choice` (`choice_of` gives `choice` back): a
    model in memory standing in for an embedded one (tests, scripts)."""

    requested, tokenizer_path = loader_arguments(choice)
    origins: dict[ChoiceKind, Origin] = {"embedded-chat": "embedded", "embedded-base": "embedded",
                                         "folder": "folder", "pth": "pth", "random": "random"}
    return replace(model, origin=origins[choice.kind], requested=requested,
                   tokenizer_path=tokenizer_path or "")


def wrap_model(
    model: MiniMindLM, tokenizer: TextTokenizer, name: str, choice: ModelChoice
) -> LoadedModel:
    """A `MiniMindLM` + tokenizer already in memory (tests, scripts) → the loaded model,
    described as if loaded from `choice` (`with_choice`)."""
    from kvstudio.files.loaded import from_minimind

    return with_choice(from_minimind(model, tokenizer, name), choice)


def load_model(choice: ModelChoice) -> LoadedModel:
    """Load what the user picked (`kvstudio.files.loaded.load_model`, the loader every front
    shares, on the CPU in the stored dtype); raises ValueError with an actionable message.

    Marks the charts drawn from now on as drawn by random weights, or not (`weights_notice`).
    """
    from kvstudio.files.loaded import load_model as load

    name, tokenizer = loader_arguments(choice)
    model = load(name, tokenizer=tokenizer)
    weights_notice.set_random_weights(model.is_random)
    return model


ModelLoader = Callable[[ModelChoice], LoadedModel]


# ---- runs ----------------------------------------------------------------------------------


def encode_prompt(model: LoadedModel, request: RunRequest) -> list[int]:
    """The prompt's token ids; ValueError if it is empty or too long for the model."""
    text = request.prompt.strip()
    if not text:
        raise ValueError("The prompt is empty: type a question or some text, then step again.")
    if request.use_chat_template and model.tokenizer.has_chat_tokens:
        ids = model.tokenizer.chat_ids(text)
    else:
        ids = model.tokenizer.encode(text)
    needed = len(ids) + request.settings.max_new_tokens
    if needed > model.max_positions:
        raise ValueError(
            f"The prompt has {len(ids)} tokens and {request.settings.max_new_tokens} new tokens "
            f"are asked for, but the model handles {model.max_positions} positions: "
            "shorten the prompt or lower 'max new tokens'."
        )
    spec = request.settings.cache
    if spec.kind == "static" and needed > spec.max_length:
        raise ValueError(
            f"The static cache holds {spec.max_length} tokens but this run needs {needed}: "
            "raise the static length, shorten the prompt, or pick the dynamic cache."
        )
    return ids


def run_cost(model: LoadedModel, request: RunRequest, step_times: StepTimes) -> RunCost:
    """The cost of running `request` to its budget (`costs.generation_cost`, the rule the
    command line uses too), its seconds from the time per forward call fitted to the
    steps measured so far (`StepTimes.fit`); ValueError as `encode_prompt` gives."""
    ids = encode_prompt(model, request)
    mode = request.settings.mode
    return generation_cost(mode, len(ids), request.settings.max_new_tokens,
                           step_times.fit(mode))


def make_stepper(model: LoadedModel, prompt_ids: list[int], settings: RunSettings) -> Stepper:
    from kvstudio.engine.generate import Stepper

    return Stepper(model.backend, model.tokenizer, prompt_ids, mode=settings.mode,
                   sampling=settings.sampling, max_new_tokens=settings.max_new_tokens,
                   cache=settings.cache, stop_at_eos=settings.stop_at_eos, top_n=10)


def run_info(
    run_id: int, model: LoadedModel, request: RunRequest, prompt_ids: list[int]
) -> RunInfo:
    b = model.backend
    eos_id = model.tokenizer.eos_id if model.tokenizer.eos_id is not None else b.eos_token_id
    return RunInfo(
        run_id=run_id, request=request, prompt_ids=tuple(prompt_ids),
        prompt_pieces=tuple(model.tokenizer.token_pieces(prompt_ids)),
        num_layers=b.num_layers, num_kv_heads=b.num_kv_heads, head_dim=b.head_dim,
        dtype_bytes=b.dtype_bytes, eos_id=eos_id,
        eos_text=model.tokenizer.token_text(eos_id) if eos_id is not None else "",
        plan=b.cache_plan(request.settings.cache), model=model.name,
    )


def repeated_sampling(
    model: LoadedModel,
    prompt_ids: list[int],
    settings: RunSettings,
    samples: int,
    temperatures: tuple[float, ...],
    prompt: str = "",
    use_chat_template: bool = False,
) -> Iterator[SamplingProgress | AnswerCounts]:
    """Yield progress, then one `AnswerCounts`: `samples` answers per temperature, batched.

    Runs the engine's `sample.repeated_sampling` with the run's other knobs
    (top-k, top-p, penalty, seed); an empty `temperatures` means the current one.
    """
    from kvstudio.labs.sampling import sample as sample_lab

    temps = temperatures or (settings.sampling.temperature,)
    for item in sample_lab.repeated_sampling(model.backend, model.tokenizer, prompt_ids, temps,
                                             samples, settings.max_new_tokens,
                                             settings=settings.sampling, mode="cached"):
        if isinstance(item, sample_lab.SamplingResult):
            yield AnswerCounts(
                tuple(t.temperature for t in item.temperatures),
                tuple(tuple(t.counts) for t in item.temperatures), item.samples,
                prompt=prompt, answer_tokens=settings.max_new_tokens,
                sampling=settings.sampling, use_chat_template=use_chat_template,
                model=model.name,
            )
        else:
            yield SamplingProgress(item.done, item.total)


WARM_PREFILL_TOKENS = 256  # the warm-up's long prefill: the course's P = 183 fits inside
WARM_RUN_STEPS = 3  # the warm-up's live runs: a prefill and two decode steps
CALIBRATION_REPEATS = 3  # its timed forwards: the rate is their median


Timing = Callable[[], AbstractContextManager[object]]  # a context around a timed forward


def warm_up_requests(model: LoadedModel) -> tuple[RunRequest, ...]:
    """The runs the warm-up makes: the live page's default request (the course question in
    the chat template, the course's cache and eos rule) in each mode, sampled and greedy,
    cut to `WARM_RUN_STEPS` tokens."""
    requests = []
    for sampling in (COURSE.sampling, SamplingSettings.greedy_settings()):
        for mode in MODES:
            settings = RunSettings(mode, sampling, WARM_RUN_STEPS)
            requests.append(RunRequest(DEFAULT_PROMPT, model.tokenizer.has_chat_tokens, settings))
    return tuple(requests)


def warm_up(model: LoadedModel, timing: Timing | None = None) -> tuple[int, float]:
    """Forwards before the first run, so its TTFT is not the model's first-ever forward;
    returns (tokens, median seconds) of a timed forward without a cache: a recompute step.

    First the live page's own path (`encode_prompt`, `make_stepper`, `Stepper.step`) on
    `warm_up_requests`: the default lesson's first cached step is then the same call, on
    the same prompt, that the warm-up made already. Then a lecture-sized prefill: the first
    long forward also pays for allocator growth (a cold 183-token prefill took 7x the warm
    one), the next `CALIBRATION_REPEATS` are timed inside `timing` (the window's `StepGate`)
    and their median gives the cost estimate a recompute-sized call before any run.
    """
    import torch

    from kvstudio.engine import decode
    from kvstudio.labs.common import lab_prompt_ids

    for request in warm_up_requests(model):
        try:
            stepper = make_stepper(model, encode_prompt(model, request), request.settings)
        except ValueError:  # a model too short for the course question: the prefill below
            continue
        for _ in stepper:
            pass
    tokens = min(WARM_PREFILL_TOKENS, max(1, model.max_positions // 2))
    ids = lab_prompt_ids(model.tokenizer, tokens)
    times = []
    with torch.inference_mode():
        batch = torch.tensor([ids], dtype=torch.long, device=model.backend.device)  # (1, T)
        decode.feed(model.backend, batch, None)  # cold: allocator growth
        for _ in range(CALIBRATION_REPEATS):
            with timing() if timing is not None else nullcontext():
                started = time.perf_counter()
                decode.feed(model.backend, batch, None)  # recompute-sized, no cache
                times.append(time.perf_counter() - started)
    return tokens, statistics.median(times)


def torch_threads() -> int:
    import torch

    return torch.get_num_threads()


def with_torch_threads(loader: ModelLoader, threads: int) -> ModelLoader:
    """`loader` that first sets torch's threads: torch is imported there, on the worker thread."""

    def load(choice: ModelChoice) -> LoadedModel:
        set_torch_threads(threads)
        return loader(choice)

    return load
