"""Start-up time: from launching the window's process to the window painted on screen.

Usage (a real X server, e.g. under Xvfb):
    xvfb-run -a -s "-screen 0 1366x768x24" .venv/bin/python benchmarks/startup.py [--runs 3]

Each run starts a fresh Python process that runs `kvstudio.ui.app.startup.main`
(what `python main.py` runs) with its own settings file, and reports two
moments on the system's monotonic clock, measured from just before the process
is launched: the main window's first paint (it is mapped and drawn) and the
model loaded (the worker's `model_loaded`). One run is made first and not
counted (warm: the files are in the page cache). Prints each run and the median.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# Runs in the child: the same main() as `python main.py`, plus a probe that reports the
# first paint of the main window and the loaded model on the monotonic clock, then quits.
CHILD = r"""
import sys, time
from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtWidgets import QApplication, QMainWindow

app = QApplication([sys.argv[0]])
seen = {}

class Probe(QObject):
    def eventFilter(self, obj, event):
        if ("painted" not in seen and event.type() == QEvent.Type.Paint
                and isinstance(obj, QMainWindow)):
            seen["painted"] = time.monotonic()
            print(f"painted {seen['painted']:.6f}", flush=True)
            seen["window"] = obj
        return False

def poll():
    window = seen.get("window")
    if window is not None and window.controller.model is not None:
        print(f"model {time.monotonic():.6f}", flush=True)
        app.quit()

probe = Probe()
app.installEventFilter(probe)
timer = QTimer()
timer.timeout.connect(poll)
timer.start(5)
sys.argv = ["main.py", *sys.argv[1:]]
from kvstudio.ui.app.startup import main
main()
"""


def one_run(settings: Path, language: str) -> tuple[float, float]:
    started = time.monotonic()
    out = subprocess.run([sys.executable, "-c", CHILD, "--settings", str(settings),
                          "--lang", language], cwd=ROOT, capture_output=True, text=True,
                         timeout=300, check=True).stdout
    moments = dict(line.split() for line in out.splitlines() if line[:6] in ("painte", "model "))
    return float(moments["painted"]) - started, float(moments["model"]) - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--lang", default="ko")
    args = parser.parse_args()
    settings = Path(tempfile.mkdtemp(prefix="kvstudio-startup-")) / "settings.ini"
    one_run(settings, args.lang)  # warm-up, not counted
    shown, loaded = [], []
    for i in range(args.runs):
        painted, model = one_run(settings, args.lang)
        shown.append(painted)
        loaded.append(model)
        print(f"run {i + 1}: window painted {painted:.2f} s, model loaded {model:.2f} s")
    print(f"median of {args.runs}: window painted {statistics.median(shown):.2f} s, "
          f"model loaded {statistics.median(loaded):.2f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
