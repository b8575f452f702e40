"""`kvstudio sweep`: time and tokens fed as the prompt or the answer grows.

Owns the ``sweep`` subcommand (registered on the one parser in
``kvstudio.cli.main``) and its table; the numbers come from
the lab's declared run (``kvstudio.labs.cache.sweep``).
"""

from __future__ import annotations

import argparse
from typing import Any

from kvstudio.cli import common
from kvstudio.cli.lab_options import lab_params
from kvstudio.engine import costs
from kvstudio.engine.records import MODES
from kvstudio.labs.cache.sweep import SweepLabResult
from kvstudio.labs.course import COURSE
from kvstudio.labs.registry import SWEEP


def add_subcommands(sub: Any) -> None:
    """Register ``sweep`` on the one parser (``kvstudio.cli.main``)."""
    w = common.lab_subcommand(sub, SWEEP, "time and tokens fed as P or N grows")
    common.cache_options(w)
    common.finish_subcommand(w, cmd_sweep, COURSE.cache_model, yes=True)


def cmd_sweep(args: argparse.Namespace) -> int:
    loaded = common.prepare(args, COURSE.cache_model)
    params = lab_params(SWEEP, args)
    job = SWEEP.run(loaded, params, cache=common.cache_spec(args))  # checks that it fits
    fixed = params["fixed"]
    runs = [(v, fixed) if params["vary"] == "prompt" else (fixed, v) for v in params["values"]]
    fed = params["repeats"] * sum(
        costs.generation_cost(mode, p, n).tokens_fed for p, n in runs for mode in MODES)
    common.confirm_cost(args, fed, f"This sweep of {len(runs):,} length(s)",
                        "sweep fewer or shorter lengths")
    lab: SweepLabResult = common.drain(job, SweepLabResult)
    result = lab.sweep
    print()
    print(
        f"  {'mode':<10}{'P':>6}{'N':>6}{'fed':>10}{'formula':>10}{'total ms':>11}"
        f"{'TTFT ms':>10}{'ms/token':>10}{'tokens/s':>10}"
    )
    for pt in result.points:
        print(
            f"  {pt.mode:<10}{pt.prompt_tokens:>6}{pt.new_tokens:>6}{pt.tokens_fed:>10,}"
            f"{pt.tokens_fed_formula:>10,}{common.ms(pt.seconds):>11}"
            f"{common.ms(pt.ttft_seconds):>10}{common.ms(pt.decode_seconds):>10}"
            f"{(f'{1 / pt.decode_seconds:,.0f}' if pt.decode_seconds else '—'):>10}"
        )
    print()
    times = ("a single measurement (one run per point)" if lab.repeats == 1
             else f"the median of {lab.repeats} rounds")
    print("  ms/token: the median decode step (prefill apart, as TTFT); tokens/s = 1000 ÷ "
          f"ms/token. Every time is {times}, as in the window's Length sweep lab.")
    return 0
