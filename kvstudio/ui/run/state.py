"""The one run state every key and button asks: idle, live (playing), paused, finished, replaying.

Owns `RunState` (a small QObject) and `RunPhase`. The controller updates it
from what the worker and the replay report; the window shows `describe()`;
keys and buttons ask `phase`, `source` and `viewing` instead of reading flags
spread over panels. Scrubbing (looking at an earlier step of the run on
screen) is one more field: `viewing` is the step shown, `None` = the latest.

It does not start or stop anything itself.
"""

from __future__ import annotations

from enum import Enum
from typing import Literal

from PySide6.QtCore import QObject, Signal

from kvstudio.ui.run.store import StopReason

Source = Literal["live", "replay"]


class RunPhase(Enum):
    IDLE = "idle"  # no run on screen yet (or after Reset)
    LIVE = "live"  # the model is generating on its own timer (Play)
    PAUSED = "paused"  # a live run is on screen with steps left; Step or Play continue it
    FINISHED = "finished"  # the live run stopped (end of the answer or the token budget)
    REPLAYING = "replaying"  # a saved run is on screen; no model computes


class RunState(QObject):
    """What the window is showing and what a key press means there."""

    changed = Signal()

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.source: Source = "live"
        self.has_run = False
        self.playing = False
        self.finished = False
        self.steps = 0  # steps of the run on screen (the longest of the drawn runs)
        self.budget = 0  # max new tokens of the current run (N)
        self.current_steps = 0  # steps the current run has done (1 … N; the prefill is 1)
        self.viewing: int | None = None  # step index shown while scrubbing; None = latest
        self.stop: StopReason | None = None

    # ---- derived ---------------------------------------------------------------------------
    @property
    def phase(self) -> RunPhase:
        if self.source == "replay":
            return RunPhase.REPLAYING
        if not self.has_run:
            return RunPhase.IDLE
        if self.playing:
            return RunPhase.LIVE
        if self.finished:
            return RunPhase.FINISHED
        return RunPhase.PAUSED

    @property
    def replaying(self) -> bool:
        return self.source == "replay"

    @property
    def scrubbing(self) -> bool:
        return self.viewing is not None

    # ---- updates (from the controller) ------------------------------------------------------
    def update(self, **changes: object) -> None:
        """Set several fields at once; emits `changed` only when something differs."""
        differs = False
        for name, value in changes.items():
            if not hasattr(self, name):
                raise AttributeError(f"RunState has no field {name!r}")
            if getattr(self, name) != value:
                setattr(self, name, value)
                differs = True
        if self.viewing is not None and (self.steps == 0 or self.viewing >= self.steps - 1):
            self.viewing = None  # looking at the last step is following the run
            differs = True
        if differs:
            self.changed.emit()

    def shown_step_count(self) -> int:
        """The step counter every view shows, 1 … N: steps of the current run on screen.

        Following the run it is the steps done; looking back at step index v
        (0 = the prefill, as on the x axes) it is v + 1, at most the run's steps.
        The status bar counts the records of the same view, so the two agree.
        """
        if self.viewing is None:
            return self.current_steps
        return min(self.viewing + 1, self.current_steps)

    # ---- words for the window --------------------------------------------------------------
    def phase_name(self) -> str:
        return {
            RunPhase.IDLE: self.tr("Ready"),
            RunPhase.LIVE: self.tr("Live: playing"),
            RunPhase.PAUSED: self.tr("Live: paused"),
            RunPhase.FINISHED: self.tr("Finished"),
            RunPhase.REPLAYING: self.tr("Replay"),
        }[self.phase]

    def stop_text(self) -> str:
        """"answer finished at step 10 of 64: <|im_end|>" or "token budget reached: 64 of 64
        steps". Steps count 1 … N here, as every counter does (the x axes' index + 1)."""
        if self.stop is None:
            return ""
        if self.stop.at_eos:
            return self.tr("answer finished at step {0} of {1}: {2}").format(
                self.stop.step + 1, self.budget, self.stop.token)
        return self.tr("token budget reached: {0} of {1} steps").format(
            self.stop.step + 1, self.budget)

    def describe(self) -> str:
        """One line for the state label: the phase, the step looked at, how the run ended."""
        parts = [self.phase_name()]
        if self.has_run:
            if self.viewing is not None:
                parts.append(self.tr("looking back at step {0} of {1}").format(
                    self.viewing + 1, self.steps))
            elif self.replaying and not self.finished:
                parts.append(self.tr("{0} of {1} steps").format(self.steps, self.budget))
            if self.replaying and self.playing:
                parts.append(self.tr("playing"))
        stop = self.stop_text()
        if stop and self.finished and self.viewing is None:
            parts.append(stop)
        return " · ".join(parts)
