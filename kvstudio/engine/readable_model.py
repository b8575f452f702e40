"""MiniMind's decoder written plainly from a state dict: the model to read, and the reference
the fast one is held to.

``model.py`` is the model every step runs: q|k|v and gate|up fused into one product
each, (in, out) weights, RoPE as a roll, grouped attention without copies. This file
is the same decoder as a student first meets it, and shares no code with it:
separate q, k, v, gate
and up matrices in MiniMind's (out, in) layout applied with ``F.linear``,
RMSNorm as ``x.pow(2).mean()``, RoPE with ``rotate_half`` on tables built
here, ``repeat_kv`` copies and softmax attention with an explicit mask. It
keeps its own K/V lists (after RoPE, before ``repeat_kv``), so a cached
decode can be compared step by step. ``tests/core/test_model_fastpath.py`` holds the
two equal (prefill, cached decode on every cache kind, windowed recompute, gradients).

Letters: B batch, T new tokens, S keys, H query heads, G K/V heads, d head_dim.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from kvstudio.engine.config import ModelConfig


class ReadableDecoder:
    """A plain MiniMind forward over `state` (MiniMind names), with an optional K/V cache."""

    def __init__(self, config: ModelConfig, state: dict[str, torch.Tensor]) -> None:
        self.cfg = config
        self.w = {name: tensor.detach().clone() for name, tensor in state.items()}
        d = config.resolved_head_dim
        inv_freq = 1.0 / (config.rope_theta ** (torch.arange(0, d, 2).float() / d))  # (d/2,)
        angles = torch.outer(torch.arange(config.max_position_embeddings).float(), inv_freq)
        angles = torch.cat([angles, angles], dim=-1)  # (P, d)
        self.cos, self.sin = angles.cos(), angles.sin()
        self.keys: list[torch.Tensor | None] = [None] * config.num_hidden_layers
        self.values: list[torch.Tensor | None] = [None] * config.num_hidden_layers
        self.seen = 0  # positions cached
        # Per layer, the last forward's queries (B, T, H, d) and keys (B, S, G, d) after RoPE.
        self.queries: list[torch.Tensor] = []
        self.attended_keys: list[torch.Tensor] = []

    def norm(self, x: torch.Tensor, name: str) -> torch.Tensor:
        xf = x.float()
        normed = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + self.cfg.rms_norm_eps)
        return self.w[name] * normed.type_as(x)

    def rope(self, x: torch.Tensor, start: int) -> torch.Tensor:
        T, half = x.shape[1], x.shape[-1] // 2
        cos = self.cos[start : start + T][:, None, :]  # (T, 1, d)
        sin = self.sin[start : start + T][:, None, :]
        rotated = torch.cat((-x[..., half:], x[..., :half]), dim=-1)
        return x * cos + rotated * sin

    def forward(
        self, ids: torch.Tensor, *, use_cache: bool = False, window: int | None = None
    ) -> torch.Tensor:
        """Logits (B, T, V). With `use_cache`, ids continue the cached positions."""
        cfg, w = self.cfg, self.w
        B, T = ids.shape
        H, G, d = cfg.num_attention_heads, cfg.num_key_value_heads, cfg.resolved_head_dim
        start = self.seen if use_cache else 0
        x = F.embedding(ids, w["model.embed_tokens.weight"])  # (B, T, C)
        self.queries, self.attended_keys = [], []
        for i in range(cfg.num_hidden_layers):
            at = f"model.layers.{i}."
            h = self.norm(x, at + "input_layernorm.weight")
            q = F.linear(h, w[at + "self_attn.q_proj.weight"]).view(B, T, H, d)
            k = F.linear(h, w[at + "self_attn.k_proj.weight"]).view(B, T, G, d)
            v = F.linear(h, w[at + "self_attn.v_proj.weight"]).view(B, T, G, d)
            if cfg.qk_norm:
                q = self.norm(q, at + "self_attn.q_norm.weight")
                k = self.norm(k, at + "self_attn.k_norm.weight")
            q, k = self.rope(q, start), self.rope(k, start)
            if use_cache:
                past_k, past_v = self.keys[i], self.values[i]
                if past_k is not None and past_v is not None:
                    k, v = torch.cat([past_k, k], dim=1), torch.cat([past_v, v], dim=1)
                self.keys[i], self.values[i] = k, v
            self.queries.append(q)
            self.attended_keys.append(k)
            n_rep = H // G
            k_rep = k.repeat_interleave(n_rep, dim=2)  # (B, S, H, d): repeat_kv
            v_rep = v.repeat_interleave(n_rep, dim=2)
            S = k.shape[1]
            q_pos = torch.arange(start, start + T)[:, None]  # (T, 1)
            k_pos = torch.arange(start + T - S, start + T)[None, :]  # (1, S)
            allowed = k_pos <= q_pos
            if window is not None:
                allowed &= k_pos > q_pos - window
            scores = torch.einsum("bthd,bshd->bhts", q, k_rep) / math.sqrt(d)
            probs = scores.masked_fill(~allowed, float("-inf")).softmax(-1)  # (B, H, T, S)
            y = torch.einsum("bhts,bshd->bthd", probs, v_rep).reshape(B, T, H * d)
            x = x + F.linear(y, w[at + "self_attn.o_proj.weight"])
            h = self.norm(x, at + "post_attention_layernorm.weight")
            gate = F.linear(h, w[at + "mlp.gate_proj.weight"])
            up = F.linear(h, w[at + "mlp.up_proj.weight"])
            x = x + F.linear(F.silu(gate) * up, w[at + "mlp.down_proj.weight"])
        if use_cache:
            self.seen += T
        head = w.get("lm_head.weight", w["model.embed_tokens.weight"])
        return F.linear(self.norm(x, "model.norm.weight"), head)  # (B, T, V)
