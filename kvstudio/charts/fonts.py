"""Registers the bundled NanumGothic so Hangul renders without system Korean fonts.

Owns font registration and the check that a font really has a glyph (not a
fallback): `QRawFont.supportsCharacter`, as STACK-NOTES recommends.
"""

from __future__ import annotations

import logging
from pathlib import Path

from PySide6.QtGui import QFont, QFontDatabase, QRawFont

from kvstudio.files.resources import FONT_PATH

log = logging.getLogger(__name__)


def register_bundled_font(path: Path | None = None) -> str | None:
    """Add NanumGothic to the application's fonts; return its family (None if missing)."""
    p = path or FONT_PATH
    font_id = QFontDatabase.addApplicationFont(str(p))
    if font_id < 0:
        log.warning("Could not load the bundled font %s; Hangul may show as boxes.", p)
        return None
    families = QFontDatabase.applicationFontFamilies(font_id)
    return families[0] if families else None


def app_font(family: str | None, point_size: int = 10) -> QFont:
    font = QFont(family) if family else QFont()
    font.setPointSize(point_size)
    return font


def supports_hangul(font: QFont, char: str = "토") -> bool:
    """True when the font itself (not a fallback) has a glyph for `char`."""
    return bool(QRawFont.fromFont(font).supportsCharacter(ord(char)))
