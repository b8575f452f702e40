"""`kvstudio twin`: KV Studio and llama.cpp side by side on the same model.

Owns the ``twin`` subcommand (registered on the one parser in
``kvstudio.cli.main``) and its table: the tokens (greedy, or sampled with one
seed), KV bytes per token as each engine reports it, prompt reuse, the copy/crop
check and decode ms/token on one thread with the ratio. The numbers come from the
lab's declared run (``kvstudio.labs.twin``; the optional llama extra: without it
the command says what to install).
"""

from __future__ import annotations

import argparse
from typing import Any

from kvstudio.cli import common
from kvstudio.cli.lab_options import lab_params
from kvstudio.labs.course import COURSE
from kvstudio.labs.registry import TWIN


def add_subcommands(sub: Any) -> None:
    """Register ``twin`` on the one parser (``kvstudio.cli.main``)."""
    t = common.lab_subcommand(sub, TWIN, "the same model in KV Studio and llama.cpp, side by "
                              "side (needs pip install \"kvstudio[llama]\")")
    common.finish_subcommand(t, cmd_twin, COURSE.chat_model)


def _ms(side: Any) -> str:
    low, high = min(side.round_ms), max(side.round_ms)
    return f"{side.ms_per_token:.2f} ({low:.2f}–{high:.2f})"


def cmd_twin(args: argparse.Namespace) -> int:
    from kvstudio.labs import twin  # torch and the llama extra load only for this command

    twin.check_installed()  # before the model loads: say what to install
    loaded = common.prepare(args, COURSE.chat_model)
    result: Any = common.drain(TWIN.run(loaded, lab_params(TWIN, args)), twin.TwinResult)
    ours, theirs = result.ours, result.theirs
    n = result.new_tokens
    same = f"✓ {n}/{n}" if result.identical else f"✗ from step {result.first_diff_step}"
    sampling = result.sampling
    choice = ("greedy" if sampling.greedy
              else f"sampled, T {sampling.temperature:g}, seed {sampling.seed}")
    rows = [
        (f"tokens the same ({choice})", same, same),
        ("max |Δlogit| up to there", "", f"{result.max_logit_gap:.3g}"),
        ("KV bytes per token", f"{ours.kv_bytes_per_token:,.0f}",
         f"{theirs.kv_bytes_per_token:,.0f}"),
        ("  read from", ours.kv_source, theirs.kv_source),
        ("sequence state bytes per token", "", f"{result.llama_state_bytes_per_token:,.0f}"),
        (f"2nd prompt: evaluated, keeping {result.shared_prefix} shared",
         f"{ours.reuse_evaluated:,}", f"{theirs.reuse_evaluated:,} (n_p_eval)"),
        ("2nd prompt: evaluated, from empty", f"{ours.fresh_evaluated:,}",
         f"{theirs.fresh_evaluated:,}"),
        ("copy and crop = straight on", "✓" if ours.copy_crop_same else "✗",
         "✓" if theirs.copy_crop_same else "✗"),
        ("decode ms/token, greedy, 1 thread (min–max)", _ms(ours), _ms(theirs)),
    ]
    if result.top2_margin is not None:
        rows.insert(2, ("our top-2 margin there", f"{result.top2_margin:.3g}", ""))
    if result.probability_gap is not None:
        rows.insert(2, ("max |Δprobability| there", "", f"{result.probability_gap:.3g}"))
    print()
    print(f"  P = {result.prompt_tokens}, N = {n}")
    width = max(len(r[0]) for r in rows) + 2
    print(f"  {'':<{width}}{'KV Studio':>27}{'llama.cpp':>31}")
    for name, a, b in rows:
        print(f"  {name:<{width}}{a:>27}{b:>31}")
    print(f"  llama.cpp's line: {result.llama_kv_line.strip()}")
    print()
    k = len(ours.round_ms)
    times = "a single measurement" if k == 1 else f"the median of {k} interleaved rounds"
    ratio = result.speed_ratio
    faster = (f"llama.cpp is {ratio:.2f}× faster" if ratio >= 1
              else f"KV Studio is {1 / ratio:.2f}× faster")
    print(f"  speed: ours / llama.cpp = {ratio:.2f}× per decoded token ({faster}); every time "
          f"is {times}, one thread each. llama.cpp runs a step as one compiled graph; KV "
          "Studio's eager PyTorch dispatches each operation from Python.")
    return 0
