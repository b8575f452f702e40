"""Write the course notebooks (notebooks/*.ipynb) from the cells below, stored without outputs.

Each notebook is one lab of the module, in Korean with the English beside it
(every markdown cell: Korean, then the English in italics). Its first code
cell installs KV Studio in Colab and does nothing where it is already
importable; its checks compare the lab's numbers with
`kvstudio.engine.formulas` in `assert`s that say what they check.

    python scripts/make_notebooks.py          # rewrite notebooks/
    python scripts/make_notebooks.py --check  # exit 1 if notebooks/ differs (a test runs this)

tests/notebooks/test_notebooks.py executes every notebook headless and reads
its outputs. docs/notebooks.md describes them.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FOLDER = ROOT / "notebooks"

# Where a notebook outside a clone installs KV Studio from (Colab): the course's git address.
# Set it here once and run this script: every notebook's first cell takes it from here
# (docs/notebooks.md). A wheel uploaded next to the notebook is used first.
COURSE_ADDRESS = "https://github.com/YOUR-ACCOUNT/kvstudio"

INSTALL = f'''\
# 설치 (Colab 등) · Install (Colab and the like): docs/notebooks.md
# KV Studio가 이미 설치되어 있으면 아무것도 하지 않습니다 · does nothing where KV Studio is installed.
# 올린 휠(kvstudio-*.whl)이 있으면 그것을, 없으면 강의 저장소를 설치합니다.
# An uploaded wheel (kvstudio-*.whl) is installed first, else the course's repository.
COURSE_ADDRESS = "{COURSE_ADDRESS}"
import glob
import importlib.util
import os

if importlib.util.find_spec("kvstudio") is None:
    wheels = sorted(glob.glob("kvstudio-*.whl"))
    source = "file://" + os.path.abspath(wheels[-1]) if wheels else "git+" + COURSE_ADDRESS
    # torch: CPU 휠 색인 (Colab에 이미 있는 torch는 그대로 둡니다) · the CPU wheel index
    !pip install -q "kvstudio[notebook] @ {{source}}" --extra-index-url https://download.pytorch.org/whl/cpu
    try:  # Colab: 위젯(진행 막대, 실시간 차트) 보이기 · show widgets (progress bar, live chart)
        from google.colab import output
        output.enable_custom_widget_manager()
    except ImportError:
        pass'''

IMPORTS = '''\
from kvstudio import notebook as kv
from kvstudio.engine import formulas  # 강의의 공식 · the course's formulas

print(kv.about())  # 설치된 모델과 매개변수 수 · the installed models and their parameters
kv.language("ko")  # 차트를 한국어로 ("en": 영어) · charts in Korean ("en": English)'''


def md(korean: str, english: str) -> dict:
    return {"cell_type": "markdown", "metadata": {}, "source": f"{korean}\n\n*{english}*"}


def code(source: str) -> dict:
    return {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
            "source": source}


def notebook(title_ko: str, title_en: str, intro_ko: str, intro_en: str,
             cells: list[dict]) -> dict:
    head = md(f"# {title_ko}\n\n{intro_ko}", f"{title_en}: {intro_en}")
    return {
        "cells": [head, code(INSTALL), code(IMPORTS), *cells],
        "metadata": {
            "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
            "language_info": {"name": "python"},
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }


EXPORT_NOTE = md(
    "차트는 창의 내보내기와 똑같이 16:9 슬라이드(1920×1080)에 저장됩니다: PNG, SVG, PDF, CSV.",
    "The chart is saved exactly as the window exports it, on the 16:9 slide (1920×1080): "
    "PNG, SVG, PDF, CSV.")

NOTEBOOKS: dict[str, dict] = {
    "00_seed_cache_on_off.ipynb": notebook(
        "캐시 켜기/끄기: 시드 노트북", "Cache on and off: the seed notebook",
        "모듈의 세 번째 문서(Colab 노트북)가 하던 실험입니다. 16토큰 문장으로 64토큰을 "
        "캐시를 켜고(cached) 끄고(recompute) 생성하여 시간과 먹인 토큰 수를 비교합니다. "
        "먼저 내장 모델(ko-base)로, 그다음 transformers 모델 폴더가 있으면 그 모델로 합니다.",
        "the experiment of the module's third document (a Colab notebook): 64 tokens from a "
        "16-token sentence with the cache on (cached) and off (recompute), comparing time and "
        "tokens fed. First on the embedded model (ko-base), then on a transformers folder if "
        "you give one.",
        [
            md("## 내장 모델 · The embedded model\n\n"
               "`kv.compare(preset=\"notebook\")`은 창의 *캐시 vs 재계산* 실험과 같은 코드입니다. "
               "시간은 3번 번갈아 잰 값의 중앙값입니다.",
               "`kv.compare(preset=\"notebook\")` is the window's *Cache vs recompute* lab, the "
               "same code. Times are medians of 3 interleaved rounds."),
            code('seed = kv.compare(preset="notebook", repeats=3)\nprint(seed.headline)'),
            md("## 공식으로 확인 · Checked against the formulas",
               "Cached feeds P + (N − 1) tokens, recompute P·N + N(N − 1)/2; greedy picks the "
               "same tokens in both modes."),
            code('''\
first = seed.result.first
P, N = first.prompt_tokens, first.new_tokens
assert (P, N) == (16, 64), "시드 노트북의 경우는 P = 16, N = 64 · the seed notebook's case"
assert first.cached.tokens_fed == formulas.tokens_fed_cached(P, N) == 79, \\
    "캐시를 쓰면 프롬프트를 한 번, 그 뒤 한 토큰씩: P + (N − 1) · cached: P + (N − 1)"
assert first.recompute.tokens_fed == formulas.tokens_fed_recompute(P, N) == 3_040, \\
    "재계산은 s단계마다 P + s 토큰: P·N + N(N − 1)/2 · recompute: P·N + N(N − 1)/2"
assert first.identical, "greedy이므로 두 방식이 같은 토큰을 골라야 합니다 · greedy: the same tokens"
total = seed.result.total_ms
print(f"cached {first.cached.tokens_fed:,} vs recompute {first.recompute.tokens_fed:,} tokens fed")
print(f"total: cached {total('cached').median:.0f} ms vs recompute {total('recompute').median:.0f} ms "
      f"(median of {total('cached').count} rounds): {seed.result.speed_ratio:.1f}×")'''),
            md("## transformers 모델 폴더 · A transformers folder\n\n"
               "`HF_FOLDER`에 내려받아 둔 transformers 모델 폴더(예: Qwen3-0.6B)의 경로를 "
               "넣으면 같은 실험을 그 모델로 합니다 (`kvstudio[hf]` 필요, 아무것도 내려받지 "
               "않습니다). 비어 있으면 건너뜁니다.",
               "Put the path of a transformers model folder you already have (e.g. Qwen3-0.6B) "
               "in `HF_FOLDER` to run the same experiment on it (needs `kvstudio[hf]`; nothing "
               "is downloaded). Empty: skipped."),
            code('''\
HF_FOLDER = ""  # ← 예 · e.g. "/content/Qwen3-0.6B"
if HF_FOLDER:
    hf = kv.compare(HF_FOLDER, preset="notebook", repeats=3)
    print(hf.headline)
    f = hf.result.first
    assert f.cached.tokens_fed == formulas.tokens_fed_cached(f.prompt_tokens, f.new_tokens)
    assert f.recompute.tokens_fed == formulas.tokens_fed_recompute(f.prompt_tokens, f.new_tokens)
else:
    print("HF_FOLDER가 비어 있어 건너뜁니다 · HF_FOLDER is empty: skipped")'''),
        ]),
    "01_tokens_fed.ipynb": notebook(
        "같은 답, 다른 계산량: 먹인 토큰 수", "The same answer, different work: tokens fed",
        "강의 설정 P = 183, N = 64에서 캐시를 쓰면 246토큰, 재계산하면 13,728토큰을 모델에 "
        "먹입니다. 그리고 두 방식은 똑같은 토큰을 고릅니다.",
        "at the course's P = 183, N = 64, cached mode feeds the model 246 tokens and recompute "
        "13,728, and both choose exactly the same tokens.",
        [
            md("## 실험 · The lab\n\n진행 막대 아래의 차트는 창의 차트와 같은 코드로 그려집니다. "
               "시간이 중요하지 않은 실험이므로 한 번(`repeats=1`)만 잽니다: 시간은 "
               "'단일 측정'으로 표시됩니다.",
               "The chart under the progress bar is drawn by the window's own chart code. "
               "Times are not the point here, so one round (`repeats=1`): they are labelled "
               "a single measurement."),
            code("run = kv.compare(prompt_tokens=183, new_tokens=64, repeats=1)\n"
                 "print(run.headline)"),
            code("run.df if run.df is not None else print(run.table_text())  # 표 · the table"),
            md("## 공식으로 확인 · Checked against the formulas",
               "The totals and every step's tokens fed equal the formulas; both modes chose "
               "the same tokens."),
            code('''\
first = run.result.first
c, r = first.cached, first.recompute
P, N = first.prompt_tokens, first.new_tokens
assert c.tokens_fed == formulas.tokens_fed_cached(P, N) == 246, "캐시: P + (N − 1) = 246"
assert r.tokens_fed == formulas.tokens_fed_recompute(P, N) == 13_728, "재계산: P·N + N(N − 1)/2 = 13,728"
assert list(c.tokens_fed_per_step) == formulas.tokens_fed_per_step("cached", P, N), \\
    "캐시: 0단계에 P, 그 뒤 1씩 · cached: P at step 0, then 1 a step"
assert list(r.tokens_fed_per_step) == formulas.tokens_fed_per_step("recompute", P, N), \\
    "재계산: s단계에 P + s · recompute: P + s at step s"
assert first.identical, "같은 토큰 · the same tokens in both modes"
print(f"{c.tokens_fed:,} vs {r.tokens_fed:,} tokens fed, identical tokens: {first.identical}")'''),
            EXPORT_NOTE,
            code('''\
for suffix in ("png", "svg", "pdf", "csv"):
    print(kv.export(run, f"tokens_fed.{suffix}"))'''),
        ]),
    "02_time.ipynb": notebook(
        "시간: 첫 토큰까지(TTFT)와 토큰 사이 시간", "Time: to the first token (TTFT) and between tokens",
        "0단계(프리필)는 프롬프트 전체를 먹이므로 첫 토큰까지 걸리는 시간(TTFT)입니다. 그 뒤의 "
        "단계는 토큰 사이 시간(ms/token)이고, 초당 토큰 수는 1000 ÷ ms/token입니다. 시간은 "
        "3번 번갈아 잰 값의 중앙값과 범위입니다.",
        "step 0 (the prefill) feeds the whole prompt, so it is the time to first token (TTFT); "
        "the later steps are the time between tokens (ms/token), and tokens/s = 1000 ÷ "
        "ms/token. Times are the median and range of 3 interleaved rounds.",
        [
            code("run = kv.compare(prompt_tokens=183, new_tokens=32, repeats=3)\n"
                 "print(run.headline)"),
            md("## 정의로 확인 · Checked against the definitions",
               "TTFT is step 0's time; ms/token is the median of the later steps; each shown "
               "time is the median of the rounds."),
            code('''\
import statistics

res = run.result
for one in res.rounds:
    cached = one.cached
    assert cached.ttft_seconds == cached.step_seconds[0], "TTFT = 0단계(프리필)의 시간 · step 0"
    assert cached.decode_seconds_per_token == statistics.median(cached.step_seconds[1:]), \\
        "ms/token = 1단계부터의 중앙값 (프리필 제외) · median step, prefill apart"
ttft, per_token = res.ttft_ms("cached"), res.decode_ms_per_token("cached")
assert ttft.count == per_token.count == len(res.rounds) == 3, "3번의 중앙값 · a median of 3 rounds"
assert ttft.median == statistics.median(1000 * one.cached.ttft_seconds for one in res.rounds)
print(f"TTFT {ttft.median:.2f} ms ({ttft.low:.2f}–{ttft.high:.2f}) vs "
      f"{per_token.median:.2f} ms/token ({per_token.low:.2f}–{per_token.high:.2f}), "
      f"{1000 / per_token.median:.0f} tokens/s, median of {ttft.count} rounds")'''),
        ]),
    "03_cache_bytes.ipynb": notebook(
        "KV 캐시의 바이트", "The KV cache in bytes",
        "강의 모델(4층, K/V 헤드 2개 × 32차원, fp32)에서 한 토큰은 2 (K, V) · 4 · 2 · 32 · 4 = "
        "2,048바이트이고, 100토큰은 204,800바이트입니다. 캐시의 텐서에서 잰 값이 공식과 같은지 "
        "봅니다 (P = 37, N = 64: 캐시에 P + N − 1 = 100토큰).",
        "on the course model (4 layers, 2 K/V heads × 32 dims, fp32) one token costs 2 (K, V) · "
        "4 · 2 · 32 · 4 = 2,048 bytes and 100 tokens 204,800 bytes. We check that the bytes "
        "measured from the cache's tensors equal the formula (P = 37, N = 64: P + N − 1 = 100 "
        "tokens in the cache).",
        [
            code("run = kv.cache_kinds(prompt_tokens=37, new_tokens=64)\nprint(run.headline)"),
            md("## 공식으로 확인 · Checked against the formula",
               "2 · L · T · H_kv · d · bytes, with the model's own L, H_kv, d and bytes."),
            code('''\
model = kv.load("ko-base").backend
L, H_kv, d, nbytes = model.num_layers, model.num_kv_heads, model.head_dim, model.dtype_bytes
assert (L, H_kv, d, nbytes) == (4, 2, 32, 4), "강의 모델 · the course model"
per_token = formulas.bytes_per_token(L, H_kv, d, nbytes)
assert per_token == 2_048, "한 토큰 = 2 · 4 · 2 · 32 · 4 = 2,048 B"
dynamic = next(r for r in run.result.runs if r.kind == "dynamic")
T = dynamic.cache_length[-1]
assert T == 37 + 64 - 1 == 100, "마지막 토큰은 먹이지 않으므로 P + N − 1 = 100 · the last token is never fed"
expected = formulas.cache_bytes(L, T, H_kv, d, nbytes)
assert dynamic.used_bytes[-1] == expected == 204_800, "텐서에서 잰 바이트 = 공식 · measured = formula"
print(f"{T} tokens × {per_token:,} B = {dynamic.used_bytes[-1]:,} B (formula {expected:,} B)")'''),
            EXPORT_NOTE,
            code('print(kv.export(run, "cache_bytes.png"))\nprint(kv.export(run, "cache_bytes.csv"))'),
        ]),
    "04_temperature.ipynb": notebook(
        "온도: 온도마다 30개의 답", "Temperature: 30 answers per temperature",
        "채팅 모델(ko-chat)에 강의 질문 \"주말에 뭐 하면 좋을까?\"를 온도 0.3, 0.85, 1.5에서 "
        "30번씩 (시드 42) 묻고 서로 다른 답의 수를 셉니다. 같은 시드는 캐시를 써도, 재계산해도 "
        "같은 답을 냅니다.",
        "the course question to the chat model (ko-chat), 30 times at each of T = 0.3, 0.85 "
        "and 1.5 (seed 42), counting distinct answers. The same seed gives the same answers "
        "cached and in recompute.",
        [
            code("run = kv.sample()  # 강의 설정 · the course preset\nprint(run.headline)"),
            md("## 세어서 확인 · Checked by counting",
               "30 answers per temperature; the distinct answers are counted from the answers "
               "themselves; recompute drew the same answers."),
            code('''\
res = run.result
for t in res.cached.temperatures:
    assert len(t.answers) == 30, "온도마다 30개 · 30 samples per temperature"
    assert t.distinct == len(set(t.answers)), "서로 다른 답의 수 · distinct answers, counted"
    assert sum(n for _, n in t.counts) == 30, "빈도의 합 = 30 · the counts add up to 30"
if res.recompute is not None:
    assert [t.answers for t in res.recompute.temperatures] == \\
        [t.answers for t in res.cached.temperatures], "같은 시드, 같은 답 · same seed, same answers"
distinct = {t.temperature: t.distinct for t in res.cached.temperatures}
assert distinct[0.3] < distinct[1.5], "온도가 높을수록 답이 다양해집니다 · hotter, more varied"
print("distinct answers of 30:", distinct)
for t in res.cached.temperatures:
    print(f"T = {t.temperature:g}: most frequent {t.counts[0][1]}× {t.counts[0][0]!r}")'''),
        ]),
    "05_top_p.ipynb": notebook(
        "top-p: 살아남는 후보", "Top-p: the surviving candidates",
        "top-p는 확률이 큰 토큰부터 더해 p(강의: 0.85)에 이를 때까지의 토큰만 남깁니다. "
        "단계마다 가장 그럴듯한 20개 토큰과 잘리는 곳을 봅니다.",
        "top-p keeps the most likely tokens until their probabilities add up to p (the "
        "course: 0.85). Each step shows the 20 most likely tokens and where the cut falls.",
        [
            code("run = kv.cutoff(new_tokens=12)\nprint(run.headline)"),
            md("## 정의로 확인 · Checked against the definition",
               "Where the survivors fit in the 20 bars, the kept mass reaches p and one token "
               "fewer would not."),
            code('''\
p = run.result.settings.top_p
steps = [s for s in run.steps if hasattr(s, "top_p_cut")]
assert steps, "단계가 있어야 합니다 · the lab yielded its steps"
for s in steps:
    assert s.record.survivors_top_p[0] >= s.top_p_cut >= 1, "살아남은 수 · survivors"
    probs = s.after_top_k()
    if s.record.survivors_top_p[0] <= len(probs):  # 20개 안에서 잘림 · cut inside the bars
        cut = s.top_p_cut
        assert sum(probs[:cut]) >= p - 1e-6, "남은 확률의 합 ≥ p · kept mass reaches p"
        assert sum(probs[: cut - 1]) < p + 1e-6, "하나 적으면 p에 못 미침 · one fewer falls short"
print("survivors per step (top-p):", list(run.result.survivors_top_p))'''),
        ]),
    "06_cache_kinds.ipynb": notebook(
        "캐시의 종류: 동적, 정적, 슬라이딩 윈도", "Cache kinds: dynamic, static, sliding window",
        "동적 캐시는 토큰마다 자라고, 정적 캐시는 처음부터 P + N토큰을 잡아 두며, 슬라이딩 윈도 "
        "(W = 64)는 최근 W − 1토큰만 남깁니다. 강의 설정 P = 183, N = 64.",
        "a dynamic cache grows a token at a time, a static one holds P + N tokens from the "
        "start, a sliding window (W = 64) keeps only the last W − 1. The course's P = 183, "
        "N = 64.",
        [
            code("run = kv.cache_kinds()\nprint(run.headline)"),
            md("## 공식으로 확인 · Checked against the formulas", "Bytes per kind at the end."),
            code('''\
model = kv.load("ko-base").backend
geometry = (model.num_layers, model.num_kv_heads, model.head_dim, model.dtype_bytes)
res = run.result
runs = {r.kind: r for r in res.runs}
P, N, W = res.prompt_tokens, res.new_tokens, res.window
last = N - 1
def nbytes(tokens):
    L, H_kv, d, b = geometry
    return formulas.cache_bytes(L, tokens, H_kv, d, b)
assert runs["dynamic"].used_bytes[-1] == nbytes(formulas.cache_tokens_after_step(P, last)), \\
    "동적: P + N − 1 토큰 · dynamic holds P + N − 1"
assert runs["sliding"].used_bytes[-1] == nbytes(formulas.cache_tokens_after_step(P, last, W)), \\
    "슬라이딩: W − 1 토큰 · sliding keeps W − 1"
assert runs["static"].allocated_bytes[-1] == nbytes(P + N), \
    "정적: 처음부터 P + N 토큰을 잡아 둠 · static: P + N preallocated"
for kind, r in runs.items():
    print(f"{kind:8s} used {r.used_bytes[-1]:>9,} B  allocated {r.allocated_bytes[-1]:>9,} B")'''),
        ]),
    "07_chat.ipynb": notebook(
        "여러 턴의 대화: 캐시 재사용", "A multi-turn chat: reusing the cache",
        "대화가 길어져도 캐시를 남겨 두면 매 턴에 새 토큰만 먹입니다. 다시 먹이는 방식은 "
        "지금까지의 대화 전체를 매번 먹입니다. 강의의 대화 3턴 (답은 24토큰까지).",
        "keeping the cache across turns, each turn feeds only its new tokens; re-feeding "
        "feeds the whole conversation again every turn. Three turns of the course's "
        "conversation (answers up to 24 tokens).",
        [
            code("run = kv.chat(turns=3, answer_tokens=24, rounds=1)\nprint(run.headline)"),
            md("## 확인 · Checked", "Reuse feeds the turn's new tokens, re-feeding the whole "
               "history; both answer the same tokens, chosen from logits that agree to float32 "
               "rounding (the two prefills have other row counts, so not bit for bit)."),
            code('''\
for turn in run.turns:
    assert turn.reuse.prompt_tokens_fed == turn.new_tokens, "재사용: 새 토큰만 · reuse: new tokens"
    assert turn.refeed.prompt_tokens_fed == turn.history_tokens, "다시 먹이기: 대화 전체 · the history"
    assert turn.identical, "두 방식의 답이 같음 · both ways answer the same"
    assert turn.max_abs_logit_diff < 1e-3, "로짓은 반올림 수준으로 같음 · logits agree to rounding"
    print(f"turn {turn.turn}: reuse fed {turn.reuse.tokens_fed:,}, re-feed {turn.refeed.tokens_fed:,} "
          f"tokens; cache {turn.reuse.cache_bytes:,} B; same tokens, max |Δlogit| "
          f"{turn.max_abs_logit_diff:.2g}")'''),
        ]),
    "08_paged_quantized.ipynb": notebook(
        "페이지 캐시와 양자화 캐시", "Paged and quantized caches",
        "30개의 답을 미리 잡은 캐시, 동적 캐시, 블록(16토큰) 단위의 페이지 캐시에 저장해 "
        "바이트를 비교하고, 캐시를 fp16 / int8 / int4로 저장했을 때의 바이트와 로짓의 "
        "차이를 봅니다.",
        "30 answers stored in a preallocated, a dynamic and a paged cache (blocks of 16 "
        "tokens), then the cache stored as fp16 / int8 / int4: bytes and what it does to the "
        "logits.",
        [
            code("paged = kv.paged(samples=30, new_tokens=32)\nprint(paged.headline)"),
            code('''\
res = paged.result
assert res.block_bytes == res.block_size * res.bytes_per_token, "블록 = b · 토큰당 바이트 · a block"
assert res.bytes_per_token == formulas.bytes_per_token(4, 2, 32, 4) == 2_048
for step in res.paged_steps:
    blocks = {ref.block for row in step.table for ref in row}  # 공유 블록은 한 번 · shared once
    assert step.held_bytes == len(blocks) * res.block_bytes, "잡은 블록 × 블록 바이트 · blocks held"
print(f"at the end: preallocated {res.static_bytes[-1]:,} B, dynamic {res.dynamic_bytes[-1]:,} B, "
      f"paged {res.paged_steps[-1].held_bytes:,} B")'''),
            code("quant = kv.quantized(new_tokens=32)\nprint(quant.headline)"),
            code('''\
for r in quant.result.runs:
    assert r.cache_bytes == r.formula_bytes, f"{r.kind}: 잰 값 = 공식 · measured = formula"
    print(f"{r.kind:5s} {r.bits:2d} bits  {r.cache_bytes:>9,} B  max |Δlogit| {max(r.max_abs_logit_diff, default=0):.3g}")'''),
        ]),
    "09_serving.ipynb": notebook(
        "여러 사용자, 하나의 캐시: 서빙", "Many users, one cache: serving",
        "예제 요청 6개가 채팅 모델(ko-chat)에 서로 다른 단계에 도착합니다 (두 개는 0단계, "
        "나머지는 @2, @4, @6, @9단계). 정적 배치는 한 배치를 가장 긴 프롬프트에 맞춰 패딩하고 "
        "마지막 요청이 끝날 때까지 끝난 행도 계속 먹입니다. 연속 배치는 요청이 매 단계 들어오고 "
        "나갑니다. 프리픽스 캐시는 모든 요청이 함께 쓰는 시스템 프롬프트를 한 번만 계산합니다. "
        "어떤 방식이든 답은 같은 요청을 혼자 실행한 답과 같아야 합니다.",
        "the six example requests reach the chat model (ko-chat) at different steps (two at "
        "step 0, the others at steps @2, @4, @6, @9). Static batching pads a batch to its "
        "longest prompt and keeps feeding finished rows until its last request ends; "
        "continuous batching lets requests join and leave every step; a prefix cache "
        "computes the system prompt every request shares only once. Whatever the scheduler, "
        "each answer must equal the same request run alone.",
        [
            md("## 정적 배치와 연속 배치 · Static and continuous batching\n\n"
               "`kv.serving`은 창의 *서빙* 실험과 같은 코드입니다. 위 차트는 요청마다 단계별로 "
               "한 일(대기, 프리필, 디코드, 패딩만 먹인 행, 끝남)입니다. 연속 배치에서는 배치 "
               "크기 1, 2, 4, 8에서 디코드 한 단계의 시간도 잽니다 (3번 번갈아 잰 값의 중앙값).",
               "`kv.serving` is the window's *Serving* lab, the same code. The top chart is "
               "what each request did step by step (waiting, prefill, decode, an idle row "
               "fed only padding, finished). The continuous run also times one decode step "
               "at batch sizes 1, 2, 4 and 8 (median of 3 interleaved rounds)."),
            code('static = kv.serving(policy="static", batch_sizes=[], rounds=1)\n'
                 'print(static.headline)'),
            code('''\
for q in static.result.serving.requests:  # 요청: 도착 단계, 프롬프트 토큰 · arrival, prompt tokens
    print(f"#{q.index}  arrives at step {q.arrival}  P = {len(q.prompt_ids)}  {q.text}")'''),
            code('continuous = kv.serving(policy="continuous", batch_sizes=[1, 2, 4, 8], '
                 'repeats=3)\nprint(continuous.headline)'),
            md("## 혼자 실행한 답과 같은가 · The same answers as alone",
               "Every request's answer is compared with the same request run alone (a batch "
               "of one, the whole prompt at once, no prefix cache); no request produces a "
               "token before it arrives. The tokens are the same; the logits they were chosen "
               "from agree to float32 rounding, not bit for bit (a step's products run over "
               "all its rows, and the CPU rounds a row differently in a batch of another "
               "size), and the largest gap is printed."),
            code('''\
runs = {"static": static.result.serving.runs[-1], "continuous": continuous.result.serving.runs[-1]}
for name, served in runs.items():
    for o in served.outcomes:
        assert o.answer_ids == o.solo_ids, f"{name} #{o.request.index}: 혼자 실행한 답과 같아야 함 · same as alone"
        assert o.first_token_step >= o.request.arrival, "도착 전에는 답하지 않음 · no token before it arrives"
    gap = served.max_abs_logit_diff  # 부동소수점 반올림 · float32 rounding
    assert gap is not None and gap < 1e-3, "로짓 차이는 반올림 수준 · the logits agree to rounding"
    print(f"{name:10s} {served.totals.steps} steps: all {len(served.outcomes)} answers the same tokens "
          f"as their solo runs, max |Δlogit| {gap:.2g}")
print("request  arrives  first token (static / continuous)")
for s, c in zip(runs["static"].outcomes, runs["continuous"].outcomes, strict=True):
    print(f"#{s.request.index:<8}{s.request.arrival:<9}{s.first_token_step} / {c.first_token_step}")'''),
            md("## 정적 배치가 버리는 자리 · The slots static batching wastes\n\n"
               "한 배치(같은 단계에 함께 들어온 요청들)마다 가장 긴 프롬프트에 맞춘 패딩 "
               "Σ(P_max − P_r)과, 가장 긴 답이 끝날 때까지 먹이는 끝난 행 Σ(n_max − n_r)입니다.",
               "Per batch (the requests admitted together in one step): the padding to the "
               "longest prompt, Σ(P_max − P_r), and the finished rows fed until the longest "
               "answer ends, Σ(n_max − n_r). Continuous batching wastes none."),
            code('''\
served = runs["static"]
answer = {o.request.index: o.answer_tokens for o in served.outcomes}
wasted = 0
for step in served.steps:
    if step.admitted:  # 이 단계에 함께 들어온 한 배치 · one batch, admitted together
        P = [step.requests[r].tokens_fed for r in step.admitted]  # 프리필한 토큰 · prefilled
        n = [answer[r] for r in step.admitted]  # 생성한 토큰 · generated
        wasted += sum(max(P) - p for p in P) + sum(max(n) - k for k in n)
assert served.totals.padding_slots == wasted, "잰 패딩 = 공식 · measured padding = the formula"
assert served.totals.padding_formula == wasted
assert runs["continuous"].totals.padding_slots == 0, "연속 배치는 버리는 자리가 없음 · continuous wastes none"
print(f"static: {served.totals.padding_slots} wasted slots = Σ(P_max − P_r) + Σ(n_max − n_r) = {wasted}; "
      f"continuous: {runs['continuous'].totals.padding_slots}")'''),
            md("## 배치가 왜 이득인가 · Why batching pays",
               "One decode step reads the weights once whatever the batch, plus every row's "
               "K/V (B · S · bytes per token); the time grows far slower than the rows."),
            code('''\
sweep = continuous.result.sweep
backend = kv.load("ko-chat").backend
per_token = formulas.bytes_per_token(backend.num_layers, backend.num_kv_heads, backend.head_dim,
                                     backend.dtype_bytes)
for p in sweep.points:
    assert p.kv_bytes == p.batch * p.keys * per_token, "K/V = B · S · 토큰당 바이트 · every row's K/V"
    assert p.bytes_read == sweep.work.weight_bytes + p.kv_bytes, "가중치는 한 번 · the weights once"
    assert p.step_seconds.count == 3, "3번의 중앙값 · a median of 3 rounds"
    print(f"B = {p.batch}: {p.ms_per_step:.2f} ms per step ({1000 * p.step_seconds.low:.2f}–"
          f"{1000 * p.step_seconds.high:.2f}), {p.tokens_per_second:,.0f} tokens/s, read {p.bytes_read:,} B")'''),
            md("## 프리픽스 캐시 · The prefix cache\n\n"
               "모든 프롬프트는 같은 시스템 프롬프트(ChatML 틀 포함)로 시작합니다: 그 공통 "
               "토큰 수가 shared입니다. blocks(vLLM)는 b토큰짜리 블록 전체만 나눠 쓰므로 "
               "⌊shared/b⌋·b토큰을, radix(SGLang)는 토큰 단위로 shared토큰을 캐시에서 가져옵니다 "
               "(프롬프트의 마지막 토큰은 늘 계산: min(shared, P − 1)). 0단계에 도착한 요청은 "
               "캐시가 아직 비어 있어 가져올 것이 없습니다.",
               "Every prompt starts with the same system prompt (ChatML template included): "
               "their common tokens are `shared`. Blocks (vLLM) share whole blocks of b tokens "
               "only, ⌊shared/b⌋·b tokens; radix (SGLang) is token-exact, `shared` tokens (a "
               "prompt's last token is always computed: min(shared, P − 1)). Requests arriving "
               "at step 0 find the cache still empty."),
            code('blocks = kv.serving(prefix="blocks", block_size=16, batch_sizes=[], rounds=1)\n'
                 'print(blocks.headline)'),
            code('radix = kv.serving(prefix="radix", block_size=16, batch_sizes=[], rounds=1)\n'
                 'print(radix.headline)'),
            code('''\
requests = blocks.result.serving.requests
first = requests[0].prompt_ids
shared = 0  # 모든 프롬프트에 공통인 앞부분의 토큰 수 · tokens every prompt starts with
while all(len(q.prompt_ids) > shared and q.prompt_ids[shared] == first[shared] for q in requests):
    shared += 1
b = blocks.result.serving.runs[-1].config.block_size
rules = {"blocks": lambda prompt: min(shared, prompt - 1) // b * b,  # 블록 전체만 · whole blocks
         "radix": lambda prompt: min(shared, prompt - 1)}  # 토큰 단위 · token-exact
for name, run in (("blocks", blocks), ("radix", radix)):
    served = run.result.serving.runs[-1]
    for o in served.outcomes:
        expected = 0 if o.request.arrival == 0 else rules[name](o.prompt_tokens)
        assert o.prefix_hit == expected, f"{name} #{o.request.index}: 캐시에서 가져온 토큰 · hit tokens"
        assert o.answer_ids == o.solo_ids, "프리픽스 캐시도 답을 바꾸지 않음 · the same answers"
    hits = [o.prefix_hit for o in served.outcomes]
    assert served.totals.prefix_hit_tokens == sum(hits)
    print(f"{name:6s} shared {shared}, b = {b}: hits per request {hits}")
print(f"⌊shared/b⌋·b = ⌊{shared}/{b}⌋·{b} = {shared // b * b}")'''),
            md("## 몇 명이 들어가나 · How many users fit\n\n"
               "캐시에 쓸 메모리(예산)가 정해져 있으면 블록 캐시는 ⌊예산 ÷ 블록 바이트⌋개의 "
               "블록을 갖고, 요청 하나(L토큰)는 ⌈L ÷ b⌉개의 블록을 씁니다. 같은 예산의 "
               "스케줄러에 요청을 한꺼번에 보내 몇 개를 받아들이는지 세어 공식과 비교합니다.",
               "With a memory budget for the cache, a paged cache has ⌊budget ÷ block bytes⌋ "
               "blocks and a request of L tokens takes ⌈L ÷ b⌉. The continuous scheduler, "
               "given the same budget, is sent more requests at once than fit: it admits as "
               "many as the formula says, and the rest wait."),
            code('''\
from kvstudio.labs.serving.fit import admission_check

chat_model = kv.load("ko-chat")
L, b, budget = 40, 16, 360_000  # 요청의 토큰, 블록 크기, 예산(바이트) · tokens, block, bytes
block_bytes = b * per_token
pool_blocks = budget // block_bytes  # ⌊예산 ÷ 블록 바이트⌋ · ⌊budget ÷ block bytes⌋
per_request = -(-L // b)  # ⌈L ÷ b⌉
fit = pool_blocks // per_request
check = admission_check(chat_model.backend, chat_model.tokenizer, request_tokens=L,
                        budget_bytes=budget, block_size=b)
assert check.block_bytes == block_bytes, "텐서에서 잰 블록 = b · 토큰당 바이트 · a block, measured"
assert (check.budget_blocks, check.formula) == (pool_blocks, fit)
assert check.admitted == fit, "스케줄러가 받은 수 = 공식 · the scheduler admits what the formula says"
assert check.blocks_used == fit * per_request
print(f"budget {budget:,} B = {pool_blocks} blocks of {block_bytes:,} B, {per_request} blocks a "
      f"request: {fit} users fit; the scheduler admitted {check.admitted} of {check.offered}")
print(f"a contiguous cache of exactly L tokens each: ⌊budget ÷ (L · {per_token:,} B)⌋ = "
      f"{budget // (L * per_token)}")'''),
            EXPORT_NOTE,
            code('print(kv.export(continuous, "serving.png"))\n'
                 'print(kv.export(continuous, "serving.csv"))'),
        ]),
    "10_beam_search.ipynb": notebook(
        "빔 서치: 빔, 부모 행, 캐시 재정렬", "Beam search: beams, parents and the cache reorder",
        "빔 서치는 K개의 답(빔)을 함께 들고 가며 빔마다 KV 캐시의 행 하나를 씁니다. 매 단계 "
        "가장 좋은 K개의 이어짐을 고른 뒤 캐시의 행을 재정렬합니다 (배치 차원의 index_select): "
        "다른 행의 답을 잇는 빔은 그 행 전체를 복사받습니다. 강의 질문, K = 4, N = 16, "
        "채팅 모델(ko-chat).",
        "beam search carries K answers (beams) at once, one KV cache row each. After every "
        "step it keeps the K best continuations and reorders the cache's rows (index_select "
        "on the batch dimension): a beam that continues another row's answer gets a copy of "
        "that whole row. The course question, K = 4, N = 16, on the chat model (ko-chat).",
        [
            md("## 실험 · The lab\n\n`kv.beam`은 창의 *빔 서치* 실험과 같은 코드입니다. "
               "transformers가 설치되어 있으면 (`pip install -e \".[hf]\"`) 같은 가중치로 "
               "transformers의 `generate(num_beams=4)`도 실행해 답과 점수를 비교합니다.",
               "`kv.beam` is the window's *Beam search* lab, the same code. When transformers "
               "is installed (`pip install -e \".[hf]\"`), transformers' own "
               "`generate(num_beams=4)` also runs on the same weights, and the answers and "
               "scores are compared."),
            code('''\
import importlib.util

HAVE_TRANSFORMERS = importlib.util.find_spec("transformers") is not None  # hf extra
print("transformers:", "installed" if HAVE_TRANSFORMERS else "not installed")'''),
            code("run = kv.beam(beams=4, new_tokens=16, transformers=HAVE_TRANSFORMERS)\n"
                 "print(run.headline)"),
            md("## 단계마다의 빔과 부모 행 · Beams and their parents, step by step\n\n"
               "parents[i]는 i번 행이 이어 가는 이전 단계의 행입니다. parents[i] ≠ i인 행은 "
               "다른 행을 통째로 복사받습니다 (0단계: 프롬프트의 한 행이 K개로 복사됨).",
               "parents[i] is the previous step's row that row i continues; a row with "
               "parents[i] ≠ i gets a copy of another row (step 0: the prompt's one row is "
               "copied into K rows)."),
            code('''\
res = run.result
for s in res.steps:
    parents = [beam.parent for beam in s.beams]
    print(f"step {s.step:2d}: parents {parents}  rows moved {s.rows_moved}  "
          f"reorder {s.reorder_bytes:>7,} B")'''),
            md("## 공식으로 확인 · Checked against the formulas",
               "Rows moved = the rows whose parent is another row; one row holds P + step "
               "tokens, bytes per row = bytes per token × (P + step); reorder bytes = rows "
               "moved × bytes per row; index_select writes every row."),
            code('''\
backend = kv.load("ko-chat").backend
per_token = formulas.bytes_per_token(backend.num_layers, backend.num_kv_heads, backend.head_dim,
                                     backend.dtype_bytes)
P, K = len(res.prompt_ids), res.settings.num_beams
assert res.search.bytes_per_token == per_token, "토큰당 바이트 = 2·L·H_kv·d·bytes"
assert res.steps[0].rows_moved == K - 1, "0단계: 프롬프트의 행 하나를 K개로 · one row becomes K"
for s in res.steps:
    assert len(s.beams) == K, "빔은 늘 K개 · always K beams"
    moved = sum(1 for row, beam in enumerate(s.beams) if beam.parent != row)
    assert s.rows_moved == moved, "옮긴 행 = 부모가 다른 행 · rows whose parent is another row"
    assert s.row_bytes == per_token * (P + s.step), "행 하나 = 토큰당 바이트 × (P + 단계) · one row"
    assert s.reorder_bytes == s.rows_moved * s.row_bytes, "재정렬 = 옮긴 행 × 행 바이트 · rows moved × row bytes"
    assert s.index_select_bytes == K * s.row_bytes, "index_select는 모든 행을 씀 · every row"
    scores = [beam.score for beam in s.beams]
    assert scores == sorted(scores, reverse=True), "점수가 높은 빔부터 · best first"
assert res.search.reorder_bytes == sum(s.reorder_bytes for s in res.steps)
print(f"P = {P}, {per_token:,} B per token: reorders copied {res.search.reorder_bytes:,} B "
      f"({sum(s.rows_moved for s in res.steps)} rows moved); index_select writes "
      f"{res.search.index_select_bytes:,} B; a paged cache copies {res.search.cow_bytes:,} B on write")'''),
            md("## 답 · The answers", "The K returned hypotheses, best first: the score is the "
               "sum of log-probabilities ÷ length^penalty."),
            code('''\
for hypothesis, text in zip(res.search.sequences, res.texts, strict=True):
    print(f"{hypothesis.score:8.3f}  {len(hypothesis.tokens):2d} tokens  {text!r}")'''),
            md("## transformers와 같은가 · The same as transformers",
               "transformers' `generate(num_beams=…)` on the same weights: the same token ids "
               "and scores. Without transformers the comparison is skipped, and says so."),
            code('''\
check = res.transformers
if check.ran:
    assert check.same, "transformers와 같은 토큰, 같은 점수 · the same ids and scores"
    ours = [tuple(h.tokens) for h in res.search.sequences]
    assert ours == [ids for ids, _ in check.sequences], "같은 순서의 같은 답 · the same beams"
    print(f"same as transformers' generate(num_beams={K}): {len(ours)} beams, "
          "the same token ids and scores")
else:
    print("transformers가 없어 비교를 건너뜁니다 · transformers is not installed, so the "
          f"comparison is skipped (pip install -e '.[hf]'): {check.note}")'''),
            EXPORT_NOTE,
            code('print(kv.export(run, "beam_search.png"))\nprint(kv.export(run, "beam_search.csv"))'),
        ]),
    "11_speculative.ipynb": notebook(
        "추측 디코딩: 초안, 검증, 캐시 자르기",
        "Speculative decoding: draft, verify, crop the cache",
        "작은 초안(draft)이 k개의 토큰을 제안하면 대상 모델(target, ko-chat)이 한 번의 "
        "forward로 k개를 모두 검사합니다. 처음부터 맞는 a개를 받아들이고 자기 토큰 하나(틀린 "
        "자리의 정정, 모두 맞으면 보너스)를 더한 뒤, 두 캐시를 받아들인 토큰까지 잘라 냅니다. "
        "초안은 두 가지: 1층짜리 ko-draft 모델과 프롬프트 조회(prompt lookup: 앞에 나온 n-gram 뒤의 토큰). "
        "강의 질문, k = 1, 2, 4, N = 32, 탐욕(greedy).",
        "a small draft proposes k tokens and the target (ko-chat) checks all k in one "
        "forward. It keeps the a that match from the start, adds one token of its own (the "
        "correction where a draft was rejected, the bonus when all passed), then both caches "
        "are cropped back to the committed tokens. Two drafts: the 1-layer ko-draft model "
        "and prompt lookup (the tokens that followed the last n-gram earlier in the text). "
        "The course question, k = 1, 2, 4, N = 32, greedy.",
        [
            md("## 실험 · The lab\n\n`kv.speculative`은 창의 *추측 디코딩* 실험과 같은 "
               "코드입니다. 일반 탐욕 디코딩과, 초안 두 가지 × k 세 가지의 추측 디코딩을 "
               "번갈아 3번 실행합니다 (시간은 3번의 중앙값).",
               "`kv.speculative` is the window's *Speculative decoding* lab, the same code. "
               "Plain greedy decoding and the two drafts × three k run interleaved, 3 times "
               "(times are medians of 3)."),
            code("run = kv.speculative(ks=[1, 2, 4], new_tokens=32, repeats=3)\n"
                 "print(run.headline)"),
            md("## 일반 탐욕 디코딩과 같은가 · Identical to plain greedy\n\n"
               "탐욕 디코딩에서는 추측 디코딩의 답이 토큰 하나까지 일반 탐욕 디코딩과 같아야 "
               "합니다: 대상 모델이 모든 토큰을 스스로 고르기 때문입니다. 여기서는 캐시 없이 "
               "매 단계 전체를 다시 계산해 argmax를 고르는 가장 단순한 탐욕 디코딩을 직접 "
               "써서 비교합니다 (실험처럼 eos는 금지).",
               "Greedy speculative output must equal plain greedy decoding token for token: "
               "the target picks every token itself. The plainest greedy decoding is written "
               "out here (no cache: recompute everything, take the argmax; eos banned as in "
               "the lab) and every run is compared with it."),
            code('''\
import torch

from kvstudio.labs.course import COURSE

res = run.result
chat = kv.load("ko-chat")
ids = chat.tokenizer.chat_ids(COURSE.question)  # 강의 질문, 채팅 틀 · the course question, chat template
assert len(ids) == res.prompt_tokens, "실험과 같은 프롬프트 · the lab's prompt"
greedy = []
with torch.inference_mode():
    for _ in range(res.new_tokens):
        logits = chat.backend.model(torch.tensor([ids + greedy]))[0, -1]  # (V,) 마지막 위치 · last position
        logits[chat.tokenizer.eos_id] = float("-inf")  # eos 금지 · eos banned
        greedy.append(int(logits.argmax()))
assert list(res.plain_ids) == greedy, "실험의 일반 디코딩 = 여기의 탐욕 · the lab's plain run"
for r in res.runs:
    assert list(r.token_ids) == greedy, f"{r.draft_kind} k={r.k}: 탐욕과 같은 토큰 · identical to greedy"
    print(f"{r.draft_kind:13s} k={r.k}: {len(r.token_ids)} tokens identical to plain greedy")
print("answer:", repr(res.plain_text))'''),
            md("## 라운드마다의 캐시 · The caches, round by round\n\n"
               "라운드마다 초안 m개(k개; 프롬프트 조회는 찾은 만큼, 예산 끝에서는 남은 만큼)를 "
               "검증하는 forward가 대상 캐시에 1 + m행을 쓰고, a개를 받아들이면 m − a행을 "
               "잘라 냅니다: 대상 캐시는 a + 1행 자랍니다. 초안 모델의 캐시는 m − 1 − a행을 "
               "잘라 냅니다 (모두 맞으면 0). 아래는 기록된 라운드 전부이고, 다음 칸이 이 "
               "규칙을 검사합니다 (0번 라운드는 프리필).",
               "Each round the verify forward writes 1 + m rows to the target cache for m "
               "drafts (k; prompt lookup: as many as it found; at the budget's end: as many "
               "as fit) and, with a accepted, crops m − a of them: the target cache grows by "
               "a + 1 rows. The draft model's cache is cropped by m − 1 − a (0 when all "
               "passed). Below, every recorded round; the next cell checks these rules "
               "(round 0 is the prefill)."),
            code('''\
for r in res.runs:
    print(f"--- {r.draft_kind}, k = {r.k}")
    for x in r.rounds:
        line = (f"{r.draft_kind} k={r.k} round {x.index:2d}: m={len(x.drafted)} a={x.accepted} "
                f"target {x.target_length:3d} (+{x.target_appended} -{x.target_cropped})")
        if x.draft_length is not None:
            line += f" draft {x.draft_length:3d} (+{x.draft_appended} -{x.draft_cropped})"
        print(line)'''),
            code('''\
for r in res.runs:
    before, draft_before = r.rounds[0].target_length, r.rounds[0].draft_length
    assert before == res.prompt_tokens, "프리필: 프롬프트 P행 · the prefill writes P rows"
    for x in r.verify_rounds:
        m, a = len(x.drafted), x.accepted
        assert m <= r.k and 0 <= a <= m
        assert x.target_length - before == a + 1, "대상 캐시 +a+1 · the target grew by a + 1"
        assert x.target_appended == 1 + m, "검증 forward: 1 + m행 · the verify forward"
        assert x.target_cropped == m - a, "대상: m − a행 자름 · target crop"
        if r.draft_kind == "model":
            assert x.draft_cropped == (0 if a == m else m - 1 - a), "초안: m − 1 − a · draft crop"
            assert x.draft_length - draft_before == x.draft_appended - x.draft_cropped
            draft_before = x.draft_length
        before = x.target_length
    assert before == res.prompt_tokens + res.new_tokens - 1, "마지막 토큰은 아직 캐시 밖 · P + N − 1 rows"
    full = sum(1 for x in r.verify_rounds if len(x.drafted) == r.k)
    print(f"{r.draft_kind:13s} k={r.k}: {len(r.verify_rounds)} rounds ({full} with all k drafts), "
          f"target rows {r.rounds[0].target_length} → {before}")'''),
            md("## 호출당 토큰: 측정과 공식 · Tokens per target call: measured and the formula\n\n"
               "α는 받아들인 초안 ÷ 판정받은 초안입니다 (거절된 첫 초안 뒤의 초안은 판정받지 "
               "않습니다). 대상 호출(검증 라운드) 하나가 만드는 토큰은 a + 1이고, 초안 하나하나가 "
               "확률 α로 맞는다면 그 기댓값은 (1 − α^(k+1)) / (1 − α)입니다 (Leviathan 등). "
               "측정값 옆에 라운드마다의 m으로 계산한 공식과 명목 k로 계산한 공식을 둡니다: "
               "프롬프트 조회는 대부분의 라운드에서 초안을 찾지 못해(m = 0) 명목 k의 공식보다 "
               "훨씬 적게 만듭니다.",
               "α is accepted drafts ÷ judged drafts (drafts after the first rejection are "
               "never judged). One target call (a verify round) commits a + 1 tokens; if each "
               "draft passes with probability α, the expectation is (1 − α^(k+1)) / (1 − α) "
               "(Leviathan et al.). Beside the measured value: the formula with each round's "
               "own m, and with the nominal k. Prompt lookup finds no draft in most rounds "
               "(m = 0), so it commits far fewer than the nominal-k formula."),
            code('''\
def formula(alpha, k):  # (1 − α^(k+1)) / (1 − α)
    return k + 1 if alpha == 1 else (1 - alpha ** (k + 1)) / (1 - alpha)

for r in res.runs:
    rounds = r.verify_rounds
    accepted = sum(x.accepted for x in rounds)
    judged = sum(x.accepted + (x.accepted < len(x.drafted)) for x in rounds)  # a, + 거절된 하나 · + the rejected one
    alpha = accepted / judged if judged else 0.0
    measured = sum(x.accepted + 1 for x in rounds) / len(rounds)  # a + 1 토큰 / 호출 · per call
    per_round = sum(formula(alpha, len(x.drafted)) for x in rounds) / len(rounds)
    assert abs(alpha - r.alpha) < 1e-12 and abs(measured - r.tokens_per_round) < 1e-12
    assert abs(per_round - r.expected_tokens_per_round) < 1e-12
    assert abs(formula(alpha, r.k) - r.formula_at_k) < 1e-12
    assert r.target_calls == len(r.rounds), "라운드마다 대상 호출 한 번 · one target call a round"
    print(f"{r.draft_kind:13s} k={r.k}: α = {accepted}/{judged} = {alpha:.3f}  tokens per target call "
          f"{measured:.3f}  formula (each round's m) {per_round:.3f}  formula (k) "
          f"{formula(alpha, r.k):.3f}  target calls {r.target_calls} for {r.generated} tokens")'''),
            md("## 시간 · Time\n\n"
               "대상 호출이 줄어도 초안 모델의 forward가 늘어나므로, 이 작은 모델들에서는 CPU "
               "시간이 꼭 줄지는 않습니다. 시간은 3번의 중앙값과 그 범위입니다.",
               "Fewer target calls come with more draft forwards, so on these small models "
               "the CPU time need not drop. Times are medians of 3 rounds with their range."),
            code('''\
plain = res.plain_seconds
print(f"plain greedy: {1000 * plain.median:.1f} ms ({1000 * plain.low:.1f}–{1000 * plain.high:.1f}, "
      f"median of {plain.count})")
for r in res.runs:
    s = r.seconds
    print(f"{r.draft_kind:13s} k={r.k}: {1000 * s.median:.1f} ms ({1000 * s.low:.1f}–"
          f"{1000 * s.high:.1f}), {res.speedup(r):.2f}× plain speed")'''),
            EXPORT_NOTE,
            code('print(kv.export(run, "speculative.png"))\n'
                 'print(kv.export(run.charts["speculative-k"], "speculative_k.png"))  # α와 호출당 토큰 · α, tokens per call\n'
                 'print(kv.export(run, "speculative.csv"))'),
        ]),
}


def render(nb: dict, stem: str) -> str:
    cells = []
    for index, cell in enumerate(nb["cells"]):
        lines = cell["source"].splitlines(keepends=True)
        cells.append({"id": f"{stem[:2]}-{index:02d}", **cell, "source": lines})
    return json.dumps({**nb, "cells": cells}, ensure_ascii=False, indent=1) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only report differences")
    args = parser.parse_args(argv)
    stale = []
    for name, nb in NOTEBOOKS.items():
        path = FOLDER / name
        text = render(nb, name)
        if args.check:
            if not path.exists() or path.read_text(encoding="utf-8") != text:
                stale.append(name)
        else:
            FOLDER.mkdir(exist_ok=True)
            path.write_text(text, encoding="utf-8")
    if args.check and stale:
        print("notebooks/ differs from scripts/make_notebooks.py: " + ", ".join(stale)
              + "; run python scripts/make_notebooks.py", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
