"""The `kvstudio` command: the labs, headless (also `python -m kvstudio`).

Owns the one parser (`build_parser`; every subcommand module registers its
own subcommands on it) and `main`. Each subcommand lives in its own module of
``kvstudio.cli`` (``compare``, ``sample``, ``sweep``, ``info``, ``bench`` …), and
the work itself in the lab of the same name in ``kvstudio.labs``; the
subcommand modules only turn its results into text. Errors the user can fix
print one clear line and exit with status 2, never a traceback: number arguments have bounded types
(``kvstudio.cli.args``), sizes are checked against the model before any work,
and a run past the window's cost threshold (``engine.costs``) needs ``--yes``
(``common.confirm_cost``). Long runs show progress on stderr
(``common.drain``); model loading is ``common.prepare``, a thin call of
``kvstudio.files.loaded.load_model``.

Subcommands: ``compare``, ``sample``, ``sweep``, ``serving``, ``serve-bench``
(``kvstudio.cli.serve_bench``), ``speculative``, ``info``, ``beam``, ``twin``
(``kvstudio.cli.<name>``),
``bench`` (``kvstudio.cli.tools.bench``); plus
``train``/``eval-model`` (``kvstudio.cli.tools.train``), ``convert``
(``kvstudio.cli.tools.convert``), ``chat`` (``kvstudio.cli.chat``) and ``project``
(``kvstudio.cli.tools.project``, which also prints ``compare --cache
paged|fp16|int8|int4``'s extra tables). They are imported like any module: a
broken one fails at once, loudly.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Callable, Sequence
from typing import NoReturn

from kvstudio.cli import (
    beam,
    chat,
    compare,
    sample,
    serve_bench,
    serving,
    speculative,
    sweep,
    twin,
)
from kvstudio.cli.tools import bench, convert, info, project, train

log = logging.getLogger(__name__)


# ---- the parser ------------------------------------------------------------------------------
# Every number argument has a bounded type from ``kvstudio.cli.args`` (shared by all subcommands).


class _Parser(argparse.ArgumentParser):
    """Mistakes on the command line are one `error:` line and exit status 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"error: {message} (see: {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    """The one `kvstudio` parser: every subcommand module registers its own subcommands."""
    parser = _Parser(
        prog="kvstudio",
        description="KV Studio labs, headless: the KV cache, tokens fed, timing and sampling.",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="log what happens")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for module in (compare, sample, sweep, serving, serve_bench, speculative, info, beam, twin):
        module.add_subcommands(sub)

    b = sub.add_parser("bench", help="speed: cached/recompute ms per token, TTFT, overhead")
    bench.add_arguments(b)
    b.set_defaults(func=bench.run_from_args)

    for module in (train, convert, chat, project):  # each registers its own subcommands
        module.add_subcommands(sub)
    return parser


# ---- entry point ---------------------------------------------------------------------------
def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(list(argv) if argv is not None else None)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
    )
    handler: Callable[[argparse.Namespace], int] | None = getattr(args, "func", None) or getattr(
        args, "handler", None
    )
    if handler is None:
        parser.error("choose a command")
    try:
        return int(handler(args) or 0)
    except ValueError as exc:
        log.debug("details", exc_info=True)
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except (OSError, RuntimeError) as exc:
        log.debug("details", exc_info=True)  # --verbose shows the traceback
        print(f"error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
