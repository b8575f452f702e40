"""Translated display names shared by several widgets (modes, cache kinds).

Owns the words only; uses explicit translation contexts so lupdate finds them.
"""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication

from kvstudio.engine.records import Mode


def mode_name(mode: Mode) -> str:
    if mode == "cached":
        return QCoreApplication.translate("Names", "Cached")
    return QCoreApplication.translate("Names", "Recompute")


def cache_kind_name(kind: str) -> str:
    names = {
        "dynamic": QCoreApplication.translate("Names", "Dynamic"),
        "static": QCoreApplication.translate("Names", "Static"),
        "sliding": QCoreApplication.translate("Names", "Sliding window"),
    }
    return names.get(kind, kind)


def format_bytes(n: float) -> str:
    if n >= 1024 * 1024:
        return f"{n / (1024 * 1024):.2f} MiB"
    if n >= 1024:
        return f"{n / 1024:.1f} KiB"
    return f"{int(n)} B"
