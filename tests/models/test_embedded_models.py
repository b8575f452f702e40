"""The embedded models (kvstudio/resources/models) load, they are the course model, they answer.

Nothing is trained here. Each check is a few forward passes of the 4.5M-parameter
model on one thread; the expected greedy texts were recorded when the weights
were exported (re-record them only when the weights change on purpose).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from safetensors import safe_open

from kvstudio.engine.backends.minimind import MiniMindBackend
from kvstudio.engine.cache.kv_cache import KVCache
from kvstudio.engine.config import ModelConfig
from kvstudio.files.checkpoints import MODELS_DIR, LoadedModel, load_model_folder
from kvstudio.training.evaluate import PROMPTS_DIR, chat_answer, continuation, generate

NAMES = ("ko-base", "ko-chat")
EXPECTED_CHAT = {"오늘 너무 피곤해": "푹 쉬세요.", "배고픈데 뭐 먹을까?": "좀 더 살펴보세요."}
EXPECTED_BASE = {"한 남자가 기타를": "한 남자가 기타를 연주하고 있다."}


@pytest.fixture(scope="module", params=NAMES)
def shipped(request: pytest.FixtureRequest) -> LoadedModel:
    return load_model_folder(MODELS_DIR / request.param)


def test_folders_are_complete_and_small() -> None:
    total = 0
    for name in NAMES:
        folder = MODELS_DIR / name
        for file in (
            "config.json",
            "model.safetensors",
            "tokenizer.json",
            "tokenizer_config.json",
            "MODEL_CARD.md",
        ):
            assert (folder / file).is_file(), f"{folder / file} is missing"
        total += (folder / "model.safetensors").stat().st_size
        with safe_open(str(folder / "model.safetensors"), "pt") as f:
            names = set(f.keys())
        assert "lm_head.weight" not in names  # tied: stored once, as the embedding
        assert "model.layers.3.self_attn.q_proj.weight" in names  # MiniMind names
    assert total < 40e6


def test_config_is_the_course_model(shipped: LoadedModel) -> None:
    c = shipped.config
    assert c == ModelConfig()  # hidden 256, 4 layers, 8/2 heads, FFN 704, vocab 6400, fp32
    assert (c.resolved_head_dim, c.resolved_intermediate_size) == (32, 704)
    assert c.tie_word_embeddings and c.dtype == "float32"
    assert next(shipped.model.parameters()).dtype.is_floating_point
    tok = shipped.tokenizer
    assert (tok.endoftext_id, tok.bos_id, tok.eos_id) == (0, 1, 2)
    assert tok.vocab_size == 6400
    template = json.loads((shipped.source / "tokenizer_config.json").read_text("utf-8"))  # type: ignore[operator]
    assert "<|im_start|>" in template["chat_template"]


def test_lab_prompts_have_183_and_16_tokens(shipped: LoadedModel) -> None:
    tok = shipped.tokenizer
    assert len(tok.encode((PROMPTS_DIR / "lab_long.txt").read_text("utf-8"))) == 183
    assert len(tok.encode((PROMPTS_DIR / "lab_short.txt").read_text("utf-8"))) == 16
    questions = json.loads((PROMPTS_DIR / "chat_questions.json").read_text("utf-8"))
    assert 10 <= len(questions) <= 20
    assert len(json.loads((PROMPTS_DIR / "heldout_questions.json").read_text("utf-8"))) == 50


def test_cache_bytes_match_the_lecture(shipped: LoadedModel) -> None:
    """100 tokens in the fp32 cache: 2 (K,V) × 4 layers × 2 heads × 32 × 4 bytes × 100."""
    backend = MiniMindBackend(shipped.model)
    ids = shipped.tokenizer.encode((PROMPTS_DIR / "lab_long.txt").read_text("utf-8"))[:100]
    stepper = generate(backend, shipped.tokenizer, ids, 1)
    cache = stepper.cache
    assert isinstance(cache, KVCache)
    assert cache.nbytes == 204_800


@pytest.mark.numeric  # answers recorded on the development machine
def test_one_greedy_answer_is_reproducible() -> None:
    loaded = load_model_folder(MODELS_DIR / "ko-chat")
    backend = MiniMindBackend(loaded.model)
    for question, answer in EXPECTED_CHAT.items():
        assert chat_answer(backend, loaded.tokenizer, question) == answer


@pytest.mark.numeric  # answers recorded on the development machine
def test_base_continuation_is_reproducible_and_cache_matches_recompute() -> None:
    loaded = load_model_folder(MODELS_DIR / "ko-base")
    backend, tok = MiniMindBackend(loaded.model), loaded.tokenizer
    for start, text in EXPECTED_BASE.items():
        assert continuation(backend, tok, start) == text
    ids = tok.encode((PROMPTS_DIR / "lab_long.txt").read_text("utf-8"))
    runs = [
        generate(backend, tok, ids, 16, mode=m, stop_at_eos=False).generated_ids[0]
        for m in ("cached", "recompute")
    ]
    assert runs[0] == runs[1]


def test_prompt_folder_is_where_the_engine_looks() -> None:
    assert Path(PROMPTS_DIR) == MODELS_DIR.parent / "prompts"
