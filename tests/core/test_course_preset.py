"""The course preset is what every lab and subcommand starts from, and answers read clean."""

from __future__ import annotations

import inspect

import pytest

from kvstudio.cli.main import build_parser
from kvstudio.engine.records import SamplingSettings
from kvstudio.engine.tokenizer import IM_END, IM_START, TextTokenizer
from kvstudio.labs.cache import paged
from kvstudio.labs.common import answer_text, lab_prompt, lab_prompt_ids, lab_text
from kvstudio.labs.course import (
    CACHE_PRESETS,
    COURSE,
    EMPTY_ANSWER,
    NOTEBOOK,
    setting_changes,
    settings_line,
)
from kvstudio.labs.sampling import cutoff, sample, temperature


def test_the_course_preset_holds_the_course_settings() -> None:
    assert (COURSE.cache_model, COURSE.chat_model) == ("ko-base", "ko-chat")
    assert (COURSE.prompt_tokens, COURSE.new_tokens) == (183, 64)
    assert COURSE.sampling == SamplingSettings(0.85, 0, 0.85, 1.0, 42)
    assert COURSE.samples == 30 and COURSE.temperature in COURSE.temperatures
    assert (NOTEBOOK.prompt_tokens, NOTEBOOK.new_tokens) == (16, 64)
    assert set(CACHE_PRESETS) == {"course", "notebook"}
    assert COURSE.model_for_cache("paged") == "ko-chat"  # a sampling run: answers end early
    assert COURSE.model_for_cache("dynamic") == "ko-base"


def test_the_notebook_preset_gives_its_p_and_n_unless_they_are_given() -> None:
    from kvstudio.labs.cache.compare import preset_lengths
    from kvstudio.labs.registry import COMPARE

    course = COMPARE.defaults()
    assert preset_lengths(course) == (COURSE.prompt_tokens, COURSE.new_tokens)
    notebook = {**course, "preset": "notebook"}
    assert preset_lengths(notebook) == (NOTEBOOK.prompt_tokens, NOTEBOOK.new_tokens)
    assert preset_lengths({**notebook, "prompt_tokens": 40, "new_tokens": 8}) == (40, 8)


def _default(function: object, name: str) -> object:
    return inspect.signature(function).parameters[name].default  # type: ignore[arg-type]


def test_labs_start_from_the_preset() -> None:
    assert _default(temperature.temperature_lab, "samples") == COURSE.samples
    assert _default(temperature.temperature_lab, "new_tokens") == COURSE.answer_tokens
    assert _default(temperature.temperature_lab, "seed") == COURSE.seed
    assert _default(cutoff.distribution_steps, "new_tokens") == COURSE.answer_tokens
    assert _default(paged.paged_memory, "temperature") == COURSE.temperature
    assert _default(paged.paged_memory, "top_p") == COURSE.top_p
    assert SamplingSettings() == COURSE.sampling  # the records' defaults are the course's
    assert inspect.signature(sample.repeated_sampling).parameters["settings"].default is None
    # (None: COURSE.sampling, as its docstring says; the window's side is in tests/ui)


def test_every_subcommand_starts_from_the_preset() -> None:
    parser = build_parser()
    s = parser.parse_args(["sample"])
    assert tuple(s.temperatures) == COURSE.temperatures
    assert (s.samples, s.new_tokens, s.seed) == (COURSE.samples, COURSE.answer_tokens, 42)
    assert (s.top_k, s.top_p, s.repetition_penalty) == (0, 0.85, 1.0)
    c = parser.parse_args(["compare"])
    assert c.preset == "course" and CACHE_PRESETS[c.preset].prompt_tokens == 183
    w = parser.parse_args(["sweep"])
    assert (w.vary, tuple(w.values), w.fixed) == (
        COURSE.sweep_vary, COURSE.sweep_lengths, COURSE.sweep_fixed)
    assert (c.window, c.max_length) == (COURSE.window, COURSE.static_length)
    assert "ko-base" in parser._subparsers._group_actions[0].choices["compare"].format_help()  # type: ignore[union-attr]


def test_settings_line_and_changes_say_what_made_a_result() -> None:
    line = settings_line(COURSE.sampling, temperatures=(0.3, 0.85), samples=30, answer_tokens=32)
    assert line == (
        "T 0.3, 0.85 · top-k off · top-p 0.85 · penalty 1 · seed 42 · 30 samples · ≤ 32 tokens"
    )
    assert setting_changes(COURSE.sampling) == ()
    changed = setting_changes(SamplingSettings(0.0, 10, 1.0, 1.0, 42))
    assert changed == ("greedy (course T 0.85)", "top-k 10 (course off)", "top-p off (course 0.85)")


# ---- what students read --------------------------------------------------------------------
def test_answers_stop_at_the_turn_and_never_show_a_replacement_character(
    tokenizer: TextTokenizer,
) -> None:
    assert tokenizer.bos_id is not None and tokenizer.eos_id is not None
    hello = tokenizer.encode("안녕하세요")
    # The model closes its turn and opens the next one: the role word never shows.
    ids = [*hello, tokenizer.eos_id, *tokenizer.encode_template([(f"{IM_START}user\n", True)])]
    assert answer_text(tokenizer, ids) == "안녕하세요"
    new_turn = [*hello, *tokenizer.encode_template([(f"{IM_START}assistant\n", True)])]
    assert answer_text(tokenizer, new_turn) == "안녕하세요"
    # A Hangul syllable cut by the budget: its bytes, never U+FFFD.
    lead = "한".encode()[0]  # 0xED: a lead byte without its two continuation bytes
    partial = [i for i in range(tokenizer.vocab_size)
               if tokenizer.bytes_text([i]) == f"<0x{lead:02X}>"]
    assert partial, "a byte-level vocabulary has a token for every byte"
    text = answer_text(tokenizer, [*hello, partial[0]])
    assert text == f"안녕하세요<0x{lead:02X}>"
    assert "\ufffd" in tokenizer.decode([*hello, partial[0]])  # what the plain decode shows
    assert answer_text(tokenizer, [tokenizer.eos_id]) == EMPTY_ANSWER
    assert answer_text(tokenizer, []) == EMPTY_ANSWER
    assert IM_END not in answer_text(tokenizer, ids)


def test_a_control_character_in_an_answer_shows_as_its_byte(tokenizer: TextTokenizer) -> None:
    """\x01 draws as nothing and \r jumps to the line's start: a student sees their bytes."""
    ids = [*tokenizer.encode("가"), *tokenizer.encode("\x01"), *tokenizer.encode("나\r다\n라\t마")]
    assert answer_text(tokenizer, ids) == "가<0x01>나<0x0D>다\n라\t마"


def test_a_prompt_cut_by_tokens_is_cut_on_a_character_boundary(tokenizer: TextTokenizer) -> None:
    ids = tokenizer.encode(lab_text())
    for p in range(1, min(len(ids), 60)):
        cut = lab_prompt(tokenizer, p)
        text = tokenizer.bytes_text(list(cut.ids))
        assert "<0x" not in text, (p, text)  # whole characters only
        assert len(cut.ids) <= p
        assert (cut.note is None) == (len(cut.ids) == p)
        assert list(cut.ids) == lab_prompt_ids(tokenizer, p)[: len(cut.ids)]


def test_the_shipped_tokenizer_cuts_16_tokens_to_15_and_says_so() -> None:
    shipped = TextTokenizer.from_file("kvstudio/resources/models/ko-base")
    cut = lab_prompt(shipped, 16)
    assert len(cut.ids) == 15 and cut.note is not None and "16 asked" in cut.note
    assert len(lab_prompt(shipped, 183).ids) == 183  # the lab text is exactly 183 tokens
    assert len(lab_prompt(shipped, 16, lab_text(short=True)).ids) == 16  # the notebook's


def test_top_p_keeps_at_least_p_with_top_k_off(tiny_backend, tokenizer: TextTokenizer) -> None:  # type: ignore[no-untyped-def]
    """The course runs top-k off: top-p's survivors go past the bars, and their mass is ≥ p."""
    prompt = tokenizer.encode("안녕하세요")
    steps = [s for s in cutoff.distribution_steps(
        tiny_backend, tokenizer, prompt, COURSE.sampling, new_tokens=4, bars=3)
        if isinstance(s, cutoff.DistributionStep)]
    assert steps and any(s.record.survivors_top_p[0] > 3 for s in steps)  # beyond the bars
    for s in steps:
        assert s.kept_mass() >= COURSE.top_p - 1e-6
        assert s.chosen_text and "\ufffd" not in s.chosen_text  # never a bare id or �


def test_a_run_refuses_a_front_setting_its_lab_does_not_declare() -> None:
    from kvstudio.labs.registry import LABS, SERVING

    with pytest.raises(TypeError, match="serving's run takes no cache"):
        SERVING.run(None, {}, cache="dynamic")  # compare's option, not serving's
    for lab in LABS:  # every declared name is one the run can be given, in one tuple
        assert not set(lab.extras) & set(lab.options), lab.key
        assert not set(lab.extras + lab.options) & {p.name for p in lab.params}, lab.key
