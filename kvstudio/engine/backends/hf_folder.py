"""A local transformers folder: what it must hold, the library it needs, and its tokenizer.

Owns `require_transformers` (the optional extra, imported lazily), `is_hf_folder`
and `check_hf_folder` (what a folder lacks, said before transformers gives a long
traceback) and `HFTextTokenizer` / `load_hf_tokenizer` (the folder's tokenizer
with its own chat template, the user's text still encoded as plain text). The
model itself, its cache and the backend are `backends.hf`.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import Any

from tokenizers import Tokenizer

from kvstudio.engine.config import MAX_CONFIG_BYTES
from kvstudio.engine.small_files import read_json
from kvstudio.engine.tokenizer import TextTokenizer

logger = logging.getLogger(__name__)

TRANSFORMERS_RANGE = ">=4.57,<5.25"  # keep in step with pyproject's [hf] extra
INSTALL_HINT = "install the extra: pip install -e '.[hf]'"
WEIGHT_FILES = (
    "model.safetensors",
    "model.safetensors.index.json",
    "pytorch_model.bin",
    "pytorch_model.bin.index.json",
)


def require_transformers() -> Any:
    """Import transformers or raise a ValueError that says how to install it."""
    try:
        import transformers
    except ImportError as exc:
        raise ValueError(
            f"Running a Hugging Face model needs the transformers library; {INSTALL_HINT}"
        ) from exc
    return transformers


def transformers_major() -> int:
    version = str(require_transformers().__version__)
    return int(version.split(".")[0])


def is_hf_folder(path: str | Path) -> bool:
    """True for a transformers folder: config.json naming a transformers ``model_type``.

    Our own folders (config.json written by `ModelConfig`) carry no ``model_type``,
    and MiniMind's remote-code folders (``model_type: minimind``) are ours to load.
    """
    config = Path(path) / "config.json"
    if not config.is_file():
        return False
    try:
        data = read_json(config, MAX_CONFIG_BYTES, "a transformers config.json")
    except ValueError:
        return False
    model_type = data.get("model_type") if isinstance(data, dict) else None
    return isinstance(model_type, str) and model_type not in ("", "minimind")


def check_hf_folder(path: str | Path) -> Path:
    """Say clearly what a folder lacks before transformers gives a long traceback."""
    folder = Path(path).expanduser()
    if not folder.is_dir():
        raise ValueError(
            f"{folder} is not a folder. Give the local folder that holds the model's "
            "config.json, weights and tokenizer.json (models are never downloaded)."
        )
    if not (folder / "config.json").is_file():
        raise ValueError(f"{folder} has no config.json; it is not a transformers model folder.")
    if not any((folder / f).is_file() for f in WEIGHT_FILES) and not any(
        folder.glob("*.safetensors")
    ):
        raise ValueError(
            f"{folder} has a config.json but no weights (model.safetensors or pytorch_model.bin); "
            "copy the weight files in (large ones may still be Git LFS pointers)."
        )
    return folder


class HFTextTokenizer(TextTokenizer):
    """Our tokenizer wrapper over a transformers folder: its own chat template and end of turn.

    Text ↔ ids still go through ``tokenizer.json`` (the `tokenizers` library, as for
    our models); only `chat_segments` asks transformers to render the model's
    Jinja chat template (EXAONE's ``[|user|]``, Llama-3's headers, ChatML …), and
    the user's text in it is still encoded as plain text.
    """

    def __init__(
        self, tokenizer: Tokenizer, hf_tokenizer: Any | None = None, eos_id: int | None = None
    ) -> None:
        super().__init__(tokenizer)
        self._hf = hf_tokenizer
        template = getattr(hf_tokenizer, "chat_template", None)
        if isinstance(template, dict):  # several named templates: take the default one
            template = template.get("default")
        self.chat_template: str | None = template if isinstance(template, str) else None
        if eos_id is not None:
            self.eos_id = eos_id
        self.has_chat_tokens = self.chat_template is not None or self.has_chat_tokens

    def chat_segments(self, question: str, system: str | None = None) -> list[tuple[str, bool]]:
        """The model's template rendered around the texts, as (text, is_template) segments.

        The template is rendered twice: with the texts, and with a marker in place of
        each. Where the markers come back exactly (the template does not rewrite its
        messages), the text between them is template and the texts are plain text.
        """
        if self._hf is None or self.chat_template is None:
            return super().chat_segments(question, system)
        texts = [system, question] if system else [question]
        rendered = self._render(texts)
        markers = [f"\ue000kvstudio-text-{i}\ue001" for i in range(len(texts))]
        marked = self._render(markers)
        pieces = re.split("(" + "|".join(map(re.escape, markers)) + ")", marked)
        segments = [
            (texts[markers.index(piece)], False) if index % 2 else (piece, True)
            for index, piece in enumerate(pieces)
        ]
        if len(pieces) == 2 * len(texts) + 1 and "".join(t for t, _ in segments) == rendered:
            return segments
        # The template rewrites what it is given: only text without control tokens is safe.
        for text in texts:
            found = self._control.search(text) if self._control is not None else None
            if found:
                raise ValueError(
                    f"The text holds {found.group(0)!r}, one of the model's control tokens, and "
                    "this model's chat template rewrites its messages, so it cannot be sent as "
                    "plain text: remove it or turn the chat template off."
                )
        return [(rendered, True)]

    def _render(self, texts: list[str]) -> str:
        """The template around [system,] user texts, up to the assistant's answer."""
        roles = ["system", "user"] if len(texts) == 2 else ["user"]
        messages = [{"role": r, "content": t} for r, t in zip(roles, texts, strict=True)]
        assert self._hf is not None  # only called when the folder has a template
        text = self._hf.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
        return str(text)


def load_hf_tokenizer(folder: Path) -> HFTextTokenizer:
    """The folder's tokenizer.json (or a fast tokenizer transformers builds) plus its template."""
    transformers = require_transformers()
    has_json = (folder / "tokenizer.json").is_file()
    hf_tok: Any | None = None
    try:
        hf_tok = transformers.AutoTokenizer.from_pretrained(str(folder), local_files_only=True)
    except Exception as exc:  # transformers raises OSError, ValueError, ImportError …
        if not has_json:
            raise ValueError(
                f"{folder} has no tokenizer.json and transformers could not build one ({exc}). "
                "Copy the model's tokenizer.json into the folder."
            ) from exc
        logger.warning(
            "%s: no chat template (transformers: %s); plain tokenizer.json.", folder, exc
        )
    backend: Tokenizer | None = None
    if has_json:
        backend = TextTokenizer.from_file(folder / "tokenizer.json").backend
    else:
        backend = getattr(hf_tok, "backend_tokenizer", None)
        if not isinstance(backend, Tokenizer):
            raise ValueError(
                f"{folder} only has a slow (Python) tokenizer; save a fast one with "
                "AutoTokenizer.from_pretrained(..., use_fast=True).save_pretrained(folder)."
            )
    return HFTextTokenizer(backend, hf_tok)
