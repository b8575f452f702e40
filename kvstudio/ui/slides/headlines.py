"""The lesson's headline numbers for each live chart, computed from the runs on screen.

Owns `Headline` (one large line and a few smaller ones) and one function per
chart: tokens fed ("246 vs 13,728 tokens fed"), time per step (TTFT and
ms/token per mode), KV cache ("2,048 B per token · 204,800 B per 100 tokens")
and repeated sampling ("distinct answers 10 / 29 / 30"). Every number comes
from the run's records or the model's shapes, never from a constant: read
from `RunTrace` / `RunStore` (totals, formulas, the runs with steps, the run
whose cache is shown) and `AnswerCounts`, the same sources the charts' export
headlines read. The presenter view shows them; nothing here draws.

Two runs of different length are never set side by side as if they were one
comparison: tokens fed are compared at the steps both runs have (and the
headline says so), times say that N differs. `keep_together` is the line-break
policy every headline is shown with: a line breaks only between phrases (its
" · " parts; inside a long part, after a comma or colon or between plain
words), never inside a number and its unit, a formula or a word such as
"ms/token" (`plain` undoes the marks it adds).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from PySide6.QtCore import QCoreApplication, QTextBoundaryFinder

from kvstudio.charts.korean import attach_particles
from kvstudio.charts.plots.names import mode_name
from kvstudio.engine.records import MODES
from kvstudio.ui.run.engine_adapter import AnswerCounts
from kvstudio.ui.run.store import RunStore, RunTrace

NBSP = "\u00a0"
WORD_JOINER = "\u2060"  # no line break here (after "/" in "ms/token", "−" in "N−1")
SEPARATOR = " · "
WHOLE_PART = 28  # a " · " part this long or shorter never breaks inside
LONG_PHRASE = 40  # a phrase longer than this may also break beside a plain word
_CLAUSE_END = ",;:."
_BINDS_NEXT = {"a", "an", "the", "of", "per", "to", "vs", "vs."}  # never ends a line
_KOREAN_CLAUSE_ENDS = ("고", "며", "면", "면서", "지만", "는데")  # "…을 남기고 | 그 합은"
_QUOTES = "\"'«»“”‘’()[]"


@dataclass(frozen=True)
class Headline:
    big: str  # the one number to read from the back row
    lines: list[str] = field(default_factory=list)  # what it is made of


def count(n: float) -> str:
    """13728 → "13,728" (the course writes thousands this way in both languages)."""
    return f"{round(n):,}"


def keep_together(text: str) -> str:
    """`text` with its particles fitted and line breaks only between phrases.

    The line-break policy: breaks go between " · " parts (after the dot); a part
    of at most `WHOLE_PART` characters is kept whole. A longer one breaks at its
    clauses' ends: after a comma, semicolon or full stop, after a colon that no
    bare number follows ("T = 0.3: 3" stays), before a parenthesis after a word.
    Only a clause longer than `LONG_PHRASE` breaks inside, between two plain
    words, and one still that long beside any plain word. Never: after a number
    ("204,800 B", "2.7 ms per token"), before one ("N = 64", "T 0.85"), inside
    a formula ("P + N − 1 = 43") or a word-like run ("ms/token",
    "P·N+N(N−1)/2", "최소-/최대"); non-breaking spaces and word joiners mark what
    stays (`plain` takes them out again).
    """
    parts = []
    for part in attach_particles(text).split(SEPARATOR):
        words = part.split(" ")
        if len(part) <= WHOLE_PART:
            parts.append(_joined(words))
            continue
        runs = _phrases(words, _ends_clause)
        for may_break in (_between_words, _beside_word):
            runs = [piece for run in runs
                    for piece in (_phrases(run, may_break) if _length(run) > LONG_PHRASE
                                  else [run])]
        parts.append(" ".join(_joined(run) for run in runs))
    return (NBSP + "· ").join(parts)


def plain(text: str) -> str:
    """What `keep_together` made of a text, as the text (for reading and comparing)."""
    return text.replace(NBSP, " ").replace(WORD_JOINER, "")


def _length(words: list[str]) -> int:
    return len(" ".join(words))


def _core(word: str) -> str:
    return word.strip(_QUOTES + _CLAUSE_END + "!?")


def _is_word(word: str) -> bool:
    """A plain word ("tokens", "캐시를"): letters only; one letter is a variable or a unit
    ("N", "B", "k") unless it is a Hangul syllable."""
    core = _core(word)
    if not core or not all(ch.isalpha() or ch in "'’-" for ch in core):
        return False
    return len(core) >= 2 or "\uac00" <= core <= "\ud7a3"


def _number_next(right: str) -> bool:
    return _core(right)[:1].isdigit()


def _ends_clause(left: str, right: str) -> bool:
    """A clause ends between these words: after ",", ";" or "." (a colon: unless a bare
    number follows), after a Korean connective ending ("남기고"), or before a parenthesis
    after a word."""
    if left[-1:] == ":":
        return not _number_next(right)
    if left[-1:] in _CLAUSE_END:
        return True
    if _is_word(left) and left.endswith(_KOREAN_CLAUSE_ENDS) and "\uac00" <= left[-1] <= "\ud7a3":
        return not _number_next(right)  # a Korean connective ending closes a clause
    return right.startswith("(") and _is_word(left)


def _glued(left: str, right: str) -> bool:
    """Never apart: a number and what follows it, a label and its number, "per" and
    what it joins, an article or preposition and its word."""
    return (any(ch.isdigit() for ch in left) or _number_next(right)
            or left.lower() in _BINDS_NEXT or right.lower() == "per")


def _between_words(left: str, right: str) -> bool:
    """Within a long clause: between two plain words."""
    return not _glued(left, right) and _is_word(left) and _is_word(right)


def _beside_word(left: str, right: str) -> bool:
    """Within a clause still too long: beside any plain word ("= 642 with | P = 48")."""
    return not _glued(left, right) and (_is_word(left) or _is_word(right))


def _phrases(words: list[str], may_break: Callable[[str, str], bool]) -> list[list[str]]:
    """`words` cut into runs where `may_break(left, right)` allows."""
    runs: list[list[str]] = []
    for word in words:
        if runs and runs[-1] and not may_break(runs[-1][-1], word):
            runs[-1].append(word)
        else:
            runs.append([word])
    return runs


def _joined(words: list[str]) -> str:
    """The words on one line: non-breaking spaces, and a word joiner wherever Qt could
    otherwise break inside a word (after "/", "-", "−", "(")."""
    text = NBSP.join(words)
    finder = QTextBoundaryFinder(QTextBoundaryFinder.BoundaryType.Line, text)
    cuts = []
    position = finder.toNextBoundary()
    while 0 < position < len(text):
        before, after = text[position - 1], text[position]
        if not before.isspace() and not (before.isalpha() and after.isalpha()):
            cuts.append(position)
        position = finder.toNextBoundary()
    for position in reversed(cuts):
        text = text[:position] + WORD_JOINER + text[position:]
    return text


def lab_headline(text: str) -> Headline:
    """A lab's export headline for the presenter: its first line big, the rest below."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if not lines:
        return Headline(QCoreApplication.translate("Headlines", "Run the lab to see its numbers"))
    return Headline(lines[0], lines[1:])


def _same_n(traces: list[RunTrace]) -> bool:
    return len({len(t.records) for t in traces}) <= 1


def _different_n(traces: list[RunTrace]) -> str:
    """"runs of different length: Cached N = 64, Recompute N = 5"."""
    return QCoreApplication.translate("Headlines", "runs of different length: {0}").format(
        ", ".join(f"{mode_name(t.mode)} N = {len(t.records)}" for t in traces))


def tokens_fed(store: RunStore) -> Headline:
    totals = {t.mode: t for t in store.stepped_traces()}
    if not totals:
        return Headline(
            QCoreApplication.translate("Headlines", "Step to feed the model"),
            [QCoreApplication.translate("Headlines", "Tokens fed appear after a step.")])
    fed = {mode: trace.tokens_fed_total for mode, trace in totals.items()}
    same_n = _same_n(list(totals.values()))
    if len(fed) == 2 and same_n:
        big = QCoreApplication.translate("Headlines", "{0} vs {1} tokens fed").format(
            count(fed["cached"]), count(fed["recompute"]))
    elif len(fed) == 2:  # compared where both runs are: the first n steps of each
        n = min(len(t.records) for t in totals.values())
        at_n = {mode: t.tokens_fed_cumulative[n - 1] for mode, t in totals.items()}
        big = QCoreApplication.translate("Headlines", "{0} vs {1} tokens fed in N = {2} steps"
                                         ).format(count(at_n["cached"]),
                                                  count(at_n["recompute"]), n)
    else:
        ((mode, total),) = fed.items()
        big = QCoreApplication.translate("Headlines", "{0} tokens fed ({1})").format(
            count(total), mode_name(mode))
    lines = []
    for mode in MODES:
        trace = totals.get(mode)
        if trace is None:
            continue
        formula = (QCoreApplication.translate("Headlines", "P+(N−1)") if mode == "cached"
                   else QCoreApplication.translate("Headlines", "P·N+N(N−1)/2"))
        lines.append(
            QCoreApplication.translate("Headlines", "{0}: P = {1}, N = {2} → {3} = {4}").format(
                mode_name(mode), trace.info.prompt_len, len(trace.records), formula,
                count(trace.formula_total)))
    if len(fed) == 2 and fed["cached"] > 0:
        if same_n:
            lines.append(
                QCoreApplication.translate("Headlines", "recompute fed {0:.1f}× as many").format(
                    fed["recompute"] / fed["cached"]))
        else:
            lines.append(_different_n(list(totals.values())))
    return Headline(big, lines)


def step_time(store: RunStore) -> Headline:
    traces = store.stepped_traces()
    if not traces:
        return Headline(QCoreApplication.translate("Headlines", "Step to time the model"), [])
    parts, lines = [], []
    for trace in traces:
        per_token = trace.decode_ms_per_token
        if per_token is not None:
            parts.append(QCoreApplication.translate("Headlines", "{0}: {1:.1f} ms/token").format(
                mode_name(trace.mode), per_token))
        lines.append(QCoreApplication.translate(
            "Headlines", "{0}: time to first token {1:.1f} ms, {2} steps"
        ).format(mode_name(trace.mode), trace.ttft_ms or 0.0, len(trace.records)))
    if not _same_n(traces):
        lines.append(_different_n(traces))
    big = " · ".join(parts) if parts else QCoreApplication.translate(
        "Headlines", "TTFT {0:.1f} ms").format(traces[0].ttft_ms or 0.0)
    return Headline(big, lines)


def cache_bytes(store: RunStore) -> Headline:
    trace = store.cache_trace
    if trace is None:
        return Headline(QCoreApplication.translate("Headlines", "Step to fill the cache"), [])
    info = trace.info
    big = QCoreApplication.translate("Headlines", "{0} B per token · {1} B per 100 tokens").format(
        count(info.formula_cache_bytes(1)), count(info.formula_cache_bytes(100)))
    lines = [
        QCoreApplication.translate("Headlines", "2·L·H_kv·d·bytes = 2·{0}·{1}·{2}·{3}").format(
            info.num_layers, info.num_kv_heads, info.head_dim, info.dtype_bytes)
    ]
    record = trace.last
    if trace.mode == "cached" and record is not None:
        lines.append(QCoreApplication.translate(
            "Headlines", "measured now: {0} B for T = {1} tokens"
        ).format(count(record.cache_used_bytes), record.cache_length))
    elif trace.mode == "recompute":
        lines.append(QCoreApplication.translate("Headlines", "recompute keeps no cache"))
    return Headline(big, lines)


def answers(counts: AnswerCounts | None) -> Headline:
    if counts is None or not counts.temperatures:
        return Headline(QCoreApplication.translate("Headlines", "Sample ×N to count answers"), [])
    distinct = " / ".join(str(counts.distinct(i)) for i in range(len(counts.temperatures)))
    temps = " / ".join(f"{t:g}" for t in counts.temperatures)
    return Headline(
        QCoreApplication.translate("Headlines", "distinct answers {0}").format(distinct),
        [QCoreApplication.translate("Headlines", "T = {0}").format(temps),
         QCoreApplication.translate("Headlines", "{0} samples per temperature").format(
             counts.samples_per_temperature)],
    )
