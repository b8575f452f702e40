"""The shipped example packs are made from the course preset, in their own language."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvstudio.labs.course import COURSE

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
