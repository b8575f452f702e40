"""Run as ``python -m tests.cli.capped_child`` by `test_cli_bounds`: several ``kvstudio``
commands in one child process, each as ``python -m kvstudio`` would run it.

Reads a JSON list of argument lists on stdin; runs each through ``sys.exit(main(argv))``'s
path (a `SystemExit` is its exit status, an uncaught exception prints its traceback and
gives 1, as the interpreter does), with the process's stdout and stderr (file
descriptors 1 and 2, so whatever writes there) sent to files of its own; then prints one
JSON list of ``{"returncode", "stdout", "stderr"}`` on the real stdout. The one process
saves an interpreter start and torch's import per command; the parent's address-space
cap holds for all of them.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import traceback
from typing import Any


def _run(argv: list[str]) -> int:
    from kvstudio.cli.main import main

    try:
        return int(main(argv) or 0)
    except SystemExit as exc:
        if exc.code is None or isinstance(exc.code, int):
            return int(exc.code or 0)
        print(exc.code, file=sys.stderr)
        return 1
    except BaseException:  # what the interpreter prints for an uncaught exception
        traceback.print_exc()
        return 1


def _captured(argv: list[str]) -> dict[str, Any]:
    saved = os.dup(1), os.dup(2)
    with tempfile.TemporaryFile("w+", encoding="utf-8") as out, \
            tempfile.TemporaryFile("w+", encoding="utf-8") as err:
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(out.fileno(), 1)
        os.dup2(err.fileno(), 2)
        try:
            code = _run(argv)
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
        out.seek(0)
        err.seek(0)
        return {"returncode": code, "stdout": out.read(), "stderr": err.read()}


def main() -> int:
    commands = json.load(sys.stdin)
    results = [_captured(argv) for argv in commands]
    print(json.dumps(results), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
