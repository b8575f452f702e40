"""Executing a step's plan: one packed forward over the scheduled chunks, caches in the block pool.

Owns `ModelRunner`, the only part of the serving engine that runs the model:
`execute_model` takes a `SchedulerOutput` (whose blocks are already taken),
packs every scheduled chunk side by side (and static batching's blank rows),
runs ``MiniMindLM.forward_packed`` once, writes each chunk's K/V into its
request's blocks, and chooses the next token of every request whose chunk
reached its last token (greedy, or the sampling settings with the request's
own generator). It returns a `ModelRunnerOutput` and changes no request: the
scheduler applies it (``scheduler.py``). Also `serving_model`, the refusal of a
model without a packed forward.

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
and attend to nothing. Letters in shape comments: N packed rows, H query
heads, G K/V heads, d head_dim, S keys, R rows whose logits are kept, V vocab.
"""

from __future__ import annotations

import time
from collections.abc import Mapping

import torch

from kvstudio.engine.backends.minimind import LanguageModel, MiniMindBackend
from kvstudio.engine.cache.block_pool import BlockPool
from kvstudio.engine.model import Block, MiniMindLM
from kvstudio.engine.records import SamplingSettings
from kvstudio.engine.sampling import check_logits, presence_mask, sample_next
from kvstudio.engine.serving.outputs import ModelRunnerOutput, SchedulerOutput
from kvstudio.engine.serving.request import Request


def serving_model(backend: LanguageModel) -> MiniMindLM:
    """The model a serving run drives: KV Studio's own decoder (ValueError otherwise)."""
    if not isinstance(backend, MiniMindBackend):
        raise ValueError(
            "The serving lab runs on KV Studio's own models (ko-base, ko-chat, a model folder "
            "or a MiniMind .pth); a transformers model has no packed forward here."
        )
    return backend.model


class ModelRunner:
    """A model, the pool its K/V go to, and the sampling settings: runs one plan at a time."""

    def __init__(
        self, backend: LanguageModel, pool: BlockPool, sampling: SamplingSettings,
        keep_logits: bool = False,  # return every chosen token's logits (the solo comparison)
    ) -> None:
        self.model = serving_model(backend)
        self.pool = pool
        self.sampling = sampling
        self.keep_logits = keep_logits
        self.eos = backend.eos_token_id
        self.vocab = backend.vocab_size
        self.device = backend.device

    def execute_model(
        self, plan: SchedulerOutput, requests: Mapping[int, Request]
    ) -> ModelRunnerOutput:
        """Feed every scheduled chunk (and the plan's padding as blank rows) in one forward.

        A chunk that reaches the end of its request's tokens chooses the next token. The
        time is the packing, the forward and the sampling.
        """
        start = time.perf_counter()
        ids: list[int] = []
        positions: list[int] = []
        spans: list[tuple[int, int]] = []  # packed rows of each chunk
        write_slots: list[torch.Tensor] = []  # (T,) per chunk: where its K/V go
        key_slots: list[torch.Tensor] = []  # (S,) per chunk: its request's keys 0 … its last
        logit_rows: list[int] = []
        choosing: list[Request] = []
        for chunk in plan.scheduled:
            request = requests[chunk.request_id]
            begin, end = chunk.start, chunk.start + chunk.num_tokens
            spans.append((len(ids), len(ids) + chunk.num_tokens))
            ids += request.all_token_ids[begin:end]
            positions += range(begin, end)
            write_slots.append(self.pool.slots(request.block_table, begin, end))
            key_slots.append(self.pool.slots(request.block_table, 0, end))
            if end == request.num_tokens:
                logit_rows.append(len(ids) - 1)
                choosing.append(request)
        padding = plan.total_padding
        pad_token = self.eos if self.eos is not None else 0
        ids += [pad_token] * padding  # blank rows: in every product, attending to nothing
        positions += [0] * padding

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

        rows = torch.tensor(logit_rows, dtype=torch.long, device=self.device)  # (R,)
        sampled: dict[int, int] = {}
        kept: dict[int, torch.Tensor] = {}
        with torch.inference_mode():
            logits = self.model.forward_packed(
                torch.tensor(ids, dtype=torch.long, device=self.device),  # (N,)
                torch.tensor(positions, dtype=torch.long, device=self.device),  # (N,)
                attend_rows,
                rows,
            )  # (R, V)
            for i, request in enumerate(choosing):
                row = logits[i : i + 1]  # (1, V)
                sampled[request.request_id] = self._choose(request, row)
                if self.keep_logits:
                    kept[request.request_id] = row[0].clone()  # (V,)
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)
        return ModelRunnerOutput(sampled, kept, time.perf_counter() - start)

    def _choose(self, request: Request, logits: torch.Tensor) -> int:
        """The next token from logits (1, V): greedy, or the sampling settings with the
        request's own generator."""
        check_logits(logits, len(request.output_token_ids))  # NaN weights: decoding's message
        seen = None
        if self.sampling.repetition_penalty != 1.0:
            seen = presence_mask(  # (1, V)
                torch.tensor([request.all_token_ids], device=self.device), self.vocab)
        out = sample_next(logits, self.sampling, request.generator, seen=seen, top_n=0)
        return int(out.token_ids[0])
