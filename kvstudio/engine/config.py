"""Model configuration: MiniMind's field names, the course defaults, JSON in and out.

Owns `ModelConfig` only. It does not know about weights or tokenizers
(see `checkpoints.py`) and never touches torch. Every integer in a config goes
through `config_int` (a whole number within its field's bounds, `max_position_embeddings`
at most `MAX_POSITIONS`) before any arithmetic on it, so a 4,000-digit
``num_hidden_layers`` is a sentence naming the file, not an OverflowError; and
`load_peak_bytes` counts what building the model takes, RoPE temporaries included.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path
from typing import Any

from kvstudio.engine import limits
from kvstudio.engine.small_files import read_int, read_json

MAX_CONFIG_BYTES = 1024 * 1024  # a model's config.json is well under 10 KB
MAX_CONFIG_INT = 2**31 - 1  # no size in any model's config comes near this (int32's largest)
# RoPE tables are built for every position before the first token runs: a length past any
# setting's (`limits.MAX_TOKENS`) only costs memory and minutes (8 M positions: 32 s, 3.7 GB).
MAX_POSITIONS = limits.MAX_TOKENS
# Building the two (positions, head_dim) fp32 RoPE tables peaks at 3.5 of them (the angles,
# their half, cos, sin and the signed sin; measured), not the 2 kept: count 4.
ROPE_BUILD_TABLES = 4

_INT_FIELDS = (
    "hidden_size", "num_hidden_layers", "num_attention_heads", "num_key_value_heads",
    "vocab_size", "max_position_embeddings", "bos_token_id", "eos_token_id",
)
_OPTIONAL_INT_FIELDS = ("head_dim", "intermediate_size")
# (lowest, highest) of every integer field, checked by `config_int` before any arithmetic.
_INT_BOUNDS = {
    **{name: (1, MAX_CONFIG_INT) for name in (*_INT_FIELDS, *_OPTIONAL_INT_FIELDS)},
    "max_position_embeddings": (1, MAX_POSITIONS),
    "bos_token_id": (0, MAX_CONFIG_INT),
    "eos_token_id": (0, MAX_CONFIG_INT),
}
_FLOAT_FIELDS = ("rope_theta", "rms_norm_eps")


def _type_problems(cfg: Any) -> list[str]:
    """Fields whose value has the wrong type (a string size, a bool count, an inf float)."""
    problems = []

    def whole(value: Any) -> bool:
        return isinstance(value, int) and not isinstance(value, bool)

    for name in _INT_FIELDS:
        if not whole(getattr(cfg, name)):
            problems.append(f"{name} must be a whole number, got {getattr(cfg, name)!r}")
    for name in _OPTIONAL_INT_FIELDS:
        value = getattr(cfg, name)
        if value is not None and not whole(value):
            problems.append(f"{name} must be a whole number or null, got {value!r}")
    for name in _FLOAT_FIELDS:
        value = getattr(cfg, name)
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(
            value
        ):
            problems.append(f"{name} must be a finite number, got {value!r}")
    for name in ("qk_norm", "tie_word_embeddings"):
        if not isinstance(getattr(cfg, name), bool):
            problems.append(f"{name} must be true or false, got {getattr(cfg, name)!r}")
    return problems


def config_int(
    value: Any, field: str, where: str, *, low: int = 1, high: int = MAX_CONFIG_INT
) -> int:
    """A size read from a config file: a whole number (not a bool, not a float such as
    1e30, NaN or Infinity) from `low` to `high`; else ValueError naming the file and field.

    The one check for a config's numbers wherever one is read for sizes (the
    projector's configs in ``scale``, from the command line and the window alike).
    """
    return read_int(value, f"{where}: {field}", low, high)


def minimind_intermediate_size(hidden_size: int) -> int:
    """MiniMind's FFN width: 8/3 · hidden, rounded up to a multiple of 64 (256 → 704)."""
    width = int(hidden_size * 8 / 3)
    return 64 * ((width + 64 - 1) // 64)


@dataclass(frozen=True, eq=False)
class ModelConfig:
    """Hyper-parameters of a MiniMind-style decoder. Defaults are the course model.

    Two configs are equal when they describe the same model: `head_dim=None`
    (hidden / heads) equals the number it stands for, and so for `intermediate_size`.
    """

    hidden_size: int = 256  # d_model
    num_hidden_layers: int = 4  # L
    num_attention_heads: int = 8  # query heads
    num_key_value_heads: int = 2  # K/V heads (GQA: 8 query heads share 2 K/V heads)
    head_dim: int | None = None  # None → hidden_size // num_attention_heads (minimind2)
    intermediate_size: int | None = None  # None → MiniMind's 8/3 rule (704 for 256)
    vocab_size: int = 6400  # MiniMind's tokenizer size
    max_position_embeddings: int = 32768  # RoPE table length
    rope_theta: float = 1_000_000.0  # RoPE base (MiniMind: 1e6)
    rms_norm_eps: float = 1e-5
    qk_norm: bool = False  # minimind-3 / Qwen3: RMSNorm on q and k per head
    tie_word_embeddings: bool = True  # lm_head shares the embedding matrix
    bos_token_id: int = 1  # <|im_start|>
    eos_token_id: int = 2  # <|im_end|>
    dtype: str = "float32"  # run-time dtype; stored weights may be 16-bit

    def __post_init__(self) -> None:
        types = _type_problems(self)
        if types:  # wrong types first: the size checks below would raise TypeError on them
            raise ValueError("Invalid model config: " + "; ".join(types) + ".")
        for name, (low, high) in _INT_BOUNDS.items():  # before any arithmetic on them
            if getattr(self, name) is not None:
                config_int(getattr(self, name), name, "Invalid model config", low=low, high=high)
        problems = []
        if self.rope_theta <= 0 or self.rms_norm_eps <= 0:
            problems.append("rope_theta and rms_norm_eps must be positive")
        if self.num_attention_heads % self.num_key_value_heads:
            problems.append(
                f"num_attention_heads ({self.num_attention_heads}) must be a multiple of "
                f"num_key_value_heads ({self.num_key_value_heads})"
            )
        if self.head_dim is None and self.num_attention_heads > 0:
            if self.hidden_size % self.num_attention_heads:
                problems.append("hidden_size must be divisible by num_attention_heads")
        if self.resolved_head_dim % 2:
            problems.append(f"head_dim must be even for RoPE, got {self.resolved_head_dim}")
        if self.dtype not in ("float32", "float16", "bfloat16"):
            problems.append(f"dtype must be float32, float16 or bfloat16, got {self.dtype!r}")
        if problems:
            raise ValueError("Invalid model config: " + "; ".join(problems) + ".")

    @property
    def parameter_count(self) -> int:
        """Parameters of a model with this config (arithmetic only, nothing allocated)."""
        c, d = self.hidden_size, self.resolved_head_dim
        attention = c * d * (2 * self.num_attention_heads + 2 * self.num_key_value_heads)
        norms = 2 * c + (2 * d if self.qk_norm else 0)
        per_layer = attention + 3 * c * self.resolved_intermediate_size + norms
        embeddings = self.vocab_size * c * (1 if self.tie_word_embeddings else 2)
        return embeddings + self.num_hidden_layers * per_layer + c

    @property
    def memory_bytes(self) -> int:
        """Bytes the model takes in memory: weights in the run dtype plus the RoPE tables."""
        weight_bytes = 4 if self.dtype == "float32" else 2
        return self.parameter_count * weight_bytes + 2 * self._rope_table_bytes

    @property
    def load_peak_bytes(self) -> int:
        """Bytes loading it takes at its peak: the module's weights and the file's copy of
        them, and the RoPE tables with the temporaries that build them (`ROPE_BUILD_TABLES`)."""
        weight_bytes = 4 if self.dtype == "float32" else 2
        return 2 * self.parameter_count * weight_bytes + ROPE_BUILD_TABLES * self._rope_table_bytes

    @property
    def _rope_table_bytes(self) -> int:
        return self.max_position_embeddings * self.resolved_head_dim * 4  # (positions, d) fp32

    @property
    def resolved_head_dim(self) -> int:
        if self.head_dim is not None:
            return self.head_dim
        return self.hidden_size // max(self.num_attention_heads, 1)

    @property
    def resolved_intermediate_size(self) -> int:
        if self.intermediate_size is not None:
            return self.intermediate_size
        return minimind_intermediate_size(self.hidden_size)

    @property
    def n_rep(self) -> int:
        """How many query heads share one K/V head (what `repeat_kv` repeats)."""
        return self.num_attention_heads // self.num_key_value_heads

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ModelConfig):
            return NotImplemented
        return asdict(self.concrete()) == asdict(other.concrete())

    def __hash__(self) -> int:
        return hash(tuple(asdict(self.concrete()).values()))

    def concrete(self) -> ModelConfig:
        """The same model with `head_dim` and `intermediate_size` as numbers, never None."""
        return replace(
            self,
            head_dim=self.resolved_head_dim,
            intermediate_size=self.resolved_intermediate_size,
        )

    def to_dict(self) -> dict[str, Any]:
        """Every field, `head_dim` and `intermediate_size` written as numbers (32, 704 for
        the course model): MiniMind's ``MiniMindConfig`` reads them with ``kwargs.get`` and
        fails on null. `from_dict` reads both forms."""
        return asdict(self.concrete())

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ModelConfig:
        """Build from a dict, ignoring keys we do not model (MiniMind/HF extras).

        `head_dim` and `intermediate_size` may be numbers or null/absent (then the
        MiniMind defaults: hidden / heads and the 8/3 rule)."""
        known = {f.name for f in fields(cls)}
        kwargs = {k: v for k, v in data.items() if k in known}
        if "qk_norm" not in data and "use_qk_norm" in data:
            kwargs["qk_norm"] = bool(data["use_qk_norm"])
        if "dtype" not in data and isinstance(data.get("torch_dtype"), str):
            if data["torch_dtype"] in ("float32", "float16", "bfloat16"):
                kwargs["dtype"] = "float32"  # we run in fp32 unless asked otherwise
        try:
            return cls(**kwargs)
        except TypeError as exc:
            raise ValueError(f"Invalid model config: {exc}.") from exc

    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.to_dict(), indent=2) + "\n", encoding="utf-8")

    @classmethod
    def load(cls, path: str | Path) -> ModelConfig:
        p = Path(path)
        if not p.exists():
            raise ValueError(f"{p} does not exist: a model folder needs a config.json.")
        data = read_json(p, MAX_CONFIG_BYTES, "a model's config.json")
        if not isinstance(data, dict):
            raise ValueError(f"{p} must hold a JSON object with the model's settings.")
        try:
            return cls.from_dict(data)
        except ValueError as exc:  # name the file: the fields alone do not say which one
            raise ValueError(f"{p}: {exc}") from exc
