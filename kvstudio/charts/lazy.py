"""A module imported on first use, so naming the engine's torch code costs nothing at start-up.

Owns `LazyModule`: the UI names a lab module (`kvstudio.labs.cache.compare`, `.paged`, ...) when
they are imported, but torch loads only when a lab first runs or draws a
result, after the window is on screen. Type checkers see the real module
(import it under `TYPE_CHECKING`).
"""

from __future__ import annotations

import importlib
from typing import Any


class LazyModule:
    """Stands in for `name` until an attribute is read, then imports it (once: sys.modules)."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attribute: str) -> Any:
        return getattr(importlib.import_module(self._name), attribute)
