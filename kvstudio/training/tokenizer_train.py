"""Train the byte-level BPE tokenizer (MiniMind's recipe) with the `tokenizers` library.

Owns the vocabulary: 6,400 tokens, ``<|endoftext|>``=0, ``<|im_start|>``=1,
``<|im_end|>``=2 (MiniMind's ids), byte-level so no text is ever unknown.
Saving goes through ``TextTokenizer.save`` so the ChatML template is the engine's.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

from kvstudio.engine.tokenizer import SPECIAL_TOKENS, TextTokenizer

log = logging.getLogger(__name__)


def train_bpe(texts: Iterable[str], vocab_size: int = 6400) -> TextTokenizer:
    """A byte-level BPE of `vocab_size` tokens with the special tokens at ids 0, 1, 2."""
    if vocab_size < 256 + len(SPECIAL_TOKENS):
        raise ValueError(
            f"vocab_size must be at least 259 (256 bytes + 3 specials), got {vocab_size}"
        )
    tk = Tokenizer(models.BPE())
    tk.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tk.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=list(SPECIAL_TOKENS),  # added first, so they get ids 0, 1, 2
        show_progress=False,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    tk.train_from_iterator(texts, trainer=trainer)
    for want, token in enumerate(SPECIAL_TOKENS):
        if tk.token_to_id(token) != want:
            raise ValueError(f"{token} got id {tk.token_to_id(token)}, expected {want}")
    return TextTokenizer(tk)


def chars_per_token(tokenizer: TextTokenizer, texts: Iterable[str]) -> float:
    """Average characters per token: higher means shorter sequences (cheaper training)."""
    n_chars = n_tokens = 0
    for t in texts:
        n_chars += len(t)
        n_tokens += len(tokenizer.encode(t))
    return n_chars / max(n_tokens, 1)
