"""Build the example slide pack (what a lecturer gets from the window) from the shipped model.

Usage: QT_QPA_PLATFORM=offscreen .venv/bin/python scripts/export_examples.py \
           [--lang ko|en] [--only LAB] [--docs] [OUT_DIR]

``--lang`` is the slides' language, as the window's Language menu sets it
(default ``ko``, the course's); OUT_DIR defaults to out/exports-ko or
out/exports-en (ignored by git: the whole pack is about 13 MB a language and
is built, not committed). ``--docs`` then copies into docs/exports (Korean) or
docs/exports-en (English) just what the docs show: every file of the pack a
page of docs/ or the README links to, and numbers.json, whose figures the
docs quote (tests/core/test_shipped_pack.py checks them).

Runs the shipped ``ko-chat`` model (kvstudio/resources/models/ko-chat, not random
weights) the way a lecture would: the chat prompt greedily in both modes,
Sample ×N at three temperatures, the live TTFT repeated five times, and every
lab with its defaults (cache vs recompute at P = 183, N = 64 over five rounds;
the temperature lab; top-p/top-k run to the end; cache kinds; the length
sweep over five rounds; paged and quantized caches; the projector on
Llama-3.1-8B; serving, speculative decoding and beam search with the settings
docs/labs.md quotes (SERVING, SPECULATIVE, BEAM below); the 4-turn chat; the
cache inspector stepped to the end), each on the model the window runs it on
(the course's, kvstudio/ui/labs/shared/lab_models.py). Then it writes the slide pack exactly as
Lecture → Export slide pack does: every chart as PNG, SVG, PDF and CSV on a
16:9 1920×1080 canvas with its headline, all-charts.pdf, numbers.json and the
tables as CSV (numbers.json in the window's layout, ``kvstudio/ui/slides/numbers.py``).
Times are this machine's; tokens, bytes and answers are the
model's.

``--only cache-inspector|serving|speculative|beam`` runs just that lab and
writes just its files (the same names as in the whole pack, e.g.
lab-cache-inspector.png/.svg/.pdf/.csv and lab-CacheInspector-table.csv) into
OUT_DIR, leaving the other files there as they are, and puts its numbers under
"labs" in numbers.json; all-charts.pdf gains its page only when the whole pack
is made again.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from PySide6.QtCore import QEventLoop, QTimer
from PySide6.QtWidgets import QApplication

import kvstudio.ui  # noqa: F401  (pins pyqtgraph to PySide6)
from kvstudio.charts import export
from kvstudio.charts.i18n import LanguageSwitcher
from kvstudio.charts.labs.base import slide_pack_of
from kvstudio.engine.records import MODES, SamplingSettings
from kvstudio.files.loaded import LoadedModel
from kvstudio.labs import twin as twin_lab
from kvstudio.labs.cache import compare as compare_lab
from kvstudio.labs.common import finish
from kvstudio.labs.course import COURSE
from kvstudio.labs.registry import LABS, TWIN
from kvstudio.ui.app.shutdown import tear_down
from kvstudio.ui.app.startup import prepare_application
from kvstudio.ui.labs import (
    PANEL_TYPES,
    BeamSearchPanel,
    LabPanel,
    ProjectorPanel,
    ServingPanel,
    SpeculativePanel,
    TopPTopKPanel,
)
from kvstudio.ui.labs.chat_lab import ChatPanel
from kvstudio.ui.labs.inspector_lab import CacheInspectorPanel
from kvstudio.ui.plots import AnswerHistogramPlot, CacheBytesPlot, StepTimePlot, TokensFedPlot
from kvstudio.ui.run.engine_adapter import (
    AnswerCounts,
    ModelChoice,
    RunRequest,
    RunSettings,
    encode_prompt,
    load_model,
    make_stepper,
    repeated_sampling,
    run_info,
)
from kvstudio.ui.run.store import RunStore
from kvstudio.ui.slides.export_menu import ChartExporter
from kvstudio.ui.slides.numbers import answer_rows, numbers_document

log = logging.getLogger("export_examples")

# The course preset (kvstudio/labs/course.py), as the window starts: its question in the chat
# template, N new tokens, and Sample ×N's samples, temperatures and answer length.
PROMPT = COURSE.question
NEW_TOKENS = COURSE.new_tokens
TEMPERATURES = COURSE.temperatures
SAMPLES = COURSE.samples
ANSWER_TOKENS = COURSE.answer_tokens
CHAT_TURNS = 4  # the shipped conversation (kvstudio/resources/prompts)
PROJECTED_MODEL = "llama-3.1-8b"  # a real model's numbers make the projector's lesson
OUT_DIRS = {"ko": Path("out/exports-ko"), "en": Path("out/exports-en")}
DOCS_DIRS = {"ko": Path("docs/exports"), "en": Path("docs/exports-en")}
DOCS_PAGES = [Path("README.md"), *sorted(Path("docs").glob("*.md"))]


def shown_in_docs(language: str) -> list[str]:
    """The pack's files that a page of the docs links to, and numbers.json (figures quoted)."""
    folder = DOCS_DIRS[language].name
    linked = re.compile(rf"(?<![\w-]){re.escape(folder)}/([\w.-]+)")
    names = {"numbers.json"}
    for page in DOCS_PAGES:
        names.update(linked.findall(page.read_text(encoding="utf-8")))
    return sorted(names)


def copy_to_docs(pack: Path, language: str) -> None:
    """Replace docs/exports(-en) by the files of `pack` the docs show, nothing else."""
    docs = DOCS_DIRS[language]
    docs.mkdir(parents=True, exist_ok=True)
    wanted = shown_in_docs(language)
    for old in docs.glob("*"):
        if old.is_file() and old.name not in wanted:
            old.unlink()
    for name in wanted:  # with --only, the files of that lab (the others are kept)
        if (pack / name).is_file():
            export.atomic_write(docs / name, (pack / name).read_bytes())
    log.info("docs: %s now holds %s", docs, ", ".join(wanted))


# The settings docs/labs.md quotes for the newer labs (their declared parameters, by lab
# key), set here rather than read from the declaration's defaults so the pack stays the
# documented one if a default moves.
DOCUMENTED: dict[str, dict[str, Any]] = {
    "serving": {"system": "", "policy": "continuous", "chunk": 0, "block_size": 16,
                "prefix": "radix", "max_batch": 8, "answer_tokens": 24, "rounds": 5,
                "batch_sizes": (1, 2, 4, 8, 16, 32), "repeats": 5},
    "speculative": {"question": PROMPT, "ks": (1, 2, 4, 8), "new_tokens": 64,
                    "temperature": 0.0, "repeats": 5},
    "beam": {"prompt": PROMPT, "beams": 4, "new_tokens": 16, "length_penalty": 1.0,
             "early_stopping": False, "block_size": 16, "transformers": True},
}


@dataclass(frozen=True)
class LiveRuns:
    """What the live page shows after the lecture's runs: its charts and what made them."""

    plots: dict[str, Any]
    store: RunStore
    counts: AnswerCounts
    prefill: compare_lab.PrefillTimes
    tables: dict[str, Any]


def live_charts(model: LoadedModel) -> LiveRuns:
    """The window's four live plots after a greedy run in both modes and Sample ×N."""
    store = RunStore()
    for run_id, mode in enumerate(reversed(MODES), start=1):  # cached last: the current run
        settings = RunSettings(mode, SamplingSettings.greedy_settings(), NEW_TOKENS)
        request = RunRequest(PROMPT, True, settings)
        ids = encode_prompt(model, request)
        store.begin(run_info(run_id, model, request, ids))
        for record in make_stepper(model, ids, settings):
            store.add(run_id, record)
        store.finish(run_id)
    tokens, times, cache, answers = (TokensFedPlot(), StepTimePlot(), CacheBytesPlot(),
                                     AnswerHistogramPlot())
    plots = {"tokens_fed": tokens, "step_time": times, "cache_bytes": cache, "answers": answers}
    for plot in plots.values():
        plot.resize(640, 420)  # any size: exports are laid out on the slide canvas
        plot.show()
        plot.refresh(store)
    sample_settings = RunSettings("cached", COURSE.sampling, ANSWER_TOKENS)
    request = RunRequest(PROMPT, True, sample_settings)
    counts = [item for item in repeated_sampling(
        model, encode_prompt(model, request), sample_settings, SAMPLES, TEMPERATURES, PROMPT, True)
        if isinstance(item, AnswerCounts)][-1]
    answers.show_counts(counts)
    prefill = finish(
        compare_lab.repeated_prefill(model.backend, model.tokenizer,
                                         encode_prompt(model, RunRequest(PROMPT, True, RunSettings(
                                             "cached", SamplingSettings.greedy_settings(), 1)))),
        compare_lab.PrefillTimes,
    )
    times.show_ttft_repeats(prefill)
    return LiveRuns(plots, store, counts, prefill, {"sample answers": answer_rows(counts)})


def pack_numbers(model: LoadedModel, language: str, live: LiveRuns,
                 labs: dict[str, Any]) -> dict[str, Any]:
    """numbers.json in the window's layout (the same function makes both)."""
    return numbers_document(language=language, model=model.name, traces=live.store.traces(),
                            counts=live.counts, labs=labs,
                            ttft_repeated_ms={m: live.prefill.ms[m] for m in MODES})


def set_documented_settings(panel: LabPanel) -> None:
    """Put the settings docs/labs.md quotes into the serving, speculative and beam labs."""
    if isinstance(panel, ServingPanel):
        panel.choose_requests(None)  # the shipped example, with its system prompt
    panel.set_params(**DOCUMENTED.get(panel.spec.key, {}))


def run_lab(panel: LabPanel, model: LoadedModel) -> None:
    """Run a lab to its result on its own thread, as its Run button does.

    `model` is the window's (ko-chat); the lab runs on the course's model for it, as in
    the window (kvstudio/ui/labs/shared/lab_models.py): ko-base for the cache labs, ko-chat for
    the sampling labs, serving and beam search, ko-chat drafted by ko-draft for
    speculative decoding."""
    panel.resize(1500, 850)
    panel.show()
    panel.set_model(model)
    if isinstance(panel, ProjectorPanel):
        panel.source.setCurrentIndex(panel.source.findData(PROJECTED_MODEL))
    set_documented_settings(panel)
    turns = CHAT_TURNS if isinstance(panel, ChatPanel) else 1
    for _ in range(turns):
        if isinstance(panel, ChatPanel):
            panel.next_scripted_turn()
        panel.result = None
        loop = QEventLoop()
        panel.result_ready.connect(loop.quit)
        panel.failed.connect(loop.quit)
        if isinstance(panel, TopPTopKPanel | CacheInspectorPanel):
            panel.runner.paused.connect(panel.run_to_end)  # Start shows one step
        QTimer.singleShot(0, panel.run)
        loop.exec()
        panel.result_ready.disconnect(loop.quit)
        panel.failed.disconnect(loop.quit)
        if panel.result is None:
            raise SystemExit(f"{type(panel).__name__} did not finish: {panel.status.text()}")


ONLY: dict[str, type[LabPanel]] = {
    "cache-inspector": CacheInspectorPanel,
    "serving": ServingPanel,
    "speculative": SpeculativePanel,
    "beam": BeamSearchPanel,
}


def only_lab(name: str, model: LoadedModel, out: Path, language: str) -> int:
    """Run one lab alone and put its files into `out` beside the rest of the pack."""
    panel = ONLY[name](ChartExporter())
    try:
        return _export_one(panel, model, out, language)
    finally:  # its worker thread ends before Qt deletes the panel, also on failure
        panel.shutdown()


def _export_one(panel: LabPanel, model: LoadedModel, out: Path, language: str) -> int:
    """Run `panel`'s lab and merge its files and numbers into the pack in `out`."""
    log.info("running %s…", panel.title())
    run_lab(panel, model)
    charts, lab_numbers, tables = slide_pack_of([panel])
    with tempfile.TemporaryDirectory() as scratch:
        pack = export.export_slide_pack(charts, scratch, {"labs": lab_numbers}, tables)
        files = {path.name: path.read_bytes() for path in pack.written
                 if path.name != "all-charts.pdf"}  # the whole pack's, made with it
    written = json.loads(files["numbers.json"])  # the numbers as the pack encodes them
    numbers_file = out / "numbers.json"
    document = (json.loads(numbers_file.read_text("utf-8")) if numbers_file.exists() else
                numbers_document(language=language, model=model.name, traces=[], counts=None,
                                 labs={}))
    document.setdefault("labs", {}).update(written["labs"])
    document.setdefault("headlines", {}).update(written.get("headlines", {}))
    document["language"] = language
    out.mkdir(parents=True, exist_ok=True)
    files["numbers.json"] = (json.dumps(document, ensure_ascii=False, indent=2) + "\n").encode()
    for name, data in files.items():
        export.atomic_write(out / name, data)
    log.info("wrote %s to %s", ", ".join(sorted(files)), out)
    return 0


def main() -> int:
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    parser = argparse.ArgumentParser(description="Regenerate the example slide pack.")
    parser.add_argument("out", nargs="?", default=None,
                        help="the pack's folder (default: out/exports-ko or out/exports-en)")
    parser.add_argument("--docs", action="store_true",
                        help="then copy what the docs show into docs/exports or docs/exports-en")
    parser.add_argument("--lang", choices=sorted(OUT_DIRS), default="ko",
                        help="the slides' language (default: ko, the course's)")
    parser.add_argument("--only", choices=sorted(ONLY),
                        help="run just this lab and write just its files into the folder")
    args = parser.parse_args()
    out = Path(args.out) if args.out is not None else OUT_DIRS[args.lang]
    torch.set_num_threads(1)
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")  # read when the QApplication starts
    app = QApplication.instance() or QApplication([])
    prepare_application(app)  # type: ignore[arg-type]
    languages = LanguageSwitcher(app)
    if languages.apply(args.lang) != args.lang:
        raise SystemExit(f"Cannot switch the slides to {args.lang!r}.")
    model = load_model(ModelChoice("embedded-chat"))
    if model.is_random:
        raise SystemExit("The shipped ko-chat model is missing; this pack must come from it.")
    log.info("model: %s", model.name)
    code = (only_lab(args.only, model, out, args.lang) if args.only is not None
            else full_pack(model, out, args.lang))
    tear_down(app)  # type: ignore[arg-type]  # what it built, before Python ends
    if code == 0 and args.docs:
        copy_to_docs(out, args.lang)
    return code


def full_pack(model: LoadedModel, out: Path, language: str) -> int:
    """Every live chart and every lab this machine can run, run on `model`, exported into
    `out`. A lab whose optional extra is missing (the engine twin without the llama extra)
    is left out with what to install; any other lab that fails ends the script."""
    live = live_charts(model)
    charts: dict[str, Any] = dict(live.plots)
    tables: dict[str, Any] = dict(live.tables)
    exporter = ChartExporter()
    lab_panels: list[LabPanel] = [  # every lab of the registry, then the inspector
        *(PANEL_TYPES[lab.key](exporter) for lab in LABS), CacheInspectorPanel(exporter)]
    try:
        ran = [panel for panel in lab_panels if _run_if_installed(panel, model)]
        lab_charts, lab_numbers, lab_tables = slide_pack_of(ran)
        charts.update(lab_charts)
        tables.update(lab_tables)
        document = pack_numbers(model, language, live, lab_numbers)
        out.mkdir(parents=True, exist_ok=True)
        for old in out.glob("*"):
            if old.is_file():
                old.unlink()
        pack = export.export_slide_pack(charts, out, document, tables)
    finally:  # a lab's worker thread must end before Qt deletes its panel, also on failure
        for panel in lab_panels:
            panel.shutdown()
    log.info("wrote %d files to %s%s", len(pack.written), out,
             f" (left out, empty: {', '.join(pack.skipped)})" if pack.skipped else "")
    return 0


def _run_if_installed(panel: LabPanel, model: LoadedModel) -> bool:
    """Run `panel`'s lab to its result; False (and why, logged) where the lab needs an
    optional extra this machine lacks."""
    if panel.spec.key == TWIN.key:
        try:
            twin_lab.check_installed()
        except ValueError as missing:
            log.warning("left out %s: %s", panel.title(), missing)
            return False
    log.info("running %s…", panel.title())
    run_lab(panel, model)
    if isinstance(panel, TopPTopKPanel):
        panel.show_step(0)  # the first answer token: top-p has a real choice there
    return True


if __name__ == "__main__":
    raise SystemExit(main())
