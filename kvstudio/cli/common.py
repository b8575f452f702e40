"""What every `kvstudio` subcommand shares: loading the model, progress, the cost question.

Owns `prepare` (the threads; the model: ``--model`` (a path, ``random`` or an embedded
model's name as the window shows it, ``ko-base``, ``ko-chat``) or the course's model
for the lab, through `kvstudio.files.loaded.load_model`, the loader every front
shares; and the line that says which model runs), `utf8_argument`, the progress line
on stderr (`ProgressLine`, `drain`) and the cost threshold (`add_yes_option`,
`confirm_cost`), and what the lab subcommands share: the subcommand built from a lab's spec
(`lab_subcommand`, `finish_subcommand`), the model, cache and
prompt options (`model_options`, `cache_options`), their
readers (`cache_spec`, `prompt_ids`, `prompt_text`) and the table helpers
`ms` and `short` (a float in a table: `kvstudio.labs.number_format.table_float`). The
subcommand modules (``compare``, ``chat``, ``project`` …) import it; it imports none of them.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from typing import Any

import torch

from kvstudio.cli import args as cli_args
from kvstudio.cli.lab_options import add_lab_options
from kvstudio.engine import costs
from kvstudio.engine.cache.kv_cache import ALL_CACHE_KINDS, CacheSpec
from kvstudio.engine.tokenizer import TextTokenizer
from kvstudio.files.loaded import LoadedModel, load_model
from kvstudio.labs import bounds
from kvstudio.labs.common import Progress, lab_prompt, lab_text
from kvstudio.labs.course import COURSE
from kvstudio.labs.params import LabSpec


# ---- helpers ---------------------------------------------------------------------------------
def prepare(args: argparse.Namespace, default: str | None = None) -> LoadedModel:
    """Set the torch threads, load `--model` (else the embedded `default`, the course
    preset's model for this lab) and say which model runs (and if it is random)."""
    torch.set_num_threads(args.threads)
    loaded = load_model(args.model, dtype=args.dtype, device=args.device, default=default)
    print(f"Model: {loaded.description}")
    if loaded.is_random:
        print(
            "       --model random: a random-initialised course model.\n"
            "       Tokens fed, bytes and times are real; the text is noise."
        )
    return loaded


def utf8_argument(text: str, what: str = "The prompt") -> str:
    """`text` as given on the command line, if it is valid UTF-8 (ValueError naming `what`)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:  # bytes the terminal could not decode (surrogates)
        raise ValueError(
            f"{what} is not valid UTF-8 text; set the terminal to UTF-8 or pass the text "
            "another way."
        ) from exc
    return text


PROGRESS_EVERY_S = 10.0  # off a terminal, a progress line at most this often


class ProgressLine:
    """Progress on stderr, so a long run never looks hung.

    On a terminal one line is rewritten in place; elsewhere (a pipe, a log
    file) a plain line is written every `PROGRESS_EVERY_S` seconds, so short
    runs print none.
    """

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.tty = sys.stderr.isatty()
        self.clock = clock
        self.last = clock()
        self.latest: Progress | None = None  # the last progress seen
        self.written: Progress | None = None  # the last line written off a terminal

    def __call__(self, item: object) -> None:
        if not isinstance(item, Progress):
            return
        self.latest = item
        if self.tty:
            sys.stderr.write(f"\r  {item.stage:<24} {item.fraction:6.1%}")
            sys.stderr.flush()
            return
        now = self.clock()
        if now - self.last >= PROGRESS_EVERY_S:
            self.last = now
            self._write(item)

    def _write(self, item: Progress) -> None:
        self.written = item
        sys.stderr.write(f"  {item.experiment}, {item.stage}: {item.done:,} of {item.total:,} "
                         f"({item.fraction:.0%})\n")
        sys.stderr.flush()

    def close(self) -> None:
        """Clear the terminal's line; off a terminal, a log that showed progress ends on the
        last one (100 % when the run finished), not on the last line every 10 s wrote."""
        if self.tty:
            sys.stderr.write("\r" + " " * 40 + "\r")
        elif self.written is not None and self.latest is not self.written:
            self._write(self.latest)  # type: ignore[arg-type]


def drain(experiment: Any, result_type: type, progress: ProgressLine | None = None) -> Any:
    """Run `experiment` to its `result_type` record, showing its `Progress` on stderr."""
    progress = progress or ProgressLine()
    result = None
    try:
        for item in experiment:
            progress(item)
            if isinstance(item, result_type):
                result = item
    finally:
        progress.close()
    if result is None:
        raise ValueError("The experiment ended without a result.")
    return result




def add_yes_option(p: argparse.ArgumentParser) -> None:
    """``--yes``: run even past the cost threshold (`confirm_cost`)."""
    p.add_argument(
        "--yes", action="store_true",
        help=f"run even when it feeds the model {costs.COST_WARNING_TOKENS:,} tokens or more "
        "(without it such a run is refused, as the window asks first)",
    )


def confirm_cost(args: argparse.Namespace, tokens_fed: int, what: str, hint: str) -> None:
    """Refuse a run past the window's cost threshold (`costs.is_costly`) unless ``--yes``.

    The command line cannot show the window's question, so it asks for the
    answer up front: the message says what the run costs and what to change.
    """
    if not costs.is_costly(tokens_fed) or getattr(args, "yes", False):
        return
    raise ValueError(
        f"{what} feeds the model about {tokens_fed:,} tokens, past the "
        f"{costs.COST_WARNING_TOKENS:,} at which KV Studio asks first (it may take many "
        f"minutes). Add --yes to run it anyway, or {hint}."
    )


# ---- options and prompts shared by the lab subcommands --------------------------------
def lab_subcommand(sub: Any, spec: LabSpec, help: str, description: str | None = None,
                   **options: Any) -> argparse.ArgumentParser:
    """The subcommand `spec.command` with every option of `spec`'s parameters
    (`add_lab_options`: `options` are its ``extra_help``, ``overrides`` and ``skip``)."""
    assert spec.command is not None
    p: argparse.ArgumentParser = sub.add_parser(spec.command, help=help,
                                                description=description)
    add_lab_options(p, spec, **options)
    return p


def finish_subcommand(p: argparse.ArgumentParser, handler: Callable[[argparse.Namespace], int],
                      model: str | None, yes: bool = False, model_help: str = "") -> None:
    """The model options last (`model`: the course's model for the lab; `model_help`:
    ``--model``'s help, if not the usual), ``--yes`` when the run may be past the cost
    threshold, and the handler."""
    model_options(p, model, model_help)
    if yes:
        add_yes_option(p)
    p.set_defaults(func=handler)


DEFAULT_QUESTION = COURSE.question  # the window's question too (the course preset)


def raw_option(p: argparse.ArgumentParser) -> None:
    """``--raw``: the prompt as is, without the chat template (the lab's ``raw``)."""
    p.add_argument("--raw", action="store_true", help="use --prompt as is, without ChatML")


def model_options(p: argparse.ArgumentParser, default: str | None = None,
                  model_help: str = "") -> None:
    """--model, --dtype, --device, --threads: which model runs, and how."""
    p.add_argument(
        "--model",
        default=None,
        help=model_help or "ko-base or ko-chat (the embedded models), a model folder, MiniMind "
        f".pth, or transformers folder (default: {default or 'the shipped model'}, the course's)",
    )
    p.add_argument("--dtype", default="float32", choices=("float32", "float16", "bfloat16"),
                   help="the arithmetic: fp32, fp16 or bf16; default float32")
    p.add_argument("--device", default="cpu", help="cpu (default) or cuda")
    p.add_argument(
        "--threads", type=cli_args.thread_count, default=1,
        help="torch CPU threads, 1 … the CPU cores (default 1: see README)",
    )


def cache_options(p: argparse.ArgumentParser) -> None:
    """--cache and its sizes (--window, --max-length, --block-size)."""
    p.add_argument("--cache", default="dynamic", choices=ALL_CACHE_KINDS, help="KV cache kind")
    p.add_argument(
        "--window", type=cli_args.tokens, default=COURSE.window,
        help=f"sliding window W (tokens; the cache keeps W − 1; default {COURSE.window})",
    )
    p.add_argument(
        "--max-length", type=cli_args.tokens, default=COURSE.static_length,
        help=f"static cache length (default {COURSE.static_length})",
    )
    p.add_argument(
        "--block-size", type=cli_args.block_size, default=16,
        help=f"paged cache block (1 … {bounds.MAX_BLOCK_SIZE} tokens, the window's bound, and "
        "at most the model's positions)",
    )


def cache_spec(args: argparse.Namespace) -> CacheSpec:
    """The `CacheSpec` that `cache_options` asked for."""
    return CacheSpec(
        args.cache, max_length=args.max_length, window=args.window, block_size=args.block_size
    )


def prompt_text(text: str) -> str:
    """The prompt as given, if it is text: not empty or blank, valid UTF-8 (ValueError)."""
    utf8_argument(text)
    if not text.strip():
        raise ValueError("The prompt is empty: give a question or some text with --prompt.")
    return text


def prompt_ids(
    args: argparse.Namespace, tokenizer: TextTokenizer, prompt_tokens: int | None = None,
    short_text: bool = False,
) -> list[int]:
    """The prompt as token ids: --prompt (ChatML with --chat) or P tokens of the lab text
    (`prompt_tokens`, else --prompt-tokens; `short_text`: the notebook's sentence), cut on
    a character boundary; a note on stdout says when the cut left a token out."""
    if args.prompt is not None:
        prompt = prompt_text(args.prompt)
        ids = tokenizer.chat_ids(prompt) if args.chat else tokenizer.encode(prompt)
        if not ids:
            raise ValueError("The prompt encodes to no tokens; give some text.")
        return ids
    asked = prompt_tokens if prompt_tokens is not None else args.prompt_tokens
    cut = lab_prompt(tokenizer, asked, lab_text(short=True) if short_text else None)
    if cut.note is not None:
        print(f"Note: {cut.note}.")
    return list(cut.ids)


def ms(seconds: float) -> str:
    """Seconds as milliseconds, two decimals."""
    return f"{seconds * 1e3:,.2f}"


def short(text: str, width: int = 70) -> str:
    """One line of at most `width` characters (newlines as ⏎, cut with …)."""
    flat = text.replace("\n", "⏎")
    return flat if len(flat) <= width else flat[: width - 1] + "…"
