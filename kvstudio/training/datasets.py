"""Turn text into training batches: packed pretraining windows and ChatML SFT examples.

Owns the two batch recipes of MiniMind:

- pretraining: documents joined by ``<|endoftext|>`` into one token stream; a batch
  is B random windows of T+1 tokens (inputs = first T, targets = last T);
- SFT: ``<|im_start|>user\\n{q}<|im_end|>\\n<|im_start|>assistant\\n{a}<|im_end|>\\n``
  with the loss on the answer tokens and the closing ``<|im_end|>`` only; a batch
  is B neighbours in length order (little padding).

Targets use -100 where no loss is taken (``F.cross_entropy``'s ignore_index).
Randomness comes from a ``torch.Generator`` the trainer owns, so runs are
reproducible and resumable.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

import torch

from kvstudio.engine.tokenizer import TextTokenizer
from kvstudio.training.data import ChatPair

IGNORE = -100  # target id that takes no loss
Batch = tuple[torch.Tensor, torch.Tensor]  # inputs (B, T), targets (B, T)


class PackedStream:
    """One long token stream; batches are random windows of `seq_len` + 1 tokens."""

    def __init__(self, tokenizer: TextTokenizer, docs: Sequence[str], seq_len: int, seed: int):
        if tokenizer.endoftext_id is None:
            raise ValueError("The tokenizer has no <|endoftext|> token to separate documents.")
        order = list(docs)
        random.Random(seed).shuffle(order)
        ids: list[int] = []
        for doc in order:
            ids.extend(tokenizer.encode(doc))
            ids.append(tokenizer.endoftext_id)
        if len(ids) < seq_len + 2:
            raise ValueError(f"Only {len(ids)} tokens of text: too little for seq_len {seq_len}.")
        self.tokens = torch.tensor(ids, dtype=torch.long)  # (N,)
        self.seq_len = seq_len

    def __len__(self) -> int:
        return int(self.tokens.numel())

    def batch(self, batch_size: int, gen: torch.Generator) -> Batch:
        """Random windows: inputs (B, T) and next-token targets (B, T)."""
        T = self.seq_len
        starts = torch.randint(0, len(self) - T - 1, (batch_size,), generator=gen)  # (B,)
        rows = torch.stack([self.tokens[s : s + T + 1] for s in starts.tolist()])  # (B, T+1)
        return rows[:, :-1], rows[:, 1:]

    def eval_batches(self, batch_size: int, max_batches: int) -> list[Batch]:
        """Fixed, non-overlapping windows from the start of the stream (same every time)."""
        T = self.seq_len
        n_rows = min((len(self) - 1) // T, batch_size * max_batches)
        rows = self.tokens[: n_rows * T + 1]
        x = rows[:-1].view(n_rows, T)  # (R, T)
        y = rows[1:].view(n_rows, T)
        return [
            (x[i : i + batch_size], y[i : i + batch_size]) for i in range(0, n_rows, batch_size)
        ]


def encode_chat(
    tokenizer: TextTokenizer, pair: ChatPair, max_len: int
) -> tuple[list[int], list[int]]:
    """ChatML ids and per-token targets (answer + <|im_end|> only); truncated to max_len."""
    if tokenizer.eos_id is None:
        raise ValueError("The tokenizer has no <|im_end|> token; train it with kvstudio's recipe.")
    prompt = tokenizer.chat_ids(pair.question)
    answer = [*tokenizer.encode(pair.answer), tokenizer.eos_id]
    ids = (prompt + answer + tokenizer.encode("\n"))[: max_len + 1]
    # Target of position i is ids[i+1], kept only where ids[i+1] belongs to the answer.
    labels = [IGNORE] * (len(prompt) - 1) + answer + [IGNORE]
    labels = labels[: len(ids) - 1]
    return ids[:-1], labels


class ChatExamples:
    """All SFT examples, pre-encoded; batches are random examples padded to the longest."""

    def __init__(self, tokenizer: TextTokenizer, pairs: Sequence[ChatPair], max_len: int = 128):
        if not pairs:
            raise ValueError("No chat pairs for SFT.")
        self.examples = [encode_chat(tokenizer, p, max_len) for p in pairs]
        self.pad_id = tokenizer.endoftext_id or 0
        # Batches take neighbours in this order, so rows in a batch have similar lengths.
        self.by_length = sorted(range(len(self.examples)), key=lambda i: len(self.examples[i][0]))

    def __len__(self) -> int:
        return len(self.examples)

    def n_answer_tokens(self) -> int:
        return sum(sum(1 for t in y if t != IGNORE) for _, y in self.examples)

    def collate(self, idx: Sequence[int]) -> Batch:
        """Inputs (B, T) padded with <|endoftext|>, targets (B, T) padded with -100."""
        T = max(len(self.examples[i][0]) for i in idx)
        x = torch.full((len(idx), T), self.pad_id, dtype=torch.long)
        y = torch.full((len(idx), T), IGNORE, dtype=torch.long)
        for row, i in enumerate(idx):
            ids, labels = self.examples[i]
            x[row, : len(ids)] = torch.tensor(ids)
            y[row, : len(labels)] = torch.tensor(labels)
        return x, y

    def batch(self, batch_size: int, gen: torch.Generator) -> Batch:
        """B neighbours in length order from a random start (wrapping): little padding."""
        start = int(torch.randint(0, len(self), (1,), generator=gen))
        idx = [self.by_length[(start + i) % len(self)] for i in range(batch_size)]
        return self.collate(idx)

    def eval_batches(self, batch_size: int, max_batches: int) -> list[Batch]:
        n = min(len(self), batch_size * max_batches)
        return [self.collate(range(i, min(i + batch_size, n))) for i in range(0, n, batch_size)]
