"""The quality figures of a model folder: what ``kvstudio eval-model`` prints.

Owns the checks issue 3 asks of the embedded models, run through the engine's
own ``Stepper`` (so the figures describe what the app will show):

- chat model: greedy answers to held-out questions (how many distinct, the
  largest share of one answer) and, per lab question, the number of distinct
  answers among n samples at T=0.3 and T=1.2 (top-p 0.85, top-k off);
- base model: greedy continuations of Korean sentence starts;
- both: cached and recompute give identical greedy tokens on the 183-token
  prompt, the lab prompts' token counts, and no ``�`` in any decoded text.

It reads the prompts in ``kvstudio/resources/prompts`` (or another folder) and never trains.
"""

from __future__ import annotations

import logging
import statistics
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch

from kvstudio.engine.backends.minimind import MiniMindBackend
from kvstudio.engine.generate import Stepper
from kvstudio.engine.records import SamplingSettings
from kvstudio.engine.sampling import new_generator
from kvstudio.engine.small_files import read_json, read_text
from kvstudio.engine.strategies.drafters import ModelDrafter
from kvstudio.engine.strategies.speculative import SpeculativeRun
from kvstudio.engine.tokenizer import REPLACEMENT, TextTokenizer
from kvstudio.files.checkpoints import load_model_folder
from kvstudio.files.resources import MODELS_DIR, PROMPTS_DIR

log = logging.getLogger(__name__)

TEMPERATURES = (0.3, 1.2)
TOP_P = 0.85  # the course setting; top-k stays off
ANSWER_TOKENS = 64  # ChatbotData answers are short; this is generous
CONTINUATION_TOKENS = 32
MAX_PROMPT_BYTES = 16 * 1024 * 1024  # the shipped prompt files are a few KB each
DRAFT_TARGET = MODELS_DIR / "ko-chat"  # the model a draft (kind "draft") drafts for
DRAFT_KS = (1, 2, 4, 8)


def read_prompts(folder: str | Path | None = None) -> dict[str, Any]:
    """lab_long, lab_short (str), chat_questions, heldout_questions, sentence_starts (lists)."""
    root = Path(folder) if folder is not None else PROMPTS_DIR
    if not root.is_dir():
        raise ValueError(f"{root} is not a prompt folder (lab_long.txt, chat_questions.json, …).")
    out: dict[str, Any] = {}
    for name in ("lab_long", "lab_short"):
        out[name] = read_text(root / f"{name}.txt", MAX_PROMPT_BYTES, "a prompt (UTF-8 text)")
    for name in ("chat_questions", "heldout_questions", "sentence_starts"):
        out[name] = read_json(root / f"{name}.json", MAX_PROMPT_BYTES, "a JSON list of prompts")
    return out


def generate(
    backend: MiniMindBackend,
    tokenizer: TextTokenizer,
    prompt_ids: Sequence[int],
    new_tokens: int,
    *,
    temperature: float = 0.0,
    samples: int = 1,
    seed: int = 0,
    mode: str = "cached",
    stop_at_eos: bool = True,
) -> Stepper:
    """Run one Stepper to the end: `samples` rows of one prompt; returns the finished stepper."""
    if temperature == 0:
        settings = SamplingSettings.greedy_settings(seed)
    else:
        settings = SamplingSettings(temperature=temperature, top_k=0, top_p=TOP_P, seed=seed)
    stepper = Stepper(backend, tokenizer, list(prompt_ids), mode=mode,  # type: ignore[arg-type]
                      sampling=settings, max_new_tokens=new_tokens, batch_size=samples,
                      stop_at_eos=stop_at_eos, top_n=0)
    for _ in stepper:
        pass
    return stepper


def chat_answer(backend: MiniMindBackend, tokenizer: TextTokenizer, question: str) -> str:
    """The greedy answer to one question in ChatML."""
    ids = tokenizer.chat_ids(question)
    return generate(backend, tokenizer, ids, ANSWER_TOKENS).text().strip()


def continuation(backend: MiniMindBackend, tokenizer: TextTokenizer, start: str) -> str:
    """Greedy continuation of a sentence start, cut at the first <|endoftext|>."""
    stepper = generate(
        backend, tokenizer, tokenizer.encode(start), CONTINUATION_TOKENS, stop_at_eos=False
    )
    ids = stepper.generated_ids[0]
    if tokenizer.endoftext_id in ids:
        ids = ids[: ids.index(tokenizer.endoftext_id)]
    return start + tokenizer.decode(ids, skip_special_tokens=True)


def evaluate_model(
    folder: str | Path,
    kind: str = "auto",
    prompts_dir: str | Path | None = None,
    samples: int = 30,
    seed: int = 0,
    threads: int = 1,
    target: str | Path | None = None,
) -> dict[str, Any]:
    """All figures for the model in `folder` as a JSON-ready dict.

    kind "draft": a draft model for speculative decoding; besides the base figures,
    its acceptance against `target` (default ko-chat) on the lab questions.
    """
    torch.set_num_threads(threads)
    t0 = time.perf_counter()
    loaded = load_model_folder(folder)
    tok = loaded.tokenizer
    backend = MiniMindBackend(loaded.model, name=loaded.name)
    prompts = read_prompts(prompts_dir)
    if kind == "auto":
        kind = "chat" if "chat" in Path(folder).name else "base"
    texts: list[str] = []  # greedy outputs
    sampled: list[str] = []  # temperature samples
    fig: dict[str, Any] = {
        "model": str(folder),
        "kind": kind,
        "parameters": loaded.model.num_parameters,
    }
    long_ids, short_ids = tok.encode(prompts["lab_long"]), tok.encode(prompts["lab_short"])
    fig["lab_long_tokens"], fig["lab_short_tokens"] = len(long_ids), len(short_ids)

    # Cached and recompute must choose the same greedy tokens on the long prompt.
    runs = [
        generate(backend, tok, long_ids, 64, mode=m, stop_at_eos=False).generated_ids[0]
        for m in ("cached", "recompute")
    ]
    fig["cached_equals_recompute_183"] = runs[0] == runs[1]
    fig["lab_long_continuation"] = tok.decode(runs[0], skip_special_tokens=True)

    starts = prompts["sentence_starts"]
    fig["continuations"] = [continuation(backend, tok, s) for s in starts]
    texts += fig["continuations"]

    if kind == "chat":
        held = prompts["heldout_questions"]
        answers = [chat_answer(backend, tok, q) for q in held]
        counts = Counter(answers)
        fig["heldout"] = {
            "questions": len(held),
            "distinct": len(counts),
            "max_share": counts.most_common(1)[0][1],
            "most_common": counts.most_common(5),
            "pairs": list(zip(held, answers, strict=True)),
        }
        texts += answers
        per_t: dict[str, list[int]] = {f"{t:g}": [] for t in TEMPERATURES}
        examples: dict[str, dict[str, list[str]]] = {}
        for q in prompts["chat_questions"]:
            ids = tok.chat_ids(q)
            examples[q] = {}
            for t in TEMPERATURES:
                rows = generate(
                    backend, tok, ids, ANSWER_TOKENS, temperature=t, samples=samples, seed=seed
                ).texts()
                rows = [r.strip() for r in rows]
                per_t[f"{t:g}"].append(len(set(rows)))
                examples[q][f"{t:g}"] = [a for a, _ in Counter(rows).most_common(3)]
                sampled += rows
        fig["temperature"] = {
            "samples": samples,
            "top_p": TOP_P,
            "top_k": 0,
            "distinct_per_question": per_t,
            "median_distinct": {t: statistics.median(v) for t, v in per_t.items()},
            "examples": examples,
        }
    # Texts are decoded whole, so a syllable split across tokens never shows as �; a �
    # here means the model itself produced bytes that are not UTF-8 (possible when
    # sampling at a high temperature picks an unlikely byte token).
    if kind == "draft":
        fig["speculative"] = draft_figures(loaded.model, target or DRAFT_TARGET, prompts)
    fig["replacement_chars"] = sum(t.count(REPLACEMENT) for t in texts)
    fig["replacement_chars_sampled"] = sum(t.count(REPLACEMENT) for t in sampled)
    fig["sampled_with_replacement"] = sum(REPLACEMENT in t for t in sampled)
    fig["seconds"] = round(time.perf_counter() - t0, 1)
    return fig


def draft_figures(draft: Any, target_folder: str | Path, prompts: dict[str, Any]) -> dict[str, Any]:
    """Greedy speculative decoding with `draft` for the target in `target_folder`: per k, the
    acceptance rate α (accepted ÷ judged drafts), tokens per target call and whether every
    answer equals plain greedy, over the lab questions (ChatML, eos banned, 32 tokens)."""
    target = load_model_folder(target_folder)
    tok = target.tokenizer
    backend = MiniMindBackend(target.model, name=target.name)
    greedy = SamplingSettings(temperature=0.0, top_p=1.0)
    questions = prompts["chat_questions"]
    plain = [
        generate(backend, tok, tok.chat_ids(q), CONTINUATION_TOKENS, stop_at_eos=False)
        .generated_ids[0] for q in questions
    ]
    per_k: dict[str, dict[str, Any]] = {}
    for k in DRAFT_KS:
        accepted = judged = rounds = committed = identical = 0
        for q, reference in zip(questions, plain, strict=True):
            run = SpeculativeRun(
                target.model,
                ModelDrafter(draft, greedy, new_generator(0), banned_token=tok.eos_id),
                tok.chat_ids(q), k=k, max_new_tokens=CONTINUATION_TOKENS, sampling=greedy,
                eos_id=tok.eos_id, stop_at_eos=False,
            )
            with torch.inference_mode():
                records = list(run)[1:]  # the verify rounds (round 0 is the prefill)
            accepted += sum(r.accepted for r in records)
            judged += sum(r.verified for r in records)
            rounds += len(records)
            committed += sum(len(r.committed) for r in records)
            identical += run.generated == reference
        per_k[str(k)] = {
            "alpha": round(accepted / judged, 3) if judged else 0.0,
            "tokens_per_target_call": round(committed / rounds, 3) if rounds else 0.0,
            "identical_to_greedy": identical,
        }
    return {"target": target.name, "questions": len(questions),
            "new_tokens": CONTINUATION_TOKENS, "per_k": per_k}


def greedy_agreement(
    reference: MiniMindBackend,
    other: MiniMindBackend,
    tokenizer: TextTokenizer,
    prompts_dir: str | Path | None = None,
) -> dict[str, Any]:
    """Do two models (e.g. fp32 weights and the same stored in fp16) pick the same greedy tokens?

    Runs every evaluation prompt: the 183-token lab prompt (64 tokens), the
    sentence starts, and the held-out and lab questions in ChatML.
    """
    prompts = read_prompts(prompts_dir)
    cases: list[tuple[list[int], int]] = [(tokenizer.encode(prompts["lab_long"]), 64)]
    cases += [(tokenizer.encode(s), CONTINUATION_TOKENS) for s in prompts["sentence_starts"]]
    for q in [*prompts["heldout_questions"], *prompts["chat_questions"]]:
        cases.append((tokenizer.chat_ids(q), ANSWER_TOKENS))
    same = 0
    differing: list[str] = []
    for ids, n in cases:
        a = generate(reference, tokenizer, ids, n).generated_ids[0]
        b = generate(other, tokenizer, ids, n).generated_ids[0]
        if a == b:
            same += 1
        else:
            differing.append(tokenizer.decode(ids[-12:]))
    return {"prompts": len(cases), "identical": same, "differing": differing}


def format_figures(fig: dict[str, Any]) -> str:
    """A short human-readable summary of `evaluate_model`'s figures."""
    lines = [
        f"model {fig['model']} ({fig['kind']}, {fig['parameters']:,} parameters)",
        f"lab prompts: long {fig['lab_long_tokens']} tokens, "
        f"short {fig['lab_short_tokens']} tokens",
        f"cached == recompute on the long prompt (64 greedy tokens): "
        f"{fig['cached_equals_recompute_183']}",
        "greedy continuations:",
        *[f"  {c}" for c in fig["continuations"]],
    ]
    if "speculative" in fig:
        spec = fig["speculative"]
        lines.append(f"speculative decoding for {spec['target']} ({spec['questions']} questions):")
        lines += [
            f"  k={k}: α {v['alpha']:.2f}, {v['tokens_per_target_call']:.2f} tokens per target "
            f"call, identical to greedy on {v['identical_to_greedy']} of {spec['questions']}"
            for k, v in spec["per_k"].items()
        ]
    if "heldout" in fig:
        h = fig["heldout"]
        lines += [
            f"held-out questions, greedy: {h['distinct']} distinct answers of {h['questions']}, "
            f"largest share {h['max_share']}",
            *[f"  Q {q}\n    A {a}" for q, a in h["pairs"][:8]],
        ]
        t = fig["temperature"]
        med = ", ".join(f"T={k}: {v}" for k, v in t["median_distinct"].items())
        lines.append(
            f"distinct answers of {t['samples']} samples (top-p {t['top_p']}), "
            f"median over {len(t['examples'])} questions: {med}"
        )
    lines.append(f"'{REPLACEMENT}' in greedy text: {fig['replacement_chars']}")
    if "temperature" in fig:
        t = fig["temperature"]
        n_samples = t["samples"] * len(TEMPERATURES) * len(t["examples"])
        lines.append(
            f"samples with invalid UTF-8 bytes chosen by the model: "
            f"{fig['sampled_with_replacement']} of {n_samples}"
        )
    lines.append(f"({fig['seconds']} s)")
    return "\n".join(lines)
