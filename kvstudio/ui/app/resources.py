"""The window's view of the shipped files (font, translations): `kvstudio.files.resources`.

Owns path lookup only; nothing here opens a file.
"""

from __future__ import annotations

from pathlib import Path

from kvstudio.files.resources import FONT_PATH, TRANSLATIONS_DIR, resources_dir

__all__ = ["font_path", "resources_dir", "translations_dir"]


def font_path() -> Path:
    return FONT_PATH


def translations_dir() -> Path:
    return TRANSLATIONS_DIR
