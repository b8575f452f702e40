"""Tiny test models and a tiny tokenizer for the Hugging Face tests (built in memory).

Kept out of conftest.py so the tests can import them by a name no other test folder uses.
"""

from __future__ import annotations

import torch
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

from kvstudio.engine.config import ModelConfig
from kvstudio.engine.model import MiniMindLM
from kvstudio.engine.tokenizer import SPECIAL_TOKENS, TextTokenizer

VOCAB = 320
TEXT = [
    "키와 값을 저장하면 다음 토큰을 만들 때 다시 계산하지 않아도 된다.",
    "The KV cache stores keys and values so each new token is computed once.",
    "안녕하세요. 오늘은 캐시와 샘플링을 배웁니다.",
] * 20


def make_tokenizer() -> TextTokenizer:
    """A ~320-token byte-level BPE with MiniMind's three special tokens (ids 0, 1, 2)."""
    tk = Tokenizer(models.BPE())
    tk.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tk.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=VOCAB,
        special_tokens=list(SPECIAL_TOKENS),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tk.train_from_iterator(TEXT, trainer)
    return TextTokenizer(tk)


def tiny_config(qk_norm: bool = False, **overrides: object) -> ModelConfig:
    """3 query heads per K/V head and head_dim ≠ hidden/heads, so a wrong formula shows."""
    base: dict[str, object] = dict(
        hidden_size=48,
        num_hidden_layers=2,
        num_attention_heads=6,
        num_key_value_heads=2,
        head_dim=12,
        vocab_size=VOCAB,
        max_position_embeddings=512,
        qk_norm=qk_norm,
    )
    base.update(overrides)
    return ModelConfig(**base)  # type: ignore[arg-type]


def tiny_model(qk_norm: bool = False, seed: int = 0) -> MiniMindLM:
    model = MiniMindLM(tiny_config(qk_norm)).init_weights(seed)
    # Larger weights than the init's 0.02, so the greedy tokens vary and a bug shows.
    with torch.no_grad():
        for name, p in model.named_parameters():
            if not name.endswith("norm"):  # input_layernorm, q_norm, model.norm …
                p.mul_(25.0)
    return model.eval()
