"""A paged KV cache: a pool of fixed-size blocks and a block table per row (vLLM's idea).

Owns `PagedKVCache`, a `KVCache` of `PagedLayer`s. Every layer has one key
pool and one value pool, shaped
(blocks, b, H_kv, d); a row's tokens live in the blocks its **block table**
lists, in order, so position p of row r sits in block ``table[r][p // b]`` at
slot ``p % b``. One table serves every layer (block i is block i in each
layer's pool). Attention gets each row's keys and values gathered from its
blocks into a (B, S, H_kv, d) tensor: the model's attention code is unchanged,
and the numbers it sees are exactly what a contiguous cache would hold.

What paging buys, and what this module shows:

- **No preallocation, waste only in the last block.** A row holds
  ceil(len / b) blocks; only its last block can have empty slots.
- **Sharing.** Rows of a repeated-sampling run start from one prompt: the
  stepper computes the prefill once and calls `select_rows`, which copies
  *block tables*, not tensors, and counts references. When a row appends to a
  shared block that is not full, the block is first copied (**copy on write**);
  full prompt blocks stay shared for the whole run.
- **Finished rows stop growing.** `finish_rows` marks rows that produced eos;
  they keep their blocks but store nothing more (a dense cache keeps one
  column per step for every row).
- **Cropping gives blocks back.** `crop(n)` (speculative decoding's rejected
  drafts) releases every block past position n of each row.

Bytes are measured from the pool tensors: `nbytes` is the blocks rows hold
(each block's bytes read from the pool), `used_nbytes` the slots holding real
tokens, `pool_nbytes` the pool tensors' capacity (grown by doubling; freed
blocks are reused). Letters in shape comments: B rows, T new tokens, S keys,
G K/V heads, d head_dim, b block size.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch

from kvstudio.engine.cache.base import CacheLayer, KVCache, check_crop_length
from kvstudio.engine.cache.spec import CacheSpec


@dataclass(frozen=True)
class BlockRef:
    """One entry of a row's block table, for the per-step view."""

    block: int  # block id in the pool
    tokens: int  # slots of this block that hold this row's tokens (1 … b)
    shared: bool  # more than one row references the block


class PagedLayer(CacheLayer):
    """One transformer layer's view of the paged cache (what the model calls `update` on).

    The block tables are shared by every layer (block i is block i in each layer's
    pool), so layer 0 plans the blocks of a step and moves the tables when rows are
    selected or finish; the other layers only store and gather their own K and V.
    """

    def __init__(self, owner: PagedKVCache, index: int) -> None:
        self.owner = owner
        self.index = index
        self.seq_length = 0

    def update(self, k: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Store k, v (B, T, G, d) in this layer's blocks; return every row's K, V (B, S, G, d)."""
        self.seq_length += k.shape[1]
        return self.owner.update_layer(self.index, k, v)

    @property
    def stored_tokens(self) -> int:
        return max(self.owner.lengths, default=0)  # the longest row's tokens

    def part_nbytes(self) -> tuple[int, int]:
        """(K bytes, V bytes) of the blocks rows reference, read from this layer's pools."""
        k, v = self.owner.block_nbytes()
        live = self.owner.live_blocks
        return live * k, live * v

    @property
    def used_nbytes(self) -> int:
        return self.owner.used_layer_nbytes()

    def select_rows(self, rows: torch.Tensor) -> None:
        if self.index == 0:
            self.owner.select_table_rows(rows)

    def finish_rows(self, finished: torch.Tensor) -> None:
        if self.index == 0:
            self.owner.finish_table_rows(finished.tolist())

    def reset(self) -> None:
        self.seq_length = 0
        if self.index == 0:
            self.owner.clear_blocks()


class PagedKVCache(KVCache[CacheLayer]):
    """Block pool + block tables behind a list of `PagedLayer`s (the model uses it as any cache)."""

    def __init__(self, num_layers: int, spec: CacheSpec | None = None) -> None:
        layers = (PagedLayer(self, i) for i in range(num_layers))
        super().__init__(layers, spec or CacheSpec("paged"))
        self.block_size = self.spec.block_size
        self.clear_blocks()

    def clear_blocks(self) -> None:
        n = len(self)
        self.key_pools: list[torch.Tensor | None] = [None] * n  # (capacity, b, G, d) per layer
        self.value_pools: list[torch.Tensor | None] = [None] * n
        self.ref_counts: list[int] = []  # per block id; 0 = free
        self._free: list[int] = []  # block ids to reuse
        self.tables: list[list[int]] = []  # per row: block ids in position order
        self.lengths: list[int] = []  # per row: tokens stored
        self.active: list[bool] = []  # per row: still appending (False after eos)
        self.positions = 0  # positions planned (the next token's position)
        self.copies_on_write = 0  # shared blocks copied because a row appended to them
        self._write_slots = torch.empty(0, dtype=torch.long)  # (N,) pool slots written this step
        self._write_rows = torch.empty(0, dtype=torch.long)  # (N,) rows of k.view(B·T) they take
        self._gather = torch.empty(0, 0, dtype=torch.long)  # (B, S) pool slot of each key

    # ---- what the layers ask ------------------------------------------------------------
    def update_layer(
        self, index: int, k: torch.Tensor, v: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        B, T, G, d = k.shape
        if index == 0:
            self._plan(B, T, k)  # blocks for the new tokens (one plan serves every layer)
        pool_k, pool_v = self.key_pools[index], self.value_pools[index]
        assert pool_k is not None and pool_v is not None  # allocated by _plan
        flat_k = pool_k.view(-1, G, d)  # (capacity·b, G, d): one row per slot
        flat_v = pool_v.view(-1, G, d)
        if self._write_slots.numel():
            rows = self._write_rows
            flat_k.index_copy_(0, self._write_slots, k.reshape(B * T, G, d).index_select(0, rows))
            flat_v.index_copy_(0, self._write_slots, v.reshape(B * T, G, d).index_select(0, rows))
        S = self._gather.shape[1]
        where = self._gather.view(-1)  # (B·S,)
        keys = flat_k.index_select(0, where).view(B, S, G, d)  # gathered from the row's blocks
        values = flat_v.index_select(0, where).view(B, S, G, d)
        return keys, values

    def _plan(self, batch: int, new: int, like: torch.Tensor) -> None:
        """Give every active row slots for `new` more tokens; build the write and gather indices."""
        B, T = batch, new
        if not self.tables:
            self.tables = [[] for _ in range(B)]
            self.lengths = [0] * B
            self.active = [True] * B
        if len(self.tables) != B:
            raise ValueError(
                f"The paged cache holds {len(self.tables)} rows but the model fed {B}; "
                "start a new run."
            )
        self._ensure_pools(like)
        b = self.block_size
        slots: list[int] = []
        sources: list[int] = []
        for r in range(B):
            if not self.active[r]:
                continue  # a finished row stores nothing more (its output is not used)
            table, n = self.tables[r], self.lengths[r]
            for t in range(T):
                block_index, offset = divmod(n + t, b)
                if offset == 0:
                    table.append(self._allocate())
                elif t == 0 and self.ref_counts[table[block_index]] > 1:
                    table[block_index] = self._copy_on_write(table[block_index])
                slots.append(table[block_index] * b + offset)
                sources.append(r * T + t)
            self.lengths[r] = n + T
        self.positions += T
        device = like.device
        self._write_slots = torch.tensor(slots, dtype=torch.long, device=device)
        self._write_rows = torch.tensor(sources, dtype=torch.long, device=device)
        S = self.positions
        width = -(-S // b)  # blocks an active row holds
        padded = [table + [table[0]] * (width - len(table)) for table in self.tables]
        tables = torch.tensor(padded, dtype=torch.long, device=device)  # (B, width)
        positions = torch.arange(S, device=device)  # (S,)
        # A finished row's positions past its length point into its first block: those keys
        # only feed that row's attention, whose output the stepper replaces with eos.
        self._gather = tables[:, positions // b] * b + positions % b  # (B, S)

    # ---- blocks -------------------------------------------------------------------------
    def _ensure_pools(self, like: torch.Tensor) -> None:
        if self.key_pools[0] is None:
            _, _, G, d = like.shape
            for i in range(len(self)):
                self.key_pools[i] = like.new_zeros(4, self.block_size, G, d)
                self.value_pools[i] = like.new_zeros(4, self.block_size, G, d)

    @property
    def capacity(self) -> int:
        pool = self.key_pools[0]
        return 0 if pool is None else int(pool.shape[0])

    def _grow(self, needed: int) -> None:
        new_capacity = max(needed, 2 * self.capacity)
        for pools in (self.key_pools, self.value_pools):
            for i, pool in enumerate(pools):
                assert pool is not None
                grown = pool.new_zeros(new_capacity, *pool.shape[1:])
                grown[: pool.shape[0]] = pool
                pools[i] = grown

    def _allocate(self) -> int:
        if self._free:
            block = self._free.pop()
            self.ref_counts[block] = 1
            return block
        block = len(self.ref_counts)
        self.ref_counts.append(1)
        if block >= self.capacity:
            self._grow(block + 1)
        return block

    def _release(self, block: int) -> None:
        self.ref_counts[block] -= 1
        if self.ref_counts[block] == 0:
            self._free.append(block)

    def _copy_on_write(self, block: int) -> int:
        """A private copy of a shared block (every layer), so appending leaves the others' alone."""
        copy = self._allocate()
        for pools in (self.key_pools, self.value_pools):
            for pool in pools:
                assert pool is not None
                pool[copy] = pool[block]
        self._release(block)
        self.copies_on_write += 1
        return copy

    # ---- rows ---------------------------------------------------------------------------
    def select_table_rows(self, rows: torch.Tensor | Sequence[int]) -> None:
        """Keep rows `rows` (repeats allowed) by copying block tables and counting references."""
        picked = [int(r) for r in rows]
        tables = [list(self.tables[r]) for r in picked]
        for table in tables:
            for block in table:
                self.ref_counts[block] += 1
        for table in self.tables:
            for block in table:
                self._release(block)
        self.tables = tables
        self.lengths = [self.lengths[r] for r in picked]
        self.active = [self.active[r] for r in picked]

    def crop(self, length: int) -> int:
        """Keep every row's first `length` positions: the blocks past them go back to the pool
        (a shared one only loses this row's reference). Returns the positions cut off.

        The slots after `length` in a row's last kept block still hold the cut tokens'
        numbers, but nothing reads them: attention gathers positions < `length` only,
        and the next tokens overwrite those slots (copying the block first if it is
        shared). Rows that finished (eos) are refused: their lengths differ.
        """
        check_crop_length(length, self.seq_length)
        if not all(self.active):
            raise ValueError(
                "Cannot crop a paged cache whose rows finished at different lengths; crop "
                "before any row produces eos."
            )
        removed = self.positions - length
        kept_blocks = -(-length // self.block_size)  # ceil(length / b)
        for table in self.tables:
            for block in table[kept_blocks:]:
                self._release(block)
            del table[kept_blocks:]
        self.lengths = [length] * len(self.tables)
        self.positions = length
        for layer in self:
            layer.seq_length = length
        return removed

    def finish_table_rows(self, finished: Sequence[bool]) -> None:
        """Rows that produced eos: they keep their blocks and store no more tokens."""
        for r, done in enumerate(finished):
            if done and r < len(self.active):
                self.active[r] = False

    def block_table(self) -> tuple[tuple[BlockRef, ...], ...]:
        """Per row, the blocks it holds in order: id, tokens in it, shared or not."""
        b = self.block_size
        return tuple(
            tuple(
                BlockRef(block, min(b, length - j * b), self.ref_counts[block] > 1)
                for j, block in enumerate(table)
            )
            for table, length in zip(self.tables, self.lengths, strict=True)
        )

    # ---- measurements -------------------------------------------------------------------
    @property
    def live_blocks(self) -> int:
        """Blocks some row holds (a shared block counts once: it is stored once)."""
        return sum(1 for count in self.ref_counts if count > 0)

    def block_nbytes(self) -> tuple[int, int]:
        """(K bytes, V bytes) of one block in one layer, read from the pool tensors."""
        pool_k, pool_v = self.key_pools[0], self.value_pools[0]
        if pool_k is None or pool_v is None:
            return 0, 0
        return pool_k[0].nbytes, pool_v[0].nbytes

    def used_layer_nbytes(self) -> int:
        """Bytes of one layer's slots that hold tokens (a shared block's tokens counted once)."""
        k, v = self.block_nbytes()
        per_slot = (k + v) // self.block_size if self.block_size else 0
        filled: dict[int, int] = {}
        for row in self.block_table():
            for ref in row:
                filled[ref.block] = max(filled.get(ref.block, 0), ref.tokens)
        return per_slot * sum(filled.values())

    @property
    def pool_nbytes(self) -> int:
        """Bytes of the pool tensors themselves (capacity, including free blocks)."""
        pools = [p for p in self.key_pools + self.value_pools if p is not None]
        return sum(p.nbytes for p in pools)
