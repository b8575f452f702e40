"""Saved runs: round trip, replay without a model, and clear errors for bad or partial files."""

from __future__ import annotations

import json
import os
from dataclasses import replace
from pathlib import Path

import pytest

from kvstudio.engine.backends.minimind import MiniMindBackend
from kvstudio.engine.cache.kv_cache import CacheSpec
from kvstudio.engine.generate import Stepper
from kvstudio.engine.records import SamplingSettings
from kvstudio.engine.tokenizer import TextTokenizer
from kvstudio.files.runfile import (
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
    save_runs,
)


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
    assert list(RunReplay(run)) == list(rp)


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
    from kvstudio.files.runfile import dumps_runs

    text = dumps_runs(saved)
    assert f'"version": {RUN_FORMAT_VERSION}' in text
    with pytest.raises(ValueError, match=message):
        loads_runs(mutate(text))


def test_a_file_cut_anywhere_says_it_is_cut_short(saved: list[SavedRun]) -> None:
    """Inside a string, after a comma, between brackets: always the same clear message."""
    from kvstudio.files.runfile import dumps_runs

    text = dumps_runs(saved)
    for end in range(40, len(text) - 1, max(1, len(text) // 97)):
        with pytest.raises(ValueError, match="cut short"):
            loads_runs(text[:end])


def test_old_files_with_logits_max_still_load(saved: list[SavedRun]) -> None:
    """Earlier versions wrote a per-row `logits_max`; it is ignored now."""
    from kvstudio.files.runfile import dumps_runs

    doc = json.loads(dumps_runs(saved))
    for record in doc["runs"][0]["records"]:
        record["logits_max"] = [1.5]
    assert loads_runs(json.dumps(doc))[0].records == saved[0].records


def test_steps_out_of_order_are_rejected(saved: list[SavedRun]) -> None:
    from kvstudio.files.runfile import dumps_runs

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


# ---- issue 14.2: every damaged value is refused by the loader ------------------------------
def _set(path: str, value: object):  # type: ignore[no-untyped-def]
    """A mutation of the parsed document: the dotted `path` (ints index lists) becomes `value`."""

    def mutate(doc: dict) -> None:  # type: ignore[type-arg]
        keys = [int(k) if k.isdigit() else k for k in path.split(".")]
        target = doc
        for key in keys[:-1]:
            target = target[key]
        target[keys[-1]] = value

    return mutate


DEEP = 100_000  # levels of nesting: json's C scanner and str() both recurse


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (_set("runs.0.max_new_tokens", 10**18), "max_new_tokens"),
        (_set("runs.0.max_new_tokens", -3), "max_new_tokens"),
        (_set("runs.0.max_new_tokens", 2), "holds 6 steps"),
        (_set("runs.0.max_new_tokens", "64"), "whole number"),
        (_set("runs.0.records.1.elapsed_s", 1e308), "elapsed_s"),
        (_set("runs.0.records.1.elapsed_s", float("inf")), "elapsed_s"),
        (_set("runs.0.records.1.elapsed_s", float("nan")), "elapsed_s"),
        (_set("runs.0.records.1.cache_allocated_bytes", 10**400), "cache_allocated_bytes"),
        (_set("runs.0.records.1.cache_used_bytes", float("nan")), "cache_used_bytes"),
        (_set("runs.0.records.1.cache_layer_bytes.0.0", "lots"), "cache_layer_bytes"),
        (_set("runs.0.records.1.tokens_fed", "12"), "tokens_fed"),
        (_set("runs.0.records.1.tokens_fed", 10**9), "tokens_fed"),
        (_set("runs.0.records.1.attention_mask_shape", [1]), "attention_mask_shape"),
        (_set("runs.0.records.1.token_ids", []), "token_ids"),
        (_set("runs.0.records.1.token_texts", []), "token_texts"),
        (_set("runs.0.records.1.chosen_probability", [7.5]), "chosen_probability"),
        (_set("runs.0.records.1.top_candidates", [[{"token_id": 1}]]), "lacks text"),
        (_set("runs.0.records.1.finished", ["no"]), "finished"),
        (_set("runs.0.records.1.step", True), "step"),
        (_set("runs.0.prompt_ids", []), "prompt_ids"),
        (_set("runs.0.prompt_ids", [1, -5]), "prompt_ids"),
        (_set("runs.0.prompt_pieces", 5), "prompt_pieces"),
        (_set("runs.0.note", [[]]), "note"),
        (_set("runs.0.model_name", None), "model_name"),
        (_set("runs.0.sampling.temperature", "hot"), "temperature"),
        (_set("runs.0.sampling.top_p", float("nan")), "top_p"),
        (_set("runs.0.cache.max_length", 10**12), "max_length"),
        (_set("runs.0.cache.block_size", "big"), "block_size"),
        (_set("runs.0.cache.block_size", 0), "block_size"),
        (_set("runs.0.model.num_layers", -1), "num_layers"),
        (_set("runs.0.model.num_layers", 3), "cache_layer_bytes"),
        (_set("runs.0.use_chat_template", "yes"), "use_chat_template"),
        (_set("version", 0), "version"),
        (_set("version", True), "version"),
        (_set("runs", [{}] * 100), "at most"),
    ],
)
def test_damaged_values_are_refused_by_the_loader(
    saved: list[SavedRun], mutate, message: str  # type: ignore[no-untyped-def]
) -> None:
    from kvstudio.files.runfile import dumps_runs

    doc = json.loads(dumps_runs(saved))
    mutate(doc)
    with pytest.raises(ValueError, match=message):
        loads_runs(json.dumps(doc))


def test_deep_nesting_is_a_clear_error_not_a_recursion(saved: list[SavedRun]) -> None:
    from kvstudio.files.runfile import dumps_runs

    text = dumps_runs(saved)
    with pytest.raises(ValueError, match="nested"):
        loads_runs("[" * DEEP + "]" * DEEP)
    nested_note = text.replace('"note": ""', '"note": ' + "[" * 900 + "]" * 900, 1)
    with pytest.raises(ValueError, match="note"):
        loads_runs(nested_note)
    with pytest.raises(ValueError, match=r"nested|note"):
        loads_runs(text.replace('"note": ""', '"note": ' + "[" * DEEP + "]" * DEEP, 1))


def test_only_small_regular_files_are_read(
    saved: list[SavedRun], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A FIFO, a link to /dev/zero and an oversized file are refused at once, in little memory."""
    import threading
    import tracemalloc

    from kvstudio.files import runfile_checks

    fifo = tmp_path / "pipe.kvrun.json"
    os.mkfifo(fifo)
    zero = tmp_path / "zero.kvrun.json"
    zero.symlink_to("/dev/zero")
    big = tmp_path / "big.kvrun.json"
    big.write_bytes(b" " * 4096)
    monkeypatch.setattr(runfile_checks, "MAX_RUN_FILE_BYTES", 1024)
    errors: dict[str, str] = {}

    def load_all() -> None:
        for name, path in (("fifo", fifo), ("zero", zero), ("big", big), ("dir", tmp_path)):
            try:
                load_runs(path)
            except ValueError as exc:
                errors[name] = str(exc)

    tracemalloc.start()
    worker = threading.Thread(target=load_all, daemon=True)
    worker.start()
    worker.join(30)  # a liveness bound, not a speed check: before the fix the FIFO never returns
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert not worker.is_alive(), "reading a FIFO blocked"
    assert "not a regular file" in errors["fifo"] and "not a regular file" in errors["zero"]
    assert "larger than" in errors["big"] and "not a regular file" in errors["dir"]
    assert peak < 1024 * 1024  # nothing read from /dev/zero
    with pytest.raises(ValueError, match="too large"):
        loads_runs(b" " * 2048)


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
        (lambda s: s.__setitem__("counts", s["counts"][:1]), "must have 2 entries"),
        (lambda s: s["counts"][0].__setitem__(0, ["서울은", 3]), "add up to 4, not the 5"),
        (lambda s: s["counts"][0].__setitem__(1, ["서울은", 1]), "counted twice"),
        (lambda s: s["counts"][1].__setitem__(0, ["a", True]), "whole number"),
        (lambda s: s["counts"][1].__setitem__(0, "a"), "[answer, count] pair"),
        (lambda s: s["counts"][1].__setitem__(0, [7, 2]), "must be text"),
        (lambda s: s.__setitem__("temperatures", [0.3, -1]), "finite number between 0"),
        (lambda s: s.__setitem__("temperatures", []), "1 to 64 entries"),
        (lambda s: s.__setitem__("samples_per_temperature", 0), "samples_per_temperature"),
        (lambda s: s.__setitem__("answer_tokens", "4"), "answer_tokens"),
        (lambda s: s.__delitem__("prompt"), "lacks prompt"),
        (lambda s: s.__setitem__("sampling", {"top_k": -1}), "bad sampling settings"),
        (lambda s: s.__setitem__("use_chat_template", "yes"), "true or false"),
    ],
)
def test_bad_samples_give_clear_errors(saved: list[SavedRun], mutate, message: str) -> None:  # type: ignore[no-untyped-def]
    document = json.loads(dumps_runs(saved, samples=[SAMPLES]))
    mutate(document["samples"][0])
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("]", r"\]")) as err:
        loads_run_file(json.dumps(document), "lecture.kvrun.json")
    assert "lecture.kvrun.json: samples[0]" in str(err.value)
    document["samples"] = {"not": "a list"}
    with pytest.raises(ValueError, match="samples must be a list"):
        loads_run_file(json.dumps(document))
