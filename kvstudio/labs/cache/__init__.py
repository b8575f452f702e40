"""The cache labs: cache vs recompute (`compare`), the cache kinds (`kinds`), the
paged (`paged`) and quantized (`quantized`) caches and the length sweep (`sweep`).
"""
