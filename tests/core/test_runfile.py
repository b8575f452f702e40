"""Saved runs: round trip, replay without a model, and clear errors for bad or partial files."""

from __future__ import annotations

import json
import os
from dataclasses import replace
from pathlib import Path

import pytest

from kvstudio.core.backend import MiniMindBackend
from kvstudio.core.kv_cache import CacheSpec
from kvstudio.core.records import SamplingSettings
from kvstudio.core.runfile import (
    RUN_FORMAT_VERSION,
    ModelFacts,
    RunReplay,
    SavedRun,
    SavedSamples,
    dumps_runs,
    load_run_file,
    load_runs,
    loads_run_file,
    loads_runs,
    replay,
    save_runs,
)
from kvstudio.core.stepper import Stepper
from kvstudio.core.tokenizer import TextTokenizer


def _run(backend: MiniMindBackend, tokenizer: TextTokenizer, mode: str = "cached") -> SavedRun:
    prompt = "KV 캐시는 무엇인가요?"
    ids = tokenizer.encode(prompt)
    settings = SamplingSettings(temperature=0.9, top_k=20, top_p=0.9, seed=7)
    stepper = Stepper(
        backend, tokenizer, ids, mode=mode, sampling=settings, max_new_tokens=6, top_n=3
    )  # type: ignore[arg-type]
    records = tuple(stepper)
    return SavedRun(
        model_name=backend.name,
        prompt=prompt,
        prompt_ids=tuple(ids),
        mode=stepper.mode,
        sampling=settings,
        max_new_tokens=6,
        cache=CacheSpec(),
        model=ModelFacts(
            backend.num_layers, backend.num_kv_heads, backend.head_dim, backend.dtype_bytes
        ),
        records=records,
        prompt_pieces=tuple(tokenizer.token_pieces(ids)),
    )


@pytest.fixture()
def saved(tiny_backend: MiniMindBackend, tokenizer: TextTokenizer) -> list[SavedRun]:
    return [_run(tiny_backend, tokenizer, "cached"), _run(tiny_backend, tokenizer, "recompute")]


def test_round_trip_keeps_every_field(saved: list[SavedRun], tmp_path: Path) -> None:
    path = save_runs(tmp_path / "lecture.kvrun.json", saved)
    loaded = load_runs(path)
    assert loaded == saved  # frozen dataclasses compare field by field, records included
    assert loaded[0].text == saved[0].text
    assert [p.name for p in tmp_path.iterdir()] == ["lecture.kvrun.json"]  # no temp file left
    mask = os.umask(0)
    os.umask(mask)
    assert path.stat().st_mode & 0o777 == 0o666 & ~mask  # not mkstemp's private 0600


def test_replay_yields_the_same_records_without_a_model(
    saved: list[SavedRun], tmp_path: Path
) -> None:
    path = save_runs(tmp_path / "r.kvrun.json", saved[0])
    run = load_runs(path)[0]
    rp = RunReplay(run)
    first = rp.step()
    assert first == saved[0].records[0] and rp.step_index == 1 and not rp.finished
    rest = list(rp)
    assert [first, *rest] == list(saved[0].records)
    assert rp.finished and rp.records == list(saved[0].records)
    with pytest.raises(ValueError, match="reset"):
        rp.step()
    rp.reset()
    assert list(replay(run)) == list(rp)


def test_logits_are_dropped_unless_asked(
    tiny_backend: MiniMindBackend, tokenizer: TextTokenizer, tmp_path: Path
) -> None:
    ids = tokenizer.encode("hello")
    records = tuple(Stepper(tiny_backend, tokenizer, ids, max_new_tokens=2, keep_logits=True))
    run = replace(_run(tiny_backend, tokenizer), records=records)
    light = load_runs(save_runs(tmp_path / "a.json", run))[0]
    assert all(r.last_logits is None for r in light.records)
    full = load_runs(save_runs(tmp_path / "b.json", run, keep_logits=True))[0]
    assert full.records == records


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda text: text[: len(text) // 2], "cut short"),
        (lambda text: "", "empty"),
        (lambda text: "[1, 2]", "not a KV Studio run file"),
        (lambda text: text.replace('"version": 1', '"version": 99'), "newer KV Studio"),
        (lambda text: text.replace('"records"', '"recordz"'), "lacks records"),
        (lambda text: text.replace('"tokens_fed"', '"tokens_eaten"', 1), "step 0"),
        (lambda text: text.replace('"mode": "cached"', '"mode": "turbo"', 1), "unknown mode"),
        (lambda text: text.replace('"temperature": 0.9', '"temperature": -1'), "bad settings"),
    ],
)
def test_bad_files_give_clear_errors(saved: list[SavedRun], mutate, message: str) -> None:  # type: ignore[no-untyped-def]
    from kvstudio.core.runfile import dumps_runs

    text = dumps_runs(saved)
    assert f'"version": {RUN_FORMAT_VERSION}' in text
    with pytest.raises(ValueError, match=message):
        loads_runs(mutate(text))


def test_a_file_cut_anywhere_says_it_is_cut_short(saved: list[SavedRun]) -> None:
    """Inside a string, after a comma, between brackets: always the same clear message."""
    from kvstudio.core.runfile import dumps_runs

    text = dumps_runs(saved)
    for end in range(40, len(text) - 1, max(1, len(text) // 97)):
        with pytest.raises(ValueError, match="cut short"):
            loads_runs(text[:end])


def test_old_files_with_logits_max_still_load(saved: list[SavedRun]) -> None:
    """Earlier versions wrote a per-row `logits_max`; it is ignored now."""
    from kvstudio.core.runfile import dumps_runs

    doc = json.loads(dumps_runs(saved))
    for record in doc["runs"][0]["records"]:
        record["logits_max"] = [1.5]
    assert loads_runs(json.dumps(doc))[0].records == saved[0].records


def test_steps_out_of_order_are_rejected(saved: list[SavedRun]) -> None:
    from kvstudio.core.runfile import dumps_runs

    doc = json.loads(dumps_runs(saved))
    doc["runs"][0]["records"].reverse()
    with pytest.raises(ValueError, match="steps must run 0, 1, 2"):
        loads_runs(json.dumps(doc))


def test_missing_and_binary_files(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="does not exist"):
        load_runs(tmp_path / "nope.kvrun.json")
    junk = tmp_path / "junk.kvrun.json"
    junk.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(ValueError, match="not a KV Studio run file"):
        load_runs(junk)


def test_failed_save_leaves_nothing(
    saved: list[SavedRun], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import errno

    def full_disk(fd: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", full_disk)
    with pytest.raises(ValueError, match="No space left"):
        save_runs(tmp_path / "x.kvrun.json", saved)
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(ValueError, match="does not exist"):
        save_runs(tmp_path / "missing" / "x.kvrun.json", saved)
    with pytest.raises(ValueError, match="no run to save"):
        save_runs(tmp_path / "y.kvrun.json", [])


SAMPLES = SavedSamples(
    prompt="서울은 어떤 도시인가요?",
    temperatures=(0.3, 1.5),
    samples_per_temperature=5,
    answer_tokens=4,
    counts=((("서울은", 4), ("수도", 1)), (("a", 2), ("b", 1), ("c", 1), ("d", 1))),
    sampling=SamplingSettings(temperature=0.85, top_k=50, top_p=0.9, seed=42),
    use_chat_template=True,
)


def test_samples_are_saved_and_read_back(saved: list[SavedRun], tmp_path: Path) -> None:
    path = save_runs(tmp_path / "run.kvrun.json", saved, samples=[SAMPLES])
    loaded = load_run_file(path)
    assert loaded.samples == (SAMPLES,)
    assert [r.records for r in loaded.runs] == [r.records for r in saved]
    assert load_run_file(save_runs(tmp_path / "none.kvrun.json", saved)).samples == ()
    assert len(load_runs(path)) == 2  # readers of runs only are not disturbed


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda s: s.__setitem__("counts", s["counts"][:1]), "one list per temperature"),
        (lambda s: s["counts"][0].__setitem__(0, ["서울은", 3]), "add up to 4, not the 5"),
        (lambda s: s["counts"][0].__setitem__(1, ["서울은", 1]), "counted twice"),
        (lambda s: s["counts"][1].__setitem__(0, ["a", True]), "whole number"),
        (lambda s: s["counts"][1].__setitem__(0, "a"), "[answer, count] pair"),
        (lambda s: s["counts"][1].__setitem__(0, [7, 2]), "must be text"),
        (lambda s: s.__setitem__("temperatures", [0.3, -1]), "not a number ≥ 0"),
        (lambda s: s.__setitem__("temperatures", []), "1 to 64"),
        (lambda s: s.__setitem__("samples_per_temperature", 0), "samples_per_temperature"),
        (lambda s: s.__setitem__("answer_tokens", "4"), "answer_tokens"),
        (lambda s: s.__delitem__("prompt"), "lacks prompt"),
        (lambda s: s.__setitem__("sampling", {"top_q": 1}), "bad sampling settings"),
        (lambda s: s.__setitem__("use_chat_template", "yes"), "true or false"),
    ],
)
def test_bad_samples_give_clear_errors(saved: list[SavedRun], mutate, message: str) -> None:  # type: ignore[no-untyped-def]
    document = json.loads(dumps_runs(saved, samples=[SAMPLES]))
    mutate(document["samples"][0])
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("]", r"\]")) as err:
        loads_run_file(json.dumps(document), "lecture.kvrun.json")
    assert "lecture.kvrun.json, samples 1" in str(err.value)
    document["samples"] = {"not": "a list"}
    with pytest.raises(ValueError, match="samples must be a list"):
        loads_run_file(json.dumps(document))
