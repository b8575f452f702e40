"""How a measured float is written in a table: the window's, a slide's and the command line's.

Owns `table_float`, the one fixed-point format every front's table uses, so a number
reads the same in the window's results table and in a ``kvstudio`` subcommand's printout.
It never imports Qt and never prints.
"""

from __future__ import annotations

import math


def table_float(value: float) -> str:
    """A float as a table shows it: ``1,660``, ``7.09``, ``0.00506``; never ``1.66e+03``.

    0 reads ``0``; inf and nan read as Python writes them; from 1000 up, whole numbers
    with thousands separators; from 0.01, two decimals; below, three significant digits.
    """
    if value == 0 or not math.isfinite(value):
        return "0" if value == 0 else str(value)
    if abs(value) >= 1000:
        return f"{value:,.0f}"
    if abs(value) >= 0.01:
        return f"{value:.2f}"
    digits = 2 - math.floor(math.log10(abs(value)))  # three significant digits
    return f"{value:.{digits}f}"
