"""MiniMind ``.pth`` checkpoints: read without running their code, and their architecture.

Owns `read_pth_state_dict` (``torch.load(weights_only=True)``: a pickle that carries
code is refused, with what it tried to run; a damaged file is one clear error) and
`infer_config` (the architecture from the tensor shapes, the rest from a config file
or MiniMind's defaults). ``checkpoints.load_minimind_pth`` builds the model from both.
"""

from __future__ import annotations

import pickle
import pickletools
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import torch

from kvstudio.engine.config import ModelConfig, minimind_intermediate_size
from kvstudio.engine.small_files import require_regular_file


def _first_line(exc: BaseException) -> str:
    """The first non-empty line of an exception's message, or its type (never IndexError)."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    return (lines[0] if lines else type(exc).__name__)[:200]


def _code_in_pickle(p: Path, exc: Exception) -> str | None:
    """What code or class a refused pickle names (e.g. "os.system"), or None if it names none.

    Read from torch's refusal ("Unsupported global: GLOBAL io.open …") or, for a
    bare pickle (any protocol), by listing its opcodes with `pickletools`, which
    only parses: it imports and runs nothing.
    """
    found = re.search(r"GLOBAL ([\w.]+)", str(exc))
    if found:
        return found.group(1)
    try:
        with p.open("rb") as fh:
            data = fh.read(1 << 20)  # the first MiB: a pickle names its globals up front
    except OSError:
        return None
    names: list[str] = []
    strings: list[str] = []
    try:
        for opcode, arg, _ in pickletools.genops(data):
            if opcode.name in ("GLOBAL", "INST") and isinstance(arg, str):
                names.append(arg.replace(" ", "."))
            elif opcode.name == "STACK_GLOBAL" and len(strings) >= 2:
                names.append(f"{strings[-2]}.{strings[-1]}")
            if isinstance(arg, str):
                strings.append(arg)
    except (ValueError, EOFError, pickle.UnpicklingError):
        pass  # a stream cut short still names what it had
    return ", ".join(dict.fromkeys(names)) or None


def read_pth_state_dict(path: str | Path) -> dict[str, torch.Tensor]:
    """Read a ``.pth`` state dict safely (no code execution), stripping DDP/compile prefixes."""
    p = Path(path)
    if not p.exists():
        raise ValueError(f"{p} does not exist. Give the path of a MiniMind .pth file.")
    require_regular_file(p, "a MiniMind .pth file")
    if p.stat().st_size == 0:
        raise ValueError(f"{p} is empty (0 bytes); download or copy the checkpoint again.")
    try:
        obj: Any = torch.load(str(p), map_location="cpu", weights_only=True)
    except pickle.UnpicklingError as exc:
        code = _code_in_pickle(p, exc)
        if code is None:  # the bytes are no pickle of tensors
            raise ValueError(
                f"Cannot read {p}: it is damaged or not a PyTorch checkpoint. Download or "
                "copy it again."
            ) from exc
        raise ValueError(
            f"{p} holds code ({code[:120]}) and was refused: KV Studio loads only tensors and "
            "never runs code from a file. Use a plain state dict saved with "
            "torch.save(model.state_dict(), path)."
        ) from exc
    except (EOFError, RuntimeError, OSError, ValueError, KeyError, IndexError) as exc:
        raise ValueError(
            f"Cannot read {p}: it is damaged or not a PyTorch checkpoint ({_first_line(exc)}). "
            "Download or copy it again."
        ) from exc
    if isinstance(obj, dict) and "model" in obj and isinstance(obj["model"], dict):
        obj = obj["model"]  # training checkpoints often wrap the weights
    if not isinstance(obj, dict) or not all(isinstance(v, torch.Tensor) for v in obj.values()):
        raise ValueError(
            f"{p} does not hold a state dict (a mapping of names to tensors); save it with "
            "torch.save(model.state_dict(), path)."
        )
    state: dict[str, torch.Tensor] = {}
    for key, tensor in obj.items():
        name = re.sub(r"^(module\.|_orig_mod\.)+", "", str(key))
        state[name] = tensor
    return state


def infer_config(
    state: dict[str, torch.Tensor], base: ModelConfig | None = None, *, where: str = "checkpoint"
) -> ModelConfig:
    """Fill in what the shapes tell (vocab, hidden, layers, K/V width, QK-norm, FFN width).

    The number of query heads cannot be read from shapes (only their total width),
    so it comes from `base` (a config file) or MiniMind's default of 8; with
    QK-norm the head dimension is read from the norm's weight.
    """
    base = base or ModelConfig()
    try:
        embed = state["model.embed_tokens.weight"]  # (V, C)
        q = state["model.layers.0.self_attn.q_proj.weight"]  # (H·d, C)
        k = state["model.layers.0.self_attn.k_proj.weight"]  # (G·d, C)
        gate = state["model.layers.0.mlp.gate_proj.weight"]  # (F, C)
    except KeyError as exc:
        raise ValueError(
            f"{where} lacks {exc.args[0]}, so it is not a MiniMind state dict (expected names "
            "like model.layers.0.self_attn.q_proj.weight). Export the model's state_dict()."
        ) from exc
    vocab, hidden = int(embed.shape[0]), int(embed.shape[1])
    layer_ids = {int(m.group(1)) for k_ in state if (m := re.match(r"model\.layers\.(\d+)\.", k_))}
    layers = max(layer_ids) + 1
    qk_norm = "model.layers.0.self_attn.q_norm.weight" in state
    if qk_norm:
        head_dim = int(state["model.layers.0.self_attn.q_norm.weight"].shape[0])
    elif base.head_dim is not None:
        head_dim = base.head_dim
    else:
        head_dim = q.shape[0] // base.num_attention_heads
    if head_dim <= 0 or q.shape[0] % head_dim or k.shape[0] % head_dim:
        raise ValueError(
            f"{where}: q_proj width {q.shape[0]} and k_proj width {k.shape[0]} cannot be split "
            f"into heads of {head_dim}; give a config.json with the right num_attention_heads "
            "and head_dim."
        )
    heads = q.shape[0] // head_dim
    # Keep head_dim implicit (minimind2) when hidden = heads · d and nothing says otherwise.
    implicit = head_dim * heads == hidden and base.head_dim is None and not qk_norm
    ffn = int(gate.shape[0])
    return replace(
        base,
        vocab_size=int(vocab),
        hidden_size=int(hidden),
        num_hidden_layers=layers,
        num_attention_heads=int(heads),
        num_key_value_heads=int(k.shape[0] // head_dim),
        head_dim=None if implicit else head_dim,
        intermediate_size=None if ffn == minimind_intermediate_size(hidden) else ffn,
        qk_norm=qk_norm,
        tie_word_embeddings="lm_head.weight" not in state
        or bool(torch.equal(state["lm_head.weight"], embed)),
    )
