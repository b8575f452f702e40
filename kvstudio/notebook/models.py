"""Loading a model for the notebook labs: the embedded ko-base / ko-chat, or your own.

Owns `load` (a name or a path → the one `kvstudio.files.loaded.LoadedModel`, through
the loader every front shares, `kvstudio.files.loaded.load_model`), its cache (each
model loads once per kernel) and `course_model` (the model the course runs a lab on,
as the window's labs choose it: `kvstudio.labs.course.lab_model_name`).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from kvstudio.files.resources import RANDOM_MODEL_NAME
from kvstudio.notebook.environment import application

if TYPE_CHECKING:
    from kvstudio.files.loaded import LoadedModel
    from kvstudio.labs.course import CourseRole

_loaded: dict[tuple[str, str], LoadedModel] = {}

EMBEDDED_NAMES = ("ko-base", "ko-chat")
MAX_PATH_CHARS = 4096  # PATH_MAX on Linux: a longer "path" is no path


def load(model: str | Path = "ko-base", tokenizer: str | Path | None = None) -> LoadedModel:
    """The model to run labs on, loaded once and then kept.

    `model`: ``"ko-base"`` or ``"ko-chat"`` (the embedded models), a model folder
    (``config.json`` + ``model.safetensors`` + ``tokenizer.json``), a local
    transformers folder (needs the ``hf`` extra), a MiniMind ``.pth`` with
    `tokenizer` (its tokenizer folder), or ``"random"`` (random weights, labelled so on
    every chart). Nothing is downloaded.
    """
    application()  # the bundled font and torch threads before the first lab draws
    from kvstudio.charts import weights_notice
    from kvstudio.files.loaded import load_model

    if not isinstance(model, str | Path) or not isinstance(tokenizer, str | Path | None):
        raise ValueError(f"model must be a name or a path, got {type(model).__name__}.")
    if len(str(model)) > MAX_PATH_CHARS or len(str(tokenizer or "")) > MAX_PATH_CHARS:
        raise ValueError(f"model and tokenizer paths take at most {MAX_PATH_CHARS:,} characters.")
    key = (str(model), str(tokenizer or ""))
    if key in _loaded:
        return _loaded[key]
    name = str(model)
    if name not in (*EMBEDDED_NAMES, RANDOM_MODEL_NAME):
        path = Path(name).expanduser()
        if not path.exists():
            raise ValueError(
                f"No model at {path}: give 'ko-base', 'ko-chat', a model folder, a .pth file "
                "or 'random'."
            )
        if not path.is_dir() and path.suffix != ".pth":
            raise ValueError(
                f"{path.name} is neither a model folder nor a .pth file; give the folder that "
                "holds config.json, or a MiniMind .pth."
            )
        name = str(path)
    handle = load_model(name, tokenizer=None if tokenizer is None else str(tokenizer))
    weights_notice.set_random_weights(handle.is_random)  # every chart from it says so
    _loaded[key] = handle
    return handle


def course_model(role: CourseRole | None) -> LoadedModel:
    """The embedded model the course runs a lab of `role` on (the chat lab: ko-chat)."""
    from kvstudio.labs.course import lab_model_name

    return load(lab_model_name(role) if role is not None else "ko-chat")


def as_model(model: LoadedModel | str | Path | None, role: CourseRole | None) -> LoadedModel:
    """`model` loaded (a name or path) or as given; None: the course's model for the lab."""
    from kvstudio.files.loaded import LoadedModel

    if model is None:
        return course_model(role)
    if isinstance(model, str | Path):
        return load(model)
    if not isinstance(model, LoadedModel):
        raise ValueError(f"model must be a name ('ko-base', 'ko-chat', 'random'), a path or "
                         f"what kv.load returns, got {type(model).__name__}.")
    return model


def about() -> str:
    """What this kernel runs on, one line a model: the install cell prints it.

    Loads the embedded models (once) and names each with its parameter count and the
    folder it came from, so a student sees at once that the trained models were
    installed, not random weights. A package without its models raises the
    ValueError that says how to get them.
    """
    import torch

    from kvstudio import __version__
    from kvstudio.files.resources import MODELS_DIR

    lines = [f"KV Studio {__version__} · torch {torch.__version__} · models in {MODELS_DIR}"]
    for name in EMBEDDED_NAMES:
        handle = load(name)
        lines.append(f"  {handle.name}: {handle.parameter_count:,} parameters")
    return "\n".join(lines)
