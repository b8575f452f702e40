"""Write and read a shipped model folder: config.json, model.safetensors, tokenizer files.

Owns the on-disk format of ``resources/models/*``: MiniMind state-dict names
(``model.embed_tokens.weight``, ``model.layers.N.self_attn.q_proj.weight``, …,
``model.norm.weight``), ``lm_head.weight`` omitted when the embeddings are tied
(the loader ties it back), weights stored in fp32 or 16-bit and run in fp32.
"""

from __future__ import annotations

import logging
from pathlib import Path

import torch
from safetensors.torch import load_file, save_file

from kvstudio.core.config import ModelConfig
from kvstudio.core.model import MiniMindLM
from kvstudio.core.tokenizer import TextTokenizer

log = logging.getLogger(__name__)

DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}


def save_model_folder(
    model: MiniMindLM, tokenizer: TextTokenizer, folder: str | Path, weight_dtype: str = "float16"
) -> Path:
    """Write config.json, model.safetensors (in `weight_dtype`) and the tokenizer into `folder`."""
    if weight_dtype not in DTYPES:
        raise ValueError(f"weight_dtype must be one of {sorted(DTYPES)}, got {weight_dtype!r}")
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    model.config.save(out / "config.json")  # dtype stays float32: the run-time dtype
    state = {
        name: t.detach().to(DTYPES[weight_dtype]).contiguous()
        for name, t in model.state_dict().items()
        if not (model.config.tie_word_embeddings and name == "lm_head.weight")
    }
    save_file(state, str(out / "model.safetensors"), metadata={"format": "pt"})
    tokenizer.save(out)
    log.info("wrote %s (%d tensors, %s)", out, len(state), weight_dtype)
    return out


def load_state_dict_file(path: str | Path, config: ModelConfig) -> dict[str, torch.Tensor]:
    """Read safetensors (or a torch state dict), cast to fp32, re-add a tied lm_head."""
    p = Path(path)
    if not p.exists():
        raise ValueError(f"No weights at {p}.")
    if p.suffix == ".safetensors":
        state = load_file(str(p))
    else:
        state = torch.load(p, map_location="cpu", weights_only=True)
    state = {k: v.float() for k, v in state.items()}
    if config.tie_word_embeddings and "lm_head.weight" not in state:
        state["lm_head.weight"] = state["model.embed_tokens.weight"]
    return state


def load_model_folder(folder: str | Path) -> tuple[MiniMindLM, TextTokenizer]:
    """Model (fp32, eval mode) and tokenizer from a folder written by `save_model_folder`."""
    root = Path(folder)
    if not root.is_dir():
        raise ValueError(
            f"{root} is not a model folder (config.json, model.safetensors, tokenizer.json)."
        )
    config = ModelConfig.load(root / "config.json")
    model = MiniMindLM(config)
    model.load_state_dict(load_state_dict_file(root / "model.safetensors", config), strict=True)
    model.eval()
    return model, TextTokenizer.from_file(root)
