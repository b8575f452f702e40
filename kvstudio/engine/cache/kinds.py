"""Build the cache a `CacheSpec` names: a `KVCache` of that kind's layers.

Owns `make_cache`, the one place a cache kind's name becomes layers; everything
after that talks to the cache through the verbs in ``base.py``.
"""

from __future__ import annotations

from kvstudio.engine.cache.base import CacheLayer, KVCache
from kvstudio.engine.cache.kv_cache import DynamicLayer, dense_layer
from kvstudio.engine.cache.paged import PagedKVCache
from kvstudio.engine.cache.quantized import QUANT_BITS, QuantizedLayer
from kvstudio.engine.cache.spec import CacheSpec


def make_cache(num_layers: int, spec: CacheSpec | None = None) -> KVCache[CacheLayer]:
    """An empty cache of `spec`'s kind (default dynamic) with one layer per transformer layer.

    Layers allocate on their first update, so the batch size is not needed here.
    """
    spec = spec or CacheSpec()
    if spec.kind == "paged":
        return PagedKVCache(num_layers, spec)
    return KVCache[CacheLayer](dense_layers(num_layers, spec), spec)


def dense_layers(num_layers: int, spec: CacheSpec) -> list[DynamicLayer]:
    """Every kind but paged: layers that hold K and V in tensors of their own."""
    if spec.kind in QUANT_BITS:
        return [QuantizedLayer(QUANT_BITS[spec.kind]) for _ in range(num_layers)]
    return [dense_layer(spec) for _ in range(num_layers)]
