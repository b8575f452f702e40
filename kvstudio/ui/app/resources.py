"""Where the shipped files live (fonts, translations, models), found from the package.

Owns path lookup only; nothing here opens a file.
"""

from __future__ import annotations

from pathlib import Path


def resources_dir() -> Path:
    """The repository's `resources/` folder (kvstudio/ui/ → ../../resources)."""
    return Path(__file__).resolve().parents[3] / "resources"


def font_path() -> Path:
    return resources_dir() / "fonts" / "NanumGothic.ttf"


def translations_dir() -> Path:
    return resources_dir() / "i18n"
