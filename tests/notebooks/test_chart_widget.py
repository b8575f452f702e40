"""The live chart widget: frames of the lab's own chart, drawn on the Qt thread only.

ipykernel 7 can deliver the browser's messages (resize, pointer) on a subshell
thread; a frame drawn there raced an export on the main thread. The widget
hands such calls to the event loop of the thread that made it.
"""

from __future__ import annotations

import asyncio
import importlib.util
import threading

import pytest

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("jupyter_rfb") is None,
    reason="the notebook extra is not installed (missing jupyter_rfb): "
           'pip install -e ".[notebook]"',
)


def test_frames_are_the_chart_and_off_thread_calls_go_to_the_qt_loop(  # type: ignore[no-untyped-def]
    tiny_backend, tokenizer,
) -> None:
    from kvstudio import notebook as kv
    from kvstudio.notebook.chart_view import chart_frame, widget_class
    from kvstudio.ui.run.engine_adapter import ModelChoice, wrap_model

    handle = wrap_model(tiny_backend.model, tokenizer, "tiny-widget", ModelChoice("folder"))
    run = kv.cache_kinds(handle, prompt_tokens=8, new_tokens=4, window=4, show=False)
    sent: list[object] = []
    seen: dict[str, object] = {}

    async def scenario() -> None:
        widget = widget_class()(run.chart, 480, 300)
        widget.send_frame = sent.append  # type: ignore[method-assign]  # no browser here
        widget.handle_event({"event_type": "resize", "width": 400, "height": 240,
                             "pixel_ratio": 1})
        widget.get_frame()  # a new size: the legend rows settle in the first render
        seen["frame"] = widget.get_frame()
        elsewhere: dict[str, object] = {}
        worker = threading.Thread(target=lambda: elsewhere.update(frame=widget.get_frame()))
        worker.start()
        worker.join()
        seen["elsewhere"] = elsewhere["frame"]
        await asyncio.sleep(0.05)  # the loop runs the handed-over draw
        seen["bundle"] = widget._repr_mimebundle_()

    asyncio.run(scenario())
    frame = seen["frame"]
    assert frame.shape == (240, 400, 4)  # type: ignore[attr-defined]  # (H, W, RGBA)
    assert (chart_frame(run.chart, 400, 240) == frame).all()  # type: ignore[attr-defined]
    assert (frame[..., :3] < 128).any()  # type: ignore[index]  # ink: axes, curves, labels
    assert seen["elsewhere"] is None  # nothing drawn on the other thread …
    assert len(sent) == 1  # … but on the loop, which sent it
    assert sent[0].shape == (240, 400, 4)  # type: ignore[attr-defined]
    bundle = seen["bundle"]
    data = bundle[0] if isinstance(bundle, tuple) else bundle
    assert "image/png" in data  # for viewers without widgets (GitHub, nbconvert, CI)
