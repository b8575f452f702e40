"""MiniMind's state-dict names and shapes, to and from the fused model's own.

Owns the two hooks `kvstudio.engine.model.MiniMindLM` registers, so that
``state_dict()`` writes, and ``load_state_dict()`` reads, exactly what MiniMind's
``model_minimind.py`` writes: `state_dict_to_minimind` and `state_dict_from_minimind`.
The model file stays the forward a student reads; this is only the renaming.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, cast

import torch
from torch import nn

from kvstudio.engine.config import ModelConfig

# Inside, a block holds qkv_proj (C, (H+2G)·d), o_proj (H·d, C), gate_up_proj (C, 2F),
# down_proj (F, C) and its norm weights, the model lm_head (C, V): parameters of their own,
# the matrices (in, out). A state dict holds MiniMind's modules' weights instead, nn.Linear's
# (out, in), under self_attn.*, mlp.* and "….weight"; a tied model lists its one matrix as
# model.embed_tokens.weight and lm_head.weight.


def _minimind_items(
    model: nn.Module, ours: dict[str, torch.Tensor]
) -> Iterator[tuple[str, torch.Tensor]]:
    """Our tensors (our names) → MiniMind's names and (out, in) shapes, in MiniMind's order.

    Each tensor used is popped from `ours`; the results are views, no copies.
    """
    cfg = cast(ModelConfig, model.config)
    H, G, d = cfg.num_attention_heads, cfg.num_key_value_heads, cfg.resolved_head_dim
    head = ours.pop("lm_head").t()  # (V, C)
    embed = head if cfg.tie_word_embeddings else ours.pop("model.embed_tokens.weight")
    yield "model.embed_tokens.weight", embed  # (V, C)
    for i in range(cfg.num_hidden_layers):
        at = f"model.layers.{i}."
        q, k, v = ours.pop(at + "qkv_proj").t().split([H * d, G * d, G * d])  # (out, C) each
        yield at + "self_attn.q_proj.weight", q
        yield at + "self_attn.k_proj.weight", k
        yield at + "self_attn.v_proj.weight", v
        yield at + "self_attn.o_proj.weight", ours.pop(at + "o_proj").t()  # (C, H·d)
        for norm in ("q_norm", "k_norm"):
            if at + norm in ours:
                yield at + f"self_attn.{norm}.weight", ours.pop(at + norm)
        for norm in ("input_layernorm", "post_attention_layernorm"):
            yield at + f"{norm}.weight", ours.pop(at + norm)
        gate, up = ours.pop(at + "gate_up_proj").t().chunk(2)  # (F, C) each
        yield at + "mlp.gate_proj.weight", gate
        yield at + "mlp.up_proj.weight", up
        yield at + "mlp.down_proj.weight", ours.pop(at + "down_proj").t()  # (C, F)
    yield "model.norm.weight", ours.pop("model.norm")
    yield "lm_head.weight", head


def state_dict_to_minimind(
    model: nn.Module, state: dict[str, Any], prefix: str, _metadata: Any
) -> None:
    """state_dict() hook: our entries → MiniMind's names and shapes, in place."""
    ours = {key[len(prefix) :]: state.pop(key) for key in list(state) if key.startswith(prefix)}
    for name, tensor in _minimind_items(model, ours):
        state[prefix + name] = tensor
    for name, tensor in ours.items():  # anything the mapping does not know, as it was
        state[prefix + name] = tensor


def state_dict_from_minimind(
    model: nn.Module, state: dict[str, Any], prefix: str, *_args: Any
) -> None:
    """load_state_dict() pre-hook: MiniMind's names and shapes → ours, in place.

    A name that is missing is left missing, so load_state_dict reports it.
    """

    def fuse(names: list[str], to: str) -> None:
        if all(name in state for name in names):
            pieces = [state.pop(name) for name in names]  # (out_i, in) each
            state[to] = torch.cat(pieces, dim=0).t().contiguous()  # (in, Σout)

    def move(name: str, to: str, transpose: bool) -> None:
        if name in state:
            tensor = state.pop(name)
            state[to] = tensor.t().contiguous() if transpose else tensor

    config = cast(ModelConfig, model.config)
    for i in range(config.num_hidden_layers):
        at = f"{prefix}model.layers.{i}."
        fuse([f"{at}self_attn.{p}_proj.weight" for p in "qkv"], at + "qkv_proj")
        move(at + "self_attn.o_proj.weight", at + "o_proj", transpose=True)
        move(at + "self_attn.q_norm.weight", at + "q_norm", transpose=False)
        move(at + "self_attn.k_norm.weight", at + "k_norm", transpose=False)
        move(at + "input_layernorm.weight", at + "input_layernorm", transpose=False)
        move(at + "post_attention_layernorm.weight", at + "post_attention_layernorm", False)
        fuse([f"{at}mlp.{p}_proj.weight" for p in ("gate", "up")], at + "gate_up_proj")
        move(at + "mlp.down_proj.weight", at + "down_proj", transpose=True)
    move(f"{prefix}model.norm.weight", f"{prefix}model.norm", transpose=False)
    embed, head = f"{prefix}model.embed_tokens.weight", f"{prefix}lm_head.weight"
    if config.tie_word_embeddings and embed in state:
        state.pop(head, None)  # the same matrix; MiniMind ties the LM head to the embedding
        head = embed
    move(head, prefix + "lm_head", transpose=True)  # (C, V)
