"""A window a module's tests share (`make_module_window` in ``conftest.py``), on screen for
one test at a time.

Building a window and loading its model costs a second or more, filling its charts
several more: tests that only look at a window, or that each first set what they
measure (its size), share one per module and language. The language is the
application's, not the window's (another window may have switched it since), so
each test puts its window's language back first.

A language switch retranslates every page of a filled window (about 2 s on the 2-core
machine, each way): when the next test takes the same shared window in the same
language (`next_test_shares`), the window stays in it between the two tests instead of
going back to English and out again. What each test sees is the same: its window, shown,
in its language.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from kvstudio.charts.i18n import shown_language

NEXT_TEST = pytest.StashKey[pytest.Item | None]()  # set by ``conftest.py`` for every test


def next_test_shares(request: pytest.FixtureRequest, language_fixture: str) -> bool:
    """Whether the test after this one (in run order) takes the fixture `request` serves,
    in the same module, with the same `language_fixture` parameter (its window's language)."""
    here = request.node
    after = here.stash.get(NEXT_TEST, None)
    if after is None or after.module is not here.module:
        return False
    if request.fixturename not in getattr(after, "fixturenames", ()):
        return False
    params = getattr(getattr(here, "callspec", None), "params", {})
    after_params = getattr(getattr(after, "callspec", None), "params", {})
    return (language_fixture in params
            and after_params.get(language_fixture, object()) == params[language_fixture])


def on_screen(window: Any, language: str, keep_language: bool = False) -> Iterator[Any]:
    """`window` on screen in `language` for one test; afterwards hidden (no other test
    sees it) and the application back in English, as `make_window` leaves it, unless
    `keep_language` (the next test shows this window in this language: see
    `next_test_shares`)."""
    if not (window.languages.current == language == shown_language()):
        window.languages.apply(language)
    window.show()
    yield window
    window.hide()
    if not keep_language:
        window.languages.apply("en")
