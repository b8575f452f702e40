"""Write a model folder's ``MODEL_CARD.md`` from the run reports and ``eval-model`` figures.

Owns the card's layout only: every number in it comes from a ``report.json``
(tokenizer, pretrain, SFT) or from ``evaluate_model``'s JSON, so a student who
trains their own model gets an honest card the same way.
"""

from __future__ import annotations

import platform
import subprocess
from pathlib import Path
from typing import Any

from kvstudio.engine import formulas
from kvstudio.engine.config import ModelConfig
from kvstudio.engine.small_files import read_json

MAX_REPORT_BYTES = 64 * 1024 * 1024  # report.json and eval JSON: a few hundred KB

SOURCES = [  # (repository @ commit, what, licence, used for)
    ("songys/Chatbot_data @ 4cf20d1", "ChatbotData.csv, 11,823 Q/A pairs", "MIT",
     "pretraining (training pairs) and SFT"),
    ("songys/Question_pair @ e84b6f0", "Korean question pairs", "MIT", "pretraining"),
    ("warnikchow/paraKQC @ c16270f", "10,000 questions/commands", "CC BY-SA 4.0", "pretraining"),
    ("kakaobrain/KorNLUDatasets @ 0df0fe7", "KorSTS, KorNLI XNLI dev/test sentences",
     "CC BY-SA 4.0", "pretraining"),
]


def cpu_name() -> str:
    """'AMD EPYC, 2 cores' from lscpu when available."""
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return platform.processor() or "unknown CPU"
    info = dict(line.split(":", 1) for line in out.splitlines() if ":" in line)
    name = info.get("Model name", "unknown CPU").strip()
    return f"{name}, {info.get('CPU(s)', '?').strip()} cores"


def _read(path: str | Path | None) -> dict[str, Any]:
    if path is None or not Path(path).exists():
        return {}
    data = read_json(Path(path), MAX_REPORT_BYTES, "a training report (JSON)")
    if not isinstance(data, dict):
        raise ValueError(f"{path} must hold a JSON object (a training report).")
    return data


def _run_rows(name: str, r: dict[str, Any]) -> list[str]:
    if not r:
        return []
    s = r["settings"]
    extra = s.get("extra", {})
    shape = (
        f"sequence {extra['seq_len']}"
        if "seq_len" in extra
        else f"ChatML pairs up to {extra.get('max_len', '?')} tokens"
    )
    return [
        f"| {name} | {r['steps']} steps × batch {s['batch_size']} ({shape}) | lr {s['lr']:g}, "
        f"warm-up {s['warmup_steps']}, cosine to {s['lr'] * s['min_lr_ratio']:g} | "
        f"{r['tokens_seen']:,} | {r['seconds'] / 60:.1f} min | {r['tokens_per_second']:,.0f} | "
        f"{r['final_train_loss']:.3f} | {r['best_valid_loss']:.3f} |"
    ]


def render_card(
    folder: str | Path,
    kind: str,
    *,
    tokenizer_report: dict[str, Any],
    pretrain_report: dict[str, Any],
    sft_reports: list[tuple[str, dict[str, Any]]],
    figures: dict[str, Any],
    commands: list[str],
    notes: list[str],
) -> str:
    """The card's Markdown text."""
    root = Path(folder)
    cfg = ModelConfig.load(root / "config.json")
    weights_mb = (root / "model.safetensors").stat().st_size / 1e6
    kv_per_token = formulas.bytes_per_token(  # fp32 cache
        cfg.num_hidden_layers, cfg.num_key_value_heads, cfg.resolved_head_dim, 4
    )
    title = {"chat": "chat (SFT)", "draft": "draft (speculative decoding)"}.get(
        kind, "base (pretrained)"
    )
    spec = figures.get("speculative")
    lines = [
        f"# {root.name}: KV Studio's embedded Korean {title} model",
        "",
        "A tiny MiniMind-layout decoder trained from scratch on a 2-core CPU with KV Studio's "
        "own code (`kvstudio.training`), so the labs run offline. "
        + (
            "It answers short everyday Korean questions in ChatML; the temperature labs use it."
            if kind == "chat"
            else (
                f"It drafts tokens for {spec['target'] if spec else 'ko-chat'} in the "
                "speculative-decoding lab (`kvstudio speculative`): a small model with the "
                "target's tokenizer, pretrained and fine-tuned on the same data as the target, "
                "so its guesses are often the target's."
            )
            if kind == "draft"
            else "It continues Korean text; the cache-vs-recompute and timing labs use it."
        ),
        "It is a teaching model: fluent-looking short Korean, no knowledge to rely on.",
        "",
        "## Architecture",
        "",
        "| | |",
        "|---|---|",
        "| layout | MiniMind (`MiniMindForCausalLM` state-dict names), RMSNorm, "
        f"RoPE θ={cfg.rope_theta:,.0f}, "
        "SwiGLU, grouped-query attention, tied embeddings |",
        f"| size | hidden {cfg.hidden_size}, {cfg.num_hidden_layers} "
        f"layer{'' if cfg.num_hidden_layers == 1 else 's'}, "
        f"{cfg.num_attention_heads} query heads, {cfg.num_key_value_heads} K/V heads, head_dim "
        f"{cfg.resolved_head_dim}, FFN {cfg.resolved_intermediate_size}, vocab {cfg.vocab_size} |",
        f"| parameters | {figures.get('parameters', 0):,} |",
        f"| KV cache (fp32) | {kv_per_token:,} bytes per token = "
        f"{kv_per_token * 100:,} per 100 tokens |",
        f"| weights file | `model.safetensors`, stored in float16 ({weights_mb:.1f} MB), "
        "run in float32; "
        "`lm_head.weight` not stored (tied to `model.embed_tokens.weight`) |",
        "| tokenizer | byte-level BPE, "
        f"{tokenizer_report.get('vocab_size', cfg.vocab_size)} tokens, "
        "`<|endoftext|>`=0, `<|im_start|>`=1, `<|im_end|>`=2, ChatML template in "
        "`tokenizer_config.json`; "
        + (
            f"{tokenizer_report['chars_per_token_chat']} characters per token on the chat data |"
            if "chars_per_token_chat" in tokenizer_report
            else "the target's `tokenizer.json`, unchanged (a draft must share its tokens) |"
        ),
        "",
        "## Data and licence",
        "",
        "Public Korean text, read unchanged from a data folder laid out as "
        "[docs/data.md](../../../docs/data.md) describes (where to get each source, its licence "
        "and the files the training commands read):",
        "",
        "| source | what | licence | used for |",
        "|---|---|---|---|",
        *[f"| {a} | {b} | {c} | {d} |" for a, b, c, d in SOURCES],
        "",
        "The weights are trained on CC BY-SA 4.0 text and are published under **CC BY-SA 4.0** "
        "(attribution: the sources above). The code that trained them is MIT.",
        "Held out by question (seed 0): 592 ChatbotData pairs for the SFT validation loss and the "
        "50 questions in `kvstudio/resources/prompts/heldout_questions.json`; none of them is in "
        "the pretraining text or the SFT data. Pretraining validation: 2% of the documents.",
        "",
        "## Training",
        "",
        f"On {cpu_name()} (shared with other work), **one torch thread**, float32 "
        "(bf16 autocast was "
        "measured much slower on this CPU), AdamW (β 0.9/0.95, weight decay 0.1 on matrices), "
        "gradient clip 1.0, seed 0. The exported weights are the step with the best "
        "validation loss.",
        "",
        "| stage | steps | schedule | tokens seen | time | tokens/s | last train loss "
        "| best validation loss |",
        "|---|---|---|---|---|---|---|---|",
        *_run_rows("pretrain", pretrain_report),
        *[row for name, r in sft_reports if kind in ("chat", "draft")
          for row in _run_rows(name, r)],
        "",
        "Commands (from the repository root; `DATA` is the data folder of "
        "[docs/data.md](../../../docs/data.md): `chatbot_data/ChatbotData.csv`, "
        "`question_pair/kor_pair_train.csv` and `kor_Pair_test.csv`, "
        "`parakqc/paraKQC_v1.txt`, `kornlu/*.tsv`):",
        "",
        "```",
        *commands,
        "```",
        "",
        "## Evaluation (`kvstudio eval-model kvstudio/resources/models/" + root.name + "`)",
        "",
        f"- lab prompts: `lab_long.txt` = {figures.get('lab_long_tokens')} tokens, "
        f"`lab_short.txt` = {figures.get('lab_short_tokens')} tokens in this tokenizer",
        f"- cached and recompute give identical greedy tokens on the 183-token prompt (64 new): "
        f"**{figures.get('cached_equals_recompute_183')}**",
        f"- `�` in greedy text (decoded whole, so split syllables never show): "
        f"{figures.get('replacement_chars')}",
    ]
    if spec:
        lines += [
            f"- speculative decoding for **{spec['target']}**, greedy, {spec['questions']} lab "
            f"questions in ChatML, {spec['new_tokens']} new tokens each (eos banned); α = "
            "accepted ÷ judged drafts, tokens per target call per verify round:",
            "",
            "| k | α | tokens per target call | identical to plain greedy |",
            "|---|---|---|---|",
            *[
                f"| {k} | {v['alpha']:.2f} | {v['tokens_per_target_call']:.2f} | "
                f"{v['identical_to_greedy']} of {spec['questions']} |"
                for k, v in spec["per_k"].items()
            ],
        ]
    if "heldout" in figures:
        h, t = figures["heldout"], figures["temperature"]
        med = t["median_distinct"]
        lines += [
            f"- greedy on the 50 held-out questions: **{h['distinct']} distinct answers of "
            f"{h['questions']}**, the most common answer given to {h['max_share']} questions",
            f"- {t['samples']} samples per temperature, top-p {t['top_p']}, top-k off, "
            f"{len(t['examples'])} lab questions: median distinct answers **{med.get('0.3')} at "
            f"T=0.3** and **{med.get('1.2')} at T=1.2** "
            f"(per question: T=0.3 {t['distinct_per_question']['0.3']}, "
            f"T=1.2 {t['distinct_per_question']['1.2']})",
            f"- temperature samples in which the model itself chose bytes that are not valid "
            f"UTF-8 (shown as `�`): {figures.get('sampled_with_replacement')} of "
            f"{t['samples'] * 2 * len(t['examples'])}",
        ]
    lines += ["", "## Sample outputs (greedy)", ""]
    if "heldout" in figures:
        lines += ["Held-out questions (never trained on):", ""]
        lines += [f"- {q} → {a}" for q, a in figures["heldout"]["pairs"][:10]]
        lines += ["", "A lab question at T=1.2 (three most frequent of 30):", ""]
        q0, ex = next(iter(figures["temperature"]["examples"].items()))
        lines += [f"- {q0} → " + " / ".join(ex["1.2"])]
        lines += ["", "Sentence starts (the chat model also continues plain text):", ""]
    lines += [f"- {c}" for c in figures.get("continuations", [])]
    lines += ["", "## Known limits", "", *[f"- {n}" for n in notes], ""]
    return "\n".join(lines)


def write_card(
    folder: str | Path,
    kind: str,
    run_dir: str | Path,
    eval_json: str | Path,
    commands: list[str],
    notes: list[str],
) -> Path:
    """Render the card from `run_dir`/{tokenizer,pretrain,sft,sft2}/report.json and `eval_json`."""
    run = Path(run_dir)
    text = render_card(
        folder,
        kind,
        tokenizer_report=_read(run / "tokenizer" / "report.json"),
        pretrain_report=_read(run / "pretrain" / "report.json"),
        sft_reports=[
            ("SFT (loss on answers)", _read(run / "sft" / "report.json")),
            ("SFT continued (warm restart)", _read(run / "sft2" / "report.json")),
        ],
        figures=_read(eval_json),
        commands=commands,
        notes=notes,
    )
    out = Path(folder) / "MODEL_CARD.md"
    out.write_text(text, encoding="utf-8")
    return out
