"""`kvstudio info`: the model and its KV cache geometry.

Owns the ``info`` subcommand (registered on the one parser in
``kvstudio.cli.main``): bytes per token from the formula, the layer kinds,
and the tokenizer.
"""

from __future__ import annotations

import argparse
from typing import Any

from kvstudio.cli import common
from kvstudio.engine import formulas
from kvstudio.engine.cache.kv_cache import CacheSpec
from kvstudio.labs.course import COURSE


def add_subcommands(sub: Any) -> None:
    """Register ``info`` on the one parser (``kvstudio.cli.main``)."""
    i = sub.add_parser("info", help="describe the model and its KV cache geometry")
    common.model_options(i, COURSE.cache_model)
    i.set_defaults(func=cmd_info)


def cmd_info(args: argparse.Namespace) -> int:
    loaded = common.prepare(args, COURSE.cache_model)
    b = loaded.backend
    per_token = formulas.model_bytes_per_token(b)
    print(
        f"KV cache: {b.num_layers} layers × {b.num_kv_heads} KV heads × {b.head_dim} dims × "
        f"{b.dtype_bytes} bytes × 2 (K and V) = {per_token:,} bytes per token"
    )
    plan = b.cache_plan(CacheSpec())  # the model's own attention, dynamic cache
    print(f"Layers: {plan.kinds_summary()}")
    if plan.is_hybrid:
        tokens = 4096
        full = tokens * per_token
        print(
            f"        sliding layers keep at most their window, so at T = {tokens:,} the cache "
            f"holds {plan.used_bytes(tokens):,} bytes, not {full:,} (every layer full)"
        )
    print(f"Tokenizer: {loaded.tokenizer.vocab_size:,} tokens; eos id {loaded.tokenizer.eos_id}")
    return 0
