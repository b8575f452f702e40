"""The one loaded-model type every front runs on, and the one loader that makes it.

Owns `LoadedModel` (a backend ready to step, its tokenizer and the facts the
fronts show: the name, how the user named it, where it came from, max positions,
dtype, device, parameter count, chat-tuned or not, random weights or not),
`load_model` (what a user names: ``ko-base``, ``ko-chat``, ``random``, a model
folder, a transformers folder or a MiniMind ``.pth``, plus dtype and device →
`LoadedModel`; the CLI's ``common.prepare``, the window's
``engine_adapter.load_model`` and ``kv.load`` all call it), `from_minimind` (a
`MiniMindLM` + tokenizer already in memory → `LoadedModel`) and `looks_like_chat`.

Reading the files themselves is ``checkpoints.py`` (our folders, ``.pth``, random
weights) and ``engine/backends/hf.py`` (transformers folders); every failure is a
`ValueError` saying what is wrong and what to do. It imports torch only inside
the functions that load, so the window can name its model before torch loads.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from kvstudio.files.resources import MODELS_DIR, RANDOM_MODEL_NAME

if TYPE_CHECKING:
    import torch

    from kvstudio.engine.backends.minimind import LanguageModel
    from kvstudio.engine.config import ModelConfig
    from kvstudio.engine.model import MiniMindLM
    from kvstudio.engine.tokenizer import TextTokenizer

EMBEDDED_NAMES = ("ko-chat", "ko-base")  # named without a path; the default tries this order
Origin = Literal["embedded", "folder", "pth", "transformers", "random", "memory"]


@dataclass(frozen=True)
class LoadedModel:
    """A model ready to step: the backend, its tokenizer, and where it came from."""

    backend: LanguageModel
    tokenizer: TextTokenizer
    name: str  # shown to users: "ko-chat", a folder name, "random-initialised (…)"
    description: str  # one line: the CLI's "Model:" header and logs
    origin: Origin  # how it was asked for
    requested: str  # what the user named, as given: "ko-chat", "random", a path ("": in memory)
    source: Path | None  # the folder or file read; None for random weights or a model in memory
    max_positions: int  # prompt + new tokens must fit
    is_chat: bool  # chat-tuned: the chat template is on by default (`looks_like_chat`)
    is_random: bool = False  # random weights: the text is meaningless, the numbers are real
    tokenizer_path: str = ""  # the tokenizer folder named for a .pth ("": the .pth's folder)

    @property
    def model(self) -> MiniMindLM:
        """The `MiniMindLM` (TypeError for a transformers model: use `backend`)."""
        from kvstudio.engine.backends.minimind import MiniMindBackend

        if not isinstance(self.backend, MiniMindBackend):
            raise TypeError(f"{self.name} is a transformers model, not a MiniMindLM.")
        return self.backend.model

    @property
    def config(self) -> ModelConfig:
        """The MiniMind `ModelConfig` (TypeError for a transformers model)."""
        return self.model.config

    @property
    def device(self) -> str:
        return str(self.backend.device)

    @property
    def dtype(self) -> str:
        """The weights' dtype: "float32", "float16" or "bfloat16"."""
        return str(next(self._weights().parameters()).dtype).removeprefix("torch.")

    @property
    def parameter_count(self) -> int:
        return sum(w.numel() for w in self._weights().parameters())

    def _weights(self) -> torch.nn.Module:
        module: torch.nn.Module = getattr(self.backend, "model")  # noqa: B009 (any backend)
        return module


def looks_like_chat(name: str, tokenizer: TextTokenizer) -> bool:
    """Chat-tuned or not, from what we have: ChatML tokens, and no "base"/"pretrain" in the name.

    Base and chat models share MiniMind's tokenizer (ChatML tokens included), and
    checkpoints carry no flag, so the name decides (ko-base, pretrain_512.pth vs
    ko-chat, full_sft_512.pth). The user can still tick the template either way.
    """
    lowered = name.lower()
    return tokenizer.has_chat_tokens and not any(w in lowered for w in ("base", "pretrain"))


def minimind_description(model: MiniMindLM, name: str, is_random: bool) -> str:
    """One line for logs and the CLI header."""
    c = model.config
    text = (
        f"{name}: {model.num_parameters / 1e6:.2f} M parameters, "
        f"{c.num_hidden_layers} layers, hidden {c.hidden_size}, {c.num_attention_heads} heads / "
        f"{c.num_key_value_heads} KV heads × {c.resolved_head_dim}, vocab {c.vocab_size:,}, "
        f"{c.dtype}"
    )
    if is_random:
        text += " — RANDOM WEIGHTS: the text is meaningless, the measurements are real"
    return text


def from_minimind(
    model: MiniMindLM,
    tokenizer: TextTokenizer,
    name: str,
    *,
    origin: Origin = "memory",
    requested: str = "",
    source: Path | None = None,
    is_random: bool = False,
    tokenizer_path: str = "",
) -> LoadedModel:
    """A `MiniMindLM` + tokenizer (loaded, random, or built in memory) → `LoadedModel`."""
    from kvstudio.engine.backends.minimind import MiniMindBackend

    return LoadedModel(
        backend=MiniMindBackend(model, name=name),
        tokenizer=tokenizer,
        name=name,
        description=minimind_description(model, name, is_random),
        origin=origin,
        requested=requested,
        source=source,
        max_positions=int(model.config.max_position_embeddings),
        is_chat=looks_like_chat(name, tokenizer),
        is_random=is_random,
        tokenizer_path=tokenizer_path,
    )


def _transformers(path: Path, requested: str, dtype: str, device: str) -> LoadedModel:
    """A local transformers folder (Llama, Qwen3, EXAONE …; needs the ``hf`` extra)."""
    from kvstudio.engine.backends.hf import load_hf_backend

    backend, tokenizer = load_hf_backend(path, dtype=dtype, device=device)
    import transformers  # already imported by load_hf_backend; only for the version

    description = (
        f"{backend.name} (transformers {transformers.__version__}, "
        f"{type(backend.model).__name__}): {backend.num_layers} layers, "
        f"{backend.config.num_attention_heads} heads / {backend.num_kv_heads} KV heads × "
        f"{backend.head_dim}, vocab {backend.vocab_size}, {backend.dtype}, {backend.device}"
    )
    return LoadedModel(
        backend=backend, tokenizer=tokenizer, name=backend.name, description=description,
        origin="transformers", requested=requested, source=path,
        max_positions=backend.max_positions, is_chat=looks_like_chat(backend.name, tokenizer),
    )


def embedded_folder(name: str | Path) -> Path | None:
    """The folder of the embedded model `name` (``ko-base``, ``ko-chat``), else None.

    A name is read as an embedded model only where no file or folder of that
    name exists (a user's own ``./ko-base`` folder wins).
    """
    from kvstudio.files.checkpoints import MISSING_MODELS_HELP

    text = str(name)
    if text not in EMBEDDED_NAMES or Path(text).exists():
        return None
    folder = MODELS_DIR / text
    if not folder.is_dir():
        raise ValueError(
            f"The embedded model {text} is not in {MODELS_DIR}. {MISSING_MODELS_HELP}"
        )
    return folder


def load_model(
    model: str | Path | None = None,
    *,
    tokenizer: str | Path | None = None,
    dtype: str | None = None,
    device: str = "cpu",
    default: str | None = None,
) -> LoadedModel:
    """Open what the user named: ``ko-base`` / ``ko-chat`` (the embedded models),
    ``random`` (random weights, only when asked for), a model folder, a transformers
    folder, or a MiniMind ``.pth`` (its tokenizer folder: `tokenizer`, else the
    ``.pth``'s own folder). Without `model`: the embedded `default` (the course
    preset's model for a lab), else the shipped model (ko-chat, else ko-base).

    `dtype` ("float32", "float16", "bfloat16"; None: a folder's own config, else
    float32) and `device` ("cpu", "cuda") say how it runs. ValueError: what is
    wrong and what to do.
    """
    from kvstudio.engine.backends.hf import is_hf_folder
    from kvstudio.engine.config import ModelConfig
    from kvstudio.files import checkpoints

    if device != "cpu" and device.startswith("cuda"):
        import torch

        if not torch.cuda.is_available():
            raise ValueError(f"--device {device} was asked for but torch sees no CUDA GPU.")
    if model is not None and str(model) == RANDOM_MODEL_NAME and not Path(model).exists():
        config = ModelConfig(dtype=dtype) if dtype is not None else None
        return checkpoints.random_model(config=config, device=device)
    if model is None and default is not None:
        model = default
    if model is None:
        return checkpoints.default_model(dtype=dtype, device=device)
    requested = str(model)
    folder = embedded_folder(model)
    if folder is not None:
        loaded = checkpoints.load_model_folder(folder, dtype=dtype, device=device)
        return replace(loaded, origin="embedded", requested=requested)
    p = Path(model)
    if not p.exists():
        raise ValueError(
            f"{p} does not exist. Give {' or '.join(EMBEDDED_NAMES)} (the embedded models), "
            f"a model folder, a MiniMind .pth file, a transformers folder or "
            f"{RANDOM_MODEL_NAME} (random weights)."
        )
    if p.is_dir() and is_hf_folder(p):
        return _transformers(p, requested, dtype or "float32", device)
    loaded = checkpoints.load_any(p, tokenizer_folder=tokenizer, dtype=dtype, device=device)
    return replace(loaded, requested=requested,
                   tokenizer_path=str(tokenizer) if tokenizer is not None else "")
