"""Which model each lab runs on: the course preset's, when the window runs an embedded one.

Owns (beside `kvstudio.labs.course`'s `CourseRole`, what kind of lab asks, and
`lab_model_name`, the embedded model the course runs that lab on) `embedded_name`
(whether the window's model is ko-base or ko-chat), `LabModels` (loads the other
embedded model once, off the GUI thread, and keeps it) and `model_note` (the line
a lab shows: which model it runs on and why).

The rule: when the window runs an embedded model, the cache labs run on
ko-base and the sampling labs on ko-chat, as the CLI does; when the user
loaded their own model (a folder, a .pth, a transformers folder), every lab
runs on it. The chat tab and *Sample ×N* stay on the window's model.
"""

from __future__ import annotations

import logging
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass

from PySide6.QtCore import QCoreApplication

from kvstudio.files.loaded import LoadedModel
from kvstudio.labs.course import CourseRole, LabModel, lab_model_name
from kvstudio.ui.run.engine_adapter import ModelChoice, ModelLoader, load_model

log = logging.getLogger(__name__)

EMBEDDED: dict[LabModel, ModelChoice] = {
    "ko-base": ModelChoice("embedded-base"),
    "ko-chat": ModelChoice("embedded-chat"),
}


def embedded_name(model: LoadedModel) -> LabModel | None:
    """"ko-base" or "ko-chat" when `model` is that shipped model; None for the user's own."""
    if model.origin != "embedded" or model.is_random:
        return None
    for name in EMBEDDED:
        if model.name == name:
            return name
    return None


@dataclass(frozen=True)
class LabModelPlan:
    """Which model a lab runs on: the course's (`course` True) or the window's."""

    name: str
    role: CourseRole | None
    course: bool


def plan(window: LoadedModel, role: CourseRole | None) -> LabModelPlan:
    """The model a lab of `role` runs on while the window runs `window`."""
    if role is None or embedded_name(window) is None:
        return LabModelPlan(window.name, role, course=False)
    return LabModelPlan(lab_model_name(role), role, course=True)


class LabModels:
    """The embedded models the labs run on besides the window's: each loaded once, then kept.

    `prefetch` starts loading on a worker thread as soon as the window's model is
    known, so a lab's Run finds the model ready (the tiny embedded model loads in
    well under a second); `resolve` waits for it only if it is still loading.
    """

    def __init__(self, loader: ModelLoader = load_model) -> None:
        self._loader = loader
        self._lock = threading.Lock()
        self._loading: dict[LabModel, Future[LoadedModel]] = {}
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="kvstudio-lab-model")

    def prefetch(self, window: LoadedModel | None, role: CourseRole | None) -> None:
        """Start loading the model a lab of `role` will need, if it is not the window's."""
        if window is None:
            return
        if role is not None and plan(window, role).course:
            if lab_model_name(role) != window.name:
                self._future(lab_model_name(role))

    def resolve(self, window: LoadedModel, role: CourseRole | None) -> LoadedModel:
        """The model a lab of `role` runs on; ValueError (a message) if it cannot load."""
        if role is None or not plan(window, role).course:
            return window
        name = lab_model_name(role)
        if name == window.name:
            return window
        try:
            return self._future(name).result()
        except ValueError:
            raise
        except Exception as exc:  # shown to the user as a message, not a traceback
            log.exception("Loading %s for the labs failed", name)
            raise ValueError(f"{name} could not be loaded for this lab: {exc}") from exc

    def loading(self) -> list[Future[LoadedModel]]:
        """The loads still under way: start-up work the live run's steps wait for (a model
        loading on this thread slowed the window's first timed step; `StepGate.hold`)."""
        with self._lock:
            return [future for future in self._loading.values() if not future.done()]

    def _future(self, name: LabModel) -> Future[LoadedModel]:
        with self._lock:
            future = self._loading.get(name)
            if future is None or (future.done() and future.exception() is not None):
                future = self._pool.submit(self._loader, EMBEDDED[name])
                self._loading[name] = future
            return future


LAB_MODELS = LabModels()  # one per process: every lab panel shares the loaded models


def model_note(wanted: LabModelPlan) -> str:
    """The line a lab shows under its buttons: the model it runs on and why (translated)."""
    translate = QCoreApplication.translate
    if wanted.role is None:
        text = translate("LabModels", "Runs on {0}, the window's model.")
    elif not wanted.course:
        text = translate("LabModels", "Runs on {0}, the model you loaded "
                         "(with an embedded model the course runs this lab on {1}).")
    elif wanted.role == "sampling":
        text = translate("LabModels", "Runs on {0}, the course's model for the sampling labs.")
    elif wanted.role == "paged":
        text = translate("LabModels", "Runs on {0}, the course's model for the paged lab "
                         "(its answers end at different lengths).")
    else:
        text = translate("LabModels", "Runs on {0}, the course's model for the cache labs.")
    return text.format(wanted.name, lab_model_name(wanted.role) if wanted.role else "")
