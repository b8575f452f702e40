"""A saved run's logits row is vocabulary-sized, and a run file is parsed once.

A 2,000,000-entry `last_logits` was read and checked entry by entry (9 s on the
window's thread) though no vocabulary KV Studio steps comes near it; a
30,000-step file was parsed twice (0.6 s of JSON each time).
"""

from __future__ import annotations

import json

import pytest

from kvstudio.files import runfile
from kvstudio.files.runfile import loads_run_file
from tests.core.saved_runs import run_file_text

QWEN3_ROWS = 151_936  # the largest embedding KV Studio steps
PAST_ANY_VOCABULARY = (1 << 18) + 1


def test_a_logits_row_longer_than_any_vocabulary_is_refused() -> None:
    text = run_file_text(2, (0.25,) * PAST_ANY_VOCABULARY)
    with pytest.raises(ValueError, match=r"last_logits holds 262,145 logits.*vocabulary"):
        loads_run_file(text, "big.kvrun.json")


def test_a_vocabulary_sized_logits_row_still_loads() -> None:
    loaded = loads_run_file(run_file_text(2, (0.25,) * QWEN3_ROWS))
    first = loaded.runs[0].records[0].last_logits
    assert first is not None and len(first) == QWEN3_ROWS


def test_a_run_file_is_parsed_once(monkeypatch: pytest.MonkeyPatch) -> None:
    text = run_file_text(50)
    calls = []
    real = json.loads

    def counted(*args, **kwargs):  # type: ignore[no-untyped-def]
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(runfile.json, "loads", counted)
    loaded = loads_run_file(text)
    assert len(loaded.runs[0].records) == 50
    assert len(calls) == 1
