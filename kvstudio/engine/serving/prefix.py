"""Prefix caching: a new request reuses the K/V blocks of a prompt that began the same way.

Owns the three modes a `SchedulerConfig` names (`make_prefix_cache`):

- ``none`` (`NoPrefixCache`): every prompt is computed in full.
- ``blocks`` (`BlockHashCache`, vLLM's automatic prefix caching): only *whole*
  blocks are shared. Block j of a sequence is known by a hash of its b tokens
  and its parent's hash, so equal hashes mean equal tokens *and* an equal prefix
  before them. A prompt of P tokens reuses at most ⌊(P − 1) / b⌋ blocks: its last
  token is always computed, because its logits choose the first answer token.
  Hit tokens = ⌊min(shared, P − 1) / b⌋ · b.
- ``radix`` (`RadixCache`, SGLang's radix tree): token-exact. The tree's edges
  are token runs; a prompt walks it as far as it matches, min(shared, P − 1)
  tokens. A match that ends inside a block shares that block too; the request
  copies it before writing its own tokens there (`BlockPool.writable`).

The cache holds its own reference on every block it lists, so a request that
ends leaves its prompt's blocks behind for the next one. When the pool runs
out, `evict` drops the least recently used entry; blocks held only by the cache
(`cached_only`) are the ones that frees. It never runs the model.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections import Counter, OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field

from kvstudio.engine.cache.block_pool import BlockPool
from kvstudio.engine.serving.records import PrefixMode


class PrefixCache(ABC):
    """What the `KVCacheManager` asks of a prefix cache."""

    def __init__(self, pool: BlockPool) -> None:
        self.pool = pool
        self.refs: Counter[int] = Counter()  # block → references this cache holds on it

    @abstractmethod
    def match(self, tokens: Sequence[int]) -> tuple[int, list[int]]:
        """(hit tokens, the blocks holding them): the caller's own references, retained here.

        The last token is never a hit: its logits are needed.
        """

    @abstractmethod
    def insert(self, tokens: Sequence[int], table: Sequence[int]) -> None:
        """Remember `tokens` (whose K/V are stored) as held by the blocks of `table`."""

    @abstractmethod
    def evict(self) -> bool:
        """Forget the least recently used entry; False when there is nothing left."""

    def _hold(self, block: int) -> None:
        self.pool.retain(block)
        self.refs[block] += 1

    def _drop(self, block: int) -> None:
        self.pool.release(block)
        self.refs[block] -= 1
        if not self.refs[block]:
            del self.refs[block]

    @property
    def cached_only(self) -> int:
        """Blocks nobody but this cache holds: evicting frees them."""
        counts = self.pool.ref_counts
        return sum(1 for block, n in self.refs.items() if counts[block] == n)


class NoPrefixCache(PrefixCache):
    """Prefix caching off."""

    def match(self, tokens: Sequence[int]) -> tuple[int, list[int]]:
        return 0, []

    def insert(self, tokens: Sequence[int], table: Sequence[int]) -> None:
        return None

    def evict(self) -> bool:
        return False


@dataclass(frozen=True)
class HashedBlock:
    """One cached block: its id in the pool, its parent's hash and its tokens."""

    block: int
    parent: int | None
    tokens: tuple[int, ...]


class BlockHashCache(PrefixCache):
    """vLLM's block hashes: whole blocks only, each hash chained to its parent's."""

    def __init__(self, pool: BlockPool) -> None:
        super().__init__(pool)
        self.entries: OrderedDict[int, HashedBlock] = OrderedDict()  # hash → block, LRU first

    def chain(self, tokens: Sequence[int], blocks: int) -> list[tuple[int, HashedBlock]]:
        """The first `blocks` full blocks of `tokens` as (hash, what it must hold)."""
        b, parent, out = self.pool.block_size, None, []
        for j in range(blocks):
            piece = tuple(tokens[j * b : (j + 1) * b])
            key = hash((parent, piece))
            out.append((key, HashedBlock(-1, parent, piece)))
            parent = key
        return out

    def match(self, tokens: Sequence[int]) -> tuple[int, list[int]]:
        blocks: list[int] = []
        for key, wanted in self.chain(tokens, (len(tokens) - 1) // self.pool.block_size):
            entry = self.entries.get(key)
            if entry is None or (entry.parent, entry.tokens) != (wanted.parent, wanted.tokens):
                break  # a miss (or a hash collision, checked token by token)
            self.entries.move_to_end(key)
            self.pool.retain(entry.block)
            blocks.append(entry.block)
        return len(blocks) * self.pool.block_size, blocks

    def insert(self, tokens: Sequence[int], table: Sequence[int]) -> None:
        for j, (key, wanted) in enumerate(self.chain(tokens, len(tokens) // self.pool.block_size)):
            if key in self.entries:
                self.entries.move_to_end(key)
                continue
            self.entries[key] = HashedBlock(table[j], wanted.parent, wanted.tokens)
            self._hold(table[j])

    def evict(self) -> bool:
        counts = self.pool.ref_counts
        # First a block only the cache holds (evicting it frees memory), else the oldest.
        victim = next((k for k, e in self.entries.items() if counts[e.block] == 1), None)
        if victim is None:
            victim = next(iter(self.entries), None)
        if victim is None:
            return False
        self._drop(self.entries.pop(victim).block)
        return True


@dataclass(eq=False)
class RadixNode:
    """A run of tokens (an edge of SGLang's radix tree) and the blocks holding it."""

    start: int  # position of its first token
    edge: tuple[int, ...]  # its tokens
    blocks: dict[int, int]  # block index (position // b) → block id, for its positions
    parent: RadixNode | None = None
    children: dict[int, RadixNode] = field(default_factory=dict)  # by first token
    last_used: int = 0

    @property
    def end(self) -> int:
        return self.start + len(self.edge)


class RadixCache(PrefixCache):
    """SGLang's radix tree: token-exact prefixes, shared blocks copied on write."""

    def __init__(self, pool: BlockPool) -> None:
        super().__init__(pool)
        self.root = RadixNode(0, (), {})
        self.clock = 0

    def _indices(self, start: int, end: int) -> range:
        b = self.pool.block_size
        return range(start // b, (end - 1) // b + 1) if end > start else range(0)

    def _walk(self, tokens: Sequence[int], limit: int) -> tuple[int, list[RadixNode], int]:
        """(tokens matched, nodes walked, tokens matched in the last node)."""
        self.clock += 1
        node, pos, path, used = self.root, 0, [], 0
        while pos < limit:
            child = node.children.get(tokens[pos])
            if child is None:
                break
            used = 0
            while used < len(child.edge) and pos + used < limit and (
                child.edge[used] == tokens[pos + used]
            ):
                used += 1
            child.last_used = self.clock
            path.append(child)
            pos += used
            if used < len(child.edge):
                break
            node = child
        return pos, path, used

    def match(self, tokens: Sequence[int]) -> tuple[int, list[int]]:
        hit, path, _ = self._walk(tokens, len(tokens) - 1)
        by_index: dict[int, int] = {}
        for node in path:  # deeper nodes last: theirs is the block holding their tokens
            for index in self._indices(node.start, min(node.end, hit)):
                by_index[index] = node.blocks[index]
        blocks = [by_index[i] for i in self._indices(0, hit)]
        for block in blocks:
            self.pool.retain(block)
        return hit, blocks

    def insert(self, tokens: Sequence[int], table: Sequence[int]) -> None:
        pos, path, used = self._walk(tokens, len(tokens))
        parent = path[-1] if path else self.root
        if path and used < len(parent.edge):  # the match ends inside an edge: split it there
            parent = self._split(parent, used)
        if pos == len(tokens):
            return
        blocks = {i: table[i] for i in self._indices(pos, len(tokens))}
        leaf = RadixNode(pos, tuple(tokens[pos:]), blocks, parent, last_used=self.clock)
        for block in blocks.values():
            self._hold(block)
        parent.children[leaf.edge[0]] = leaf

    def _split(self, node: RadixNode, at: int) -> RadixNode:
        """Cut `node`'s edge after `at` tokens: a new inner node, `node` its child."""
        assert node.parent is not None
        inner = RadixNode(node.start, node.edge[:at], {}, node.parent, last_used=node.last_used)
        for index in self._indices(inner.start, inner.end):
            inner.blocks[index] = node.blocks[index]
            self._hold(node.blocks[index])
        node.parent.children[inner.edge[0]] = inner
        for index in [i for i in node.blocks if i not in self._indices(inner.end, node.end)]:
            self._drop(node.blocks.pop(index))
        node.start, node.edge, node.parent = inner.end, node.edge[at:], inner
        inner.children[node.edge[0]] = node
        return inner

    def evict(self) -> bool:
        leaves: list[RadixNode] = []
        stack = list(self.root.children.values())
        while stack:
            node = stack.pop()
            stack.extend(node.children.values())
            if not node.children:
                leaves.append(node)
        if not leaves:
            return False
        counts = self.pool.ref_counts
        frees = [n for n in leaves if any(counts[b] == self.refs[b] for b in n.blocks.values())]
        victim = min(frees or leaves, key=lambda n: n.last_used)
        assert victim.parent is not None
        del victim.parent.children[victim.edge[0]]
        for block in victim.blocks.values():
            self._drop(block)
        return True


def make_prefix_cache(mode: PrefixMode, pool: BlockPool) -> PrefixCache:
    """The prefix cache `mode` names, over `pool`."""
    kinds: dict[str, type[PrefixCache]] = {
        "none": NoPrefixCache, "blocks": BlockHashCache, "radix": RadixCache,
    }
    if mode not in kinds:
        raise ValueError(f"Unknown prefix cache {mode!r}; choose none, blocks or radix.")
    return kinds[mode](pool)
