"""The three training commands as functions: tokenizer, pretrain, SFT.

Owns the course recipe's choices (what text goes where, which split is held
out, how the model is initialised) and the run-folder layout::

    RUN/tokenizer/   tokenizer.json, tokenizer_config.json, report.json
    RUN/pretrain/    checkpoint.pt, best.pt, final.pt, report.json
    RUN/sft/         same, plus heldout.json (the 50 questions never trained on)
"""

from __future__ import annotations

import json
import logging
import random
import time
from pathlib import Path
from typing import Any

from kvstudio.engine.config import ModelConfig
from kvstudio.engine.model import MiniMindLM
from kvstudio.engine.tokenizer import IM_END, IM_START, TextTokenizer
from kvstudio.training import data
from kvstudio.training.datasets import ChatExamples, PackedStream
from kvstudio.training.export import load_state_dict_file, run_config
from kvstudio.training.tokenizer_train import chars_per_token, train_bpe
from kvstudio.training.trainer import TrainSettings, train

log = logging.getLogger(__name__)


def _write_json(path: Path, obj: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(obj, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")


def run_tokenizer(
    data_dir: str | Path, out_dir: str | Path, vocab_size: int = 6400, seed: int = 0
) -> TextTokenizer:
    """Train the BPE on all pretraining text plus the training chat pairs in ChatML."""
    t0 = time.perf_counter()
    pairs = data.read_chat_pairs(data_dir)
    split = data.split_chat(pairs, seed=seed)
    texts = data.pretrain_documents(data_dir, split)
    # Chat pairs in ChatML too, so "user" and "assistant" become single tokens.
    texts += [
        f"{IM_START}user\n{p.question}{IM_END}\n{IM_START}assistant\n{p.answer}{IM_END}\n"
        for p in split.train
    ]
    tok = train_bpe(texts, vocab_size)
    tok.save(out_dir)
    cpt = chars_per_token(tok, [f"{p.question} {p.answer}" for p in pairs])
    report = {
        "vocab_size": tok.vocab_size,
        "chars_per_token_chat": round(cpt, 3),
        "texts": len(texts),
        "seconds": round(time.perf_counter() - t0, 1),
        "seed": seed,
    }
    _write_json(Path(out_dir) / "report.json", report)
    log.info("tokenizer: %d tokens, %.2f chars/token on the chat data -> %s",
             tok.vocab_size, cpt, out_dir)
    return tok


def run_pretrain(
    data_dir: str | Path,
    tokenizer_dir: str | Path,
    run_dir: str | Path,
    settings: TrainSettings,
    seq_len: int = 256,
    valid_fraction: float = 0.02,
    resume: bool = True,
    layers: int | None = None,
    hidden: int | None = None,
) -> dict[str, Any]:
    """Pretrain the course model from a seeded random init on all the text.

    `layers` and `hidden` shrink (or grow) the course architecture, e.g. the
    1-layer draft model of the speculative-decoding lab; None keeps the course's
    size. Heads stay 8 query / 2 K/V, so `hidden` must be a multiple of 8.
    """
    tok = TextTokenizer.from_file(tokenizer_dir)
    split = data.split_chat(data.read_chat_pairs(data_dir), seed=settings.seed)
    docs = data.pretrain_documents(data_dir, split)
    random.Random(settings.seed).shuffle(docs)
    n_valid = max(1, int(len(docs) * valid_fraction))
    valid = PackedStream(tok, docs[:n_valid], seq_len, settings.seed)
    train_stream = PackedStream(tok, docs[n_valid:], seq_len, settings.seed)
    log.info("pretraining on %d documents, %d tokens (validation %d tokens)",
             len(docs) - n_valid, len(train_stream), len(valid))
    settings.extra.update(
        {
            "seq_len": seq_len,
            "train_tokens": len(train_stream),
            "valid_tokens": len(valid),
            "data_dir": str(data_dir),
        }
    )
    course = ModelConfig()
    config = ModelConfig(
        vocab_size=tok.vocab_size,
        num_hidden_layers=layers or course.num_hidden_layers,
        hidden_size=hidden or course.hidden_size,
    )
    model = MiniMindLM(config).init_weights(settings.seed)
    return _train_on(model, train_stream, valid, settings, run_dir, resume)


def run_sft(
    data_dir: str | Path,
    tokenizer_dir: str | Path,
    init_weights: str | Path,
    run_dir: str | Path,
    settings: TrainSettings,
    max_len: int = 128,
    resume: bool = True,
) -> dict[str, Any]:
    """Fine-tune a pretrained model on ChatbotData in ChatML, loss on the answers only."""
    tok = TextTokenizer.from_file(tokenizer_dir)
    split = data.split_chat(data.read_chat_pairs(data_dir), seed=settings.seed)
    _write_json(Path(run_dir) / "heldout.json", split.eval_questions)
    train_set = ChatExamples(tok, split.train, max_len)
    valid_set = ChatExamples(tok, split.valid, max_len)
    log.info("SFT on %d pairs (%d answer tokens); validation %d pairs; %d held-out questions",
             len(train_set), train_set.n_answer_tokens(), len(valid_set),
             len(split.eval_questions))
    settings.extra.update(
        {
            "max_len": max_len,
            "train_pairs": len(train_set),
            "valid_pairs": len(valid_set),
            "init": str(init_weights),
            "data_dir": str(data_dir),
        }
    )
    config = run_config(init_weights, tok.vocab_size)  # the pretrained run's size
    model = MiniMindLM(config)
    model.load_state_dict(load_state_dict_file(init_weights, config), strict=True)
    return _train_on(model, train_set, valid_set, settings, run_dir, resume)


def _train_on(
    model: MiniMindLM,
    train_set: PackedStream | ChatExamples,
    valid_set: PackedStream | ChatExamples,
    settings: TrainSettings,
    run_dir: str | Path,
    resume: bool,
) -> dict[str, Any]:
    """`train` on random batches of `train_set`, validated on fixed batches of `valid_set`."""
    return train(
        model,
        lambda g: train_set.batch(settings.batch_size, g),
        valid_set.eval_batches(settings.batch_size, settings.eval_batches),
        settings,
        run_dir,
        resume,
    )
