"""A paged KV cache: a pool of fixed-size blocks and a block table per row (vLLM's idea).

Owns `PagedKVCache`, a `KVCache` of `PagedLayer`s. The blocks live in a
`BlockPool` (``block_pool.py``, the pool the serving engine uses too): every
layer has one key pool and one value pool, shaped (blocks, b, G, d), and the
pool hands out block ids, counts references and copies blocks. This module
keeps the rest: a row's tokens live in the blocks its **block table** lists,
in order, so position p of row r sits in block ``table[r][p // b]`` at slot
``p % b``. One table serves every layer (block i is block i in each layer's
pool). Attention gets each row's keys and values gathered from its blocks
into a (B, S, G, d) tensor: the model's attention code is unchanged, and the
numbers it sees are exactly what a contiguous cache would hold.

What paging buys, and what this module shows:

- **No preallocation, waste only in the last block.** A row holds
  ceil(len / b) blocks; only its last block can have empty slots.
- **Sharing.** Rows of a repeated-sampling run start from one prompt: the
  stepper computes the prefill once and calls `select_rows`, which copies
  *block tables*, not tensors, and counts references. When a row appends to a
  shared block that is not full, the block is first copied (**copy on write**,
  the last row to append keeps the original); full prompt blocks stay shared
  for the whole run.
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
from kvstudio.engine.cache.block_pool import BlockPool
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
    """Block tables behind a list of `PagedLayer`s (the model uses it as any cache); the
    blocks themselves live in one `BlockPool`, made at the first step (it learns G, d, the
    dtype and the device from the first keys)."""

    def __init__(self, num_layers: int, spec: CacheSpec | None = None) -> None:
        layers = (PagedLayer(self, i) for i in range(num_layers))
        super().__init__(layers, spec or CacheSpec("paged"))
        self.block_size = self.spec.block_size
        self.clear_blocks()

    def clear_blocks(self) -> None:
        self.pool: BlockPool | None = None  # K/V blocks of every layer; made by _plan
        self.tables: list[list[int]] = []  # per row: block ids in position order
        self.lengths: list[int] = []  # per row: tokens stored
        self.active: list[bool] = []  # per row: still appending (False after eos)
        self.positions = 0  # positions planned (the next token's position)
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
        pool = self.pool
        assert pool is not None  # made by _plan
        if self._write_slots.numel():
            rows = self._write_rows  # (N,) the new tokens of the rows still appending
            new_k = k.reshape(B * T, G, d).index_select(0, rows)  # (N, G, d)
            new_v = v.reshape(B * T, G, d).index_select(0, rows)
            pool.write(index, self._write_slots, new_k, new_v)
        S = self._gather.shape[1]
        keys, values = pool.read(index, self._gather.view(-1))  # (B·S, G, d) from the blocks
        return keys.view(B, S, G, d), values.view(B, S, G, d)

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
        pool = self._pool_like(like)
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
                    table.append(pool.allocate())
                elif t == 0 and pool.ref_counts[table[block_index]] > 1:
                    # Another row reads this block too: append to a private copy of it.
                    table[block_index] = pool.copy_on_write(table[block_index], offset)
                block = table[block_index]
                pool.filled[block] = offset + 1  # the block's fill pointer: slots written
                slots.append(block * b + offset)
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

    def _pool_like(self, like: torch.Tensor) -> BlockPool:
        """The pool, made on the first step for keys shaped like `like` (B, T, G, d)."""
        if self.pool is None:
            _, _, G, d = like.shape
            self.pool = BlockPool(
                len(self), self.block_size, G, d, dtype=like.dtype, device=like.device,
                initial_blocks=4,
            )
        return self.pool

    # ---- blocks -------------------------------------------------------------------------
    @property
    def ref_counts(self) -> list[int]:
        """Per block id, the rows holding it (0 = free)."""
        return self.pool.ref_counts if self.pool is not None else []

    @property
    def copies_on_write(self) -> int:
        """Shared blocks copied because a row appended to them."""
        return self.pool.copies_on_write if self.pool is not None else 0

    # ---- rows ---------------------------------------------------------------------------
    def select_table_rows(self, rows: torch.Tensor | Sequence[int]) -> None:
        """Keep rows `rows` (repeats allowed) by copying block tables and counting references."""
        picked = [int(r) for r in rows]
        tables = [list(self.tables[r]) for r in picked]
        if self.pool is not None:  # no pool yet: no blocks to count
            for table in tables:
                for block in table:
                    self.pool.retain(block)
            for table in self.tables:
                for block in table:
                    self.pool.release(block)
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
        b = self.block_size
        kept_blocks = -(-length // b)  # ceil(length / b)
        for table in self.tables:
            assert self.pool is not None  # a row with positions holds blocks of the pool
            for block in table[kept_blocks:]:
                self.pool.release(block)
            del table[kept_blocks:]
            if table:
                self.pool.filled[table[-1]] = length - (kept_blocks - 1) * b  # (1 … b)
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
        return self.pool.blocks_in_use if self.pool is not None else 0

    def block_nbytes(self) -> tuple[int, int]:
        """(K bytes, V bytes) of one block in one layer, read from the pool tensors."""
        if self.pool is None:
            return 0, 0
        return self.pool.key_pools[0][0].nbytes, self.pool.value_pools[0][0].nbytes

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
        return self.pool.pool_nbytes if self.pool is not None else 0
