"""The block pool: fixed-size blocks of K/V, handed out by id and shared by reference count.

Owns `BlockPool`: per layer one key pool and one value pool shaped
(blocks, b, G, d), a reference count per block, a free list, a fill pointer per
block and an optional budget (the memory budget, in blocks). It is the one
pool of the project: ``paged.py``'s `PagedKVCache` (one run's rows, all the
same length) and the serving engine (requests of their own lengths that join
and leave at any step) both keep their K and V in it. Whoever holds blocks
keeps the **block tables** (``table[p // b]`` holds position p at slot
``p % b``), and gives its blocks back (`release`) when it is done with them.

Sharing and copy on write: another row, another request or a prefix cache may
hold a block too (its reference count counts them). Writing into a block
someone else also reads would change their tokens, so the writer first takes
a private copy (`copy_on_write`). The serving engine decides with the fill
pointer (`writable`): a holder may append in place at the next empty slot,
and only writing below it copies. The paged cache's rows move in lockstep,
so it copies any shared block a row appends to. Letters in shape comments:
T tokens, S keys, G K/V heads, d head_dim, b block size.
"""

from __future__ import annotations

import torch


class PoolFullError(Exception):
    """No free block within the budget (the scheduler waits, evicts or preempts)."""


class BlockPool:
    """K/V blocks for every layer, handed out and taken back by block id."""

    def __init__(
        self,
        num_layers: int,
        block_size: int,
        kv_heads: int,
        head_dim: int,
        *,
        budget: int | None = None,  # most blocks held at once; None = grow as needed
        dtype: torch.dtype = torch.float32,
        device: torch.device | str = "cpu",
        initial_blocks: int = 8,  # the pool tensors' first capacity (grown by doubling)
    ) -> None:
        self.block_size = block_size  # b
        self.budget = budget
        capacity = min(budget, initial_blocks) if budget is not None else initial_blocks
        shape = (capacity, block_size, kv_heads, head_dim)  # (blocks, b, G, d)
        self.key_pools = [torch.zeros(shape, dtype=dtype, device=device) for _ in range(num_layers)]
        self.value_pools = [torch.zeros(shape, dtype=dtype, device=device)
                            for _ in range(num_layers)]
        self._view_slots()
        self.ref_counts: list[int] = []  # per block id; 0 = free
        self.filled: list[int] = []  # per block id: slots written (0 … b)
        self._free: list[int] = []  # freed block ids, reused first
        self.copies_on_write = 0

    # ---- blocks -------------------------------------------------------------------------
    @property
    def blocks_in_use(self) -> int:
        """Blocks someone holds (a shared block counts once: it is stored once)."""
        return sum(1 for count in self.ref_counts if count > 0)

    @property
    def blocks_free(self) -> int:
        """Blocks that can still be handed out: the budget's rest, or the freed ones."""
        if self.budget is None:
            return len(self._free)
        return self.budget - self.blocks_in_use

    def allocate(self) -> int:
        """A free block (reference count 1, empty), or `PoolFullError` past the budget."""
        if self._free:
            block = self._free.pop()
        elif self.budget is not None and len(self.ref_counts) >= self.budget:
            raise PoolFullError
        else:
            block = len(self.ref_counts)
            self.ref_counts.append(0)
            self.filled.append(0)
            self._ensure_capacity(block + 1)
        self.ref_counts[block] = 1
        self.filled[block] = 0
        return block

    def retain(self, block: int) -> None:
        """One more holder of `block` (a request sharing it, or the prefix cache)."""
        self.ref_counts[block] += 1

    def release(self, block: int) -> None:
        """One holder fewer; the block is free when none is left."""
        self.ref_counts[block] -= 1
        if self.ref_counts[block] == 0:
            self._free.append(block)

    def writable(self, block: int, slot: int) -> int:
        """The block a holder may write `slot` of: `block` itself when the slot is its next
        empty one, else a private copy (copy on write; the caller's reference moves to it)."""
        if slot == self.filled[block]:
            return block
        return self.copy_on_write(block, slot)

    def copy_on_write(self, block: int, slot: int) -> int:
        """A private copy of `block`'s first `slot` slots (every layer, K and V), for a holder
        about to write at `slot`: the caller's reference moves from `block` to the copy."""
        copy = self.allocate()
        for pools in (self.key_pools, self.value_pools):
            for pool in pools:
                pool[copy, :slot] = pool[block, :slot]  # (slot, G, d) the tokens before
        self.filled[copy] = slot
        self.release(block)
        self.copies_on_write += 1
        return copy

    def _ensure_capacity(self, blocks: int) -> None:
        capacity = self.key_pools[0].shape[0]
        if blocks <= capacity:
            return
        grown = max(blocks, 2 * capacity)
        if self.budget is not None:
            grown = min(grown, self.budget)
        for pools in (self.key_pools, self.value_pools):
            for i, pool in enumerate(pools):
                bigger = pool.new_zeros(grown, *pool.shape[1:])
                bigger[:capacity] = pool
                pools[i] = bigger
        self._view_slots()

    def _view_slots(self) -> None:
        """Every pool seen as one row per slot, (blocks·b, G, d): what write and read index
        (slot s is block s // b, slot s % b)."""
        self.key_slots = [pool.flatten(0, 1) for pool in self.key_pools]
        self.value_slots = [pool.flatten(0, 1) for pool in self.value_pools]

    # ---- tokens -------------------------------------------------------------------------
    def slots(self, table: list[int], start: int, end: int) -> torch.Tensor:
        """Pool slot of positions start … end − 1 of a request with this block table, (T,)."""
        b = self.block_size
        device = self.key_pools[0].device
        positions = torch.arange(start, end)
        blocks = torch.tensor(table, dtype=torch.long)[positions // b]
        return (blocks * b + positions % b).to(device)  # (T,)

    def write(self, layer: int, slots: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> None:
        """Store k, v (T, G, d) of one layer at pool slots (T,)."""
        self.key_slots[layer].index_copy_(0, slots, k)
        self.value_slots[layer].index_copy_(0, slots, v)

    def mark_written(self, table: list[int], start: int, end: int) -> None:
        """Positions start … end − 1 of this table are taken (written this step): move the
        fill pointers past them."""
        b = self.block_size
        for p in range(start, end):
            block = table[p // b]
            self.filled[block] = max(self.filled[block], p % b + 1)

    def read(self, layer: int, slots: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Keys and values (S, G, d) of one layer at pool slots (S,), gathered in order."""
        return (self.key_slots[layer].index_select(0, slots),
                self.value_slots[layer].index_select(0, slots))

    # ---- bytes --------------------------------------------------------------------------
    @property
    def block_nbytes(self) -> int:
        """One block, every layer, K and V, read from the pool tensors."""
        return sum(p[0].nbytes for p in self.key_pools + self.value_pools)

    @property
    def used_nbytes(self) -> int:
        """Bytes of the blocks in use."""
        return self.blocks_in_use * self.block_nbytes

    @property
    def pool_nbytes(self) -> int:
        """Bytes of the pool tensors themselves (their capacity, free blocks included)."""
        return sum(p.nbytes for p in self.key_pools + self.value_pools)
