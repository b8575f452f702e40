"""Child processes a test module starts while the session is still collecting.

A check that reads a child process (a window script, the example-pack script) waits
seconds for a fresh interpreter to import Qt and torch. A module that defines
``start_in_background(items)`` (and ``stop_in_background()``) is called by the hook in
``tests/conftest.py`` once the session has collected its tests: it starts its children
then, so they run beside the tests before the module on the machine's other core, and
each test only waits for its child's end and reads what it wrote. A test run alone
starts its child itself (`BackgroundChildren.child`).
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Child:
    """One child: its process, a folder of its own, its stdout (`output`, with its stderr
    unless `errors` holds that apart)."""

    process: subprocess.Popen[str]
    folder: Path
    output: Path
    errors: Path | None = None

    def stderr(self) -> str:
        """What it wrote to stderr (kept apart from stdout)."""
        assert self.errors is not None, "this child's stderr is in its output"
        return self.errors.read_text(encoding="utf-8", errors="replace")

    def finish(self, timeout: float) -> tuple[int, str]:
        """Wait for the end (a child still running after `timeout` s is killed: a hang
        guard, not a time limit); its exit status and everything it printed."""
        try:
            code = self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            code = self.process.wait()
        return code, self.output.read_text(encoding="utf-8", errors="replace")


class BackgroundChildren:
    """A module's children by test name, each started once a session."""

    def __init__(self, cwd: Path) -> None:
        self._cwd = cwd
        self._children: dict[str, Child] = {}

    def child(self, name: str, argv: Callable[[Path], Sequence[str]],
              env: dict[str, str] | None = None, stderr_apart: bool = False,
              in_folder: bool = False) -> Child:
        """The child for test `name` (started now if it was not): `argv(folder)` is its
        command line, given the folder it may write in (its working folder with
        `in_folder`); with `stderr_apart` its stderr goes to a file of its own."""
        if name not in self._children:
            folder = Path(tempfile.mkdtemp(prefix=f"kvstudio-{name[:40]}-"))
            output = folder / "output.txt"
            errors = folder / "errors.txt" if stderr_apart else None
            with output.open("w", encoding="utf-8") as out, \
                    (errors or output).open("a", encoding="utf-8") as err:
                process = subprocess.Popen(
                    list(argv(folder)), cwd=folder if in_folder else self._cwd, env=env,
                    stdout=out, stderr=err if errors else subprocess.STDOUT, text=True)
            self._children[name] = Child(process, folder, output, errors)
        return self._children[name]

    def stop(self) -> None:
        """End every child still running and remove their folders (the session's end)."""
        for child in self._children.values():
            if child.process.poll() is None:
                child.process.kill()
                child.process.wait()
            shutil.rmtree(child.folder, ignore_errors=True)
        self._children.clear()
