"""One tab's page put in place of another: `swap_page`.

The window and the Labs tab build a page the first time its tab opens and put it
where the tab's empty page stood. The tab keeps its place and title, the tab on
show stays on show, and no page-change signal goes out (the same tab is open).
"""

from __future__ import annotations

from PySide6.QtCore import QSignalBlocker
from PySide6.QtWidgets import QTabWidget, QWidget


def swap_page(tabs: QTabWidget, old: QWidget, new: QWidget) -> bool:
    """Put `new` where the page `old` is in `tabs`; False when `old` is not one of them."""
    index = tabs.indexOf(old)
    if index < 0:
        return False
    title, current = tabs.tabText(index), tabs.currentIndex()
    with QSignalBlocker(tabs):
        tabs.removeTab(index)
        tabs.insertTab(index, new, title)
        tabs.setCurrentIndex(current)
    return True
