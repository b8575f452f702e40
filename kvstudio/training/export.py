"""From a training run's weights to a shipped model folder, and back.

Owns the step between ``kvstudio.training`` and ``kvstudio/resources/models/*``: reading
a run's ``best.pt``/``final.pt`` (or a safetensors file) into fp32 tensors, and
writing the folder through the engine's ``checkpoints.save_model_folder`` so the
format is the one the app loads: ``config.json``, ``model.safetensors`` with
MiniMind names (``model.embed_tokens.weight``, ``model.layers.N.self_attn.q_proj.weight``,
…, ``model.norm.weight``; no ``lm_head.weight`` when tied), ``tokenizer.json`` and
``tokenizer_config.json``.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import load_file

from kvstudio.engine.config import ModelConfig
from kvstudio.engine.model import MiniMindLM
from kvstudio.engine.small_files import read_json
from kvstudio.engine.tokenizer import TextTokenizer
from kvstudio.files.checkpoints import save_model_folder
from kvstudio.training.model_card import MAX_REPORT_BYTES

log = logging.getLogger(__name__)


def load_state_dict_file(path: str | Path, config: ModelConfig) -> dict[str, torch.Tensor]:
    """Read safetensors, a state dict or a checkpoint.pt; cast to fp32; re-add a tied lm_head."""
    p = Path(path)
    if not p.exists():
        raise ValueError(f"No weights at {p}; give a run's best.pt/final.pt or a .safetensors.")
    if p.suffix == ".safetensors":
        state = load_file(str(p))
    else:
        state = torch.load(p, map_location="cpu", weights_only=True)
        if "model" in state and isinstance(state["model"], dict):
            state = state["model"]  # a resumable checkpoint.pt: take its weights
    state = {k: v.float() for k, v in state.items()}
    if config.tie_word_embeddings and "lm_head.weight" not in state:
        state["lm_head.weight"] = state["model.embed_tokens.weight"]
    return state


def run_config(weights: str | Path, vocab_size: int) -> ModelConfig:
    """The run's model config: config.json or report.json beside the weights, else the course's."""
    folder = Path(weights).parent
    if (folder / "config.json").exists():
        return ModelConfig.load(folder / "config.json")
    if (folder / "report.json").exists():
        report = read_json(folder / "report.json", MAX_REPORT_BYTES, "a training report (JSON)")
        if isinstance(report, dict) and isinstance(report.get("config"), dict):
            return ModelConfig.from_dict(report["config"])
    return ModelConfig(vocab_size=vocab_size)


def export_run_weights(
    weights: str | Path, tokenizer_dir: str | Path, out: str | Path, dtype: str = "float16"
) -> Path:
    """Write a model folder from a run's weights; `dtype` is the *stored* dtype (run: fp32)."""
    tok = TextTokenizer.from_file(tokenizer_dir)
    config = run_config(weights, tok.vocab_size)
    model = MiniMindLM(config)
    try:
        model.load_state_dict(load_state_dict_file(weights, config), strict=True)
    except RuntimeError as exc:  # shapes or names do not match the config
        raise ValueError(f"{weights} does not fit config {config}: {exc}") from exc
    folder = save_model_folder(model, tok, out, weights_dtype=dtype)
    log.info("exported %s -> %s (%s weights)", weights, folder, dtype)
    return folder


def check_stored_dtype(
    weights: str | Path, folder: str | Path, prompts_dir: str | Path | None = None
) -> dict[str, Any]:
    """Greedy outputs of the run's fp32 weights vs the folder's stored (16-bit) weights."""
    from kvstudio.engine.backends.minimind import MiniMindBackend
    from kvstudio.files.checkpoints import load_model_folder
    from kvstudio.training.evaluate import greedy_agreement

    loaded = load_model_folder(folder)  # stored dtype, cast to fp32 at load
    reference = MiniMindLM(loaded.config)
    reference.load_state_dict(load_state_dict_file(weights, loaded.config), strict=True)
    return greedy_agreement(
        MiniMindBackend(reference.eval(), "fp32"),
        MiniMindBackend(loaded.model, "stored"),
        loaded.tokenizer,
        prompts_dir,
    )
