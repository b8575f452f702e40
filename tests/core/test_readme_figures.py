"""Every figure the README and docs/*.md quote equals its source: what the code prints now
(the marked blocks, `scripts/readme_figures.py`), or the shipped pack's numbers.json, a
formula or a model's config (`QUOTES`, a table of page, quoted text and source)."""

from __future__ import annotations

import importlib.util
import json
import math
import re
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from kvstudio.engine import formulas
from kvstudio.labs.course import COURSE, NOTEBOOK

ROOT = Path(__file__).resolve().parents[2]


def _figures() -> ModuleType:
    spec = importlib.util.spec_from_file_location("readme_figures", ROOT / "scripts" /
                                                  "readme_figures.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow  # runs the shipped models at the course's sizes
@pytest.mark.numeric  # seeded figures on the shipped models, printed on another CPU
def test_the_marked_figures_equal_what_the_code_prints() -> None:
    figures = _figures()
    pages = figures.pages()
    names = {m.group(1) for page in pages for m in figures.MARKER.finditer(page.read_text())}
    assert names == set(figures.FIGURES)  # every figure is quoted somewhere, none unknown
    drifted = figures.run(pages, check=True)
    assert drifted == [], (
        "these figures no longer equal the code's output; run "
        f"`python scripts/readme_figures.py` and commit: {drifted}"
    )


def test_a_changed_figure_is_caught(tmp_path: Path) -> None:
    figures = _figures()
    page = tmp_path / "page.md"
    page.write_text("a <!-- figures:tokens-fed -->246 vs 13,000 tokens fed<!-- /figures --> b")
    figures.ROOT = tmp_path
    assert figures.run([page], check=True) == ["page.md: tokens-fed"]
    figures.run([page], check=False)
    assert "246 vs 13,728 tokens fed" in page.read_text()
    assert figures.run([page], check=True) == []


def test_a_last_digit_float_difference_is_not_drift_but_a_count_is() -> None:
    figures = _figures()
    same = figures.same_figure
    assert same("fp16  251,904  0.00256  same", "fp16  251,904  0.00257  same")
    assert same("int4  0.80  step 17", "int4  0.81  step 17")
    assert not same("fp16  251,904  0.00256", "fp16  251,905  0.00256")  # bytes are exact
    assert not same("fp16  0.00256", "fp16  0.00290")  # more than a last-digit change
    assert not same("int4  0.80  step 17", "int4  0.80  step 18")  # counts are exact
    assert not same("246 vs 13,728", "246 vs 13,000")


# ---- figures quoted from the shipped pack, a formula or a config ---------------------------
# Each row: a page (or "*": the README and every docs/*.md), the words the page quotes with {}
# where a figure stands, where the figures come from, and the function that reads or computes
# them. Every occurrence of the words on the page must carry the source's figures, and the
# words must occur at least once: a figure that drifts from its source, or a rewording that
# drops it, fails here (then fix the page, or the row).

NUMBER = r"(-?\d[\d,]*(?:\.\d+)?(?:e-?\d+)?)"


@cache
def pack(folder: str = "exports") -> dict[str, Any]:
    """The shipped example pack's numbers.json (docs/exports: Korean; exports-en: English)."""
    return json.loads((ROOT / "docs" / folder / "numbers.json").read_text(encoding="utf-8"))


def lab(name: str) -> dict[str, Any]:
    return pack()["labs"][name]


def n(value: float) -> str:
    return f"{int(value):,}"


def kib(nbytes: float) -> str:
    return f"{nbytes / 1024:.1f}"


def mib(nbytes: float) -> str:
    return f"{nbytes / 2**20:.2f}"


def gib(nbytes: float) -> str:
    return f"{nbytes / 2**30:.2f}"


def sci(value: float) -> str:
    """1.52e-05 as the docs write it: 1.5e-5."""
    mantissa, exponent = f"{value:.1e}".split("e")
    return f"{mantissa}e{int(exponent)}"


def magnitude(value: float) -> str:
    return f"1e{math.floor(math.log10(value))}"


DTYPE_BYTES = {"float32": 4, "float16": 2, "bfloat16": 2}


def bytes_per_token(model: str) -> int:
    """K/V bytes a token from a shipped model's config.json: 2·L·H_kv·d·bytes."""
    config = json.loads((ROOT / "kvstudio" / "resources" / "models" / model /
                         "config.json").read_text(encoding="utf-8"))
    return formulas.bytes_per_token(config["num_hidden_layers"], config["num_key_value_heads"],
                                    config["head_dim"], DTYPE_BYTES[config["dtype"]])


def fed() -> tuple[int, int]:
    """Tokens fed at the course's P and N: P + (N − 1) cached, P·N + N(N − 1)/2 recompute."""
    p, new = COURSE.prompt_tokens, COURSE.new_tokens
    return formulas.tokens_fed("cached", p, new), formulas.tokens_fed("recompute", p, new)


def course_fed() -> tuple[str, str]:
    return n(fed()[0]), n(fed()[1])


def bytes_100() -> str:
    return n(100 * bytes_per_token(COURSE.cache_model))


def distinct() -> list[str]:
    return [str(t["distinct"]) for t in lab("Temperature")["temperatures"]]


def temperatures() -> list[str]:
    return [f"{t['temperature']:g}" for t in lab("Temperature")["temperatures"]]


def card_medians() -> tuple[str, str, str]:
    """ko-chat's model card: 30 samples a temperature on 15 questions, distinct per question."""
    card = (ROOT / "kvstudio" / "resources" / "models" / COURSE.chat_model /
            "MODEL_CARD.md").read_text(encoding="utf-8")
    samples = re.search(r"(\d+) samples per temperature", card)
    low, high = (re.search(rf"T={t} \[([\d, ]+)\]", card) for t in ("0.3", "1.2"))
    assert samples and low and high, "the model card no longer lists distinct answers"
    return samples.group(1), *(
        f"{statistics.median(int(x) for x in m.group(1).split(',')):g}" for m in (low, high))


def ttft() -> list[str]:
    figures = []
    for mode in ("cached", "recompute"):
        spread = lab("CacheVsRecompute")[f"{mode}_ttft_ms"]
        figures += [f"{spread[k]:.2f}" for k in ("median", "min", "max")]
    return figures


def paged() -> list[str]:
    p = lab("PagedCache")
    return [str(p["samples"]), mib(p["static_bytes"][-1]), mib(p["dynamic_bytes"][-1]),
            mib(p["paged_held_bytes"][-1]), str(p["hand_count_blocks"]), str(p["block_size"])]


def quantized() -> list[str]:
    q = lab("QuantizedCache")
    runs = q["runs"]
    if any(runs[k]["bytes"] != runs[k]["formula_bytes"] for k in runs):
        return ["(a cache's bytes differ from its formula)"]
    return [kib(q["reference_bytes"]), *(kib(runs[k]["bytes"]) for k in ("fp16", "int8", "int4")),
            str(runs["int4"]["first_divergent_step"] or "none")]


def speculative_k4() -> list[str]:
    runs = lab("Speculative")["runs"]
    run = next(r for r in runs if r["draft_kind"] == "model" and r["k"] == 4)
    same = sum(r["identical_to_plain"] for r in runs)
    return ["4", f"{run['alpha']:.2f}", f"{run['tokens_per_call']:.2f}", str(same), str(len(runs))]


def beam() -> dict[str, Any]:
    return lab("BeamSearch")


def chat_fed(way: str) -> list[str]:
    return [str(t[way]["prompt_tokens_fed"]) for t in lab("Chat")["turns"]]


def chat_total(way: str) -> str:
    return str(sum(t[way]["prompt_tokens_fed"] + t[way]["decode_tokens_fed"]
                   for t in lab("Chat")["turns"]))


def chat_last() -> list[str]:
    turn = lab("Chat")["turns"][-1]
    reuse, refeed = turn["reuse"], turn["refeed"]
    return [str(turn["turn"]), str(reuse["prompt_tokens_fed"]), f"{reuse['ttft_ms']:.1f}",
            str(reuse["ttft_rounds"]), str(refeed["prompt_tokens_fed"]),
            f"{refeed['ttft_ms']:.1f}"]


def inspector_step(step: int) -> list[str]:
    inspector = lab("CacheInspector")
    return [str(inspector["layer"]), str(inspector["kv_head"]), str(step),
            str(inspector["steps"][step]["rows_held"])]


def projector() -> list[str]:
    p = lab("Projector")
    return [n(p["bytes_per_token"]), gib(p["cache_bytes"]), str(p["batch"]), n(p["context"])]


def speculative_ranges() -> list[str]:
    """α and tokens per target call over k, for the draft model and for prompt lookup."""
    runs = lab("Speculative")["runs"]
    figures = []
    for kind, digits in (("model", 2), ("prompt-lookup", 1)):
        alphas = [r["alpha"] for r in runs if r["draft_kind"] == kind]
        figures += [f"{min(alphas):.{digits}f}", f"{max(alphas):.{digits}f}"]
        if kind == "model":
            figures.append(",".join(str(r["k"]) for r in runs if r["draft_kind"] == kind))
        calls = [r["tokens_per_call"] for r in runs if r["draft_kind"] == kind]
        figures += [f"{min(calls):.2f}", f"{max(calls):.2f}"]
    return figures


def admission(context: int, budget: int) -> list[object]:
    """The serving lab's admission formula on ko-chat, blocks of 16: ⌊budget ÷ block bytes⌋
    blocks, ⌈L ÷ b⌉ a request."""
    block = 16 * bytes_per_token(COURSE.chat_model)
    blocks = budget // block
    admitted = blocks // math.ceil(context / 16)
    return [context, n(budget), blocks, admitted, admitted * math.ceil(context / 16)]


def requests_on(gib_size: int, context: int) -> list[str]:
    """The projector's preset: requests of `context` tokens in a GPU's memory less the weights."""
    p = lab("Projector")
    free = gib_size * 2**30 - p["weights_bytes"]
    return [n(context), n(p["bytes_per_token"]), str(free // (context * p["bytes_per_token"])),
            str(gib_size)]


def decode_ms(mode: str) -> float:
    return float(lab("CacheVsRecompute")[f"{mode}_decode_ms_per_token"]["median"])


def bench(name: str) -> dict[str, Any]:
    """A result benchmarks/window_vs_cli_compare.py wrote (benchmarks/results)."""
    return json.loads((ROOT / "benchmarks" / "results" / name).read_text(encoding="utf-8"))


def bench_spreads(name: str, keys: Sequence[str]) -> list[str]:
    result = bench(name)
    figures = [f"{result['load_average'][0]:.1f}"]
    for key in keys:
        for front in ("window", "cli"):
            s = result[key][front]
            figures += [f"{s['median']:.2f}", f"{s['min']:.2f}", f"{s['max']:.2f}"]
    return figures


def serving() -> dict[str, Any]:
    return lab("Serving")["serving"]


PACK = "docs/exports/numbers.json"
TOKENS_FED = "formulas.tokens_fed at COURSE's P, N (P + (N − 1); P·N + N(N − 1)/2)"
BYTES = "formulas.bytes_per_token from ko-base's config.json (2·L·H_kv·d·bytes)"


@dataclass(frozen=True)
class Quote:
    page: str  # relative to the root; "*": README.md and every docs/*.md
    text: str  # as the page words it (line breaks as spaces), {} where a figure stands
    source: str  # where the figures come from
    values: Callable[[], Sequence[object]]
    # Other cases the same words may quote, each with its own row (the seed notebook's P, N)
    others: Callable[[], Sequence[Sequence[object]]] = lambda: ()


def live_fed_at(steps: int) -> tuple[str, str, int]:
    """Tokens fed in the first `steps` steps of the pack's live prompt, cached and recompute."""
    p = pack()["live"]["cached"]["prompt_tokens"]
    return (n(sum(formulas.tokens_fed_per_step("cached", p, steps))),
            n(sum(formulas.tokens_fed_per_step("recompute", p, steps))), steps)


def notebook_fed() -> tuple[str, str]:
    p, new = NOTEBOOK.prompt_tokens, NOTEBOOK.new_tokens
    return n(formulas.tokens_fed("cached", p, new)), n(formulas.tokens_fed("recompute", p, new))


P, N = COURSE.prompt_tokens, COURSE.new_tokens
QUOTES: tuple[Quote, ...] = (
    # cache vs recompute: tokens fed (formula), the speed ratio and TTFT (pack)
    Quote("*", "{} vs {} tokens fed", TOKENS_FED, course_fed,
          others=lambda: (notebook_fed(), live_fed_at(5)[:2])),
    Quote("docs/window.md", "recompute run stopped at N = {} reads \"{} vs {} tokens fed in N = {} "
          "steps\"", "formulas.tokens_fed_per_step at numbers.json live.cached.prompt_tokens",
          lambda: (5, *live_fed_at(5))),
    Quote("docs/notebooks.md", "cache on/off case (P = {}, N = {}, median of 3 rounds): {} vs {} "
          "tokens fed", "formulas.tokens_fed at NOTEBOOK's P, N",
          lambda: (NOTEBOOK.prompt_tokens, NOTEBOOK.new_tokens, *notebook_fed())),
    Quote("docs/labs.md", "tokens fed {} vs {} · cached X ms/token", TOKENS_FED, course_fed),
    Quote("docs/labs.md", "cached P + (N − 1) = {} tokens fed, recompute P·N + N(N − 1)/2 = {} "
          "for P = {}, N = {}", TOKENS_FED, lambda: (*course_fed(), P, N)),
    Quote("docs/cli.md", "P·N+N(N−1)/2 recompute: {} and {} for P={}, N={})", TOKENS_FED,
          lambda: (*course_fed(), P, N)),
    Quote("docs/models.md", "(P={}, N={} → {} vs {} tokens fed)", TOKENS_FED,
          lambda: (P, N, *course_fed())),
    Quote("docs/notebooks.md", "P = {}, N = {}: {} vs {} tokens fed", TOKENS_FED,
          lambda: (P, N, *course_fed())),
    Quote("docs/notebooks.md", "Numbers such as {}, {} and {} are measured", TOKENS_FED + "; " +
          BYTES + " × 100", lambda: (*course_fed(), bytes_100())),
    Quote("docs/notebooks.md", "{} and {} and an image in the tokens-fed notebook, {} in the "
          "cache-bytes notebook", TOKENS_FED + "; " + BYTES + " × 100",
          lambda: (*course_fed(), bytes_100())),
    Quote("*", "recompute took {}× as long", PACK + " CacheVsRecompute.speed_ratio_of_medians",
          lambda: (f"{lab('CacheVsRecompute')['speed_ratio_of_medians']:.1f}",)),
    Quote("README.md", "the speed ratio ({}× in [the example pack]",
          PACK + " CacheVsRecompute.speed_ratio_of_medians",
          lambda: (f"{lab('CacheVsRecompute')['speed_ratio_of_medians']:.1f}",)),
    Quote("README.md", "decode ms/token (ko-chat, P = {}, N = {}) | {}× ({} vs {} ms/token)",
          PACK + " Twin: prompt_tokens, new_tokens, speed_ratio, the two engines' "
          "ms_per_token", lambda: (lab("Twin")["prompt_tokens"], lab("Twin")["new_tokens"],
                                   f"{lab('Twin')['speed_ratio']:.2f}",
                                   f"{lab('Twin')['kv_studio']['ms_per_token']:.2f}",
                                   f"{lab('Twin')['llama_cpp']['ms_per_token']:.2f}")),
    Quote("docs/labs.md", "took {}× as long (the ratio of the medians of {} rounds), {}× per "
          "decoded token", PACK + " CacheVsRecompute: speed_ratio_of_medians, rounds, "
          "recompute ÷ cached decode_ms_per_token medians",
          lambda: (f"{lab('CacheVsRecompute')['speed_ratio_of_medians']:.1f}",
                   lab("CacheVsRecompute")["rounds"],
                   f"{decode_ms('recompute') / decode_ms('cached'):.1f}")),
    Quote("docs/labs.md", "The example pack, on a quieter machine, has {} vs {} ms/token ({}×)",
          PACK + " CacheVsRecompute.{cached,recompute}_decode_ms_per_token",
          lambda: (f"{decode_ms('cached'):.2f}", f"{decode_ms('recompute'):.2f}",
                   f"{decode_ms('recompute') / decode_ms('cached'):.1f}")),
    Quote("docs/labs.md", "at load average {}: cached {} ({}–{}) vs {} ({}–{}) ms/token, "
          "recompute {} ({}–{}) vs {} ({}–{}), the ratio per decoded token {}× ({}–{}) in the "
          "window vs {}× ({}–{}) from `compare`",
          "benchmarks/results/window_vs_cli_compare.json",
          lambda: bench_spreads("window_vs_cli_compare.json",
                                ("cached_decode_ms", "recompute_decode_ms", "ratio"))),
    Quote("docs/labs.md", "at load average {}, they no longer agreed: cached {} vs {} ms/token, "
          "the ratio {}× ({}–{}) vs {}× ({}–{})",
          "benchmarks/results/window_vs_cli_compare-load10.json",
          lambda: (lambda f: (f[0], f[1], f[4], *f[7:]))(bench_spreads(
              "window_vs_cli_compare-load10.json", ("cached_decode_ms", "ratio")))),
    Quote("*", "the ratio of the medians of {} rounds", PACK + " CacheVsRecompute.rounds",
          lambda: (lab("CacheVsRecompute")["rounds"],)),
    Quote("docs/window.md", "TTFT {} ms ({}–{}) vs {} ms ({}–{})",
          PACK + " CacheVsRecompute.{cached,recompute}_ttft_ms", ttft),
    Quote("docs/fidelity.md", "ko-base, P = {}, N = {}: {} /",
          PACK + " max(CacheVsRecompute.max_abs_logit_diff) (made natively)",
          lambda: (P, N, sci(max(lab("CacheVsRecompute")["max_abs_logit_diff"])))),
    Quote("docs/labs.md", "logits differ by about {} from float rounding",
          PACK + " max(CacheVsRecompute.max_abs_logit_diff), its order of magnitude",
          lambda: (magnitude(max(lab("CacheVsRecompute")["max_abs_logit_diff"])),)),
    # bytes a token
    Quote("README.md", "grows by {} bytes a token", BYTES,
          lambda: (n(bytes_per_token(COURSE.cache_model)),)),
    Quote("docs/models.md", "so 100 cached tokens are exactly {} bytes", BYTES + " × 100",
          lambda: (bytes_100(),)),
    Quote("docs/notebooks.md", "100 tokens in the cache × {} B = {} B", BYTES,
          lambda: (n(bytes_per_token(COURSE.cache_model)), bytes_100())),
    Quote("docs/window.md", '"{} B per token · {} B per 100 tokens"', BYTES,
          lambda: (n(bytes_per_token(COURSE.cache_model)), bytes_100())),
    Quote("docs/labs.md", "{} B of K/V per token", "formulas.bytes_per_token from ko-chat's "
          "config.json", lambda: (n(bytes_per_token(COURSE.chat_model)),)),
    Quote("docs/scale.md", "× {} tokens = {}, {} and {} (", PACK + " QuantizedCache "
          "reference_bytes and runs.{int8,int4}.bytes, at P + N − 1 tokens",
          lambda: (P + N - 1, n(lab("QuantizedCache")["reference_bytes"]),
                   *(n(lab("QuantizedCache")["runs"][k]["bytes"]) for k in ("int8", "int4")))),
    # distinct answers
    Quote("*", "{}, {} and {} distinct answers of {} at T = {}, {}, {}",
          PACK + " Temperature.temperatures[].distinct, .samples",
          lambda: (*distinct(), lab("Temperature")["samples"], *temperatures())),
    Quote("docs/window.md", '"distinct answers {} / {} / {}"',
          PACK + " Temperature.temperatures[].distinct", distinct),
    Quote("docs/notebooks.md", "{} answers at each of T = {}, {}, {} (seed {}): {}, {} and {} "
          "distinct", PACK + " Temperature",
          lambda: (lab("Temperature")["samples"], *temperatures(), lab("Temperature")["seed"],
                   *distinct())),
    Quote("docs/models.md", "median distinct answers of {} samples: {} at T=0.3, {} at T=1.2",
          "ko-chat's MODEL_CARD.md, the median of its per-question counts", card_medians),
    # paged and quantized caches
    Quote("docs/labs.md", "the {} answers held {} MiB preallocated, {} MiB dynamic, {} MiB "
          "paged ({} blocks of {} tokens, {} copies on write: the {}-token prompt",
          PACK + " PagedCache", lambda: (*paged(), lab("PagedCache")["copies_on_write"],
                                         lab("PagedCache")["prompt_tokens"])),
    Quote("docs/window.md", "({} answers held {} MiB preallocated, {} MiB dynamic, {} MiB "
          "paged: {} blocks of {} tokens, no shared prompt block because the {}-token prompt "
          "is shorter than one block, {} copies on write)", PACK + " PagedCache",
          lambda: (*paged(), lab("PagedCache")["prompt_tokens"],
                   lab("PagedCache")["copies_on_write"])),
    Quote("*", "{} KiB fp32, {} / {} / {} KiB fp16 / int8 / int4, each equal to its layout "
          "formula; int4 changes the answer at step {}", PACK + " QuantizedCache", quantized),
    # the other labs in the example pack
    Quote("docs/window.md", "top-p = {} keeps {} tokens at step 0", PACK + " TopPTopK",
          lambda: (f"{lab('TopPTopK')['settings']['top_p']:g}",
                   lab("TopPTopK")["steps"][0]["survivors_top_p"])),
    Quote("*", "Llama-3.1-8B: {} B per token, {} GiB for batch {} × {} tokens",
          PACK + " Projector", projector),
    Quote("docs/window.md", "{} steps, {} prefix-hit tokens, peak {} blocks ({} KiB)",
          PACK + " Serving.serving",
          lambda: (serving()["steps"], serving()["prefix_hit_tokens"], serving()["peak_blocks"],
                   kib(serving()["peak_cache_bytes"]))),
    Quote("docs/labs.md", "continuous {} steps and none, both feeding", PACK + " Serving.serving",
          lambda: (serving()["steps"] if serving()["padding_slots"] == 0 else "(padding)",)),
    Quote("docs/labs.md", "peaking at {} blocks ({} bytes)", PACK + " Serving.serving",
          lambda: (serving()["peak_blocks"], n(serving()["peak_cache_bytes"]))),
    Quote("docs/window.md", "at k = {} α {} and {} tokens per target call, identical to greedy "
          "in {} of {} runs", PACK + " Speculative.runs", speculative_k4),
    Quote("docs/window.md", "(K = {}, N = {}: {} rows moved, {} MiB copied by reorders against "
          "{} KiB by copy on write", PACK + " BeamSearch",
          lambda: (beam()["num_beams"], beam()["max_new_tokens"], sum(beam()["rows_moved"]),
                   mib(sum(beam()["reorder_bytes"])), kib(sum(beam()["cow_bytes"])))),
    Quote("docs/labs.md", "(K = {}, N = {}, P = {}, blocks of 16): {} steps, {} rows moved, {} B "
          "copied by reorders", PACK + " BeamSearch",
          lambda: (beam()["num_beams"], beam()["max_new_tokens"], beam()["prompt_tokens"],
                   beam()["steps"], sum(beam()["rows_moved"]), n(sum(beam()["reorder_bytes"])))),
    Quote("docs/labs.md", "{} B by copy on write, and `same as transformers: yes`",
          PACK + " BeamSearch.cow_bytes", lambda: (n(sum(beam()["cow_bytes"])),)),
    Quote("docs/window.md", "(turn {}: reuse feeds {} tokens, TTFT {} ms, median of {}; re-feed "
          "{} tokens, {} ms)", PACK + " Chat.turns[-1]", chat_last),
    Quote("docs/cli.md", "the prompt fed per turn stays at the new turn's size ({}, {}, {}, {} "
          "tokens) while re-feeding grows with the history ({}, {}, {}, {})",
          PACK + " Chat.turns[].{reuse,refeed}.prompt_tokens_fed",
          lambda: (*chat_fed("reuse"), *chat_fed("refeed"))),
    Quote("docs/cli.md", "tokens fed over the conversation (prompts and answers): {} with reuse, "
          "{} re-feeding the history", PACK + " Chat.turns[], prompt + decode tokens fed",
          lambda: (chat_total("reuse"), chat_total("refeed"))),
    Quote("docs/window.md", "(layer {}, K/V head {}, step {}: {} rows held", PACK +
          " CacheInspector", lambda: inspector_step(15)),
    Quote("docs/labs.md", "α ≈ {}–{} and {}–{} tokens per target call for k = {} … {}, prompt "
          "lookup α ≈ {}–{} but only {}–{} tokens per call", PACK + " Speculative.runs",
          lambda: (lambda f: (f[0], f[1], f[3], f[4], f[2].split(",")[0], f[2].split(",")[-1],
                              *f[5:]))(speculative_ranges())),
    Quote("docs/labs.md", "(ko-chat, L = {}, {} B: {} blocks, {} admitted of 4, {} blocks)",
          "the admission formula on ko-chat's config.json, blocks of 16",
          lambda: admission(200, 1_000_000)),
    Quote("docs/labs.md", "(Llama-3.1-8B, {} tokens: {} B a token, {} requests on {} GiB)",
          PACK + " Projector (bytes per token, weights)", lambda: requests_on(80, 4096)),
    Quote("docs/labs.md", "it is {} FLOP per byte at B = 1 and {} at B = 32 ({} MiB of weights",
          PACK + " Serving.batch_sweep",
          lambda: (lambda sweep: (f"{sweep['points'][0]['intensity']:.2f}",
                                  f"{sweep['points'][-1]['intensity']:.1f}",
                                  f"{sweep['weight_bytes'] / 2**20:.1f}"))(
              lab("Serving")["batch_sweep"])),
    # the README's screenshot: the course question on ko-chat, as the pack's live run
    Quote("*", "({} tokens with the chat template)", PACK + " live.cached.prompt_tokens",
          lambda: (pack()["live"]["cached"]["prompt_tokens"],)),
    Quote("docs/window.md", "2·L·T·H_kv·d·bytes ({} KiB for T = {})",
          "formulas.bytes_per_token from ko-chat's config.json × (live P + N − 1)",
          lambda: (lambda t: (kib(t * bytes_per_token(COURSE.chat_model)), t))(
              pack()["live"]["cached"]["prompt_tokens"] + COURSE.new_tokens - 1)),
    Quote("docs/window.md", "at {} one answer comes {} times, at {} every answer is new",
          PACK + " Temperature.temperatures[].counts",
          lambda: (lambda ts: (f"{ts[0]['temperature']:g}", max(c for _, c in ts[0]["counts"]),
                               f"{ts[-1]['temperature']:g}" if ts[-1]["distinct"] ==
                               lab("Temperature")["samples"] else "(repeats)"))(
              lab("Temperature")["temperatures"])),
)


def flat(text: str) -> str:
    return " ".join(text.split())


def quote_pattern(text: str) -> re.Pattern[str]:
    return re.compile(NUMBER.join(re.escape(part) for part in flat(text).split("{}")))


def disagreements(quotes: Sequence[Quote], root: Path) -> list[str]:
    """Every quote whose words are missing from its page, or carry other figures than its
    source's: 'page: "what the page says" but SOURCE gives "what it should say"'."""
    pages = {str(p.relative_to(root)): flat(p.read_text(encoding="utf-8"))
             for p in [root / "README.md", *sorted((root / "docs").glob("*.md"))]}
    found = []
    for quote in quotes:
        expected = flat(quote.text.format(*quote.values()))
        allowed = {expected, *(flat(quote.text.format(*v)) for v in quote.others())}
        names = sorted(pages) if quote.page == "*" else [quote.page]
        seen = 0
        for name in names:
            for match in quote_pattern(quote.text).finditer(pages[name]):
                seen += 1
                if match.group(0) not in allowed:
                    found.append(f'{name}: "{match.group(0)}" but {quote.source} gives '
                                 f'"{expected}"')
        if seen == 0:
            found.append(f'{quote.page}: no "{flat(quote.text)}" (expected "{expected}" from '
                         f"{quote.source})")
    return found


def test_every_quoted_figure_equals_its_source() -> None:
    found = disagreements(QUOTES, ROOT)
    assert found == [], "\n".join(found)


def test_the_pack_counts_tokens_and_bytes_as_the_formulas_do() -> None:
    compare = lab("CacheVsRecompute")
    assert (compare["prompt_tokens"], compare["new_tokens"]) == (P, N)
    assert (compare["cached_tokens_fed"], compare["recompute_tokens_fed"]) == fed()
    per_token = bytes_per_token(COURSE.cache_model)
    assert compare["cached_cache_bytes"] == (P + N - 1) * per_token
    assert lab("QuantizedCache")["reference_bytes"] == (P + N - 1) * per_token


def counts(value: Any) -> Any:
    """`value` with only its integers and booleans: counts, bytes, steps, token ids (times,
    fits and float rounding may differ between two runs, and words between languages)."""
    if isinstance(value, dict):
        return {k: counts(v) for k, v in value.items()}
    if isinstance(value, list):
        return [counts(v) for v in value]
    return value if isinstance(value, (bool, int)) else None


def test_both_packs_hold_the_same_counts() -> None:
    """The English pack's counts and bytes are the Korean pack's, which QUOTES reads."""
    ko, en = pack("exports")["labs"], pack("exports-en")["labs"]
    assert set(ko) == set(en)
    timed = {"LengthSweep"}  # its fits (and whether one is drawn) follow the times
    assert [name for name in ko if name not in timed and counts(ko[name]) != counts(en[name])
            ] == []


def test_a_doc_figure_that_drifts_from_its_source_is_caught(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "README.md").write_text("246 vs 13,728 tokens fed\n", encoding="utf-8")
    page = tmp_path / "docs" / "labs.md"
    page.write_text("fed: 246 vs\n13,000 tokens fed", encoding="utf-8")
    rows = (Quote("*", "{} vs {} tokens fed", TOKENS_FED, course_fed),
            Quote("docs/labs.md", "int4 changes the answer at step {}", PACK,
                  lambda: (lab("QuantizedCache")["runs"]["int4"]["first_divergent_step"],)))
    found = disagreements(rows, tmp_path)
    assert found[0] == ('docs/labs.md: "246 vs 13,000 tokens fed" but ' + TOKENS_FED +
                        ' gives "246 vs 13,728 tokens fed"')
    assert found[1].startswith('docs/labs.md: no "int4 changes the answer at step {}"')
    assert len(found) == 2
    page.write_text("fed: 246 vs\n13,728 tokens fed; int4 changes the answer at step 17")
    assert disagreements(rows, tmp_path) == []
