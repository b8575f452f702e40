"""`kvstudio speculative`: a draft proposes k tokens, the target verifies them in one forward.

Owns the ``speculative`` subcommand (registered on the one parser in
``kvstudio.cli.main``) and its printout: per draft kind and k the measured
acceptance rate α, tokens per target call measured against the formula
(1 − α^(k+1)) / (1 − α), target calls per generated token, wall time against
plain decoding (median of interleaved repeats) and ``identical to greedy:
yes|no``, really compared with plain greedy decoding. The numbers come from
the lab's declared run (``kvstudio.labs.speculative``); the target is the course's chat model
(``COURSE.chat_model``) and the draft the shipped ``ko-draft`` unless told.
"""

from __future__ import annotations

import argparse
from typing import Any

import torch

from kvstudio.cli import args as cli_args
from kvstudio.cli import common
from kvstudio.cli.lab_options import lab_params
from kvstudio.engine.records import SamplingSettings
from kvstudio.engine.strategies.drafters import DRAFT_KINDS, DraftKind
from kvstudio.engine.tokenizer import TextTokenizer, TokenTexts
from kvstudio.labs.common import prompt_ids
from kvstudio.labs.course import COURSE, settings_line
from kvstudio.labs.registry import SPECULATIVE
from kvstudio.labs.speculative import DRAFT_MODEL, SpecRunResult, SpeculativeLabResult


def add_subcommands(sub: Any) -> None:
    """Register ``speculative`` on the one parser (``kvstudio.cli.main``)."""
    s = common.lab_subcommand(
        sub, SPECULATIVE, "speculative decoding: draft k tokens, verify them in one target forward",
        "A draft (the ko-draft model or prompt lookup) proposes k tokens; the target checks all "
        "of them in one forward and both caches are cropped back.",
        extra_help={"ks": ", e.g. 4 or 1,2,4,8",
                    "temperature": "; > 0 samples with the acceptance rule"})
    s.add_argument(
        "--draft-kind", choices=(*DRAFT_KINDS, "both"), default="model",
        help="model: the draft model (default); prompt-lookup: n-grams of the text so far",
    )
    s.add_argument(
        "--draft", default=None,
        help=f"draft model folder (default: the shipped {DRAFT_MODEL}, trained for ko-chat)",
    )
    common.raw_option(s)
    s.add_argument(
        "--stop-at-eos", action="store_true",
        help="stop at the end of the answer (default: eos banned, exactly --new-tokens tokens)",
    )
    s.add_argument("--top-k", type=cli_args.bounded(0, cli_args.MAX_COUNT), default=0,
                   help="0 = off")
    s.add_argument("--top-p", type=cli_args.number, default=1.0, help="1.0 = off")
    s.add_argument("--repetition-penalty", type=cli_args.number, default=1.0, help="1.0 = off")
    s.add_argument("--seed", type=cli_args.seed, default=COURSE.seed)
    s.add_argument("--rounds", action="store_true", help="also print every round of each run")
    common.finish_subcommand(s, cmd_speculative, COURSE.chat_model)


def cmd_speculative(args: argparse.Namespace) -> int:
    settings = SamplingSettings(  # invalid knobs fail before the model loads
        temperature=args.temperature, top_k=args.top_k, top_p=args.top_p,
        repetition_penalty=args.repetition_penalty, seed=args.seed,
    )
    loaded = common.prepare(args, COURSE.chat_model)
    params = lab_params(SPECULATIVE, args)
    question = common.utf8_argument(params["question"])
    kinds: tuple[DraftKind, ...] = DRAFT_KINDS if args.draft_kind == "both" else (args.draft_kind,)
    job = SPECULATIVE.run(loaded, params, raw=args.raw, sampling=settings, kinds=kinds,
                          draft=args.draft, stop_at_eos=args.stop_at_eos)
    print(
        f"Prompt: {common.short(question)!r} "
        f"({len(prompt_ids(loaded, question, args.raw)):,} tokens); "
        f"{params['new_tokens']:,} new tokens; k = {', '.join(map(str, params['ks']))}; "
        f"{torch.get_num_threads()} torch thread(s)"
    )
    result: SpeculativeLabResult = common.drain(job, SpeculativeLabResult)
    print_result(result, loaded.tokenizer, args.rounds)
    return 0


def print_result(result: SpeculativeLabResult, tokenizer: TextTokenizer, rounds: bool) -> None:
    print()
    print(f"  plain decoding: {common.short(result.plain_text, 60)!r}")
    print(
        f"  {'draft':<14}{'k':>3}{'α':>7}{'tok/call':>10}{'formula':>9}{'calls/tok':>11}"
        f"{'ms':>10}{'plain ms':>10}{'speed-up':>10}  identical"
    )
    for run in result.runs:
        print(
            f"  {run.draft_kind:<14}{run.k:>3}{run.alpha:>7.2f}{run.tokens_per_round:>10.2f}"
            f"{run.expected_tokens_per_round:>9.2f}{run.calls_per_token:>11.2f}"
            f"{common.ms(run.seconds.median):>10}{common.ms(result.plain_seconds.median):>10}"
            f"{result.speedup(run):>9.2f}×  {'yes' if run.identical_to_plain else 'no'}"
        )
    print()
    for run in result.runs:
        what = "identical to greedy" if result.greedy else "same tokens as plain sampling"
        print(
            f"  {run.draft_kind} k={run.k}: α = {run.alpha:.2f} ({run.accepted} of "
            f"{run.verified} judged drafts accepted); tokens per target call "
            f"{run.tokens_per_round:.2f} measured vs {run.expected_tokens_per_round:.2f} "
            f"formula; {what}: {'yes' if run.identical_to_plain else 'no'}"
        )
        if rounds:
            print_rounds(run, tokenizer)
    print()
    print(
        "  α = accepted ÷ judged drafts (a draft after a rejection is never judged). tok/call = "
        "tokens per verify round (one target forward); formula = (1 − α^(k+1)) / (1 − α) with "
        "each round's own k (prompt lookup may find fewer drafts). calls/tok counts the "
        "prefill too (plain decoding: 1.00)."
    )
    print(
        f"  Times: the median of {result.plain_seconds.count} interleaved repeats "
        "(plain, then every draft kind and k, per repeat)"
        + (" — a single measurement." if result.plain_seconds.count == 1 else ".")
    )
    if not result.greedy:
        print(
            "  Sampling: the acceptance rule keeps the target's distribution, but the random "
            "numbers differ from plain sampling's, so the tokens may differ by chance."
        )
    print(f"  settings: {settings_line(result.sampling, model=result.target_label)}"
          f"{' · draft ' + result.draft_label if result.draft_label else ''}")


def print_rounds(run: SpecRunResult, tokenizer: TextTokenizer) -> None:
    texts = TokenTexts(tokenizer)  # half a syllable as its bytes, never �
    # The token text last: Hangul is two columns wide, so nothing is aligned after it.
    print(f"    {'round':>5}{'target +/−/rows':>18}{'draft +/−/rows':>18}  drafts (✓ ✗ ·) + target")
    for r in run.rounds:
        marks = ["✓" if i < r.accepted else "✗" if i == r.accepted else "·"
                 for i in range(len(r.drafted))]  # · = after a rejection, never judged
        drafted = " ".join(m + texts(t) for m, t in zip(marks, r.drafted, strict=True))
        added = "" if r.next_token is None else f" +{texts(r.next_token)!r}"
        draft_rows = "—" if r.draft_length is None else (
            f"+{r.draft_appended}/−{r.draft_cropped}/{r.draft_length}"
        )
        print(
            f"    {r.index:>5}"
            f"{f'+{r.target_appended}/−{r.target_cropped}/{r.target_length}':>18}"
            f"{draft_rows:>18}  {drafted}{added}"
        )
