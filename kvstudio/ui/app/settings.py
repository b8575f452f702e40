"""What KV Studio remembers between sessions (QSettings): model, language, sampling, layout, prompt.

Owns `AppSettings`, a typed wrapper over one QSettings object that is passed in
(tests give it a temporary INI file), so nothing here is global.
"""

from __future__ import annotations

import logging

from PySide6.QtCore import QByteArray, QRect, QSettings

from kvstudio.engine.cache.spec import CacheSpec
from kvstudio.engine.records import Mode, SamplingSettings
from kvstudio.ui.run.engine_adapter import CHOICE_KINDS, DEFAULT_PROMPT, ModelChoice, RunSettings

log = logging.getLogger(__name__)


class AppSettings:
    def __init__(self, store: QSettings) -> None:
        self._s = store

    # ---- language and model ---------------------------------------------------------------------
    def language(self) -> str:
        return str(self._s.value("ui/language", "system"))

    def set_language(self, code: str) -> None:
        self._s.setValue("ui/language", code)

    def model_choice(self) -> ModelChoice:
        kind = str(self._s.value("model/kind", "embedded-chat"))
        if kind not in CHOICE_KINDS:
            kind = "embedded-chat"
        return ModelChoice(kind, str(self._s.value("model/path", "")),  # type: ignore[arg-type]
                           str(self._s.value("model/tokenizer", "")))

    def set_model_choice(self, choice: ModelChoice) -> None:
        self._s.setValue("model/kind", choice.kind)
        self._s.setValue("model/path", choice.path)
        self._s.setValue("model/tokenizer", choice.tokenizer_path)

    def prompt(self) -> str:
        return str(self._s.value("run/prompt", DEFAULT_PROMPT))

    def set_prompt(self, text: str) -> None:
        self._s.setValue("run/prompt", text)

    # ---- run settings ---------------------------------------------------------------------------
    def _float(self, key: str, default: float) -> float:
        return float(str(self._s.value(key, default)))

    def _int(self, key: str, default: int) -> int:
        return int(float(str(self._s.value(key, default))))

    def run_settings(self) -> RunSettings:
        """The remembered run settings; what was never saved is the course preset's."""
        course = RunSettings()
        d = SamplingSettings()
        try:
            sampling = SamplingSettings(
                self._float("sampling/temperature", d.temperature),
                self._int("sampling/top_k", d.top_k),
                self._float("sampling/top_p", d.top_p),
                self._float("sampling/repetition_penalty", d.repetition_penalty),
                self._int("sampling/seed", d.seed),
            )
            cache = CacheSpec(str(self._s.value("cache/kind", "dynamic")),  # type: ignore[arg-type]
                              self._int("cache/max_length", 512),
                              self._int("cache/window", course.cache.window))
            mode: Mode = "recompute" if self._s.value("run/mode") == "recompute" else "cached"
            stop = str(self._s.value("run/stop_at_eos", course.stop_at_eos)).lower() == "true"
            return RunSettings(mode, sampling,
                               self._int("run/max_new_tokens", course.max_new_tokens), cache,
                               stop)
        except (TypeError, ValueError) as exc:
            log.warning("ignoring unreadable saved settings: %s", exc)
            return RunSettings()

    def set_run_settings(self, rs: RunSettings) -> None:
        s = self._s
        s.setValue("sampling/temperature", rs.sampling.temperature)
        s.setValue("sampling/top_k", rs.sampling.top_k)
        s.setValue("sampling/top_p", rs.sampling.top_p)
        s.setValue("sampling/repetition_penalty", rs.sampling.repetition_penalty)
        s.setValue("sampling/seed", rs.sampling.seed)
        s.setValue("cache/kind", rs.cache.kind)
        s.setValue("cache/max_length", rs.cache.max_length)
        s.setValue("cache/window", rs.cache.window)
        s.setValue("run/mode", rs.mode)
        s.setValue("run/max_new_tokens", rs.max_new_tokens)
        s.setValue("run/stop_at_eos", rs.stop_at_eos)

    # ---- window layout --------------------------------------------------------------------------
    def geometry(self) -> QByteArray | None:
        value = self._s.value("window/geometry")
        return value if isinstance(value, QByteArray) else None

    def window_state(self) -> QByteArray | None:
        value = self._s.value("window/state")
        return value if isinstance(value, QByteArray) else None

    def layout_screen(self) -> QRect | None:
        """The available area of the screen the saved layout was on (None: not saved)."""
        value = self._s.value("window/screen")
        try:
            x, y, width, height = (int(part) for part in str(value).split(","))
        except ValueError:
            return None
        return QRect(x, y, width, height) if width > 0 and height > 0 else None

    def set_layout(self, geometry: QByteArray, state: QByteArray,
                   screen: QRect | None = None) -> None:
        """Keep the window's geometry and dock state, and the screen area they were on."""
        self._s.setValue("window/geometry", geometry)
        self._s.setValue("window/state", state)
        if screen is not None:
            self._s.setValue("window/screen", f"{screen.x()},{screen.y()},"
                                              f"{screen.width()},{screen.height()}")

    def sync(self) -> None:
        self._s.sync()
