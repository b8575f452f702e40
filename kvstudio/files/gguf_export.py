"""Write one of our models as a GGUF file that llama.cpp (and LM Studio, Ollama) loads.

Owns the mapping from `ModelConfig` + `MiniMindLM` + `TextTokenizer` to a GGUF
file in llama.cpp's ``llama`` architecture, f32, written with the ``gguf``
package's `GGUFWriter` (the optional ``llama`` extra: ``pip install
'kvstudio[llama]'``). Running the file is ``engine/backends/llamacpp.py``'s job.

What the file holds, as llama.cpp reads a Llama model:

- **Tensors** under llama.cpp's names: ``token_embd``, per layer ``blk.N.attn_norm``,
  ``attn_q``/``attn_k``/``attn_v``/``attn_output``, ``ffn_norm``,
  ``ffn_gate``/``ffn_up``/``ffn_down``, then ``output_norm`` (and ``output`` only
  for an untied LM head: llama.cpp reuses ``token_embd`` when it is missing).
  Shapes stay PyTorch's (out, in); the writer stores them in ggml's reversed order.
- **RoPE's pairing.** Our RoPE (MiniMind's, transformers' Llama) turns dimension i
  with i + d/2 (``rotate_half``); llama.cpp's ``llama`` turns 2i with 2i + 1. So
  the rows of q_proj and k_proj are reordered within each head (the first half's
  row i goes to 2i, the second half's to 2i + 1): q·k is unchanged because q and k
  get the same order, and V is untouched.
- **Metadata**: ``llama.*`` sizes (context, embedding, blocks, MLP width, heads,
  K/V heads, head_dim as key/value length and RoPE dimensions, RoPE base, RMSNorm
  epsilon), ``general.file_type`` 0 (all f32).
- **The tokenizer**: byte-level BPE with GPT-2's split pattern, so
  ``tokenizer.ggml.model`` "gpt2" and ``pre`` "gpt-2"; every token's byte-level
  text, its type (control for our special tokens), the merges as "a b", bos/eos/pad
  ids from our tokenizer, no automatic bos, and the ChatML chat template.

A model with QK-norm has no place in ``llama`` (Qwen3's layout would be needed):
it is refused with a sentence, as is a model whose vocabulary is not byte-level BPE.
"""

from __future__ import annotations

import contextlib
import logging
import os
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import torch

from kvstudio.engine.config import ModelConfig
from kvstudio.engine.model import MiniMindLM
from kvstudio.engine.tokenizer import CHAT_TEMPLATE, TextTokenizer
from kvstudio.files.checkpoints import weights_state_dict
from kvstudio.files.convert import check_tokenizer_fits
from kvstudio.files.folder_write import umask

logger = logging.getLogger(__name__)

GGUF_ARCH = "llama"
GGUF_MISSING = (
    "Writing GGUF needs the `gguf` package (the optional llama extra): "
    "pip install 'kvstudio[llama]'  (or: pip install gguf)."
)
# MiniMind's per-layer names (transformers' Llama names) → llama.cpp's.
_LAYER_NAMES = {
    "input_layernorm.weight": "attn_norm.weight",
    "self_attn.q_proj.weight": "attn_q.weight",
    "self_attn.k_proj.weight": "attn_k.weight",
    "self_attn.v_proj.weight": "attn_v.weight",
    "self_attn.o_proj.weight": "attn_output.weight",
    "post_attention_layernorm.weight": "ffn_norm.weight",
    "mlp.gate_proj.weight": "ffn_gate.weight",
    "mlp.up_proj.weight": "ffn_up.weight",
    "mlp.down_proj.weight": "ffn_down.weight",
}
_TOP_NAMES = {
    "model.embed_tokens.weight": "token_embd.weight",
    "model.norm.weight": "output_norm.weight",
    "lm_head.weight": "output.weight",
}


def check_gguf_fits(cfg: ModelConfig) -> None:
    """ValueError when llama.cpp's ``llama`` layout cannot hold the model."""
    if cfg.qk_norm:
        raise ValueError(
            "This model has QK-norm, which llama.cpp's llama layout has no place for; "
            "GGUF export supports the MiniMind layout without QK-norm."
        )
    if cfg.resolved_head_dim % 2:
        raise ValueError(f"head_dim {cfg.resolved_head_dim} is odd; RoPE needs pairs.")


def rope_pairs_interleaved(weight: torch.Tensor, heads: int) -> torch.Tensor:
    """q_proj or k_proj (heads·d, C) with each head's rows reordered from the half-split
    RoPE pairing (i, i + d/2) to the interleaved one (2i, 2i + 1)."""
    rows, cols = weight.shape
    d = rows // heads
    # (heads, 2 halves, d/2, C) → (heads, d/2, 2, C): row i of half h goes to 2i + h
    return weight.reshape(heads, 2, d // 2, cols).transpose(1, 2).reshape(rows, cols)


def gguf_tensors(model: MiniMindLM) -> dict[str, np.ndarray]:
    """Our weights under llama.cpp's names, f32, q/k rows in llama.cpp's RoPE order."""
    cfg = model.config
    out: dict[str, np.ndarray] = {}
    for name, tensor in weights_state_dict(model, "float32").items():
        if name in _TOP_NAMES:
            gguf_name = _TOP_NAMES[name]
        else:  # model.layers.N.<rest>
            parts = name.split(".", 3)
            if len(parts) != 4 or parts[:2] != ["model", "layers"] or parts[3] not in _LAYER_NAMES:
                raise ValueError(f"Unexpected tensor {name} in the model; cannot map it to GGUF.")
            gguf_name = f"blk.{parts[2]}.{_LAYER_NAMES[parts[3]]}"
            if parts[3] == "self_attn.q_proj.weight":
                tensor = rope_pairs_interleaved(tensor, cfg.num_attention_heads)
            elif parts[3] == "self_attn.k_proj.weight":
                tensor = rope_pairs_interleaved(tensor, cfg.num_key_value_heads)
        out[gguf_name] = tensor.contiguous().numpy()
    return out


def tokenizer_fields(tokenizer: TextTokenizer) -> dict[str, Any]:
    """tokens (by id), token types, merges ("a b") and special ids for llama.cpp's gpt2 BPE."""
    import json

    from gguf import TokenType

    data = json.loads(tokenizer.backend.to_str())
    model = data.get("model", {})
    pre = data.get("pre_tokenizer") or {}
    if model.get("type") != "BPE" or pre.get("type") != "ByteLevel":
        raise ValueError(
            "GGUF export writes byte-level BPE tokenizers (GPT-2's kind, as MiniMind's); "
            f"this one is {model.get('type')} with a {pre.get('type')} pre-tokenizer."
        )
    size = tokenizer.vocab_size
    tokens = [""] * size
    for text, index in tokenizer.backend.get_vocab(with_added_tokens=True).items():
        tokens[index] = text
    if "" in tokens:
        raise ValueError("The tokenizer's ids have gaps; GGUF needs one token per id.")
    types = [int(TokenType.NORMAL)] * size
    for added in data.get("added_tokens", []):
        special = bool(added.get("special"))
        types[added["id"]] = int(TokenType.CONTROL if special else TokenType.USER_DEFINED)
    merges = [m if isinstance(m, str) else " ".join(m) for m in model.get("merges", [])]
    return {"tokens": tokens, "types": types, "merges": merges}


def export_gguf(
    model: MiniMindLM,
    tokenizer: TextTokenizer,
    out_path: str | Path,
    *,
    name: str = "kvstudio",
    overwrite: bool = False,
) -> Path:
    """Write `model` and `tokenizer` as one f32 GGUF file (llama layout); return its path.

    The file is written beside `out_path` and renamed into place: a failure leaves
    what was there. ValueError: what is wrong and what to do.
    """
    try:
        import gguf
    except ImportError as exc:
        raise ValueError(GGUF_MISSING) from exc
    cfg = model.config
    check_gguf_fits(cfg)
    out = Path(out_path)
    if out.is_dir():
        raise ValueError(f"{out} is a folder; give a file name such as {out / (name + '.gguf')}.")
    if out.exists() and not overwrite:
        raise ValueError(f"{out} already exists; choose a new file name or pass --overwrite.")
    check_tokenizer_fits(tokenizer, cfg)
    vocab = tokenizer_fields(tokenizer)
    if len(vocab["tokens"]) < cfg.vocab_size:  # embedding rows past the tokenizer: unused
        extra = cfg.vocab_size - len(vocab["tokens"])
        vocab["tokens"] += [f"[PAD{i}]" for i in range(extra)]
        vocab["types"] += [int(gguf.TokenType.UNUSED)] * extra
    tensors = gguf_tensors(model)
    out.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(dir=out.parent, prefix=f".{out.name}.", suffix=".part")
    os.close(fd)
    try:
        writer = gguf.GGUFWriter(tmp_name, GGUF_ARCH)
        writer.add_name(name)
        writer.add_file_type(int(gguf.LlamaFileType.ALL_F32))
        writer.add_context_length(cfg.max_position_embeddings)
        writer.add_embedding_length(cfg.hidden_size)
        writer.add_block_count(cfg.num_hidden_layers)
        writer.add_feed_forward_length(cfg.resolved_intermediate_size)
        writer.add_head_count(cfg.num_attention_heads)
        writer.add_head_count_kv(cfg.num_key_value_heads)
        writer.add_key_length(cfg.resolved_head_dim)
        writer.add_value_length(cfg.resolved_head_dim)
        writer.add_rope_dimension_count(cfg.resolved_head_dim)
        writer.add_rope_freq_base(float(cfg.rope_theta))
        writer.add_layer_norm_rms_eps(float(cfg.rms_norm_eps))
        writer.add_vocab_size(cfg.vocab_size)
        writer.add_tokenizer_model("gpt2")
        writer.add_tokenizer_pre("gpt-2")
        writer.add_token_list(vocab["tokens"])
        writer.add_token_types(vocab["types"])
        writer.add_token_merges(vocab["merges"])
        bos = tokenizer.bos_id if tokenizer.bos_id is not None else cfg.bos_token_id
        eos = tokenizer.eos_id if tokenizer.eos_id is not None else cfg.eos_token_id
        writer.add_bos_token_id(bos)
        writer.add_eos_token_id(eos)
        if tokenizer.endoftext_id is not None:
            writer.add_pad_token_id(tokenizer.endoftext_id)
        writer.add_add_bos_token(False)  # our prompts carry their own control tokens
        writer.add_add_eos_token(False)
        if tokenizer.has_chat_tokens:
            writer.add_chat_template(CHAT_TEMPLATE)
        for tensor_name, array in tensors.items():
            writer.add_tensor(tensor_name, array)
        writer.write_header_to_file()
        writer.write_kv_data_to_file()
        writer.write_tensors_to_file()
        writer.close()
        os.chmod(tmp_name, 0o666 & ~umask())  # mkstemp makes 0600; a model file is for sharing
        os.replace(tmp_name, out)
    except OSError as exc:
        raise ValueError(
            f"Cannot write {out}: {exc.strerror or exc}. Free some space or choose another "
            "place; what was there is unchanged."
        ) from exc
    finally:
        with contextlib.suppress(OSError):
            os.unlink(tmp_name)
    logger.info("Wrote a %s-layout f32 GGUF to %s", GGUF_ARCH, out)
    return out
