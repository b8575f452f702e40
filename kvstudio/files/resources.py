"""Where the files KV Studio ships with live: models, prompts, font, translations.

Owns path lookup and the name that asks for random weights; nothing here opens a file
or imports torch (the window names its model before torch loads). Everything the app needs at run
time is package data inside ``kvstudio/resources/``, found through
`importlib.resources`, so a checkout, ``pip install -e .``, a wheel, ``pipx`` and a
Colab ``pip install git+…`` all see the same files, from any working folder.
(The package must be installed as files, not imported from a zip: the models are
memory-mapped by safetensors and the font is handed to Qt by path.)
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path


def resources_dir() -> Path:
    """The package's ``kvstudio/resources/`` folder (``kvstudio/resources`` in a checkout)."""
    return Path(str(files("kvstudio").joinpath("resources")))


RESOURCES_DIR = resources_dir()
MODELS_DIR = RESOURCES_DIR / "models"  # ko-base, ko-chat, ko-draft: one folder each
PROMPTS_DIR = RESOURCES_DIR / "prompts"  # the labs' prompts and the serving requests
FONT_PATH = RESOURCES_DIR / "fonts" / "NanumGothic.ttf"  # Hangul on every platform
TRANSLATIONS_DIR = RESOURCES_DIR / "i18n"  # kvstudio_ko.qm (compiled) and its .ts source

RANDOM_MODEL_NAME = "random"  # what --model takes for random weights, on every front
