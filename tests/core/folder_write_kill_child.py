"""Run as a script by test_folder_write_kill: write a folder, killed by SIGKILL at the k-th step.

Usage: ``python folder_write_kill_child.py PLAN.json``. PLAN holds ``swap``
("exchange": the atomic exchange this system has; "renames": the two-rename
fallback), ``files`` (name → text, the new files) and ``runs``, a list of
``{"target": folder, "kill_at": k}``. For each run a process is forked that
counts the file-system operations `folder_write.write_files` makes (through an
audit hook: every open, mkdir, chmod, link, rename, remove, listing …, and the
middle of each file being written) and sends itself SIGKILL just before the
k-th one; ``kill_at`` 0 never kills and prints ``operations N``. The parent
prints ``run I: killed`` or ``run I: exit S`` for each, so the test can check
every folder afterwards.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import traceback
from pathlib import Path

from kvstudio.files import folder_write

COUNTED = frozenset({
    "open", "os.mkdir", "os.chmod", "os.link", "os.symlink", "os.rename", "os.remove",
    "os.rmdir", "os.listdir", "os.scandir", "os.truncate", "os.utime", "half_written",
})


def write_in_halves(path: Path, data: bytes) -> None:
    """`folder_write._write_file` with a countable moment between the two halves."""
    with open(path, "wb") as fh:
        fh.write(data[: len(data) // 2])
        fh.flush()
        sys.audit("half_written", str(path))
        fh.write(data[len(data) // 2:])
        fh.flush()
        os.fsync(fh.fileno())


def run_one(target: Path, files: dict[str, bytes], kill_at: int) -> None:
    count = 0

    def hook(event: str, args: tuple[object, ...]) -> None:
        nonlocal count
        if event in COUNTED:
            count += 1
            if count == kill_at:
                os.kill(os.getpid(), signal.SIGKILL)

    sys.addaudithook(hook)
    folder_write.write_files(target, files)
    if kill_at == 0:
        print(f"operations {count}", flush=True)


def main() -> None:
    plan = json.loads(Path(sys.argv[1]).read_text("utf-8"))
    if plan["swap"] == "renames":
        folder_write._EXCHANGE = None  # as on Windows: no atomic exchange
    files = {name: text.encode() for name, text in plan["files"].items()}
    folder_write._write_file = write_in_halves  # type: ignore[assignment]
    for index, run in enumerate(plan["runs"]):
        sys.stdout.flush()
        pid = os.fork()
        if pid == 0:
            status = 0
            try:
                run_one(Path(run["target"]), files, int(run["kill_at"]))
            except BaseException:
                traceback.print_exc()
                status = 1
            finally:
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(status)
        _, status = os.waitpid(pid, 0)
        if os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL:
            print(f"run {index}: killed", flush=True)
        else:
            print(f"run {index}: exit {os.waitstatus_to_exitcode(status)}", flush=True)


if __name__ == "__main__":
    main()
