"""Issue 32 ("Bounded on every front") in the window and the notebook: the serving lab
refuses what the command line refuses, with the same sentence, before anything runs."""

from __future__ import annotations

from pathlib import Path

import pytest
from lab_helpers import show_lab

from kvstudio import notebook as kv
from kvstudio.ui.labs import ServingPanel

pytestmark = pytest.mark.usefixtures("qapp")

# 2.8 KB that kept 25.6 million request-step records (3.5 GB) before it died, case 2.
HUGE = "@100000 hi\n" * 256


def test_a_huge_requests_file_is_refused_by_window_and_notebook_alike(  # type: ignore[no-untyped-def]
    qtbot, exporter, tiny_handle, tmp_path: Path
) -> None:
    path = tmp_path / "r.txt"
    path.write_text(HUGE, encoding="utf-8")
    with pytest.raises(ValueError) as caught:
        kv.serving(tiny_handle, requests=path, answer_tokens=1, rounds=1, batch_sizes=[],
                   policy="continuous", show=False)
    message = str(caught.value)
    assert "25,6" in message and "request-step records" in message, message
    assert "--yes" not in message and "\n" not in message

    panel = show_lab(qtbot, ServingPanel, exporter, tiny_handle)
    panel.choose_requests(path)
    panel.batch_sizes.setText("")
    panel.answer_tokens.setValue(1)
    panel.rounds.setValue(1)
    assert not panel.run() and not panel.runner.busy  # one message, nothing runs
    assert message in panel.status.text()
    assert panel.result is None
