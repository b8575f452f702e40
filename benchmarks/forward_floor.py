"""The model's forward against a bare loop of the same torch ops: what the modules cost.

    python benchmarks/forward_floor.py                 # embedded model, else a random one
    python benchmarks/forward_floor.py --model kvstudio/resources/models/ko-chat --rounds 20

`MiniMindLM.forward` is the readable decoder every step runs. The bare loop
below calls the very same torch functions on the very same parameter tensors,
with everything a module adds taken away: no ``nn.Module`` calls, no attribute
look-ups, no probe test, weights gathered into a list beforehand. Its time is
the eager floor for these kernels; the ratio model / bare is what reading the
code as modules costs per decode step.

Both run a cached greedy decode on their own cache (P prompt tokens, then N
steps). Steps are interleaved one by one (model, bare, model, … with the order
flipped every round), so a busy neighbour slows both alike; the figures are
medians over every step of every round, in wall time and in this thread's CPU
time. The greedy tokens must agree, and a profiler counts the torch ops of one
decode step of each (they must agree too).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F
from torch.profiler import profile

from kvstudio.engine.cache.base import CacheLayer
from kvstudio.engine.cache.kinds import make_cache
from kvstudio.engine.model import MiniMindLM, apply_rope, inverse_rms
from kvstudio.files.checkpoints import default_model, load_any
from kvstudio.labs.common import lab_prompt_ids


def bare_weights(model: MiniMindLM) -> list[Any]:
    """The model's own parameter tensors in the order the bare loop reads them."""
    layers = []
    for block in model.model.layers:
        layers.append((
            block.input_layernorm, block.eps, block.qkv_proj, block.o_proj,
            block.post_attention_layernorm, block.eps, block.gate_up_proj, block.down_proj,
        ))  # fmt: skip
    cfg = model.config
    heads = (cfg.num_attention_heads, cfg.num_key_value_heads, cfg.resolved_head_dim)
    stack = model.model
    return [layers, model.token_table(), stack.norm, stack.eps, model.lm_head, heads]


def bare_decode_step(
    w: list[Any],
    model: MiniMindLM,
    token: torch.Tensor,  # (B, 1)
    cache: list[CacheLayer],
) -> torch.Tensor:
    """One cached decode step, `MiniMindLM.forward`'s ops without the modules → logits (B, V)."""
    layers, table, norm_w, norm_eps, head, (H, G, d) = w
    B = token.shape[0]
    start = cache[0].seq_length
    cos = model.rope_cos[start : start + 1, None]  # (1, 1, d)
    sin = model.rope_sin_signed[start : start + 1, None]  # (1, 1, d)
    x = F.embedding(token, table).view(B, -1)  # (B, C)
    for (in_w, in_eps, qkv_w, o_w, post_w, post_eps, gate_up_w, down_w), layer in zip(
        layers, cache, strict=True
    ):
        h = x * inverse_rms(x, in_eps) * in_w  # (B, C)
        qkv = (h @ qkv_w).view(B, 1, H + 2 * G, d)  # (B, 1, H+2G, d)
        qk, v = qkv[:, :, : H + G], qkv[:, :, H + G :]
        qk = apply_rope(qk, cos, sin)
        q, k = qk[:, :, :H], qk[:, :, H:]
        k, v = layer.update(k, v)  # (B, S, G, d)
        y = F.scaled_dot_product_attention(
            q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2),
            attn_mask=None, is_causal=False, enable_gqa=H != G,
        )  # fmt: skip
        x = torch.addmm(x, y.transpose(1, 2).reshape(B, H * d), o_w)  # (B, C)
        h = x * inverse_rms(x, post_eps) * post_w
        gate, up = (h @ gate_up_w).chunk(2, dim=-1)
        x = torch.addmm(x, F.silu(gate) * up, down_w)
    return (x * inverse_rms(x, norm_eps) * norm_w) @ head  # (B, V)


def _steps(
    model: MiniMindLM,
    weights: list[Any],
    tokens: dict[str, torch.Tensor],
    caches: dict[str, Any],
) -> dict[str, Callable[[], torch.Tensor]]:
    """One decode step of each contender → logits (1, V), reading the current token."""
    return {
        "model": lambda: model(tokens["model"], caches["model"], logits_to_keep=1)[:, -1],
        "bare": lambda: bare_decode_step(weights, model, tokens["bare"], caches["bare"]),
    }


def _ops_per_step(step: Any) -> int:
    with profile() as prof:
        step()
    return len(prof.events())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, default=None, help="our model folder or .pth")
    parser.add_argument("--prompt-tokens", type=int, default=183)
    parser.add_argument("--new-tokens", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=10, help="timed rounds (medians)")
    parser.add_argument("--threads", type=int, default=1, help="torch threads (default 1)")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    loaded = load_any(args.model) if args.model else default_model()
    model = loaded.model.eval()
    prompt = torch.tensor([lab_prompt_ids(loaded.tokenizer, args.prompt_tokens)])  # (1, P)
    weights = bare_weights(model)
    L = model.config.num_hidden_layers
    names = ("model", "bare")
    wall: dict[str, list[float]] = {name: [] for name in names}
    cpu: dict[str, list[float]] = {name: [] for name in names}
    ops: dict[str, int] = {}
    with torch.inference_mode():
        for round_ in range(args.rounds + 1):  # round 0 warms up
            caches = {name: make_cache(L) for name in names}
            first = model(prompt, caches["model"], logits_to_keep=1)[:, -1].argmax(-1)
            model(prompt, caches["bare"], logits_to_keep=1)
            tokens = {name: first[:, None] for name in names}  # (1, 1)
            steps = _steps(model, weights, tokens, caches)
            order = names if round_ % 2 == 0 else names[::-1]
            for _ in range(args.new_tokens):
                for name in order:
                    c0, w0 = time.thread_time_ns(), time.perf_counter_ns()
                    tokens[name] = steps[name]().argmax(-1, keepdim=True)  # (1, 1)
                    w1, c1 = time.perf_counter_ns(), time.thread_time_ns()
                    if round_:
                        wall[name].append((w1 - w0) / 1e6)
                        cpu[name].append((c1 - c0) / 1e6)
                if int(tokens["model"]) != int(tokens["bare"]):
                    print("the bare loop chose another token: not the same ops", file=sys.stderr)
                    return 1
            if not ops:
                ops = {name: _ops_per_step(steps[name]) for name in names}
    print(f"{loaded.name}: P={prompt.shape[1]}, N={args.new_tokens}, {args.rounds} rounds, "
          f"{torch.get_num_threads()} thread(s), torch {torch.__version__}")  # fmt: skip
    print(f"{'':8}{'wall ms/step':>14}{'cpu ms/step':>13}{'torch ops':>11}")
    for name in names:
        w, c = statistics.median(wall[name]), statistics.median(cpu[name])
        print(f"{name:8}{w:>14.3f}{c:>13.3f}{ops[name]:>11}")
    ratio_wall = statistics.median(wall["model"]) / statistics.median(wall["bare"])
    ratio_cpu = statistics.median(cpu["model"]) / statistics.median(cpu["bare"])
    print(f"model / bare: {ratio_wall:.3f}× wall, {ratio_cpu:.3f}× cpu")
    return 0


if __name__ == "__main__":
    sys.exit(main())
