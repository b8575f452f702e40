"""Write one of our models as a Hugging Face transformers folder (Llama, or Qwen3 with QK-norm).

Owns the mapping from `ModelConfig` to a transformers ``config.json`` and the
weight file transformers reads. It needs no transformers install: MiniMind's
state-dict names already are Llama's (``model.layers.0.self_attn.q_proj.weight``
…), so the tensors are written as they are. Loading our own folders and
MiniMind ``.pth`` files is ``checkpoints.py``'s job; running the result is
``engine/backends/hf.py``'s.

Why the two layouts fit exactly:

- Llama: RMSNorm normalising in fp32, the same half-split ``rotate_half`` RoPE
  with ``inv_freq = 1 / theta^(2i/d)``, GQA with ``repeat_kv``, SwiGLU with
  ``gate_proj``/``up_proj``/``down_proj``, no biases (``attention_bias`` and
  ``mlp_bias`` false), explicit ``head_dim``.
- Qwen3 is Llama plus ``q_norm``/``k_norm``: an RMSNorm over each head's
  ``head_dim`` applied after the projection and before RoPE — our QK-norm.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any, Literal

from safetensors.torch import save_file

from kvstudio.engine.config import MAX_CONFIG_BYTES, ModelConfig
from kvstudio.engine.model import MiniMindLM
from kvstudio.engine.small_files import read_json
from kvstudio.engine.tokenizer import ENDOFTEXT, IM_END, IM_START, TextTokenizer
from kvstudio.files.checkpoints import DTYPES, weights_state_dict
from kvstudio.files.folder_write import staged_folder

logger = logging.getLogger(__name__)

HFLayout = Literal["llama", "qwen3"]


def hf_layout(cfg: ModelConfig) -> HFLayout:
    """Qwen3 when the model has QK-norm (Llama has no place for q_norm/k_norm), else Llama."""
    return "qwen3" if cfg.qk_norm else "llama"


def hf_config_dict(cfg: ModelConfig, dtype: str = "float32") -> dict[str, Any]:
    """The transformers ``config.json`` for `cfg`, readable by transformers 4.56 … 5.x.

    RoPE is written twice on purpose: ``rope_theta`` (4.x) and ``rope_parameters``
    (5.x); each version reads its own key and ignores or converts the other.
    """
    if dtype not in DTYPES:
        raise ValueError(f"dtype must be one of {sorted(DTYPES)}, got {dtype!r}.")
    layout = hf_layout(cfg)
    data: dict[str, Any] = {
        "architectures": ["Qwen3ForCausalLM" if layout == "qwen3" else "LlamaForCausalLM"],
        "model_type": layout,
        "vocab_size": cfg.vocab_size,
        "hidden_size": cfg.hidden_size,
        "intermediate_size": cfg.resolved_intermediate_size,
        "num_hidden_layers": cfg.num_hidden_layers,
        "num_attention_heads": cfg.num_attention_heads,
        "num_key_value_heads": cfg.num_key_value_heads,
        "head_dim": cfg.resolved_head_dim,  # explicit: Qwen3's default (128) would be wrong
        "hidden_act": "silu",
        "max_position_embeddings": cfg.max_position_embeddings,
        "rms_norm_eps": cfg.rms_norm_eps,
        "rope_theta": cfg.rope_theta,
        "rope_scaling": None,
        "rope_parameters": {"rope_type": "default", "rope_theta": cfg.rope_theta},
        "attention_bias": False,
        "attention_dropout": 0.0,
        "tie_word_embeddings": cfg.tie_word_embeddings,
        "bos_token_id": cfg.bos_token_id,
        "eos_token_id": cfg.eos_token_id,
        "pad_token_id": 0,  # <|endoftext|>
        "initializer_range": 0.02,
        "use_cache": True,
        "torch_dtype": dtype,  # transformers 4.x
        "dtype": dtype,  # transformers 5.x
    }
    if layout == "llama":
        data.update({"mlp_bias": False, "pretraining_tp": 1})
    else:
        data.update(
            {
                "use_sliding_window": False,
                "sliding_window": None,
                "max_window_layers": cfg.num_hidden_layers,
                "layer_types": ["full_attention"] * cfg.num_hidden_layers,
            }
        )
    return data


def check_tokenizer_fits(tokenizer: TextTokenizer, cfg: ModelConfig) -> None:
    """ValueError when the tokenizer has ids the model has no embedding row for."""
    if tokenizer.vocab_size > cfg.vocab_size:
        raise ValueError(
            f"The tokenizer has {tokenizer.vocab_size} tokens but the model only "
            f"{cfg.vocab_size} embeddings; convert with the tokenizer the model was trained with."
        )


def _write_json(path: Path, data: dict[str, Any]) -> None:
    path.write_text(json.dumps(data, ensure_ascii=False, indent=2) + "\n", "utf-8")


def write_tokenizer(tokenizer: TextTokenizer, out: Path, max_length: int) -> None:
    """tokenizer.json + tokenizer_config.json + special_tokens_map.json for AutoTokenizer."""
    tokenizer.save(out)
    config_path = out / "tokenizer_config.json"
    config = read_json(config_path, MAX_CONFIG_BYTES, "a tokenizer_config.json")
    config["model_max_length"] = max_length
    _write_json(config_path, config)
    _write_json(out / "special_tokens_map.json", {
        "bos_token": IM_START, "eos_token": IM_END, "pad_token": ENDOFTEXT, "unk_token": ENDOFTEXT,
    })


def export_hf(
    model: MiniMindLM,
    tokenizer: TextTokenizer | None,
    out_dir: str | Path,
    *,
    dtype: str = "float32",
    overwrite: bool = False,
) -> Path:
    """Write `model` (and its tokenizer) as a transformers folder; return the folder.

    The folder holds config.json, generation_config.json, model.safetensors and,
    when given a tokenizer, the tokenizer files, so that
    ``AutoModelForCausalLM.from_pretrained(folder)`` and ``AutoTokenizer`` open it
    offline.
    """
    out = Path(out_dir)
    if out.exists() and any(out.iterdir()) and not overwrite:
        raise ValueError(
            f"{out} already exists and is not empty; choose a new folder or pass --overwrite."
        )
    cfg = model.config
    if tokenizer is not None:
        check_tokenizer_fits(tokenizer, cfg)
    config = hf_config_dict(cfg, dtype)
    generation = {"bos_token_id": cfg.bos_token_id, "eos_token_id": cfg.eos_token_id,
                  "pad_token_id": 0, "do_sample": False}
    weights = weights_state_dict(model, dtype)
    try:  # written beside `out`, then swapped in: a failure leaves `out` as it was
        with staged_folder(out) as staging:
            _write_json(staging / "config.json", config)
            _write_json(staging / "generation_config.json", generation)
            save_file(weights, str(staging / "model.safetensors"), metadata={"format": "pt"})
            if tokenizer is not None:
                write_tokenizer(tokenizer, staging, cfg.max_position_embeddings)
    except OSError as exc:
        raise ValueError(
            f"Cannot write {out}: {exc.strerror or exc}. Free some space or choose another "
            "folder; what was there is unchanged."
        ) from exc
    if tokenizer is None:
        logger.warning("No tokenizer given: %s holds weights only; copy a tokenizer.json in.", out)
    logger.info("Wrote a %s-layout transformers folder to %s", config["model_type"], out)
    return out
