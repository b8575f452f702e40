"""Execute every course notebook headless on one kernel: ``python execute_all.py FOLDER``.

`test_notebooks` runs this as a child process, started as soon as the session has
collected its tests (``conftest.py``), so the kernel works on the machine's other
core while the tests before the notebooks run; the notebook tests then read what it
wrote. In FOLDER: ``work/`` (the kernel's working folder, where the notebooks write
their exports) and ``executed/<name>.ipynb`` (each notebook with its outputs and
``metadata.kvstudio_seconds``), written as each one finishes.

The notebooks share one kernel (imports and models load once) but each starts from
an empty namespace (``%reset -f``), so none can lean on another's variables. A cell
that fails ends the run with nbclient's error (exit status 1, the traceback on stderr).

One setting differs from a student's kernel (`HEADLESS_SETUP`): a lab's live chart
sends the browser a new frame every `LIVE_FRAME_INTERVAL_S` instead of every 0.3 s.
Here no browser receives them; each frame is a full render of the chart (about 0.1 s
of CPU, more for a busy one), and at 0.3 s they were about a sixth of the kernel's
work. Every lab still sends its first live frame (the first refresh is never held
back) and its last, and the outputs the tests read (text, the finished charts' PNGs,
the exports) are the same.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
LIVE_FRAME_INTERVAL_S = 3.0  # a student's kernel: chart_view.REFRESH_INTERVAL_S (0.3 s)
HEADLESS_SETUP = f"""import kvstudio.notebook.chart_view as chart_view
assert hasattr(chart_view, "REFRESH_INTERVAL_S"), "tests/notebooks/execute_all.py sets it"
chart_view.REFRESH_INTERVAL_S = {LIVE_FRAME_INTERVAL_S}
del chart_view"""


def _kernel_manager(folder: Path) -> Any:
    """A kernel of this venv's Python (not whatever "python3" a system Jupyter lists)."""
    from jupyter_client.kernelspec import KernelSpecManager
    from jupyter_client.manager import KernelManager

    spec = folder / "kernels" / "kvstudio-test"
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "KV Studio tests", "language": "python"}))
    specs = KernelSpecManager(kernel_dirs=[str(folder / "kernels")], ensure_native_kernel=False)
    return KernelManager(kernel_name="kvstudio-test", kernel_spec_manager=specs)


def execute_all(folder: Path) -> None:
    import nbformat
    from nbclient import NotebookClient

    work = folder / "work"
    work.mkdir()
    executed = folder / "executed"
    executed.mkdir()
    km = _kernel_manager(folder)
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "PYDEVD_DISABLE_FILE_VALIDATION": "1"}
    km.start_kernel(cwd=str(work), env=env)
    try:
        setup = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(HEADLESS_SETUP)])
        NotebookClient(setup, km=km, timeout=300, kernel_name="kvstudio-test").execute()
        for path in NOTEBOOKS:
            nb = nbformat.read(path, as_version=4)
            nb.cells.insert(0, nbformat.v4.new_code_cell("%reset -f"))  # a fresh namespace
            started = time.perf_counter()
            NotebookClient(nb, km=km, timeout=300, kernel_name="kvstudio-test").execute()
            nb.cells.pop(0)
            nb.metadata["kvstudio_seconds"] = time.perf_counter() - started
            nbformat.write(nb, executed / path.name)
    finally:
        km.shutdown_kernel(now=True)


@dataclass(frozen=True)
class NotebookRun:
    """`execute_all` running in a child process; its output goes to `log`."""

    folder: Path
    process: subprocess.Popen[str]
    log: Path


def start(folder: Path) -> NotebookRun:
    """Start executing the notebooks into `folder` (an empty one) in a child process."""
    log = folder / "execute_all.log"
    with log.open("w", encoding="utf-8") as out:
        process = subprocess.Popen([sys.executable, str(Path(__file__)), str(folder)],
                                   cwd=ROOT, stdout=out, stderr=subprocess.STDOUT, text=True)
    return NotebookRun(folder, process, log)


if __name__ == "__main__":
    execute_all(Path(sys.argv[1]))
