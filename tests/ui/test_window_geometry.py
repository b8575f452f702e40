"""The window reopens fitted to the screen it opens on: a layout saved on another screen
(a 1280×720 laptop, reopened on a larger screen) is fitted again; one saved on this very
screen comes back as it was."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QRect, QSettings

from kvstudio.ui.app.settings import AppSettings
from kvstudio.ui.main_window import initial_geometry

pytestmark = pytest.mark.usefixtures("qapp")


def _close(window) -> None:  # type: ignore[no-untyped-def]
    window.close()  # saves the layout and the screen it was on


def test_a_layout_saved_on_another_screen_is_fitted_again(make_window, settings_path: Path) -> None:  # type: ignore[no-untyped-def]
    window = make_window()
    available = window.screen().availableGeometry()
    small = window.minimumSizeHint()
    window.resize(small)
    _close(window)
    saved = AppSettings(QSettings(str(settings_path), QSettings.Format.IniFormat))
    assert saved.layout_screen() == available  # where the layout was saved

    # The same screen: the saved size comes back.
    again = make_window()
    assert again.size() == small
    _close(again)

    # Saved on a 1280×720 laptop, opened here: fitted to this screen instead.
    raw = QSettings(str(settings_path), QSettings.Format.IniFormat)
    raw.setValue("window/screen", "0,0,1280,680")
    raw.sync()
    moved = make_window()
    expected = initial_geometry(moved.screen().availableGeometry(), moved.minimumSizeHint())
    assert moved.size() == expected.size()


def test_a_larger_screen_opens_most_of_it() -> None:
    minimum = QRect(0, 0, 900, 600).size()
    rect = initial_geometry(QRect(0, 0, 1920, 1040), minimum)
    assert rect.width() >= 1700 and rect.height() >= 900  # not 1500×920 in the middle
    assert QRect(0, 0, 1920, 1040).contains(rect)
