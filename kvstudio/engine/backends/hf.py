"""Drive a local Hugging Face causal LM through the generator's `LanguageModel` interface.

Owns `HFBackend` (the adapter), `HFCache` (a transformers cache plus the
bookkeeping the stepper measures: positions seen, the attention mask grown
each step) and `load_hf_backend` (open a *local* folder, never the hub). What
a folder must hold and its tokenizer are `backends.hf_folder`.

transformers is imported lazily, inside the functions that need it, so
importing ``kvstudio.engine`` never imports it; it is the optional extra
``pip install -e '.[hf]'``. Supported range: see ``TRANSFORMERS_RANGE``.

Cache bytes are read from the cache's own tensors. transformers' Cache API
moved across versions: 4.56+ keeps ``cache.layers[i].keys / .values``
(B, G, S, d); older releases kept ``cache.key_cache[i] / value_cache[i]``.
Both are read. It does not sample, time or record: that is ``generate.py``.
"""

from __future__ import annotations

import inspect
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from kvstudio.engine.backends.hf_folder import (  # noqa: F401  (also this module's API)
    INSTALL_HINT,
    TRANSFORMERS_RANGE,
    HFTextTokenizer,
    check_hf_folder,
    is_hf_folder,
    load_hf_tokenizer,
    require_transformers,
    transformers_major,
)
from kvstudio.engine.cache.kv_cache import CacheSpec, tensor_nbytes
from kvstudio.engine.cache.layout import CachePlan, plan_from_windows
from kvstudio.engine.model import AttentionProbe

logger = logging.getLogger(__name__)

DTYPE_NAMES: dict[str, torch.dtype] = {
    "float32": torch.float32,
    "fp32": torch.float32,
    "float16": torch.float16,
    "fp16": torch.float16,
    "half": torch.float16,
    "bfloat16": torch.bfloat16,
    "bf16": torch.bfloat16,
}


def cache_argument(model: Any) -> str:
    """The keyword the model's forward takes its cache by: ``cache`` (transformers 5.24+,
    where ``past_key_values`` is deprecated) or ``past_key_values`` (before)."""
    try:
        names = inspect.signature(model.forward).parameters
    except (TypeError, ValueError):  # a forward without a readable signature
        return "past_key_values"
    return "cache" if "cache" in names else "past_key_values"


def resolve_dtype(name: str | torch.dtype) -> torch.dtype:
    """'fp32' / 'float16' / 'bf16' … → torch dtype, with a clear error for anything else."""
    if isinstance(name, torch.dtype):
        if name in DTYPE_NAMES.values():
            return name
        raise ValueError(f"dtype must be float32, float16 or bfloat16, got {name}.")
    key = name.strip().lower().removeprefix("torch.")
    if key not in DTYPE_NAMES:
        raise ValueError(f"dtype must be fp32, fp16 or bf16 (or float32 …), got {name!r}.")
    return DTYPE_NAMES[key]


def resolve_device(name: str | torch.device | None) -> torch.device:
    """'auto' picks cuda, then mps, then cpu; an explicit device must be present."""
    if isinstance(name, torch.device):
        name = str(name)
    key = (name or "auto").strip().lower()
    mps_ok = torch.backends.mps.is_available()
    if key == "auto":
        if torch.cuda.is_available():
            return torch.device("cuda")
        return torch.device("mps" if mps_ok else "cpu")
    device = torch.device(key)
    if device.type == "cuda" and not torch.cuda.is_available():
        raise ValueError("CUDA was asked for but torch sees no CUDA GPU; use --device cpu or auto.")
    if device.type == "mps" and not mps_ok:
        raise ValueError("MPS was asked for but this torch has no Apple GPU; use --device cpu.")
    if device.type not in ("cpu", "cuda", "mps"):
        raise ValueError(f"device must be cpu, cuda, mps or auto, got {name!r}.")
    return device


def _layer_tensors(cache: Any) -> list[tuple[torch.Tensor | None, torch.Tensor | None]]:
    """[(K, V)] per layer across transformers versions: ``layers[i].keys`` or ``key_cache[i]``."""
    layers = getattr(cache, "layers", None)
    if layers is not None:
        return [(getattr(layer, "keys", None), getattr(layer, "values", None)) for layer in layers]
    keys = getattr(cache, "key_cache", None)
    values = getattr(cache, "value_cache", None)
    if keys is None or values is None:
        raise ValueError(
            f"Cannot read K/V tensors from {type(cache).__name__}; use transformers "
            f"{TRANSFORMERS_RANGE}."
        )
    return list(zip(keys, values, strict=False))


@dataclass
class HFCache:
    """A transformers cache plus what the generator measures: the `Cache` verbs (``base.py``).

    Bytes and lengths are read from the transformers cache's own tensors, shaped
    (B, G, S, d); the attention mask (B, past) grows by the new columns each step.
    """

    cache: Any  # transformers DynamicCache or StaticCache
    spec: CacheSpec
    batch_size: int
    num_layers: int  # L: layers a lazily built cache may not have yet count as empty
    seq_length: int = 0  # positions processed (the next token's position)
    attention_mask: torch.Tensor | None = field(default=None, repr=False)  # (B, past + new)

    def _stored(self, keys: torch.Tensor | None) -> int:
        if keys is None or keys.dim() < 2:
            return 0
        rows = int(keys.shape[-2])  # (B, G, S, d)
        if self.spec.kind == "static":
            return min(self.seq_length, rows)  # rows = preallocated length
        return rows

    @property
    def stored_tokens(self) -> int:
        return max((self._stored(k) for k, _ in _layer_tensors(self.cache)), default=0)

    def visible_length(self, new_tokens: int) -> int:
        return self.seq_length + new_tokens

    def layer_nbytes(self) -> tuple[tuple[int, int], ...]:
        sizes = [(tensor_nbytes(k), tensor_nbytes(v)) for k, v in _layer_tensors(self.cache)]
        sizes += [(0, 0)] * (self.num_layers - len(sizes))  # lazily created layers
        return tuple(sizes[: self.num_layers])

    @property
    def nbytes(self) -> int:
        return sum(k + v for k, v in self.layer_nbytes())

    @property
    def used_nbytes(self) -> int:
        used = 0
        for k, v in _layer_tensors(self.cache):
            if k is None or v is None or k.dim() < 2 or k.shape[-2] == 0:
                continue
            used += (k.nbytes + v.nbytes) * self._stored(k) // k.shape[-2]  # S = dim -2
        return used

    def select_rows(self, rows: torch.Tensor) -> None:
        """Keep cache rows `rows` (R,), in that order: transformers' beam-search
        `reorder_cache` does exactly this per layer; the attention mask (B, past) follows."""
        self.cache.reorder_cache(rows)
        if self.attention_mask is not None:
            self.attention_mask = self.attention_mask.index_select(0, rows)  # (R, past)
        self.batch_size = int(rows.shape[0])

    def finish_rows(self, finished: torch.Tensor) -> None:
        """A transformers cache keeps a column per step for every row: nothing to do."""


class HFBackend:
    """`LanguageModel` for a transformers causal LM (Llama, Qwen3, EXAONE-4 …)."""

    def __init__(self, model: Any, name: str = "hf", eos_token_id: int | None = None) -> None:
        # Multimodal configs nest the decoder's settings; get_text_config() finds them.
        get_text = getattr(model.config, "get_text_config", None)
        cfg = get_text() if get_text is not None else model.config
        self.model = model.eval()
        self.config = cfg
        self.name = name
        self.num_layers: int = int(cfg.num_hidden_layers)
        heads = int(cfg.num_attention_heads)
        self.num_kv_heads: int = int(getattr(cfg, "num_key_value_heads", None) or heads)
        self.head_dim: int = int(getattr(cfg, "head_dim", None) or cfg.hidden_size // heads)
        first = next(model.parameters())
        self.dtype_bytes: int = first.element_size()
        self.dtype: torch.dtype = first.dtype
        head = model.get_output_embeddings()
        self.vocab_size: int = int(head.weight.shape[0]) if head is not None else cfg.vocab_size
        self.hidden_size: int = int(cfg.hidden_size)
        self.eos_token_id: int | None = eos_token_id
        self.device: torch.device = first.device
        # Prompt + new tokens must fit (the window checks it before a run).
        self.max_positions: int = int(getattr(cfg, "max_position_embeddings", None) or 2048)
        self._major = transformers_major()
        self._cache_kwarg = cache_argument(model)
        self._windows: tuple[int | None, ...] | None = None  # see layer_windows()

    # ---- construction --------------------------------------------------------------------
    @classmethod
    def from_folder(
        cls,
        path: str | Path,
        *,
        dtype: str | torch.dtype = "float32",
        device: str | torch.device | None = "cpu",
        attn_implementation: str | None = "sdpa",
    ) -> HFBackend:
        """Open a local folder (no hub access) on `device` in `dtype`."""
        transformers = require_transformers()
        folder = check_hf_folder(path)
        torch_dtype = resolve_dtype(dtype)
        target = resolve_device(device)
        if target.type == "cpu" and torch_dtype == torch.float16:
            logger.warning("fp16 on the CPU is slow and may be inexact; bf16 or fp32 suit the CPU.")
        transformers.utils.logging.disable_progress_bar()
        kwargs: dict[str, Any] = {"local_files_only": True, "dtype": torch_dtype}
        if attn_implementation:
            kwargs["attn_implementation"] = attn_implementation
        auto = transformers.AutoModelForCausalLM
        try:
            try:
                model = auto.from_pretrained(str(folder), **kwargs)
            except ValueError as exc:
                if "attn_implementation" not in kwargs or "sdpa" not in str(exc).lower():
                    raise
                # An architecture without an SDPA kernel: fall back to its default attention.
                logger.info("%s: %s; using the model's default attention.", folder.name, exc)
                del kwargs["attn_implementation"]
                model = auto.from_pretrained(str(folder), **kwargs)
        except (OSError, ValueError, KeyError) as exc:
            raise ValueError(
                f"transformers could not open {folder} as a causal LM: {exc}. Check the folder is "
                f"complete and that transformers {TRANSFORMERS_RANGE} knows its model_type."
            ) from exc
        model = model.to(target)
        listed = _eos_ids(model.generation_config, model.config)
        return cls(model, name=folder.name, eos_token_id=listed[0] if listed else None)

    # ---- the LanguageModel protocol ------------------------------------------------------
    def new_cache(self, spec: CacheSpec, batch_size: int) -> HFCache:
        transformers = require_transformers()
        if spec.kind == "dynamic":
            cache = transformers.DynamicCache(config=self.model.config)
        elif spec.kind == "static":
            cache = transformers.StaticCache(
                config=self.model.config, max_cache_len=spec.max_length
            )
        elif spec.kind == "sliding":
            raise ValueError(
                "A transformers model runs its own attention, so KV Studio cannot impose a "
                f"{spec.window}-token window on it; choose the dynamic or static cache."
            )
        else:
            raise ValueError(
                f"The {spec.kind} cache runs inside KV Studio's own model; a transformers model "
                "keeps its own cache, so choose the dynamic or static cache for it."
            )
        return HFCache(cache=cache, spec=spec, batch_size=batch_size, num_layers=self.num_layers)

    def forward_last(
        self, input_ids: torch.Tensor, cache: HFCache | None, window: int | None
    ) -> torch.Tensor:
        return self._logits(input_ids, cache, window, 1)[:, -1]  # (B, V)

    def forward_tail(
        self, input_ids: torch.Tensor, cache: HFCache | None, keep: int,
        probe: AttentionProbe | None = None,
    ) -> torch.Tensor:
        if probe is not None:
            raise ValueError(
                "A transformers model runs its own attention, so KV Studio cannot probe its "
                "queries and keys; the cache inspector needs one of KV Studio's own models."
            )
        return self._logits(input_ids, cache, None, keep)  # (B, keep, V)

    def _logits(
        self, input_ids: torch.Tensor, cache: HFCache | None, window: int | None, keep: int
    ) -> torch.Tensor:
        """input_ids (B, T) → logits (B, keep, V), the cache (if any) grown by T."""
        B, T = input_ids.shape
        if cache is None:
            if window is not None:
                raise ValueError(
                    "A sliding attention window cannot be imposed on a transformers model; "
                    "choose the dynamic or static cache."
                )
            mask = torch.ones(B, T, dtype=torch.long, device=input_ids.device)  # (B, T)
            out = self.model(
                input_ids=input_ids, attention_mask=mask, use_cache=False, logits_to_keep=keep
            )
            return out.logits  # (B, keep, V)
        past = cache.seq_length
        cache.spec.check_room(past + T)
        # Grow the mask by the new columns as generate() does: (B, past) → (B, past + T).
        new_cols = torch.ones(B, T, dtype=torch.long, device=input_ids.device)
        mask = (
            new_cols
            if cache.attention_mask is None
            else torch.cat([cache.attention_mask, new_cols], dim=1)
        )
        positions = torch.arange(past, past + T, device=input_ids.device)  # (T,)
        kwargs: dict[str, Any] = {}
        if self._major < 5:
            kwargs["cache_position"] = positions  # 4.x indexes the static cache with it
        out = self.model(
            input_ids=input_ids,
            attention_mask=mask,
            position_ids=positions[None, :].expand(B, T),  # (B, T)
            use_cache=True,
            logits_to_keep=keep,
            **{self._cache_kwarg: cache.cache},
            **kwargs,
        )
        cache.attention_mask = mask
        cache.seq_length = past + T
        return out.logits  # (B, keep, V)

    def layer_windows(self) -> tuple[int | None, ...]:
        """Per layer, its sliding window W (None = full attention), as transformers builds it.

        Read from the layers of an empty ``DynamicCache(config=…)``: transformers
        gives a sliding layer (``DynamicSlidingWindowLayer``) to every layer its
        config marks ``sliding_attention`` in ``layer_types`` (or to all layers
        when a Mistral-style config only sets ``sliding_window``).
        """
        if self._windows is None:
            probe = require_transformers().DynamicCache(config=self.model.config)
            layers = getattr(probe, "layers", ())
            found = [getattr(layer, "sliding_window", None) for layer in layers]
            found += [None] * (self.num_layers - len(found))
            self._windows = tuple(None if w is None else int(w) for w in found[: self.num_layers])
        return self._windows

    def cache_plan(self, spec: CacheSpec) -> CachePlan:
        """What each layer keeps under `spec`: full layers T tokens (static: M allocated),
        sliding layers what transformers' sliding layers keep — W − 1 in the dynamic
        cache (``DynamicSlidingWindowLayer``), min(M, W) allocated and kept in the
        static one (``StaticSlidingWindowLayer``)."""
        return plan_from_windows(
            self.layer_windows(),
            spec,
            self.num_kv_heads,
            self.head_dim,
            self.dtype_bytes,
            sliding_keeps_extra=1 if spec.kind == "static" else 0,
        )


def _eos_ids(generation_config: Any, config: Any) -> list[int]:
    """The end-of-sequence ids a folder lists (an int or a list): its generation config's,
    else its config's."""
    for source in (generation_config, config):
        value = getattr(source, "eos_token_id", None)
        values = value if isinstance(value, (list, tuple)) else [value]
        ids = [int(v) for v in values if isinstance(v, int)]
        if ids:
            return ids
    return []


def load_hf_backend(
    path: str | Path,
    *,
    dtype: str | torch.dtype = "float32",
    device: str | torch.device | None = "cpu",
) -> tuple[HFBackend, HFTextTokenizer]:
    """Open a local transformers folder as (backend, tokenizer) for the stepper and labs.

    One end-of-sequence id serves both (the stepper stops a row on it): the
    tokenizer's eos token when the generation config lists it (Llama-3-Instruct's
    ``<|eot_id|>``, EXAONE's ``[|endofturn|]``), else the first id listed.
    """
    require_transformers()
    folder = check_hf_folder(path)
    tokenizer = load_hf_tokenizer(folder)
    backend = HFBackend.from_folder(folder, dtype=dtype, device=device)
    listed = _eos_ids(backend.model.generation_config, backend.config)
    own = getattr(tokenizer._hf, "eos_token_id", None)
    eos = own if isinstance(own, int) and (not listed or own in listed) else None
    if eos is None and listed:
        eos = listed[0]
    if eos is None:
        eos = tokenizer.eos_id
    backend.eos_token_id = eos
    tokenizer.eos_id = eos
    logger.info("%s: end of sequence id %s", folder.name, eos)
    return backend, tokenizer


def transformers_beam_search(
    source: str | Path | Any,
    prompt_ids: list[int],
    *,
    num_beams: int,
    length_penalty: float,
    early_stopping: bool | str,
    max_new_tokens: int,
    num_return_sequences: int,
    eos_token_id: int | None,
) -> list[tuple[list[int], float]]:
    """transformers' own ``generate(num_beams=…)`` on a local folder (opened in float32) or an
    opened model: per returned sequence, its generated ids (cut after the first eos; the rest
    is padding) and its score.

    The reference `kvstudio.engine.strategies.beam` is checked against (`kvstudio beam`, tests/hf).
    """
    transformers = require_transformers()
    if isinstance(source, str | Path):
        folder = check_hf_folder(source)
        transformers.utils.logging.disable_progress_bar()
        model = transformers.AutoModelForCausalLM.from_pretrained(
            folder, local_files_only=True, dtype=torch.float32
        ).eval()
    else:
        model = source
    device = next(model.parameters()).device
    ids = torch.tensor([prompt_ids], dtype=torch.long, device=device)  # (1, P)
    with torch.inference_mode():
        out = model.generate(
            ids,
            attention_mask=torch.ones_like(ids),
            num_beams=num_beams,
            length_penalty=length_penalty,
            early_stopping=early_stopping,
            max_new_tokens=max_new_tokens,
            num_return_sequences=num_return_sequences,
            do_sample=False,
            eos_token_id=eos_token_id,
            pad_token_id=0,
            output_scores=True,
            return_dict_in_generate=True,
        )
    found: list[tuple[list[int], float]] = []
    generated = out.sequences[:, len(prompt_ids) :].tolist()  # (R, ≤ N) ids
    for row, score in zip(generated, out.sequences_scores.tolist(), strict=True):
        if eos_token_id is not None and eos_token_id in row:
            row = row[: row.index(eos_token_id) + 1]
        found.append((row, float(score)))
    return found
