"""The labs as notebook functions: each runs the window's lab panel on the same generator.

Owns `run_lab` (a panel type, its settings and a model → a `LabRun`: the
course's model when none is given, the panel's own job, progress, live chart,
table) and one function per lab of the course: `compare`, `sample` (the
temperature lab), `cutoff` (top-p / top-k survivors), `cache_kinds`,
`sweep`, `paged`, `quantized`, `chat` (a conversation of several turns on
one panel), `serving` (requests under one scheduler, then the batch sweep),
`beam` (beam search, its cache reorders and transformers' answer) and
`speculative` (a draft proposes k tokens, the target checks them). Every
argument left at None keeps the course preset's value (the window's box
default, `kvstudio.labs.course.COURSE`).

A new lab is one function here: import its window panel and call `run_lab`
with the panel's box names as settings (see `quantized`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kvstudio.labs.registry import spec
from kvstudio.notebook.chart_view import LiveCharts
from kvstudio.notebook.environment import application
from kvstudio.notebook.models import MAX_PATH_CHARS, as_model
from kvstudio.notebook.runner import LabRun, drive, set_fields, shown
from kvstudio.ui.app.shutdown import delete_widget

if TYPE_CHECKING:
    from kvstudio.files.loaded import LoadedModel
    from kvstudio.ui.labs.shared.base import LabPanel


_exporter: list[Any] = []
MAX_TURN_CHARS = 32_767  # a chat turn, as the window's chat box holds it
# Turns in one call: the lecture has 4; the command line's cost rule asks past about 100
# and a turns file holds at most 16 MiB. Past this, a count is a typo, not a lesson.
MAX_TURNS = 100_000


def _chart_exporter() -> Any:
    """One exporter for every notebook panel (no dialogs: `export` passes the file name)."""
    if not _exporter:
        from kvstudio.ui.slides.export_menu import ChartExporter

        _exporter.append(ChartExporter(application(), save_chooser=lambda *_: "",
                                       folder_chooser=lambda *_: ""))
    return _exporter[0]


def panel_type(key: str) -> type[LabPanel]:
    """The window panel that shows the lab `key` (``kvstudio.labs.registry``'s keys)."""
    from kvstudio.ui.labs import PANEL_TYPES  # the panels' modules: imported when needed

    return PANEL_TYPES[key]


def checked(key: str, values: Mapping[str, Any]) -> dict[str, Any]:
    """The lab's keyword arguments checked against its declaration, keyed by the window's
    box names (None: the box keeps its default). A ValueError names the argument."""
    lab = spec(key)
    return {lab.param(name).box_name: value for name, value in lab.check(values).items()}


def new_panel(panel_type: type[LabPanel]) -> LabPanel:
    """A window lab panel, made offscreen and never shown (its charts are the notebook's)."""
    application()
    return panel_type(_chart_exporter())


def run_lab(panel_type: type[LabPanel], title: str, model: LoadedModel | str | Path | None,
            settings: Mapping[str, Any], *, show: bool = True,
            prepare: Callable[[LabPanel], None] | None = None) -> LabRun:
    """Run one window lab: `settings` go into the panel's boxes of those names (None: keep).

    `prepare` runs on the new panel before the settings (e.g. a preset choice).
    """
    panel = new_panel(panel_type)
    try:
        if prepare is not None:
            prepare(panel)
        set_fields(panel, settings)
        handle = as_model(model, panel_type.course_role)
        started = time.perf_counter()
        result, steps = drive(panel, handle, title, show=show)
    except BaseException:
        panel.shutdown()
        delete_widget(application(), panel)  # charts first: never deleted whole, later
        raise
    return LabRun(title, panel, result, handle.name, time.perf_counter() - started, steps)


def compare(model: LoadedModel | str | Path | None = None, *, preset: str | None = None,
            prompt_tokens: int | None = None, new_tokens: int | None = None,
            repeats: int | None = None, warmup: int | None = None, dtype: str | None = None,
            show: bool = True) -> LabRun:
    """Cache vs recompute: greedy in both modes on the lab prompt, `repeats` interleaved rounds.

    `preset`: ``"course"`` (P = 183, N = 64) or ``"notebook"`` (the seed notebook's
    16-token sentence, N = 64). Tokens fed, bytes and identical tokens are the same
    every round; times are medians of the rounds (one round: a single measurement).
    """
    from kvstudio.labs.course import CACHE_PRESETS
    from kvstudio.ui.labs.compare_lab import CacheVsRecomputePanel

    if preset is not None and (not isinstance(preset, str) or preset not in CACHE_PRESETS):
        raise ValueError(f"preset must be one of {', '.join(CACHE_PRESETS)}, "
                         f"got {shown(preset)}.")

    def choose(panel: LabPanel) -> None:
        if preset is not None:
            panel.choose_preset(preset)  # type: ignore[attr-defined]

    return run_lab(CacheVsRecomputePanel, "compare", model, checked("compare", {
        "prompt_tokens": prompt_tokens, "new_tokens": new_tokens, "repeats": repeats,
        "warmup": warmup, "dtype": dtype}), show=show, prepare=choose)


def sample(model: LoadedModel | str | Path | None = None, *, prompt: str | None = None,
           temperatures: Sequence[float] | None = None, samples: int | None = None,
           new_tokens: int | None = None, top_k: int | None = None, top_p: float | None = None,
           penalty: float | None = None, seed: int | None = None,
           both_modes: bool | None = None, show: bool = True) -> LabRun:
    """The temperature lab: `samples` answers per temperature from one seed; distinct answers.

    `both_modes`: also sample in recompute mode and check the same seed gives the same answers.
    """
    from kvstudio.ui.labs.temperature_lab import TemperaturePanel

    return run_lab(TemperaturePanel, "sample", model, checked("sample", {
        "prompt": prompt, "temperatures": temperatures, "samples": samples,
        "new_tokens": new_tokens, "top_k": top_k, "top_p": top_p, "penalty": penalty,
        "seed": seed, "both_modes": both_modes}), show=show)


def cutoff(model: LoadedModel | str | Path | None = None, *, prompt: str | None = None,
           temperature: float | None = None, top_k: int | None = None,
           top_p: float | None = None, new_tokens: int | None = None, seed: int | None = None,
           show: bool = True) -> LabRun:
    """Top-p / top-k: the next-token distribution step by step, and how many tokens survive."""
    from kvstudio.ui.labs.cutoff_lab import TopPTopKPanel

    return run_lab(TopPTopKPanel, "cutoff", model, checked("cutoff", {
        "prompt": prompt, "temperature": temperature, "top_k": top_k, "top_p": top_p,
        "new_tokens": new_tokens, "seed": seed}), show=show)


def cache_kinds(model: LoadedModel | str | Path | None = None, *,
                prompt_tokens: int | None = None, new_tokens: int | None = None,
                window: int | None = None, show: bool = True) -> LabRun:
    """Dynamic vs static vs sliding-window cache: bytes per step and the attention-mask width."""
    from kvstudio.ui.labs.cache_kinds_lab import CacheKindsPanel

    return run_lab(CacheKindsPanel, "cache kinds", model, checked("cache_kinds", {
        "prompt_tokens": prompt_tokens, "new_tokens": new_tokens, "window": window}),
        show=show)


def sweep(model: LoadedModel | str | Path | None = None, *, vary: str | None = None,
          values: Sequence[int] | None = None, fixed: int | None = None,
          repeats: int | None = None, show: bool = True) -> LabRun:
    """ms per token against context length in both modes, with linear and quadratic fits.

    `vary`: ``"new"`` (N, at P = `fixed`) or ``"prompt"`` (P, at N = `fixed`).
    """
    from kvstudio.ui.labs.sweep_lab import LengthSweepPanel

    return run_lab(LengthSweepPanel, "sweep", model, checked("sweep", {
        "vary": vary, "values": values, "fixed": fixed, "repeats": repeats}), show=show)


def paged(model: LoadedModel | str | Path | None = None, *, samples: int | None = None,
          new_tokens: int | None = None, block_size: int | None = None,
          show: bool = True) -> LabRun:
    """Answers stored preallocated, dynamic and paged: bytes, and the block tables."""
    from kvstudio.ui.labs.paged_lab import PagedCachePanel

    return run_lab(PagedCachePanel, "paged", model, checked("paged", {
        "samples": samples, "new_tokens": new_tokens, "block_size": block_size}), show=show)


def quantized(model: LoadedModel | str | Path | None = None, *,
              prompt_tokens: int | None = None, new_tokens: int | None = None,
              show: bool = True) -> LabRun:
    """fp16 / int8 / int4 caches: bytes against the formula and what they do to the logits."""
    from kvstudio.ui.labs.quantized_lab import QuantizedCachePanel

    return run_lab(QuantizedCachePanel, "quantized", model, checked("quantized", {
        "prompt_tokens": prompt_tokens, "new_tokens": new_tokens}), show=show)


def projector(model: LoadedModel | str | Path | None = None, *, preset: str | None = None,
              context: int | None = None, batch: int | None = None, bits: int | None = None,
              show: bool = True) -> LabRun:
    """KV cache bytes of a real model for `context` tokens × `batch` rows, against GPU memory.

    `preset`: a published model's numbers (``kvstudio.labs.scale.PRESETS``); without it,
    a `model` given is projected and checked against the bytes of a real run, and with
    neither the window's opening preset (EXAONE-4.0-1.2B) is. `bits`: 0 is the config's
    own dtype; 8 and 4 count a float16 scale per token and K/V head.
    """
    from kvstudio.labs.scale import PRESETS
    from kvstudio.ui.labs.projector_lab import LOADED, ProjectorPanel

    if preset is not None and (not isinstance(preset, str) or preset not in PRESETS):
        raise ValueError(f"preset must be one of {', '.join(PRESETS)}, got {shown(preset)}.")
    source = preset if preset is not None else LOADED if model is not None else None

    def choose(panel: LabPanel) -> None:
        if source is not None:
            box = panel.source  # type: ignore[attr-defined]
            box.setCurrentIndex(box.findData(source))

    return run_lab(ProjectorPanel, "projector", model, checked("projector", {
        "context": context, "batch": batch, "bits": bits}), show=show, prepare=choose)


def chat(model: LoadedModel | str | Path | None = None, *,
         turns: Sequence[str] | int | None = None, reuse: bool | None = None,
         refeed: bool | None = None, answer_tokens: int | None = None,
         context_limit: int | None = None, rounds: int | None = None,
         show: bool = True) -> LabRun:
    """A multi-turn conversation, the cache kept across turns next to re-feeding the history.

    `turns`: the user's lines, or how many of the lecture's scripted turns to take
    (default: all four). Returns the last turn as `result`, every turn in `turns`.
    """
    from kvstudio.ui.labs.chat_lab import ChatPanel

    panel = new_panel(ChatPanel)
    try:
        set_fields(panel, checked("chat", {
            "reuse": reuse, "refeed": refeed, "answer_tokens": answer_tokens,
            "context_limit": context_limit, "rounds": rounds}))
        handle = as_model(model, None)  # the chat model (the window's chat tab: its own model)
        lines = _chat_turns(panel, turns)
        live = LiveCharts(panel.charts(), show=show)
        results: list[object] = []
        steps: list[object] = []
        started = time.perf_counter()
        for index, line in enumerate(lines, start=1):
            set_fields(panel, {"turn_box": line})
            result, items = drive(panel, handle, f"chat turn {index}/{len(lines)}", show=show,
                                  charts=live)
            results.append(result)
            steps += items
    except BaseException:
        panel.shutdown()
        delete_widget(application(), panel)  # charts first: never deleted whole, later
        raise
    return LabRun("chat", panel, results[-1], handle.name, time.perf_counter() - started,
                  steps, turns=results)


def _chat_turns(panel: LabPanel, turns: Sequence[str] | int | None) -> list[str]:
    """The user's lines: `turns` of the lecture's script, or the lines given (each checked)."""
    if turns is None or (isinstance(turns, int) and not isinstance(turns, bool)):
        count = 4 if turns is None else turns
        if not 1 <= count <= MAX_TURNS:
            raise ValueError(f"turns must be between 1 and {MAX_TURNS}, got {count}.")
        return [panel.next_scripted_turn() for _ in range(count)]  # type: ignore[attr-defined]
    if isinstance(turns, str) or not isinstance(turns, Sequence):
        raise ValueError("turns must be a number of the lecture's turns or a list of lines, "
                         f"got {type(turns).__name__}.")
    if not 1 <= len(turns) <= MAX_TURNS:
        raise ValueError(f"Give between 1 and {MAX_TURNS} user turns, got {len(turns):,}.")
    for line in turns:
        if not isinstance(line, str) or not line.strip():
            raise ValueError("Each turn must be a line of text.")
        if len(line) > MAX_TURN_CHARS:
            raise ValueError(f"A turn takes at most {MAX_TURN_CHARS:,} characters.")
    return list(turns)


def serving(model: LoadedModel | str | Path | None = None, *,
            requests: str | Path | None = None, system: str | None = None,
            policy: str | None = None, chunk: int | None = None,
            block_size: int | None = None, prefix: str | None = None,
            max_batch: int | None = None, answer_tokens: int | None = None,
            batch_sizes: Sequence[int] | None = None, repeats: int | None = None,
            show: bool = True) -> LabRun:
    """Requests served together under one scheduler, then one decode step per batch size.

    `requests`: a requests file (one question a line, ``@K`` the step it arrives at,
    ``+N`` its answer budget; None: the shipped example). `policy`: ``"continuous"``
    or ``"static"``; `chunk`: chunked prefill's token budget (0: off); `prefix`:
    ``"none"``, ``"blocks"`` (vLLM) or ``"radix"`` (SGLang). `batch_sizes`: the
    sweep's sizes (``[]``: no sweep). Every answer is checked against the same
    request run alone; times are medians of `repeats` rounds.
    """
    from kvstudio.ui.labs.serving import ServingPanel

    if requests is not None and (not isinstance(requests, str | Path)
                                 or len(str(requests)) > MAX_PATH_CHARS):
        raise ValueError("requests must be the path of a requests file, or None for the "
                         "shipped example.")
    path = None if requests is None else Path(requests).expanduser()
    if path is not None and not path.is_file():
        raise ValueError(f"No requests file at {path}: give a text file with one question a "
                         "line, or None for the shipped example.")

    def choose(panel: LabPanel) -> None:
        if path is not None:
            panel.choose_requests(path)  # type: ignore[attr-defined]

    return run_lab(ServingPanel, "serving", model, checked("serving", {
        "system": system, "policy": policy, "chunk": chunk, "block_size": block_size,
        "prefix": prefix, "max_batch": max_batch, "answer_tokens": answer_tokens,
        "batch_sizes": batch_sizes, "repeats": repeats}), show=show, prepare=choose)


def beam(model: LoadedModel | str | Path | None = None, *, prompt: str | None = None,
         beams: int | None = None, length_penalty: float | None = None,
         early_stopping: bool | str | None = None, new_tokens: int | None = None,
         block_size: int | None = None, transformers: bool | None = None,
         show: bool = True) -> LabRun:
    """Beam search: K beams, one cache row each, reordered after every step.

    `early_stopping`: False, True or ``"never"`` (transformers' meanings).
    `block_size`: the paged cache whose copies on write are compared. `transformers`:
    also run transformers' ``generate(num_beams=…)`` on the same weights and compare
    (needs the ``hf`` extra; without it the result says it was not checked).
    """
    from kvstudio.ui.labs.beam_lab import EARLY_STOPPING, BeamSearchPanel

    stopping: int | None = None
    if early_stopping is not None:
        found = [i for i, v in enumerate(EARLY_STOPPING)
                 if v is early_stopping or (isinstance(v, str) and v == early_stopping)]
        if not found:
            raise ValueError(f"early_stopping must be False, True or 'never', "
                             f"got {shown(early_stopping)}.")
        stopping = found[0]

    def choose(panel: LabPanel) -> None:
        if stopping is not None:
            panel.early_stopping.setCurrentIndex(stopping)  # type: ignore[attr-defined]

    return run_lab(BeamSearchPanel, "beam", model, checked("beam", {
        "prompt": prompt, "beams": beams, "length_penalty": length_penalty,
        "new_tokens": new_tokens, "block_size": block_size,
        "transformers": transformers}), show=show, prepare=choose)


def speculative(model: LoadedModel | str | Path | None = None, *, question: str | None = None,
                ks: Sequence[int] | None = None, new_tokens: int | None = None,
                temperature: float | None = None, repeats: int | None = None,
                show: bool = True) -> LabRun:
    """Speculative decoding: the ko-draft model and prompt lookup propose k tokens a round.

    For every draft kind and every k in `ks` (default 1, 2, 4, 8), one run of the
    question recorded round by round (drafted, accepted, the target's own token,
    rows appended to and cropped from both caches), next to plain decoding.
    `temperature` 0 (the default) is greedy: every run must equal plain greedy
    token for token. Times are medians of `repeats` interleaved rounds (one: a
    single measurement). Without ko-draft (another tokenizer) only prompt lookup
    runs and the result's `draft_note` says why.
    """
    from kvstudio.ui.labs.speculative_lab import SpeculativePanel

    return run_lab(SpeculativePanel, "speculative", model, checked("speculative", {
        "question": question, "ks": ks, "new_tokens": new_tokens,
        "temperature": temperature, "repeats": repeats}), show=show)
