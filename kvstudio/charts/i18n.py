"""Switches the UI language at run time: installs the Korean .qm, or none for English.

Owns `LanguageSwitcher` and `shown_language()`. Installing or removing a translator makes
Qt send LanguageChange to every widget; each widget's `retranslate()` does the rest, called
by `RetranslateOnLanguageChange`, the mixin every such widget lists. A text that is not in
the .qm (a lab's parameter labels, declared in both languages in `kvstudio.labs`) asks
`shown_language()` which one to pick.
"""

from __future__ import annotations

import logging
from pathlib import Path

from PySide6.QtCore import (
    QCoreApplication,
    QEvent,
    QLibraryInfo,
    QLocale,
    QObject,
    QTranslator,
    Signal,
)

from kvstudio.files.resources import TRANSLATIONS_DIR

log = logging.getLogger(__name__)

_shown = "en"  # what the last `LanguageSwitcher.apply` resolved to


def shown_language() -> str:
    """"ko" while the window (or notebook) shows Korean, else "en"."""
    return _shown


class RetranslateOnLanguageChange:
    """For a widget that sets its texts in `retranslate()`: it runs again on every language
    switch. List it before the Qt class: `class Panel(RetranslateOnLanguageChange, QWidget)`."""

    def retranslate(self) -> None:
        raise NotImplementedError

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate()
        super().changeEvent(event)  # type: ignore[misc]  # the Qt class listed after this one


def resolve_language(code: str, locale: QLocale | None = None) -> str:
    """"system" → the system locale's language if we ship it, else English."""
    if code in ("en", "ko"):
        return code
    name = (locale or QLocale.system()).name()
    return "ko" if name.startswith("ko") else "en"


def locale_names_no_language(locale: QLocale | None = None) -> bool:
    """True on a "C"/POSIX locale (no LANG set), where "system" can only mean English."""
    return (locale or QLocale.system()).language() == QLocale.Language.C


def language_hint() -> str:
    """Shown on a C locale: in both languages, since the reader may not read the English."""
    return ("The system sets no language (C locale), so KV Studio is in English. "
            "For Korean choose Language → 한국어, or start with: python main.py --lang ko\n\n"
            "시스템 언어가 설정되어 있지 않아(C 로캘) 영어로 표시됩니다. 한국어로 보려면 "
            "Language 메뉴에서 한국어를 고르거나 python main.py --lang ko 로 시작하세요.")


class LanguageSwitcher(QObject):
    language_changed = Signal(str)  # the resolved code, "en" or "ko"

    def __init__(self, app: QCoreApplication, folder: Path | None = None) -> None:
        super().__init__(app)
        self._app = app
        self._folder = folder or TRANSLATIONS_DIR
        self._translators: list[QTranslator] = []
        self.current = "en"

    def apply(self, code: str) -> str:
        global _shown
        resolved = resolve_language(code)
        for translator in self._translators:
            self._app.removeTranslator(translator)
        self._translators.clear()
        if resolved != "en":
            self._install(self._folder / f"kvstudio_{resolved}.qm")
            qt_dir = Path(QLibraryInfo.path(QLibraryInfo.LibraryPath.TranslationsPath))
            self._install(qt_dir / f"qtbase_{resolved}.qm", required=False)
        self.current = _shown = resolved
        self.language_changed.emit(resolved)
        return resolved

    def _install(self, path: Path, required: bool = True) -> None:
        translator = QTranslator(self)
        if translator.load(str(path)):
            self._app.installTranslator(translator)
            self._translators.append(translator)
        elif required:
            log.warning("translation %s not found; showing English", path)
