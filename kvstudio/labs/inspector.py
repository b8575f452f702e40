"""The cache inspector: what the KV cache holds after each step, and checks that it is exact.

Owns `CacheInspector`, a greedy run on our own model (`MiniMindBackend`)
that you advance one token at a time like the stepper, and the frozen
`CacheFrame` it returns per step:

- the K and V rows every layer holds, per K/V head (positions × head_dim),
  with the token at each position. A static cache's empty slots are NaN
  rows (drawn as empty); a sliding window's evicted rows are simply gone;
- the newest query's attention weights over the rows held, for every query
  head (with grouped-query attention, query heads h·n_rep … read K/V head h);
  they come from the query and keys the model really used, through the
  model's optional `probe` (the ordinary path never pays for it), passed
  through the one decode module (``decode.feed_tail``), which feeds the model;
- per layer: max |Δ| between the rows held before the step and the same
  positions after it (0 when the cache is append-only), and how many rows
  the step appended (1 per decode step);
- in recompute mode the step feeds the whole sequence to a fresh cache and
  compares the K/V rows it computes with those of a cache built step by
  step: max |Δ| and whether the dtypes agree. That is why caching is exact:
  the rows are the same numbers, to float32 rounding (0 at the prefill, the
  same call; after it the recompute's products have more rows and may round
  differently, about 1e-6 in fp32).

Frames carry numpy arrays (small: this model holds 512 bytes per layer and
token); nothing here imports Qt.

Letters in shape comments: L layers, R rows shown, G K/V heads, H query heads, d head_dim.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np
import torch

from kvstudio.engine import decode, limits
from kvstudio.engine.backends.minimind import LanguageModel, MiniMindBackend
from kvstudio.engine.cache.kinds import dense_layers
from kvstudio.engine.cache.kv_cache import CacheSpec, DynamicLayer, KVCache
from kvstudio.engine.records import Mode
from kvstudio.engine.tokenizer import TextTokenizer, TokenTexts


@dataclass(frozen=True)
class CacheFrame:
    """The cache after one step, with the step's exactness checks."""

    step: int  # 0 = prefill
    mode: Mode
    cache_kind: str  # "dynamic", "static" or "sliding"
    token_id: int  # the token this step chose
    token_text: str
    positions: tuple[int, ...]  # (R,) position of each row shown; -1 = an empty static slot
    row_texts: tuple[str, ...]  # (R,) the token at each row ("" for an empty slot)
    keys: np.ndarray  # (L, R, G, d) float32, NaN rows for empty slots
    values: np.ndarray  # (L, R, G, d)
    attention: np.ndarray  # (L, H, R) newest query's weights over the rows shown (NaN: empty)
    evicted_attention: np.ndarray  # (L, H) weight the query put on keys no longer held
    query_position: int  # position of the newest query
    n_rep: int  # query heads per K/V head
    old_rows_max_delta: tuple[float, ...]  # per layer: max |Δ| of rows held before the step
    old_rows_compared: int  # rows compared per layer (0 at the prefill)
    rows_appended: tuple[int, ...]  # per layer: positions added by this step
    recompute_max_delta_k: tuple[float, ...] | None  # per layer (recompute mode only)
    recompute_max_delta_v: tuple[float, ...] | None
    recompute_dtype_match: bool | None  # recomputed and cached K/V have one dtype
    dtype: str  # the cache's dtype, e.g. "float32"
    finished: bool  # eos or the token budget

    @property
    def num_layers(self) -> int:
        return int(self.keys.shape[0])

    @property
    def num_kv_heads(self) -> int:
        return int(self.keys.shape[2])

    @property
    def old_rows_unchanged(self) -> bool:
        return max(self.old_rows_max_delta, default=0.0) == 0.0

    def query_heads(self, kv_head: int) -> tuple[int, ...]:
        """The query heads that read K/V head `kv_head` (GQA)."""
        return tuple(range(kv_head * self.n_rep, (kv_head + 1) * self.n_rep))

    def held_rows(self) -> int:
        return sum(1 for p in self.positions if p >= 0)


@dataclass(frozen=True)
class _Held:
    """One layer's rows before a step: absolute positions and their K/V (clones)."""

    start: int  # position of row 0
    keys: torch.Tensor  # (n, G, d)
    values: torch.Tensor  # (n, G, d)


class CacheInspector:
    """A greedy run on `backend` that records what its cache holds after every step."""

    def __init__(
        self,
        backend: LanguageModel,
        tokenizer: TextTokenizer,
        prompt_ids: Sequence[int],
        *,
        mode: Mode = "cached",
        cache: CacheSpec | None = None,
        max_new_tokens: int = 16,
        stop_at_eos: bool = True,
    ) -> None:
        if not isinstance(backend, MiniMindBackend):
            raise ValueError(
                "The cache inspector reads our own model's attention; a transformers model runs "
                "its own. Open a KV Studio model folder or a MiniMind .pth."
            )
        if mode not in ("cached", "recompute"):
            raise ValueError(f"Unknown mode {mode!r}; choose 'cached' or 'recompute'.")
        if not prompt_ids:
            raise ValueError("The prompt is empty; type some text.")
        if max_new_tokens < 1:
            raise ValueError("Generate at least one new token.")
        self.spec = cache or CacheSpec()
        if self.spec.kind == "paged":  # the paged cache keeps K/V in a block pool
            raise ValueError(
                "The inspector reads dynamic, static, sliding or quantized caches; "
                f"choose one of those instead of {self.spec.kind}."
            )
        self.spec.check_room(len(prompt_ids) + max_new_tokens)
        limits.check_positions(backend.max_positions, len(prompt_ids), max_new_tokens)
        self.backend = backend
        self.model = backend.model
        self.tokenizer = tokenizer
        self.mode: Mode = mode
        self.max_new_tokens = max_new_tokens
        self.stop_at_eos = stop_at_eos
        self.eos_id = tokenizer.eos_id if tokenizer.eos_id is not None else backend.eos_token_id
        cfg = self.model.config
        self.n_heads = cfg.num_attention_heads
        self.n_rep = cfg.n_rep
        self.head_dim = cfg.resolved_head_dim
        self.tokens: list[int] = [int(t) for t in prompt_ids]
        self.prompt_len = len(self.tokens)
        # In both modes a cache is built step by step: in cached mode it is the run's cache,
        # in recompute mode the reference the recomputed rows are compared with.
        self.cache: KVCache[DynamicLayer] = self._new_cache()
        self._previous: list[_Held] | None = None
        self._token_text = TokenTexts(tokenizer)
        self._step = 0
        self._done = False
        self.frames: list[CacheFrame] = []

    def _new_cache(self) -> KVCache[DynamicLayer]:
        # Dense and quantized layers hold K and V in tensors of their own: they can be read.
        return KVCache(dense_layers(self.backend.num_layers, self.spec), self.spec)

    @property
    def done(self) -> bool:
        return self._done

    def __iter__(self) -> Iterator[CacheFrame]:
        while not self._done:
            yield self.step()

    # ---- one step ----------------------------------------------------------------------------
    def step(self) -> CacheFrame:
        if self._done:
            raise ValueError("The run is finished; start a new one.")
        step = self._step
        captured: dict[int, tuple[torch.Tensor, torch.Tensor]] = {}

        def probe(layer: int, q: torch.Tensor, k: torch.Tensor) -> None:
            captured[layer] = (q[0, -1].float(), k[0].float())  # (H, d), (S, G, d)

        fed_start = self.cache.seq_length  # position of the first token fed to the cache
        new_ids = self.tokens[fed_start:]  # the prompt, then the last chosen token
        delta_k = delta_v = None
        dtype_match = None
        with torch.inference_mode():
            device = self.backend.device
            if self.mode == "cached":
                ids = torch.tensor([new_ids], dtype=torch.long, device=device)  # (1, T)
                logits = decode.feed_tail(self.backend, ids, self.cache, 1, probe)  # (1, 1, V)
                query_position, key_start = len(self.tokens) - 1, self._visible_start(ids)
            else:
                whole = torch.tensor([self.tokens], dtype=torch.long, device=device)  # (1, P+t)
                fresh = self._new_cache()  # what recompute computes, kept
                logits = decode.feed_tail(self.backend, whole, fresh, 1, probe)  # (1, 1, V)
                query_position, key_start = len(self.tokens) - 1, 0
                step_ids = torch.tensor([new_ids], dtype=torch.long, device=device)
                decode.feed(self.backend, step_ids, self.cache)  # the cached reference
                delta_k, delta_v, dtype_match = _compare_caches(fresh, self.cache)
            token = int(logits[0, -1].argmax())
        held_now = _held_rows(self.cache)
        old_delta, compared, appended = _compare_held(self._previous, held_now)
        self._previous = held_now
        self.tokens.append(token)
        self._step += 1
        finished = (self.stop_at_eos and token == self.eos_id) or (
            self._step >= self.max_new_tokens
        )
        self._done = finished
        frame = self._frame(
            step, token, captured, query_position, key_start, held_now,
            old_delta, compared, appended, delta_k, delta_v, dtype_match, finished,
        )  # fmt: skip
        self.frames.append(frame)
        return frame

    def _visible_start(self, ids: torch.Tensor) -> int:
        """Position of the first key the last forward attended (before any eviction)."""
        window = self.spec.attention_window
        end = self.cache.seq_length
        if window is None:
            return 0
        fed = int(ids.shape[1])
        before = end - fed
        return max(0, before - (window - 1))  # a sliding layer keeps W − 1 rows, returns them + new

    # ---- building the frame ------------------------------------------------------------------
    def _frame(
        self,
        step: int,
        token: int,
        captured: dict[int, tuple[torch.Tensor, torch.Tensor]],
        query_position: int,
        key_start: int,
        held: list[_Held],
        old_delta: tuple[float, ...],
        compared: int,
        appended: tuple[int, ...],
        delta_k: tuple[float, ...] | None,
        delta_v: tuple[float, ...] | None,
        dtype_match: bool | None,
        finished: bool,
    ) -> CacheFrame:
        layer0 = self.cache[0]
        static = self.spec.kind == "static" and layer0.keys is not None
        first = held[0].start
        count = held[0].keys.shape[0]
        slots = layer0.keys.shape[1] if static and layer0.keys is not None else count
        positions = [first + r if r < count else -1 for r in range(slots)]
        L, G, d = len(held), held[0].keys.shape[1], held[0].keys.shape[2]
        keys = np.full((L, slots, G, d), np.nan, dtype=np.float32)  # (L, R, G, d)
        values = np.full_like(keys, np.nan)
        for layer, rows in enumerate(held):
            keys[layer, :count] = rows.keys.float().cpu().numpy()
            values[layer, :count] = rows.values.float().cpu().numpy()
        attention = np.full((L, self.n_heads, slots), np.nan, dtype=np.float32)  # (L, H, R)
        evicted = np.zeros((L, self.n_heads), dtype=np.float32)  # (L, H)
        for layer, (q, k) in captured.items():
            weights = self._weights(q, k, key_start, query_position)  # (H, S)
            key_positions = range(key_start, key_start + k.shape[0])
            shown = np.asarray([first <= p < first + count for p in key_positions])
            attention[layer, :, :count] = weights[:, shown]
            evicted[layer] = weights[:, ~shown].sum(axis=1)
        texts = tuple(self._token_text(self.tokens[p]) if p >= 0 else "" for p in positions)
        return CacheFrame(
            step=step,
            mode=self.mode,
            cache_kind=self.spec.kind,
            token_id=token,
            token_text=self._token_text(token),
            positions=tuple(positions),
            row_texts=texts,
            keys=keys,
            values=values,
            attention=attention,
            evicted_attention=evicted,
            query_position=query_position,
            n_rep=self.n_rep,
            old_rows_max_delta=old_delta,
            old_rows_compared=compared,
            rows_appended=appended,
            recompute_max_delta_k=delta_k,
            recompute_max_delta_v=delta_v,
            recompute_dtype_match=dtype_match,
            dtype=str(held[0].keys.dtype).removeprefix("torch."),
            finished=finished,
        )

    def _weights(
        self, q: torch.Tensor, k: torch.Tensor, key_start: int, query_position: int
    ) -> np.ndarray:
        """softmax(q·kᵀ/√d) of the newest query, each query head on its K/V head: (H, S)."""
        k_per_head = k.repeat_interleave(self.n_rep, dim=1)  # (S, H, d): head h reads h // n_rep
        scores = torch.einsum("hd,shd->hs", q, k_per_head) / math.sqrt(self.head_dim)  # (H, S)
        key_positions = torch.arange(key_start, key_start + k.shape[0])
        visible = key_positions <= query_position
        window = self.spec.attention_window
        if window is not None:
            visible &= key_positions > query_position - window  # W keys, the query's own included
        scores = scores.masked_fill(~visible.to(scores.device)[None, :], float("-inf"))
        return torch.softmax(scores, dim=-1).cpu().numpy()


def _held_rows(cache: KVCache[DynamicLayer]) -> list[_Held]:
    """Clones of the rows each layer holds now, with the position of the first one."""
    held = []
    for layer in cache:
        stored = layer.stored_tokens
        if layer.keys is None or layer.values is None:
            raise ValueError("The cache is empty after a step; this should not happen.")
        keys = layer.keys[0, :stored].clone()  # (n, G, d); a static layer's used slots
        values = layer.values[0, :stored].clone()
        held.append(_Held(layer.seq_length - stored, keys, values))
    return held


def _compare_held(
    before: list[_Held] | None, after: list[_Held]
) -> tuple[tuple[float, ...], int, tuple[int, ...]]:
    """Per layer: max |Δ| over positions held both times, rows compared, rows appended."""
    if before is None:
        return tuple(0.0 for _ in after), 0, tuple(a.start + a.keys.shape[0] for a in after)
    deltas, appended = [], []
    compared = 0
    for old, new in zip(before, after, strict=True):
        lo = max(old.start, new.start)
        hi = min(old.start + old.keys.shape[0], new.start + new.keys.shape[0])
        delta = 0.0
        if hi > lo:
            a = slice(lo - old.start, hi - old.start)
            b = slice(lo - new.start, hi - new.start)
            delta = max(
                float((new.keys[b] - old.keys[a]).abs().max()),
                float((new.values[b] - old.values[a]).abs().max()),
            )
        compared = max(compared, hi - lo)
        deltas.append(delta)
        appended.append(new.start + new.keys.shape[0] - (old.start + old.keys.shape[0]))
    return tuple(deltas), compared, tuple(appended)


def _compare_caches(
    recomputed: KVCache[DynamicLayer], cached: KVCache[DynamicLayer]
) -> tuple[tuple[float, ...], tuple[float, ...], bool]:
    """max |Δ| of K and of V per layer between the rows both hold, and whether dtypes agree."""
    dk, dv = [], []
    same_dtype = True
    for new, ref in zip(_held_rows(recomputed), _held_rows(cached), strict=True):
        same_dtype &= new.keys.dtype == ref.keys.dtype and new.values.dtype == ref.values.dtype
        lo = max(new.start, ref.start)
        hi = min(new.start + new.keys.shape[0], ref.start + ref.keys.shape[0])
        a = slice(lo - new.start, hi - new.start)
        b = slice(lo - ref.start, hi - ref.start)
        dk.append(float((new.keys[a] - ref.keys[b]).abs().max()) if hi > lo else 0.0)
        dv.append(float((new.values[a] - ref.values[b]).abs().max()) if hi > lo else 0.0)
    return tuple(dk), tuple(dv), same_dtype
