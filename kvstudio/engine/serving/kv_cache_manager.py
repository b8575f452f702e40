"""The serving engine's blocks: who holds which block of the one `BlockPool`, and the prefix cache.

Owns `KVCacheManager`, the only code of the serving engine that allocates and
frees blocks (``engine/cache/block_pool.py``'s `BlockPool`, the project's one
pool) and the only one that talks to the prefix cache (``prefix.py``: none,
vLLM's chained block hashes, SGLang's radix tree). The scheduler asks it how
many blocks a request's next chunk needs (`blocks_needed`) and how many it
could still get (`room`: free ones and those only the prefix cache holds),
then has it take them (`allocate_slots`, evicting prefix-cache entries first
when the pool is full), start a request from the longest cached prefix
(`match_prefix`) or give a request's blocks back (`free`). After a step the
scheduler has it remember what each fed request stored (`cache_blocks`). The
block table itself lives on the `Request` (``request.py``). It never runs the
model.
"""

from __future__ import annotations

import math

from kvstudio.engine.cache.block_pool import BlockPool, PoolFullError
from kvstudio.engine.serving.prefix import PrefixCache, make_prefix_cache
from kvstudio.engine.serving.records import PrefixMode
from kvstudio.engine.serving.request import Request


class KVCacheManager:
    """Blocks for requests from one pool, with a prefix cache in front of it."""

    def __init__(self, pool: BlockPool, prefix_mode: PrefixMode = "none") -> None:
        self.pool = pool
        self.prefix: PrefixCache = make_prefix_cache(prefix_mode, pool)

    # ---- what a chunk needs, what is left ---------------------------------------------------
    def blocks_needed(self, request: Request, count: int) -> int:
        """New blocks `request` needs to store `count` more tokens (a copy on write included)."""
        b = self.pool.block_size
        start, table = request.num_computed_tokens, request.block_table
        new = max(0, -(-(start + count) // b) - len(table))
        index, slot = divmod(start, b)
        if slot and index < len(table) and self.pool.filled[table[index]] != slot:
            new += 1  # someone else wrote past here: the block is copied first
        return new

    def room(self) -> float:
        """Blocks a request could still get: free ones and those only the prefix cache holds."""
        if self.pool.budget is None:
            return math.inf
        return self.pool.blocks_free + self.prefix.cached_only

    # ---- taking and giving back -------------------------------------------------------------
    def allocate_slots(self, request: Request, count: int) -> None:
        """Blocks for `count` more tokens of `request`, evicting prefix-cache entries when the
        pool is full (the scheduler checked `room` first)."""
        while True:
            try:
                self._take(request, count)
                return
            except PoolFullError:
                if not self.prefix.evict():
                    raise RuntimeError("The block pool ran out after its check; a bug.") from None

    def _take(self, request: Request, count: int) -> None:
        """Blocks for `count` more tokens, their slots claimed at once (so a request sharing
        the block in the same step copies it instead of writing there too). `PoolFullError`
        may stop it midway; what it took stays in the table and goes back with the rest."""
        b = self.pool.block_size
        start, table = request.num_computed_tokens, request.block_table
        index, slot = divmod(start, b)
        if slot and index < len(table):
            table[index] = self.pool.writable(table[index], slot)
        while len(table) * b < start + count:
            table.append(self.pool.allocate())
        self.pool.mark_written(table, start, start + count)

    def match_prefix(self, request: Request) -> int:
        """Start `request` from the prefix cache's longest match (its blocks become the
        request's own references); the hit in tokens."""
        hit, blocks = self.prefix.match(request.all_token_ids)
        request.block_table, request.num_computed_tokens = blocks, hit
        return hit

    def free(self, request: Request) -> None:
        """Give back every block of `request` (it ended, was preempted, or was not admitted
        after its prefix match); its K/V count from zero again."""
        for block in request.block_table:
            self.pool.release(block)
        request.block_table = []
        request.num_computed_tokens = 0

    def cache_blocks(self, request: Request) -> None:
        """Remember the tokens `request` has stored, for later requests to share."""
        self.prefix.insert(request.all_token_ids[: request.num_computed_tokens],
                           request.block_table)

    @property
    def block_nbytes(self) -> int:
        """One block, every layer, K and V (what the serving lab's table shows)."""
        return self.pool.block_nbytes
