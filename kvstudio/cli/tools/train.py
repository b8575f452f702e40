"""Command line for training: ``kvstudio train tokenizer|pretrain|sft|export`` and ``eval-model``.

Owns argument parsing only; the work is in ``kvstudio.training`` (``pipeline``, ``export``
and ``evaluate``). ``add_subcommands`` plugs into the one ``kvstudio`` parser (``main``).
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from pathlib import Path
from typing import Any

from kvstudio.cli import args as cli_args

# The training text is not in the repository: docs/data.md says where to get it.
DATA_HELP = (
    "folder with the training text (docs/data.md): chatbot_data/ChatbotData.csv, "
    "question_pair/kor_pair_train.csv and kor_Pair_test.csv, parakqc/paraKQC_v1.txt, "
    "kornlu/*.tsv (KorSTS, KorNLI XNLI)"
)
_count = cli_args.bounded(0, cli_args.MAX_COUNT)  # a count that may be 0 (no warm-up)


def _hidden(text: str) -> int:
    """A hidden size for --hidden: 16 to 4096 and a multiple of 8 (8 query heads)."""
    value: int = cli_args.bounded(16, 4096)(text)
    if value % 8:
        raise argparse.ArgumentTypeError(
            f"--hidden must be a multiple of 8 (8 query heads), got {value}"
        )
    return value


def _train_options(p: argparse.ArgumentParser, lr: float, steps: int, batch: int) -> None:
    p.add_argument("--data", required=True, metavar="DATA", help=DATA_HELP)
    p.add_argument("--tokenizer", required=True, help="folder with tokenizer.json")
    p.add_argument("--out", required=True, help="run folder (checkpoints, report.json)")
    p.add_argument("--steps", type=cli_args.positive, default=steps)
    p.add_argument("--batch-size", type=cli_args.rows, default=batch)
    p.add_argument("--lr", type=cli_args.number, default=lr)
    p.add_argument("--warmup", type=_count, default=100, help="warm-up steps")
    p.add_argument("--seed", type=cli_args.seed, default=0)
    p.add_argument(
        "--threads", type=cli_args.thread_count, default=1, help="torch threads (default 1)"
    )
    p.add_argument("--eval-every", type=cli_args.positive, default=200)
    p.add_argument("--save-every", type=cli_args.positive, default=200)
    p.add_argument("--log-every", type=cli_args.positive, default=20)
    p.add_argument(
        "--eval-batches", type=cli_args.positive, default=20, help="validation batches"
    )
    p.add_argument("--bf16", action="store_true", help="bf16 autocast (measure first)")
    p.add_argument("--no-resume", action="store_true", help="ignore an existing checkpoint")


def add_subcommands(subparsers: Any) -> None:
    """Register ``train ...`` and ``eval-model`` on the main ``kvstudio`` CLI's subparsers."""
    train = subparsers.add_parser("train", help="train the tokenizer or a model (CPU)")
    sub = train.add_subparsers(dest="train_command", required=True)

    tok = sub.add_parser("tokenizer", help="byte-level BPE with MiniMind's special tokens")
    tok.add_argument("--data", required=True, metavar="DATA", help=DATA_HELP)
    tok.add_argument("--out", required=True)
    tok.add_argument("--vocab-size", type=cli_args.bounded(256, 1 << 20), default=6400)
    tok.add_argument("--seed", type=cli_args.seed, default=0)
    tok.set_defaults(handler=_cmd_tokenizer)

    pre = sub.add_parser("pretrain", help="pretrain the course model on plain text")
    _train_options(pre, lr=3e-3, steps=2000, batch=32)
    pre.add_argument("--seq-len", type=cli_args.tokens, default=256)
    pre.add_argument(
        "--layers", type=cli_args.bounded(1, 64), default=None,
        help="decoder layers (default: the course's 4; e.g. 1 for a draft model)",
    )
    pre.add_argument(
        "--hidden", type=_hidden, default=None,
        help="hidden size, a multiple of 8 (default: the course's 256)",
    )
    pre.set_defaults(handler=_cmd_pretrain)

    sft = sub.add_parser("sft", help="fine-tune on ChatbotData in ChatML, loss on answers")
    _train_options(sft, lr=1e-3, steps=2000, batch=64)
    sft.add_argument("--init", required=True, help="pretrained weights (best.pt, .safetensors)")
    sft.add_argument("--max-len", type=cli_args.tokens, default=128)
    sft.set_defaults(handler=_cmd_sft)

    exp = sub.add_parser("export", help="write a shipped model folder from a run's weights")
    exp.add_argument("--weights", required=True, help="best.pt / final.pt of a run")
    exp.add_argument("--tokenizer", required=True)
    exp.add_argument("--out", required=True, help="e.g. kvstudio/resources/models/ko-base")
    exp.add_argument("--dtype", default="float16", choices=["float32", "float16", "bfloat16"])
    exp.add_argument(
        "--check", action="store_true", help="compare greedy outputs with the fp32 weights"
    )
    exp.set_defaults(handler=_cmd_export)

    card = sub.add_parser("card", help="write MODEL_CARD.md from run reports and eval figures")
    card.add_argument("model", help="model folder to write the card into")
    card.add_argument("--kind", choices=["base", "chat", "draft"], required=True)
    card.add_argument("--run", required=True, help="run folder with tokenizer/, pretrain/, sft/")
    card.add_argument("--eval", required=True, help="JSON written by eval-model --json")
    card.add_argument("--command", action="append", default=[], help="training command line")
    card.add_argument("--note", action="append", default=[], help="a known limit")
    card.set_defaults(handler=_cmd_card)

    ev = subparsers.add_parser("eval-model", help="print a model folder's quality figures")
    ev.add_argument("model", help="model folder (config.json, model.safetensors, tokenizer.json)")
    ev.add_argument("--kind", choices=["auto", "base", "chat", "draft"], default="auto")
    ev.add_argument(
        "--target", default=None,
        help="--kind draft: the model folder it drafts for (default: the embedded ko-chat)",
    )
    ev.add_argument("--prompts", default=None,
                    help="prompt folder (default: the package's kvstudio/resources/prompts)")
    ev.add_argument(
        "--samples", type=cli_args.rows, default=30, help="samples per temperature"
    )
    ev.add_argument("--seed", type=cli_args.seed, default=0)
    ev.add_argument("--threads", type=cli_args.thread_count, default=1)
    ev.add_argument("--json", default=None, help="also write the figures to this JSON file")
    ev.set_defaults(handler=_cmd_eval)


def _show_progress() -> None:
    """Progress lines on stdout, whatever the main CLI's log level is."""
    logger = logging.getLogger("kvstudio.training")
    if not logger.handlers:
        handler = logging.StreamHandler(sys.stdout)
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
        logger.addHandler(handler)
        logger.setLevel(logging.INFO)
        logger.propagate = False


def _settings(args: argparse.Namespace) -> Any:
    from kvstudio.training.trainer import TrainSettings

    return TrainSettings(
        steps=args.steps,
        batch_size=args.batch_size,
        lr=args.lr,
        warmup_steps=args.warmup,
        seed=args.seed,
        threads=args.threads,
        eval_every=args.eval_every,
        save_every=args.save_every,
        log_every=args.log_every,
        bf16=args.bf16,
        eval_batches=args.eval_batches,
    )


def _cmd_tokenizer(args: argparse.Namespace) -> int:
    from kvstudio.training.pipeline import run_tokenizer

    _show_progress()
    run_tokenizer(args.data, args.out, args.vocab_size, args.seed)
    return 0


def _cmd_pretrain(args: argparse.Namespace) -> int:
    from kvstudio.training.pipeline import run_pretrain

    _show_progress()
    run_pretrain(args.data, args.tokenizer, args.out, _settings(args), args.seq_len,
                 resume=not args.no_resume, layers=args.layers, hidden=args.hidden)
    return 0


def _cmd_sft(args: argparse.Namespace) -> int:
    from kvstudio.training.pipeline import run_sft

    _show_progress()
    run_sft(args.data, args.tokenizer, args.init, args.out, _settings(args), args.max_len,
            resume=not args.no_resume)
    return 0


def _cmd_export(args: argparse.Namespace) -> int:
    from kvstudio.training.export import export_run_weights

    _show_progress()
    export_run_weights(args.weights, args.tokenizer, args.out, args.dtype)
    if args.check:
        from kvstudio.training.export import check_stored_dtype

        result = check_stored_dtype(args.weights, args.out)
        print(
            f"greedy outputs identical to fp32 on {result['identical']} of "
            f"{result['prompts']} evaluation prompts"
        )
        for text in result["differing"]:
            print(f"  differs after: …{text}")
        if result["identical"] != result["prompts"]:
            return 1
    return 0


def _cmd_card(args: argparse.Namespace) -> int:
    from kvstudio.training.model_card import write_card

    path = write_card(args.model, args.kind, args.run, args.eval, args.command, args.note)
    print(f"wrote {path}")
    return 0


def _cmd_eval(args: argparse.Namespace) -> int:
    from kvstudio.training.evaluate import evaluate_model, format_figures

    figures = evaluate_model(args.model, kind=args.kind, prompts_dir=args.prompts,
                             samples=args.samples, seed=args.seed, threads=args.threads,
                             target=args.target)
    print(format_figures(figures))
    if args.json:
        Path(args.json).write_text(
            json.dumps(figures, ensure_ascii=False, indent=2) + "\n", encoding="utf-8"
        )
    return 0
