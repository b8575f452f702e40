"""Loading and saving models: our model folders, MiniMind ``.pth`` state dicts, the default model.

Owns everything between files on disk and a ready `MiniMindLM` + `TextTokenizer`:

- a model folder: ``config.json`` + ``model.safetensors`` + ``tokenizer.json``
  (weights may be stored in fp16/bf16; they are cast to the run dtype, fp32 by default);
- a MiniMind ``.pth`` state dict (read and its architecture inferred by ``pth.py``),
  plus a tokenizer folder;
- `default_model()`: the shipped model in ``kvstudio/resources/models``; a package
  installed without its models is an error that says how to get them, never a silent
  fall-back to random weights;
- `random_model()`: a seeded random-initialised course model, only when asked for
  (``--model random``), labelled as such wherever its name is shown.

Each returns the one `loaded.LoadedModel` (``loaded.load_model`` picks among them
from what a user names). Every failure is a `ValueError` whose message says what
is wrong and what to do.
It does not run models (``engine/backends``, ``engine/generate.py``) or train them
(``kvstudio.training``).
"""

from __future__ import annotations

import contextlib
import logging
from dataclasses import replace
from pathlib import Path

import torch
from safetensors import SafetensorError
from safetensors.torch import load_file, save_file
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

from kvstudio.engine import limits
from kvstudio.engine.config import ModelConfig
from kvstudio.engine.model import MiniMindLM
from kvstudio.engine.small_files import require_regular_file
from kvstudio.engine.tokenizer import SPECIAL_TOKENS, TextTokenizer
from kvstudio.files.folder_write import recover, staged_folder
from kvstudio.files.loaded import EMBEDDED_NAMES, LoadedModel, from_minimind
from kvstudio.files.pth import infer_config, read_pth_state_dict
from kvstudio.files.resources import MODELS_DIR, RANDOM_MODEL_NAME

log = logging.getLogger(__name__)

RANDOM_LABEL = "random-initialised"
MISSING_MODELS_HELP = (
    "The package carries the three embedded models: reinstall it from a checkout "
    "(`pip install .`), its wheel or its git address (docs/notebooks.md), give your own "
    "model with --model PATH, or ask for random weights with --model random."
)
CONFIG_FILE, WEIGHTS_FILE, TOKENIZER_FILE = "config.json", "model.safetensors", "tokenizer.json"
MODEL_FILES = (CONFIG_FILE, WEIGHTS_FILE, TOKENIZER_FILE)  # what a model folder holds
DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}

# A few sentences to train a throwaway byte-level BPE when no tokenizer ships yet.
_FALLBACK_SENTENCES = (
    "안녕하세요. 오늘은 KV 캐시가 무엇인지 함께 살펴보겠습니다.",
    "언어 모델은 한 번에 한 토큰씩 다음 단어를 예측합니다.",
    "캐시를 쓰면 앞에서 계산한 키와 값을 다시 계산하지 않아도 됩니다.",
    "온도를 높이면 답이 다양해지고, 낮추면 가장 그럴듯한 답을 고릅니다.",
    "서울의 가을 하늘은 맑고 높습니다. 학생들은 도서관에서 공부합니다.",
    "The quick brown fox jumps over the lazy dog. 1 2 3 4 5 6 7 8 9 0",
)


# ---- tokenizers ----------------------------------------------------------------------------
def train_fallback_tokenizer(vocab_size: int = 512) -> TextTokenizer:
    """A tiny byte-level BPE trained in memory on built-in Korean/English sentences.

    Special tokens get MiniMind's ids 0, 1, 2. The result has as many tokens as
    the sentences allow (a few hundred), never padded: the random model that uses
    it is sized to this vocabulary, so every id decodes to real text.
    """
    tk = Tokenizer(models.BPE())
    tk.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tk.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=list(SPECIAL_TOKENS),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tk.train_from_iterator(list(_FALLBACK_SENTENCES) * 4, trainer)
    return TextTokenizer(tk)


def _check_vocab(tokenizer: TextTokenizer, embedding_rows: int, where: Path) -> None:
    if tokenizer.vocab_size != embedding_rows:
        raise ValueError(
            f"The tokenizer in {where} has {tokenizer.vocab_size} tokens but the model's "
            f"embedding has {embedding_rows} rows. Use the tokenizer.json that was trained "
            "with this model (they must match one to one)."
        )


# ---- model folders -------------------------------------------------------------------------
def load_model_folder(
    folder: str | Path,
    *,
    dtype: str | None = None,
    device: str | torch.device = "cpu",
) -> LoadedModel:
    """Load ``config.json`` + ``model.safetensors`` + ``tokenizer.json`` from `folder`.

    `dtype` overrides the config's run dtype ("float32" by default in our configs).
    """
    root = Path(folder)
    if not root.exists():
        with contextlib.suppress(OSError):
            recover(root)  # a save killed mid-swap where folders cannot be exchanged atomically
    if not root.is_dir():
        raise ValueError(
            f"{root} is not a folder. Choose a model folder holding {CONFIG_FILE}, "
            f"{WEIGHTS_FILE} and {TOKENIZER_FILE}."
        )
    missing = [n for n in MODEL_FILES if not (root / n).exists()]
    if missing:
        raise ValueError(
            f"The model folder {root} is missing {', '.join(missing)}. A model folder needs "
            f"{CONFIG_FILE}, {WEIGHTS_FILE} and {TOKENIZER_FILE}; copy the missing file(s) in "
            "or save the model again."
        )
    config = ModelConfig.load(root / CONFIG_FILE)
    if dtype is not None:
        config = replace(config, dtype=dtype)
    check_model_fits(config, root / CONFIG_FILE)  # before reading or allocating any weights
    weights_path = root / WEIGHTS_FILE
    require_regular_file(weights_path, "the model's safetensors weights")
    try:
        state = load_file(str(weights_path))
    except (SafetensorError, OSError, ValueError, RuntimeError) as exc:
        raise ValueError(
            f"Cannot read {weights_path} ({exc}). The file is truncated or not safetensors; "
            "copy it again or re-save the model."
        ) from exc
    tokenizer = TextTokenizer.from_file(root / TOKENIZER_FILE)
    model = build_model(config, state, where=weights_path, device=device)
    _check_vocab(tokenizer, config.vocab_size, root)
    return from_minimind(model, tokenizer, root.name, origin="folder", requested=str(folder),
                         source=root)


def save_model_folder(
    model: MiniMindLM,
    tokenizer: TextTokenizer,
    folder: str | Path,
    *,
    weights_dtype: str | None = None,
) -> Path:
    """Write `model` and `tokenizer` as a model folder; returns the folder.

    `weights_dtype` ("float16", "bfloat16", "float32") stores the weights in that
    dtype (default: the model's own). A tied LM head is stored once. The files
    are written beside `folder` and swapped in (`folder_write.staged_folder`):
    a failure (a full disk) leaves what `folder` held before, and a symbolic
    link in it is replaced, never written through. ValueError says what failed.
    """
    out = Path(folder)
    state = weights_state_dict(model, weights_dtype)
    try:
        with staged_folder(out) as staging:
            model.config.save(staging / CONFIG_FILE)
            save_file(state, str(staging / WEIGHTS_FILE), metadata={"format": "pt"})
            tokenizer.save(staging)
    except OSError as exc:
        raise ValueError(
            f"Cannot save the model to {out}: {exc.strerror or exc}. Free some space or "
            "choose another folder; what was there is unchanged."
        ) from exc
    return out


def weights_state_dict(model: MiniMindLM, dtype: str | None = None) -> dict[str, torch.Tensor]:
    """The tensors a weights file holds (MiniMind's names, which are transformers' Llama
    names): on the CPU, cast to `dtype` (None: as they are). A tied LM head is left out
    (safetensors refuses shared tensors; loaders re-tie it from ``tie_word_embeddings``)."""
    target = DTYPES[dtype] if dtype else None
    state = {}
    for name, tensor in model.state_dict().items():
        if model.config.tie_word_embeddings and name == "lm_head.weight":
            continue  # the same tensor as model.embed_tokens.weight
        t = tensor.detach().to("cpu")
        state[name] = (t.to(target) if target is not None else t).contiguous()
    return state


def build_model(
    config: ModelConfig,
    state: dict[str, torch.Tensor],
    *,
    where: Path | str = "the checkpoint",
    device: str | torch.device = "cpu",
) -> MiniMindLM:
    """A `MiniMindLM` for `config` holding the tensors of `state` (cast to the config dtype)."""
    check_model_fits(config, where)
    model = MiniMindLM(config)
    expected = model.state_dict()
    state = dict(state)
    if config.tie_word_embeddings:
        state.pop("lm_head.weight", None)
    missing = [k for k in expected if k not in state and k != "lm_head.weight"]
    if not config.tie_word_embeddings and "lm_head.weight" not in state:
        missing.append("lm_head.weight")
    if missing:
        raise ValueError(
            f"{where} lacks {len(missing)} tensor(s) the model needs (first: {missing[0]}). "
            "It was saved from a different architecture; check config.json "
            "(num_hidden_layers, qk_norm, tie_word_embeddings)."
        )
    unexpected = [k for k in state if k not in expected]
    if unexpected:
        raise ValueError(
            f"{where} has {len(unexpected)} tensor(s) this model does not use "
            f"(first: {unexpected[0]}). Mixture-of-experts and other variants are not "
            "supported; use a dense MiniMind checkpoint or fix config.json."
        )
    for key, tensor in state.items():
        want = tuple(expected[key].shape)
        if tuple(tensor.shape) != want:
            raise ValueError(
                f"{where}: tensor {key} has shape {tuple(tensor.shape)} but config.json asks for "
                f"{want}. The config does not belong to these weights; use the matching "
                "config.json (hidden_size, heads, head_dim, vocab_size)."
            )
        if not tensor.is_floating_point():
            raise ValueError(
                f"{where}: tensor {key} is not floating point; this is not a model checkpoint."
            )
    run_dtype = DTYPES[config.dtype]
    state = {k: v.to(run_dtype) for k, v in state.items()}
    model = model.to(run_dtype)
    model.load_state_dict(state, strict=False)
    return model.to(device).eval()


def check_model_fits(config: ModelConfig, where: Path | str = "config.json") -> None:
    """ValueError if the model `config` describes would not fit in free memory."""
    limits.check_fits_memory(
        config.load_peak_bytes,  # with what builds it: the RoPE tables' temporaries
        f"The model in {where} ({config.parameter_count:,} parameters, hidden "
        f"{config.hidden_size}, {config.max_position_embeddings:,} positions)",
        hint="Check the sizes in its config.json (hidden_size, num_hidden_layers, "
        "vocab_size, max_position_embeddings).",
    )


# ---- MiniMind .pth -------------------------------------------------------------------------
def load_minimind_pth(
    pth_path: str | Path,
    tokenizer_folder: str | Path,
    *,
    config_path: str | Path | None = None,
    dtype: str = "float32",
    device: str | torch.device = "cpu",
) -> LoadedModel:
    """Load a MiniMind ``.pth`` state dict plus the tokenizer folder that goes with it."""
    p = Path(pth_path)
    state = read_pth_state_dict(p)
    base = ModelConfig.load(config_path) if config_path is not None else ModelConfig()
    config = replace(infer_config(state, base, where=str(p)), dtype=dtype)
    tokenizer = TextTokenizer.from_file(tokenizer_folder)
    _check_vocab(tokenizer, config.vocab_size, Path(tokenizer_folder))
    model = build_model(config, state, where=p, device=device)
    return from_minimind(model, tokenizer, p.stem, origin="pth", requested=str(pth_path),
                         source=p, tokenizer_path=str(tokenizer_folder))


def load_any(
    path: str | Path,
    *,
    tokenizer_folder: str | Path | None = None,
    dtype: str | None = None,
    device: str | torch.device = "cpu",
) -> LoadedModel:
    """A model folder, or a ``.pth`` file (tokenizer from `tokenizer_folder` or its folder)."""
    p = Path(path)
    if p.is_dir():
        return load_model_folder(p, dtype=dtype, device=device)
    if p.suffix in (".pth", ".pt", ".bin"):
        config_path = p.parent / CONFIG_FILE
        return load_minimind_pth(
            p,
            tokenizer_folder if tokenizer_folder is not None else p.parent,
            config_path=config_path if config_path.exists() else None,
            dtype=dtype or "float32",
            device=device,
        )
    if not p.exists():
        raise ValueError(f"{p} does not exist. Give a model folder or a MiniMind .pth file.")
    raise ValueError(
        f"{p} is neither a model folder nor a .pth file. Give a folder with {CONFIG_FILE}, "
        f"{WEIGHTS_FILE} and {TOKENIZER_FILE}, or a MiniMind .pth state dict."
    )


# ---- the default model ---------------------------------------------------------------------
def shipped_model_folders() -> list[Path]:
    """Complete model folders under kvstudio/resources/models, preferred ones first."""
    folders = [MODELS_DIR / name for name in EMBEDDED_NAMES]
    return [f for f in folders if all((f / n).exists() for n in MODEL_FILES)]


def random_model(
    seed: int = 0,
    *,
    config: ModelConfig | None = None,
    tokenizer: TextTokenizer | None = None,
    device: str | torch.device = "cpu",
) -> LoadedModel:
    """A seeded random-initialised course model with a tokenizer it matches.

    The tokenizer is the first shipped ``tokenizer.json`` found under
    kvstudio/resources/models, or else a tiny BPE trained in memory. The vocabulary is
    sized to the tokenizer (not padded to 6400), so every sampled id decodes to text;
    all cache geometry (layers, K/V heads, head_dim) is the course model's.
    """
    if tokenizer is None:
        shipped = sorted(MODELS_DIR.glob(f"*/{TOKENIZER_FILE}")) if MODELS_DIR.is_dir() else []
        for path in shipped:
            try:
                tokenizer = TextTokenizer.from_file(path)
                break
            except ValueError as exc:
                log.warning("Skipping %s: %s", path, exc)
        if tokenizer is None:
            tokenizer = train_fallback_tokenizer()
    base = config or ModelConfig()
    cfg = replace(base, vocab_size=tokenizer.vocab_size)
    if tokenizer.eos_id is not None:
        cfg = replace(cfg, eos_token_id=tokenizer.eos_id)
    model = MiniMindLM(cfg).init_weights(seed).to(DTYPES[cfg.dtype]).to(device).eval()
    label = f"{RANDOM_LABEL} (seed {seed}, vocab {cfg.vocab_size})"
    return from_minimind(model, tokenizer, label, origin="random", requested=RANDOM_MODEL_NAME,
                         is_random=True)


def default_model(*, dtype: str | None = None, device: str | torch.device = "cpu") -> LoadedModel:
    """The shipped model: ko-chat, else ko-base.

    Raises ValueError (what is missing, and how to get it) when the package holds
    neither: random weights are never a silent fall-back (`random_model` is asked for).
    """
    problems = []
    for folder in shipped_model_folders():
        try:
            loaded = load_model_folder(folder, dtype=dtype, device=device)
        except ValueError as exc:
            problems.append(f"{folder.name}: {exc}")
            continue
        return replace(loaded, origin="embedded", requested=folder.name)
    found = "; ".join(problems) if problems else "none is there"
    raise ValueError(
        f"No embedded model could be loaded from {MODELS_DIR} ({found}). {MISSING_MODELS_HELP}"
    )
