"""The window process's garbage-collector policy: the loaded heap stays out of full collections.

Owns `settle_heap()`, which the run controller calls once a model is loaded.
Nothing here runs at import time.
"""

from __future__ import annotations

import gc


def settle_heap() -> int:
    """Collect once, then freeze every live object out of the cyclic GC; return how many.

    A full (generation 2) collection walks every object the GC tracks. With
    torch, the model, the Qt wrappers and pyqtgraph loaded that took 130-150 ms,
    in whichever thread happened to allocate, holding the GIL: about once per
    half minute of playing the window froze that long. After freezing, full
    collections walk only what was made since (the runs' records and plot
    data) and take a few milliseconds. Frozen objects are still freed by
    reference counting; cycles among them wait for the next model load, which
    unfreezes, collects and freezes again.
    """
    gc.unfreeze()
    gc.collect()
    gc.freeze()
    return gc.get_freeze_count()
