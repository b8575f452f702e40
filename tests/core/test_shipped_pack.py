"""The shipped example packs are made from the course preset, in their own language, and the
serving, speculative and beam labs' numbers in them are what those labs compute."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from kvstudio.engine.backends.minimind import MiniMindBackend
from kvstudio.engine.records import DEFAULT_REPEATS, SamplingSettings
from kvstudio.engine.serving.records import SchedulerConfig
from kvstudio.engine.strategies.beam import BeamSettings
from kvstudio.files.checkpoints import MODELS_DIR, load_model_folder
from kvstudio.labs import beam as beam_lab
from kvstudio.labs import speculative as speculative_lab
from kvstudio.labs.beam import BeamLabResult
from kvstudio.labs.common import finish
from kvstudio.labs.course import COURSE
from kvstudio.labs.serving import lab as serving_lab
from kvstudio.labs.serving.records import ServingResult
from kvstudio.labs.speculative import SpeculativeLabResult

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(("folder", "language"), [("exports", "ko"), ("exports-en", "en")])
def test_the_example_pack_samples_the_course_question_with_the_course_settings(
    folder: str, language: str
) -> None:
    numbers = json.loads((ROOT / "docs" / folder / "numbers.json").read_text(encoding="utf-8"))
    assert numbers["language"] == language
    samples = numbers["samples"]
    assert samples["prompt"] == COURSE.question
    assert samples["samples_per_temperature"] == COURSE.samples
    assert samples["answer_tokens"] == COURSE.answer_tokens
    assert [t["temperature"] for t in samples["temperatures"]] == list(COURSE.temperatures)
    settings = samples["sampling"]
    assert (settings["top_k"], settings["top_p"], settings["repetition_penalty"],
            settings["seed"]) == (COURSE.top_k, COURSE.top_p, COURSE.repetition_penalty,
                                  COURSE.seed)
    for temperature in samples["temperatures"]:
        assert sum(count for _, count in temperature["counts"]) == COURSE.samples


# ---- the serving, speculative and beam labs: the pack's numbers are what the labs compute ---
# Run once on the shipped ko-chat (and ko-draft) with the settings docs/labs.md quotes and
# scripts/export_examples.py sets; only tokens, steps, blocks and bytes are compared (times
# are the machine's). One round each: the records do not depend on the repeats.
PACKS = [("exports", "ko"), ("exports-en", "en")]
SERVING_CONFIG = SchedulerConfig(policy="continuous", max_batch=8, chunk=None, block_size=16,
                                 prefix_cache="radix")
SERVING_ANSWER_TOKENS = 24
SPECULATIVE_KS = (1, 2, 4, 8)
SPECULATIVE_NEW_TOKENS = 64
BEAM = BeamSettings(num_beams=4, length_penalty=1.0, early_stopping=False, max_new_tokens=16,
                    num_return_sequences=4)


@dataclass(frozen=True)
class Computed:
    serving: ServingResult
    speculative: SpeculativeLabResult
    beam: BeamLabResult


def _labs(folder: str) -> dict[str, Any]:
    numbers = json.loads((ROOT / "docs" / folder / "numbers.json").read_text(encoding="utf-8"))
    labs = numbers["labs"]
    assert isinstance(labs, dict)
    return labs


@pytest.fixture(scope="module")
def computed() -> Computed:
    folder = MODELS_DIR / COURSE.chat_model
    if not (folder / "config.json").exists():
        pytest.skip("the shipped ko-chat model is not in kvstudio/resources/models")
    loaded = load_model_folder(folder)
    backend = MiniMindBackend(loaded.model, name=COURSE.chat_model)
    tokenizer = loaded.tokenizer
    ids = tokenizer.chat_ids(COURSE.question)
    requests = serving_lab.load_requests(
        serving_lab.EXAMPLE_REQUESTS, tokenizer, backend, system=serving_lab.EXAMPLE_SYSTEM,
        max_new_tokens=SERVING_ANSWER_TOKENS)
    serving = finish(serving_lab.serving(backend, tokenizer, requests, (SERVING_CONFIG,),
                                         system=serving_lab.EXAMPLE_SYSTEM), ServingResult)
    draft, why = speculative_lab.shipped_draft(backend)
    assert draft is not None, why
    speculative = finish(speculative_lab.speculative_lab(
        backend, tokenizer, ids, draft=draft, ks=SPECULATIVE_KS,
        kinds=("model", "prompt-lookup"), new_tokens=SPECULATIVE_NEW_TOKENS,
        sampling=SamplingSettings.greedy_settings(COURSE.seed), repeats=1),
        SpeculativeLabResult)
    beam = finish(beam_lab.beam_lab(backend, tokenizer, ids, BEAM, block_size=16,
                                    check_transformers=False), BeamLabResult)
    return Computed(serving, speculative, beam)


@pytest.mark.numeric  # the pack was made on another machine
@pytest.mark.parametrize(("folder", "language"), PACKS)
def test_the_pack_serves_the_example_requests_as_the_serving_lab_does(
    folder: str, language: str, computed: Computed
) -> None:
    shipped = _labs(folder)["Serving"]["serving"]
    run = computed.serving.runs[0]
    totals = run.totals
    assert shipped["model"] == COURSE.chat_model
    assert shipped["scheduler"] == SERVING_CONFIG.label
    assert shipped["repeats"] == DEFAULT_REPEATS  # times are medians of the rounds
    assert (shipped["steps"], shipped["answer_tokens"], shipped["padding_slots"],
            shipped["padding_formula"], shipped["prefix_hit_tokens"], shipped["preemptions"],
            shipped["peak_blocks"], shipped["peak_cache_bytes"]) == (
        totals.steps, totals.answer_tokens, totals.padding_slots, totals.padding_formula,
        totals.prefix_hit_tokens, totals.preemptions, totals.peak_blocks,
        totals.peak_cache_bytes)
    assert shipped["all_identical_to_solo"] is True and run.all_identical
    assert [(r["index"], r["prompt_tokens"], r["prefix_hit"], r["answer_tokens"],
             r["identical_to_solo"]) for r in shipped["requests"]] == [
        (o.request.index, o.prompt_tokens, o.prefix_hit, o.answer_tokens, o.identical_to_solo)
        for o in run.outcomes]
    # docs/labs.md quotes this run: 18 steps, 19 blocks (622,592 B), 30 tokens hit per request
    assert (totals.steps, totals.peak_blocks, totals.peak_cache_bytes) == (18, 19, 622_592)
    sweep = _labs(folder)["Serving"]["batch_sweep"]
    assert [p["batch"] for p in sweep["points"]] == [1, 2, 4, 8, 16, 32]
    assert sweep["model"] == COURSE.chat_model


@pytest.mark.numeric  # the pack was made on another machine
@pytest.mark.parametrize(("folder", "language"), PACKS)
def test_the_pack_drafts_with_ko_draft_as_the_speculative_lab_does(
    folder: str, language: str, computed: Computed
) -> None:
    shipped = _labs(folder)["Speculative"]
    result = computed.speculative
    assert (shipped["target"], shipped["draft"]) == (result.target_label, result.draft_label)
    assert (shipped["prompt_tokens"], shipped["new_tokens"], shipped["greedy"]) == (
        result.prompt_tokens, SPECULATIVE_NEW_TOKENS, True)
    assert shipped["plain_ms"]["repeats"] == DEFAULT_REPEATS
    fields = ("draft_kind", "k", "accepted", "judged", "drafted", "target_calls", "generated",
              "identical_to_plain")
    assert [tuple(r[f] for f in fields) for r in shipped["runs"]] == [
        (r.draft_kind, r.k, r.accepted, r.verified, r.drafted, r.target_calls, r.generated,
         r.identical_to_plain) for r in result.runs]
    for run, mine in zip(shipped["runs"], result.runs, strict=True):
        assert run["alpha"] == pytest.approx(mine.alpha)
        assert run["tokens_per_call"] == pytest.approx(mine.tokens_per_round)
        assert run["tokens_per_call_formula"] == pytest.approx(mine.expected_tokens_per_round)
        assert [(x["drafted"], x["accepted"], x["next_token"], x["target_rows"],
                 x["target_cropped"], x["draft_rows"], x["draft_cropped"])
                for x in run["rounds"]] == [
            (list(x.drafted), x.accepted, x.next_token, x.target_length, x.target_cropped,
             x.draft_length, x.draft_cropped) for x in mine.rounds]
        assert run["identical_to_plain"] is True


@pytest.mark.numeric  # the pack was made on another machine
@pytest.mark.parametrize(("folder", "language"), PACKS)
def test_the_pack_searches_four_beams_as_the_beam_lab_does(
    folder: str, language: str, computed: Computed
) -> None:
    shipped = _labs(folder)["BeamSearch"]
    result = computed.beam
    assert (shipped["num_beams"], shipped["length_penalty"], shipped["early_stopping"],
            shipped["max_new_tokens"], shipped["prompt_tokens"]) == (
        BEAM.num_beams, BEAM.length_penalty, BEAM.early_stopping, BEAM.max_new_tokens,
        len(result.prompt_ids))
    assert shipped["steps"] == result.search.steps
    assert [h["tokens"] for h in shipped["returned"]] == [
        list(h.tokens) for h in result.search.sequences]
    assert [h["score"] for h in shipped["returned"]] == pytest.approx(
        [h.score for h in result.search.sequences], abs=1e-5)
    assert shipped["parents"] == [[b.parent for b in s.beams] for s in result.steps]
    assert (shipped["rows_moved"], shipped["reorder_bytes"], shipped["cow_bytes"],
            shipped["blocks_shared"]) == (
        [s.rows_moved for s in result.steps], [s.reorder_bytes for s in result.steps],
        [s.cow_bytes for s in result.steps], [s.blocks_shared for s in result.steps])
    # docs/labs.md quotes: 31 rows moved, 1,292,288 B by reorders, 688,128 B on write
    assert (sum(shipped["rows_moved"]), sum(shipped["reorder_bytes"]),
            sum(shipped["cow_bytes"])) == (31, 1_292_288, 688_128)
    assert shipped["same_as_transformers"] is True  # the pack ran transformers' check


@pytest.mark.parametrize(("folder", "same"), [("exports", "같은 토큰 64/64"),
                                              ("exports-en", "Same tokens 64/64")])
def test_the_packs_lab_slides_state_their_results(folder: str, same: str) -> None:
    """Issue 33: the cache-vs-recompute slide says the tokens agree and gives both modes'
    ms/token; the top-p slide shows the step with the most survivors and says so."""
    numbers = json.loads((ROOT / "docs" / folder / "numbers.json").read_text(encoding="utf-8"))
    compare = numbers["headlines"]["lab cache-vs-recompute"].splitlines()[0]
    assert same in compare, compare
    unit = "ms/토큰" if folder == "exports" else "ms/token"
    assert compare.count(unit) == 2, compare  # cached and recompute, each a median
    if folder == "exports":  # the Korean pack has every lab; the English one only this slide
        top_p = numbers["labs"]["TopPTopK"]
        survivors = [step["survivors_top_p"] for step in top_p["steps"]]
        assert survivors[top_p["shown_step"]] == max(survivors)  # the widest cut is shown
        assert top_p["shown_is_widest_cut"]
        assert "가장 많은" in numbers["headlines"]["lab top-k-top-p"].splitlines()[0]
