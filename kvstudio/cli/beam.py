"""`kvstudio beam`: beam search, one cache row per beam, and what reordering the rows copies.

Owns the ``beam`` subcommand (registered on the one parser in ``kvstudio.cli.main``)
and its printout: per step the beams with their scores and parent rows, the bytes
each reorder copies against a paged cache's copies on write, the returned
hypotheses, and ``same as transformers: yes|no`` when the hf extra is installed
(transformers' own ``generate(num_beams=…)`` on the converted model). The numbers
come from the lab's declared run (``kvstudio.labs.beam``).
"""

from __future__ import annotations

import argparse
from typing import Any

from kvstudio.cli import args as cli_args
from kvstudio.cli import common
from kvstudio.cli.lab_options import lab_params
from kvstudio.engine.strategies.beam import EarlyStopping
from kvstudio.labs.beam import BeamLabResult
from kvstudio.labs.course import COURSE
from kvstudio.labs.registry import BEAM

EARLY_STOPPING = {"true": True, "false": False, "never": "never"}


def early_stopping(text: str) -> EarlyStopping:
    """true, false or never (transformers' ``early_stopping``)."""
    try:
        return EARLY_STOPPING[text.strip().lower()]  # type: ignore[return-value]
    except KeyError:
        raise argparse.ArgumentTypeError(
            f"'{text}' is not true, false or never"
        ) from None


def add_subcommands(sub: Any) -> None:
    """Register ``beam`` on the one parser (``kvstudio.cli.main``)."""
    b = common.lab_subcommand(
        sub, BEAM, "beam search: beams per step, cache rows reordered, bytes copied",
        "Beam search with one cache row per beam; scores as transformers' "
        "generate(num_beams=…).", extra_help={"transformers": " (--no-check: skip it)"},
        overrides={"early_stopping": {  # read as true, false or never, any case
            "type": early_stopping, "choices": None, "metavar": "{true,false,never}"}})
    common.raw_option(b)
    b.add_argument(
        "--return", dest="num_return", type=cli_args.bounded(1, 64), default=None,
        help="hypotheses returned (default: all K)",
    )
    common.finish_subcommand(b, cmd_beam, COURSE.chat_model)


def cmd_beam(args: argparse.Namespace) -> int:
    loaded = common.prepare(args, COURSE.chat_model)
    common.utf8_argument(args.prompt)
    job = BEAM.run(loaded, lab_params(BEAM, args), raw=args.raw, num_return=args.num_return)
    result: BeamLabResult = common.drain(job, BeamLabResult)
    print_result(result, loaded.tokenizer)
    return 0


def print_result(result: BeamLabResult, tokenizer: Any) -> None:
    s = result.settings
    es = str(s.early_stopping).lower()  # true, false or never
    print()
    print(
        f"Beam search: K = {s.num_beams} beams, length penalty {s.length_penalty:g}, "
        f"early stopping {es}, N = {s.max_new_tokens}, P = {len(result.prompt_ids)}"
    )
    print(f"  {'step':>4}  {'beam':>4}  {'from':>4}  {'score':>9}  {'moved':>5}  "
          f"{'reorder B':>10}  {'CoW B':>8}  last tokens")
    for step in result.steps:
        for i, beam in enumerate(step.beams):
            tail = common.short(tokenizer.decode(list(beam.tokens[-4:])).replace("\n", "⏎"), 30)
            cells = (step.step, step.rows_moved, f"{step.reorder_bytes:,}", f"{step.cow_bytes:,}")
            shown = cells if i == 0 else ("", "", "", "")  # the step's numbers on its first line
            print(f"  {shown[0]:>4}  {i:>4}  {beam.parent:>4}  {beam.score:>9.3f}  {shown[1]:>5}  "
                  f"{shown[2]:>10}  {shown[3]:>8}  {tail}")
    search = result.search
    print()
    print("Returned (score = Σ log p / length^penalty):")
    for rank, (hyp, text) in enumerate(zip(search.sequences, result.texts, strict=True), 1):
        print(f"  {rank}. {hyp.score:9.4f}  ({len(hyp.tokens)} tokens)  {common.short(text, 60)}")
    print()
    print(
        f"Reorders (index_select on the batch dimension): {search.reorder_bytes:,} B in rows that "
        f"moved ({search.index_select_bytes:,} B written by index_select, every row)"
    )
    print(
        f"Paged cache (blocks of {result.steps[0].block_size}): copies on write "
        f"{search.cow_bytes:,} B; the rest is shared block tables"
    )
    check = result.transformers
    if check.ran:
        print(f"same as transformers: {'yes' if check.same else 'no'}")
        if not check.same:
            for ids, score in check.sequences:
                print(f"  transformers: {score:9.4f}  {list(ids)}")
    else:
        print(f"transformers: {check.note}")
