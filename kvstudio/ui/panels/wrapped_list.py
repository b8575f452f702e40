"""A list whose items show their whole text: every line wraps to the list's width.

Owns `wrapped_list` and its `WrappingDelegate`. Qt's own delegate measures and
draws an item with `QTextOption.WordWrap`, which lets a run with no space in it
(a cut character written as bytes: ``엇<0xEC><0x9D>``) overflow the line and be cut
at the viewport's edge; and the list lays items out at the width it had before
its scroll bar appeared, so an item could be a line shorter than its text. Here
one text layout (word boundaries first, anywhere inside a longer run) both sizes
and draws an item, at the width the viewport really has, and the vertical scroll
bar is always there so that width does not change with the number of items.
"""

from __future__ import annotations

import math

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QPointF, QSize, Qt
from PySide6.QtGui import QFont, QPainter, QPalette, QTextLayout, QTextOption
from PySide6.QtWidgets import (
    QApplication,
    QListView,
    QListWidget,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QWidget,
)

TEXT_MARGIN = 4  # px left and right of an item's text
_Index = QModelIndex | QPersistentModelIndex


def text_layout(text: str, font: QFont, width: int) -> QTextLayout:
    """`text` laid out in lines at most `width` px wide (its explicit newlines kept)."""
    layout = QTextLayout(text.replace("\n", "\u2028"), font)  # U+2028: QTextLayout's break
    option = QTextOption()
    option.setWrapMode(QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere)
    layout.setTextOption(option)
    layout.beginLayout()
    y = 0.0
    while True:
        line = layout.createLine()
        if not line.isValid():
            break
        line.setLineWidth(max(width, 1))
        line.setPosition(QPointF(0, y))
        y += line.height()
    layout.endLayout()
    return layout


class WrappingDelegate(QStyledItemDelegate):
    """Sizes and draws an item's text with one `text_layout`, at its list's viewport width."""

    def __init__(self, view: QListView) -> None:
        super().__init__(view)
        self._view = view

    def _text_width(self) -> int:
        return self._view.viewport().width() - 2 * TEXT_MARGIN

    def sizeHint(self, option: QStyleOptionViewItem, index: _Index) -> QSize:
        opt = QStyleOptionViewItem(option)
        self.initStyleOption(opt, index)
        height = text_layout(opt.text, opt.font, self._text_width()).boundingRect().height()
        return QSize(self._view.viewport().width(), math.ceil(height) + 2)

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: _Index) -> None:
        opt = QStyleOptionViewItem(option)
        self.initStyleOption(opt, index)
        text = opt.text
        opt.text = ""  # the style draws the background, selection and focus; the text is ours
        widget: QWidget | None = opt.widget
        style = widget.style() if widget is not None else QApplication.style()
        style.drawControl(QStyle.ControlElement.CE_ItemViewItem, opt, painter, widget)
        layout = text_layout(text, opt.font, opt.rect.width() - 2 * TEXT_MARGIN)
        selected = bool(opt.state & QStyle.StateFlag.State_Selected)
        role = QPalette.ColorRole.HighlightedText if selected else QPalette.ColorRole.Text
        painter.save()
        painter.setPen(opt.palette.color(role))
        top = opt.rect.top() + (opt.rect.height() - layout.boundingRect().height()) / 2
        layout.draw(painter, QPointF(opt.rect.left() + TEXT_MARGIN, top))
        painter.restore()


def wrapped_list() -> QListWidget:
    """A list widget whose items wrap their text to its width and re-flow when it resizes."""
    listing = QListWidget()
    listing.setWordWrap(True)
    listing.setResizeMode(QListView.ResizeMode.Adjust)
    listing.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
    listing.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOn)
    listing.setItemDelegate(WrappingDelegate(listing))
    return listing
