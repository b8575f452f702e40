"""settle_heap: old cycles are collected, then what is alive is frozen out of the cyclic GC;
the window settles the heap once a model is loaded."""

from __future__ import annotations

import gc
import weakref

from kvstudio.ui.run.heap import settle_heap


class _Node:
    def __init__(self) -> None:
        self.me = self  # a reference cycle: only the cyclic collector can free it


def test_settle_heap_collects_cycles_frozen_by_the_previous_load() -> None:
    node = _Node()
    ref = weakref.ref(node)
    gc.freeze()  # as an earlier model load left it
    try:
        del node
        gc.collect()
        assert ref() is not None  # frozen: full collections skip it
        frozen = settle_heap()
        assert ref() is None  # unfrozen and collected first
        # Frozen again; a worker thread left by an earlier test may freeze a few objects of
        # its own in between, so the count is compared with a margin, not exactly.
        assert frozen > 0 and gc.get_freeze_count() >= frozen - 16
    finally:
        gc.unfreeze()


def test_objects_made_after_settling_are_still_collected() -> None:
    settle_heap()
    try:
        node = _Node()
        ref = weakref.ref(node)
        del node
        gc.collect()
        assert ref() is None
    finally:
        gc.unfreeze()


def test_the_loaded_heap_is_frozen_out_of_full_collections(qapp, make_window) -> None:  # type: ignore[no-untyped-def]
    gc.unfreeze()
    assert gc.get_freeze_count() == 0
    make_window()
    assert gc.get_freeze_count() > 0
