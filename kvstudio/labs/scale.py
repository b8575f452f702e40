"""The scale projector: what the KV cache of a real model needs, from its config.

Owns `ModelGeometry` (the few config numbers the cache depends on), the
built-in presets (numbers copied from the models' published ``config.json``,
source stated next to each), reading any local ``config.json``, and the
projection itself:

    bytes per token = 2 · L · H_kv · d · bytes      (K and V, every layer)
    cache bytes     = batch · bytes per token · T   (a window keeps W − 1 on its layers)

The bytes per number default to the config's own dtype (``torch_dtype`` /
``dtype``: float32 4, bfloat16 2); an 8- or 4-bit cache also stores one
float16 scale per token and K/V head, as the quantized cache does:
2 · L · H_kv · (d · bits / 8 + 2).

plus the variants a lecture asks about (no GQA, 16-bit, 8-bit, a window) and
the series for the chart (bytes against context length). Pure arithmetic; the
labs check it against bytes measured from a real run of the loaded model.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from kvstudio.engine.config import MAX_CONFIG_BYTES, config_int
from kvstudio.engine.formulas import window_keeps
from kvstudio.engine.small_files import read_bool, read_json

GIB = 1024**3
SCALE_BYTES = 2  # an 8/4-bit cache's float16 scale per token and K/V head (cache/quantized.py)
GPU_MEMORY_GIB: tuple[int, ...] = (16, 24, 40, 80)  # common accelerator memory sizes
LOADED = "loaded"  # the projector's source: the model the lab runs on, not a preset or a file


@dataclass(frozen=True)
class ModelGeometry:
    """The config numbers a KV cache depends on (and enough to count the weights)."""

    name: str
    layers: int  # L
    heads: int  # query heads H
    kv_heads: int  # H_kv (GQA: fewer than H; MHA: equal)
    head_dim: int  # d
    hidden: int  # C
    intermediate: int  # MLP width F
    vocab: int  # V
    tied_embeddings: bool
    window: int | None = None  # sliding window W, None = full attention
    window_layers: int = 0  # layers that use the window (the others attend to everything)
    max_positions: int = 0  # the model's longest context (0 = unknown)
    weight_bytes: int = 2  # bytes per weight as published (bf16/fp16: 2)
    source: str = ""  # where the numbers come from
    parameters_measured: int | None = None  # counted from a loaded model's tensors

    @property
    def parameters(self) -> int:
        """Measured when loaded; else a Llama-style count (embeddings, attention, MLP, norms)."""
        if self.parameters_measured is not None:
            return self.parameters_measured
        C, d = self.hidden, self.head_dim
        attention = C * self.heads * d * 2 + 2 * C * self.kv_heads * d  # q, o; k, v
        mlp = 3 * C * self.intermediate  # gate, up, down
        embeddings = self.vocab * C * (1 if self.tied_embeddings else 2)
        return embeddings + self.layers * (attention + mlp + 2 * C) + C

    @property
    def weights_nbytes(self) -> int:
        return self.parameters * self.weight_bytes

    @property
    def dtype_bits(self) -> int:
        """Bits per number in the config's own dtype: the cache's, unless asked otherwise."""
        return 8 * self.weight_bytes

    def layer_token_bytes(self, bits: int | None = None) -> int:
        """2 · H_kv · (d · bits / 8 [+ 2 scale bytes below 16 bits]): one token, one layer.

        Counted in bits (not ``formulas``' whole bytes): a 4-bit cache stores half a
        byte a number. `bits` None: the config's dtype.
        """
        bits = self.dtype_bits if bits is None else bits
        scale = SCALE_BYTES if bits < 16 else 0
        return 2 * self.kv_heads * (self.head_dim * bits // 8 + scale)

    def bytes_per_token(self, bits: int | None = None) -> int:
        """2 · L · H_kv · d · bytes (+ scales below 16 bits), before any window."""
        return self.layers * self.layer_token_bytes(bits)

    def window_tokens(self, context: int) -> int:
        """Tokens a window layer holds after `context` tokens: min(T, W − 1), as the cache."""
        keeps = window_keeps(self.window)
        return context if keeps is None else min(context, keeps)

    def cache_bytes(self, context: int, batch: int = 1, bits: int | None = None) -> int:
        """Bytes of `batch` rows of `context` tokens; window layers keep at most W − 1."""
        full_layers = self.layers - self.window_layers
        tokens = full_layers * context + self.window_layers * self.window_tokens(context)
        return batch * self.layer_token_bytes(bits) * tokens  # Σ_l T_l · one token's bytes


# ---- presets --------------------------------------------------------------------------------
# Numbers copied from each model's published config.json (hidden_size, num_hidden_layers,
# num_attention_heads, num_key_value_heads, head_dim, intermediate_size, vocab_size,
# tie_word_embeddings, sliding_window, max_position_embeddings). The meta-llama repositories
# are gated, so their values were read from public copies whose config names the original
# in "_name_or_path"; the copies agree with each other field by field.
_PresetRow = tuple[str, str, int, int, int, int, int, int, int, bool, int | None, int, str]
_PRESET_ROWS: tuple[_PresetRow, ...] = (
    # key, name, L, H, H_kv, d, C, F, V, tied, W (every layer; None = full), max positions, source
    ("exaone-4.0-1.2b", "EXAONE-4.0-1.2B", 30, 32, 8, 64, 2048, 4096, 102400, True, None, 65536,
     "huggingface.co/LGAI-EXAONE/EXAONE-4.0-1.2B config.json (exaone4; layer_types all "
     "full_attention, sliding_window null)"),
    ("llama-3.1-8b", "Llama-3.1-8B", 32, 32, 8, 128, 4096, 14336, 128256, False, None, 131072,
     "huggingface.co/meta-llama/Llama-3.1-8B config.json (GQA 32:8)"),
    ("llama-3.1-70b", "Llama-3.1-70B", 80, 64, 8, 128, 8192, 28672, 128256, False, None, 131072,
     "huggingface.co/meta-llama/Llama-3.1-70B config.json (GQA 64:8)"),
    ("llama-2-7b", "Llama-2-7B (MHA)", 32, 32, 32, 128, 4096, 11008, 32000, False, None, 4096,
     "huggingface.co/meta-llama/Llama-2-7b-hf config.json (MHA: 32 K/V heads)"),
    ("mistral-7b-v0.1", "Mistral-7B-v0.1 (window 4096)", 32, 32, 8, 128, 4096, 14336, 32000,
     False, 4096, 32768,
     "huggingface.co/mistralai/Mistral-7B-v0.1 config.json (sliding_window 4096)"),
)
PRESETS: dict[str, ModelGeometry] = {
    key: ModelGeometry(name, L, H, H_kv, d, C, F, V, tied, window=W,
                       window_layers=L if W is not None else 0, max_positions=P, source=source)
    for key, name, L, H, H_kv, d, C, F, V, tied, W, P, source in _PRESET_ROWS
}


def preset(name: str) -> ModelGeometry:
    key = name.strip().lower()
    if key not in PRESETS:
        raise ValueError(f"No preset {name!r}; choose one of {', '.join(PRESETS)}.")
    return PRESETS[key]


# ---- config.json ----------------------------------------------------------------------------
def geometry_from_config(raw: dict[str, Any], name: str, source: str = "") -> ModelGeometry:
    """A transformers (or MiniMind) config dict → geometry; a missing or bad field is named.

    Every size goes through `config.config_int` (a whole number, not a bool, in
    1 … `MAX_CONFIG_INT`), so Infinity, NaN, 1e30, ``true``, a list or a negative
    count is refused with the file and the field in the message, never projected.
    """
    where = source or name
    cfg = raw.get("text_config", raw) if isinstance(raw.get("text_config"), dict) else raw

    def given(key: str) -> bool:
        return cfg.get(key) is not None

    def need(*keys: str) -> int:
        for key in keys:
            if given(key):
                return config_int(cfg[key], key, where)
        raise ValueError(
            f"{where}: config.json has no {' / '.join(keys)}; give a transformers config.json."
        )

    def optional(key: str, default: int) -> int:
        return config_int(cfg[key], key, where) if given(key) else default

    hidden = need("hidden_size", "n_embd", "d_model")
    layers = need("num_hidden_layers", "num_layers", "n_layer")
    heads = need("num_attention_heads", "n_head")
    kv_heads = optional("num_key_value_heads", heads)
    head_dim = optional("head_dim", max(hidden // heads, 1))
    window: int | None = None
    if given("sliding_window") and cfg.get("use_sliding_window") is not False:
        window = config_int(cfg["sliding_window"], "sliding_window", where)
    layer_types = cfg.get("layer_types")
    if window is None:
        window_layers = 0
    elif isinstance(layer_types, list) and layer_types:
        window_layers = sum(1 for t in layer_types if t == "sliding_attention")
        window = window if window_layers else None
    else:
        window_layers = layers
    tied = read_bool(cfg.get("tie_word_embeddings", False), f"{where}: tie_word_embeddings")
    dtype = str(cfg.get("torch_dtype") or cfg.get("dtype") or "bfloat16")
    return ModelGeometry(
        name=name,
        layers=layers,
        heads=heads,
        kv_heads=kv_heads,
        head_dim=head_dim,
        hidden=hidden,
        intermediate=optional("intermediate_size", 4 * hidden),
        vocab=need("vocab_size"),
        tied_embeddings=tied,
        window=window,
        window_layers=window_layers,
        max_positions=optional("max_position_embeddings", 0),
        weight_bytes=4 if "32" in dtype else 2,
        source=source,
    )


def load_config(path: str | Path) -> ModelGeometry:
    """A model folder (its config.json) or a config.json file; ValueError naming what is wrong."""
    p = Path(path).expanduser()
    file = p / "config.json" if p.is_dir() else p
    if not file.exists():
        raise ValueError(f"No config.json at {p}; give a model folder or its config.json.")
    raw = read_json(file, MAX_CONFIG_BYTES, "a transformers config.json")
    if not isinstance(raw, dict):
        raise ValueError(f"{file} is not a JSON object; give a transformers config.json.")
    name = file.parent.name if file.name == "config.json" else file.stem
    return geometry_from_config(raw, name, source=str(file))


def geometry_of_backend(backend: Any) -> ModelGeometry:
    """The loaded model's geometry, read from the backend (and its weights when it has them)."""
    model = getattr(backend, "model", None)  # ours and transformers' both keep the module
    config = getattr(model, "config", None)
    heads = int(getattr(config, "num_attention_heads", backend.num_kv_heads))
    hidden = int(backend.hidden_size)
    import torch  # here, not at the top: the scale tables read configs without torch

    parameters = None
    if isinstance(model, torch.nn.Module):
        parameters = sum(p.numel() for p in model.parameters())
    return ModelGeometry(
        name=str(backend.name),
        layers=backend.num_layers,
        heads=heads,
        kv_heads=backend.num_kv_heads,
        head_dim=backend.head_dim,
        hidden=hidden,
        intermediate=int(getattr(config, "intermediate_size", 0) or 0),
        vocab=backend.vocab_size,
        tied_embeddings=True,
        max_positions=int(backend.max_positions),
        weight_bytes=backend.dtype_bytes,
        source="the loaded model",
        parameters_measured=parameters,
    )


# ---- projections ----------------------------------------------------------------------------
@dataclass(frozen=True)
class ProjectionRow:
    label: str  # what changed, e.g. "as published" or "8-bit cache"
    bits: int
    kv_heads: int
    window: int | None
    bytes_per_token: int  # before the window
    total_bytes: int  # context × batch


def variants(
    geometry: ModelGeometry, context: int, batch: int, bits: int | None = None
) -> list[ProjectionRow]:
    """The model as configured, then one change at a time: no GQA, 16/8-bit, a window.

    `bits` None: the config's own dtype. The 8-bit row counts its scales.
    """
    bits = geometry.dtype_bits if bits is None else bits

    def row(label: str, g: ModelGeometry, b: int) -> ProjectionRow:
        return ProjectionRow(
            label, b, g.kv_heads, g.window, g.bytes_per_token(b), g.cache_bytes(context, batch, b)
        )

    rows = [row("as configured", geometry, bits)]
    if geometry.kv_heads != geometry.heads:
        rows.append(row("without GQA (H_kv = H)", replace(geometry, kv_heads=geometry.heads), bits))
    for other in (16, 8):
        if other != bits:
            label = "8-bit cache (scales incl.)" if other == 8 else f"{other}-bit cache"
            rows.append(row(label, geometry, other))
    if geometry.window is None:
        windowed = replace(geometry, window=4096, window_layers=geometry.layers)
        rows.append(row("window W = 4096", windowed, bits))
    else:
        full = replace(geometry, window=None, window_layers=0)
        rows.append(row("without the window", full, bits))
    return rows


def context_points(max_context: int) -> list[int]:
    """Powers of two from 256 up to `max_context` (and `max_context` itself)."""
    points, n = [], 256
    while n < max_context:
        points.append(n)
        n *= 2
    points.append(max_context)
    return points


def fits_in(total_bytes: int, weights: int) -> list[tuple[int, bool]]:
    """(GPU GiB, cache + weights fit) for each common memory size."""
    return [(gib, total_bytes + weights <= gib * GIB) for gib in GPU_MEMORY_GIB]


def human_bytes(n: float) -> str:
    for unit, size in (("GiB", GIB), ("MiB", 1024**2), ("KiB", 1024)):
        if abs(n) >= size:
            return f"{n / size:,.2f} {unit}"
    return f"{n:,.0f} B"
