"""A window a module's tests share (`make_module_window` in ``conftest.py``), on screen for
one test at a time.

Building a window and loading its model costs a second or more, filling its charts
several more: tests that only look at a window, or that each first set what they
measure (its size), share one per module and language. The language is the
application's, not the window's (another window may have switched it since), so
each test puts its window's language back first.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any


def on_screen(window: Any, language: str) -> Iterator[Any]:
    """`window` on screen in `language` for one test; afterwards hidden (no other test
    sees it) and the application back in English, as `make_window` leaves it."""
    window.languages.apply(language)
    window.show()
    yield window
    window.hide()
    window.languages.apply("en")
