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
    """One child: its process, a folder of its own, and its stdout and stderr in one file."""

    process: subprocess.Popen[str]
    folder: Path
    output: Path

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
              env: dict[str, str] | None = None) -> Child:
        """The child for test `name` (started now if it was not): `argv(folder)` is its
        command line, given the folder it may write in."""
        if name not in self._children:
            folder = Path(tempfile.mkdtemp(prefix=f"kvstudio-{name[:40]}-"))
            output = folder / "output.txt"
            with output.open("w", encoding="utf-8") as out:
                process = subprocess.Popen(list(argv(folder)), cwd=self._cwd, env=env,
                                           stdout=out, stderr=subprocess.STDOUT, text=True)
            self._children[name] = Child(process, folder, output)
        return self._children[name]

    def stop(self) -> None:
        """End every child still running and remove their folders (the session's end)."""
        for child in self._children.values():
            if child.process.poll() is None:
                child.process.kill()
                child.process.wait()
            shutil.rmtree(child.folder, ignore_errors=True)
        self._children.clear()
