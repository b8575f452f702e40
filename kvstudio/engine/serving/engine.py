"""One serving step: a packed forward over the requests a scheduler chose, caches in a block pool.

Owns `Sequence` (a request while it runs: its tokens so far, its block table,
how many of its tokens have K/V stored) and `ServingEngine`, which does what a
step needs and nothing else: give a sequence blocks for the tokens it will feed
(`blocks_needed`, `take_blocks`), run the model once over every scheduled
chunk packed side by side (`forward_step`: ``MiniMindLM.forward_packed``), and
choose each finished chunk's next token. Which requests run, and how many
tokens each feeds, is the scheduler's business (``schedulers.py``).

Attention is per request and per token: a token at position p of request r
attends to r's keys 0 … p, gathered from r's blocks, as a decode step of r
alone would, one query against p + 1 keys whatever the batch. So what a
token computes never depends on how the prompt was chunked, which requests
share the step, whether part of the prompt came from the prefix cache, or
whether the request was preempted and recomputed. How it rounds may: the
products run over all the step's rows at once, and a kernel sums a row in an
order that depends on the row count (``MiniMindLM.forward_packed``). So the
answers are the solo runs' tokens, and their logits the solo runs' to float32
rounding; ``keep_logits`` keeps them so the serving lab can show the gap.
Padding rows (static batching) go through every product, which is their cost,
and attend to nothing.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import torch

from kvstudio.engine.backends.minimind import LanguageModel, MiniMindBackend
from kvstudio.engine.cache.block_pool import BlockPool
from kvstudio.engine.model import Block, MiniMindLM
from kvstudio.engine.records import SamplingSettings
from kvstudio.engine.sampling import check_logits, new_generator, presence_mask, sample_next
from kvstudio.engine.serving.records import Request


@dataclass(eq=False)
class Sequence:
    """A request while it is served."""

    request: Request
    tokens: list[int]  # prompt + answer so far
    generator: torch.Generator | None  # its own draws (sampling), so batching changes none
    table: list[int] = field(default_factory=list)  # block ids, in position order
    computed: int = 0  # tokens whose K/V are in the pool
    answer: list[int] = field(default_factory=list)
    logits: list[torch.Tensor] = field(default_factory=list)  # (V,) per answer token, if kept

    @property
    def remaining(self) -> int:
        """Tokens still to feed before it can choose its next token."""
        return len(self.tokens) - self.computed


def max_logit_gap(a: Sequence, b: Sequence) -> float | None:
    """max |Δlogit| between two runs of one request (both with ``keep_logits``), over the
    answer tokens chosen after the same tokens: up to and including the first one where
    their answers part (later logits follow different histories). None when either run
    kept no logits."""
    if not a.logits or not b.logits:
        return None
    gap = 0.0
    for i, (x, y) in enumerate(zip(a.logits, b.logits, strict=False)):
        gap = max(gap, float((x - y).abs().max()))
        if a.answer[i] != b.answer[i]:
            break
    return gap


@dataclass(frozen=True)
class Feed:
    """One sequence's chunk in a step: tokens[computed : computed + count]."""

    sequence: Sequence
    count: int


def serving_model(backend: LanguageModel) -> MiniMindLM:
    """The model a serving run drives: KV Studio's own decoder (ValueError otherwise)."""
    if not isinstance(backend, MiniMindBackend):
        raise ValueError(
            "The serving lab runs on KV Studio's own models (ko-base, ko-chat, a model folder "
            "or a MiniMind .pth); a transformers model has no packed forward here."
        )
    return backend.model


class ServingEngine:
    """A model, a block pool and the sampling settings: runs the steps a scheduler plans."""

    def __init__(
        self, backend: LanguageModel, pool: BlockPool, sampling: SamplingSettings,
        keep_logits: bool = False,  # keep every chosen token's logits (the solo comparison)
    ) -> None:
        self.model = serving_model(backend)
        self.keep_logits = keep_logits
        self.pool = pool
        self.sampling = sampling
        self.eos = backend.eos_token_id
        self.vocab = backend.vocab_size
        self.device = backend.device

    def start(self, request: Request) -> Sequence:
        """A request's sequence, with its own seeded generator (seed + request index)."""
        generator = None
        if not self.sampling.greedy:
            generator = new_generator(self.sampling.seed + request.index, self.device)
        return Sequence(request, list(request.prompt_ids), generator)

    # ---- blocks -------------------------------------------------------------------------
    def blocks_needed(self, seq: Sequence, count: int) -> int:
        """New blocks `seq` needs to store `count` more tokens (a copy on write included)."""
        b = self.pool.block_size
        end = seq.computed + count
        new = max(0, -(-end // b) - len(seq.table))
        index, slot = divmod(seq.computed, b)
        if slot and index < len(seq.table) and self.pool.filled[seq.table[index]] != slot:
            new += 1  # someone else wrote past here: the block is copied first
        return new

    def take_blocks(self, seq: Sequence, count: int) -> None:
        """Blocks for `count` more tokens, their slots claimed at once (so a request sharing
        the block in the same step copies it instead of writing there too). `PoolFullError`
        may stop it midway; what it took stays in the table and goes back with the rest."""
        b = self.pool.block_size
        index, slot = divmod(seq.computed, b)
        if slot and index < len(seq.table):
            seq.table[index] = self.pool.writable(seq.table[index], slot)
        while len(seq.table) * b < seq.computed + count:
            seq.table.append(self.pool.allocate())
        self.pool.mark_written(seq.table, seq.computed, seq.computed + count)

    def release(self, seq: Sequence) -> None:
        """Give back every block (the request ended, or it is preempted)."""
        for block in seq.table:
            self.pool.release(block)
        seq.table = []
        seq.computed = 0

    # ---- the step -----------------------------------------------------------------------
    def forward_step(self, feeds: list[Feed], padding: int) -> tuple[dict[int, int], float]:
        """Feed every chunk (and `padding` blank rows) in one forward; ({request: token}, s).

        A chunk that reaches the end of its sequence's tokens chooses the next token,
        which is appended to the sequence. The time is the forward and the sampling.
        """
        start = time.perf_counter()
        ids: list[int] = []
        positions: list[int] = []
        spans: list[tuple[int, int]] = []  # packed rows of each feed
        logit_rows: list[int] = []
        choosing: list[Sequence] = []
        for feed in feeds:
            seq, begin = feed.sequence, feed.sequence.computed
            spans.append((len(ids), len(ids) + feed.count))
            ids += seq.tokens[begin : begin + feed.count]
            positions += range(begin, begin + feed.count)
            if begin + feed.count == len(seq.tokens):
                logit_rows.append(len(ids) - 1)
                choosing.append(seq)
        pad_token = self.eos if self.eos is not None else 0
        ids += [pad_token] * padding  # blank rows: in every product, attending to nothing
        positions += [0] * padding
        write_slots = [self.pool.slots(f.sequence.table, f.sequence.computed,
                                       f.sequence.computed + f.count) for f in feeds]
        key_slots = [self.pool.slots(f.sequence.table, 0, f.sequence.computed + f.count)
                     for f in feeds]

        def attend_rows(
            block: Block, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor
        ) -> torch.Tensor:
            """Store each chunk's k, v (T, G, d); each token attends to its own request's
            keys up to its position → (N, H·d)."""
            y = q.new_zeros(q.shape[0], q.shape[1] * q.shape[2])  # (N, H·d); blank rows stay 0
            layer = block.layer_index
            for (lo, hi), writes, keys in zip(spans, write_slots, key_slots, strict=True):
                self.pool.write(layer, writes, k[lo:hi], v[lo:hi])
                key, value = self.pool.read(layer, keys)  # (S, G, d): this request's keys
                first = keys.shape[0] - (hi - lo)  # position of the chunk's first token
                for row in range(lo, hi):
                    seen = first + (row - lo) + 1  # keys 0 … its own position
                    y[row] = block.attend(
                        q[row][None, None],  # (1, 1, H, d)
                        key[None, :seen],  # (1, S', G, d)
                        value[None, :seen],
                        None,
                        False,
                    )[0]
            return y

        rows = torch.tensor(logit_rows, dtype=torch.long, device=self.device)
        chosen: dict[int, int] = {}
        with torch.inference_mode():
            logits = self.model.forward_packed(
                torch.tensor(ids, dtype=torch.long, device=self.device),
                torch.tensor(positions, dtype=torch.long, device=self.device),
                attend_rows,
                rows,
            )  # (R, V)
            for feed in feeds:
                feed.sequence.computed += feed.count
            for i, seq in enumerate(choosing):
                chosen[seq.request.index] = self._choose(seq, logits[i : i + 1])
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)
        for seq in choosing:
            token = chosen[seq.request.index]
            seq.tokens.append(token)
            seq.answer.append(token)
        return chosen, time.perf_counter() - start

    def _choose(self, seq: Sequence, logits: torch.Tensor) -> int:
        """The next token from logits (1, V): greedy, or the sampling settings with the
        request's own generator."""
        check_logits(logits, len(seq.answer))  # NaN weights: plain decoding's message
        seen = None
        if self.sampling.repetition_penalty != 1.0:
            seen = presence_mask(torch.tensor([seq.tokens], device=self.device), self.vocab)
        out = sample_next(logits, self.sampling, seq.generator, seen=seen, top_n=0)
        if self.keep_logits:
            seq.logits.append(logits[0].clone())
        return int(out.token_ids[0])

    def is_done(self, seq: Sequence) -> bool:
        """Its last token was eos, or its budget is spent."""
        return bool(seq.answer) and (
            seq.answer[-1] == self.eos or len(seq.answer) >= seq.request.max_new_tokens
        )
