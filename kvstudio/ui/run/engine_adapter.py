"""The one place where the window meets the engine's names.

Owns the small value types the window passes around (`ModelChoice`,
`RunSettings`, `RunRequest`, `RunInfo`, `ModelHandle`, `AnswerCounts`) and
thin functions that call the engine, labs and files: load a model, encode a prompt, make a
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
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from kvstudio.engine import formulas
from kvstudio.engine.cache.spec import CacheSpec
from kvstudio.engine.costs import RunCost, StepTimes, generation_cost
from kvstudio.engine.records import Mode, SamplingSettings
from kvstudio.labs.course import COURSE
from kvstudio.ui.run import weights_notice

if TYPE_CHECKING:
    from kvstudio.engine.backends.minimind import LanguageModel
    from kvstudio.engine.cache.layout import CachePlan
    from kvstudio.engine.generate import Stepper
    from kvstudio.engine.model import MiniMindLM
    from kvstudio.engine.tokenizer import TextTokenizer
    from kvstudio.files import checkpoints

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
class ModelHandle:
    """A model ready to step: the backend, its tokenizer and facts the window shows."""

    name: str
    backend: LanguageModel
    tokenizer: TextTokenizer
    is_chat: bool  # a chat-tuned model: the chat template is on by default (see looks_like_chat)
    max_positions: int  # prompt + new tokens must fit
    choice: ModelChoice = field(default_factory=ModelChoice)
    is_random: bool = False  # random weights: the text is meaningless, the numbers are real

    @property
    def device(self) -> str:
        return str(self.backend.device)


@dataclass(frozen=True)
class RunSettings:
    """Everything that defines a run besides the prompt."""

    mode: Mode = "cached"
    sampling: SamplingSettings = field(default_factory=lambda: COURSE.sampling)
    max_new_tokens: int = COURSE.new_tokens
    cache: CacheSpec = field(default_factory=CacheSpec)


@dataclass(frozen=True)
class RunRequest:
    """A prompt plus settings: the worker starts a new run whenever this changes."""

    prompt: str
    use_chat_template: bool
    settings: RunSettings

    def with_mode(self, mode: Mode) -> RunRequest:
        s = self.settings
        return RunRequest(self.prompt, self.use_chat_template, RunSettings(mode, s.sampling,
                                                                           s.max_new_tokens,
                                                                           s.cache))


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

    def distinct(self, index: int) -> int:
        return len(self.counts[index])


@dataclass(frozen=True)
class SamplingProgress:
    done: int
    total: int


def split_number_list(text: str) -> list[str]:
    """ "0.5, 1.0 1.5;2" → ["0.5", "1.0", "1.5", "2"]: commas, spaces or semicolons separate."""
    return [p for p in text.replace(";", ",").replace(" ", ",").split(",") if p]


def parse_temperatures(text: str) -> tuple[float, ...]:
    """"0.5, 1.0 1.5" → (0.5, 1.0, 1.5); empty → () meaning "the current temperature"."""
    parts = split_number_list(text)
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


def looks_like_chat(name: str, tokenizer: TextTokenizer) -> bool:
    """Chat-tuned or not, from what we have: ChatML tokens, and no "base"/"pretrain" in the name.

    Base and chat models share MiniMind's tokenizer (ChatML tokens included), and
    checkpoints carry no flag, so the name decides (ko-base, pretrain_512.pth vs
    ko-chat, full_sft_512.pth). The user can still tick the template either way.
    """
    lowered = name.lower()
    return tokenizer.has_chat_tokens and not any(w in lowered for w in ("base", "pretrain"))


def wrap_loaded(loaded: checkpoints.LoadedModel, choice: ModelChoice) -> ModelHandle:
    """The engine's `LoadedModel` → what the window keeps (backend, tokenizer, facts)."""
    from kvstudio.engine.backends.minimind import MiniMindBackend

    backend = MiniMindBackend(loaded.model, name=loaded.label)
    return ModelHandle(
        name=loaded.label,
        backend=backend,
        tokenizer=loaded.tokenizer,
        is_chat=looks_like_chat(loaded.label, loaded.tokenizer),
        max_positions=int(loaded.config.max_position_embeddings),
        choice=choice,
        is_random=loaded.is_random,
    )


def wrap_model(
    model: MiniMindLM, tokenizer: TextTokenizer, name: str, choice: ModelChoice
) -> ModelHandle:
    """A `MiniMindLM` + tokenizer already in memory (tests, scripts) → ModelHandle."""
    from kvstudio.engine.backends.minimind import MiniMindBackend

    return ModelHandle(
        name=name,
        backend=MiniMindBackend(model, name=name),
        tokenizer=tokenizer,
        is_chat=looks_like_chat(name, tokenizer),
        max_positions=int(model.config.max_position_embeddings),
        choice=choice,
    )


def wrap_hf_folder(choice: ModelChoice) -> ModelHandle:
    """A local transformers folder (Llama, Qwen3, EXAONE …) → ModelHandle, on the CPU in fp32."""
    from kvstudio.engine.backends.hf import load_hf_backend

    backend, tokenizer = load_hf_backend(choice.path)
    return ModelHandle(
        name=backend.name,
        backend=backend,
        tokenizer=tokenizer,
        is_chat=looks_like_chat(backend.name, tokenizer),
        max_positions=backend.max_positions,
        choice=choice,
    )


def load_model(choice: ModelChoice) -> ModelHandle:
    """Load what the user picked; raises ValueError with an actionable message.

    Marks the charts drawn from now on as drawn by random weights, or not (`weights_notice`).
    """
    handle = _load(choice)
    weights_notice.set_random_weights(handle.is_random)
    return handle


def _load(choice: ModelChoice) -> ModelHandle:
    from kvstudio.engine.backends.hf import is_hf_folder
    from kvstudio.files import checkpoints

    if choice.kind == "folder":
        if is_hf_folder(choice.path):  # a transformers folder (needs the [hf] extra)
            return wrap_hf_folder(choice)
        return wrap_loaded(checkpoints.load_model_folder(choice.path), choice)
    if choice.kind == "pth":
        return wrap_loaded(checkpoints.load_minimind_pth(choice.path, choice.tokenizer_path),
                           choice)
    if choice.kind == "random":
        return wrap_loaded(checkpoints.random_model(), choice)
    wanted = "ko-chat" if choice.kind == "embedded-chat" else "ko-base"
    folder = checkpoints.MODELS_DIR / wanted
    if not folder.is_dir():
        raise ValueError(
            f"The embedded model {wanted} is not in {checkpoints.MODELS_DIR}. "
            f"{checkpoints.MISSING_MODELS_HELP}"
        )
    return wrap_loaded(checkpoints.load_model_folder(folder), choice)


ModelLoader = Callable[[ModelChoice], ModelHandle]


# ---- runs ----------------------------------------------------------------------------------


def encode_prompt(model: ModelHandle, request: RunRequest) -> list[int]:
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


def run_cost(model: ModelHandle, request: RunRequest, step_times: StepTimes) -> RunCost:
    """The cost of running `request` to its budget (`costs.generation_cost`, the rule the
    command line uses too), its seconds from the time per forward call fitted to the
    steps measured so far (`StepTimes.fit`); ValueError as `encode_prompt` gives."""
    ids = encode_prompt(model, request)
    mode = request.settings.mode
    return generation_cost(mode, len(ids), request.settings.max_new_tokens,
                           step_times.fit(mode))


def make_stepper(model: ModelHandle, prompt_ids: list[int], settings: RunSettings) -> Stepper:
    from kvstudio.engine.generate import Stepper

    return Stepper(
        model.backend,
        model.tokenizer,
        prompt_ids,
        mode=settings.mode,
        sampling=settings.sampling,
        max_new_tokens=settings.max_new_tokens,
        cache=settings.cache,
        top_n=10,
    )


def run_info(
    run_id: int, model: ModelHandle, request: RunRequest, prompt_ids: list[int]
) -> RunInfo:
    from kvstudio.engine.cache.layout import cache_plan

    b = model.backend
    eos_id = model.tokenizer.eos_id if model.tokenizer.eos_id is not None else b.eos_token_id
    return RunInfo(
        run_id=run_id,
        request=request,
        prompt_ids=tuple(prompt_ids),
        prompt_pieces=tuple(model.tokenizer.token_pieces(prompt_ids)),
        num_layers=b.num_layers,
        num_kv_heads=b.num_kv_heads,
        head_dim=b.head_dim,
        dtype_bytes=b.dtype_bytes,
        eos_id=eos_id,
        eos_text=model.tokenizer.token_text(eos_id) if eos_id is not None else "",
        plan=cache_plan(b, request.settings.cache),
    )


def repeated_sampling(
    model: ModelHandle,
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
    for item in sample_lab.repeated_sampling(
        model.backend,
        model.tokenizer,
        prompt_ids,
        temps,
        samples,
        settings.max_new_tokens,
        settings=settings.sampling,
        mode="cached",
    ):
        if isinstance(item, sample_lab.SamplingResult):
            yield AnswerCounts(
                tuple(t.temperature for t in item.temperatures),
                tuple(
                    tuple(t.counts)
                    for t in item.temperatures
                ),
                item.samples,
                prompt=prompt,
                answer_tokens=settings.max_new_tokens,
                sampling=settings.sampling,
                use_chat_template=use_chat_template,
            )
        else:
            yield SamplingProgress(item.done, item.total)


WARM_PREFILL_TOKENS = 256  # the warm-up's long prefill: the course's P = 183 fits inside
CALIBRATION_REPEATS = 3  # its timed forwards: the rate is their median


Timing = Callable[[], AbstractContextManager[object]]  # a context around a timed forward


def warm_up(model: ModelHandle, timing: Timing | None = None) -> tuple[int, float]:
    """Forwards before the first run, so its TTFT is not the model's first-ever forward;
    returns (tokens, median seconds) of a timed forward without a cache: a recompute step.

    A short run per mode, then a lecture-sized prefill twice: the first long forward
    also pays for allocator growth (a cold 183-token prefill took 7x the warm one),
    the next `CALIBRATION_REPEATS` are timed inside `timing` (the window's `StepGate`)
    and their median gives the cost estimate a recompute-sized call before any run.
    """
    import torch

    from kvstudio.engine import decode
    from kvstudio.labs.common import lab_prompt_ids
    from kvstudio.labs.common import warm_up as warm_up_backend

    warm_up_backend(model.backend, model.tokenizer)
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


def set_torch_threads(count: int) -> int:
    """Set torch's intra-op threads on purpose (1 keeps tiny matmuls fast on a busy machine)."""
    import torch

    torch.set_num_threads(max(1, count))
    return torch.get_num_threads()


def torch_threads() -> int:
    import torch

    return torch.get_num_threads()


def with_torch_threads(loader: ModelLoader, threads: int) -> ModelLoader:
    """`loader` that first sets torch's threads: torch is imported there, on the worker thread."""

    def load(choice: ModelChoice) -> ModelHandle:
        set_torch_threads(threads)
        return loader(choice)

    return load
