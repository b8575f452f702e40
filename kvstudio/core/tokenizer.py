"""Tokenizer wrapper: byte-level BPE from a ``tokenizer.json``, ChatML prompts, clean decoding.

Owns text ↔ ids and the one subtle part of showing text token by token:
byte-level BPE can split a Hangul syllable (3 UTF-8 bytes) across tokens, so
a token decoded alone shows ``�``. ``IncrementalDecoder`` holds such bytes back
until the syllable is complete. Training the tokenizer lives in
``kvstudio.training``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path

from tokenizers import Tokenizer

from kvstudio.core.small_files import read_text

REPLACEMENT = "\ufffd"
ENDOFTEXT, IM_START, IM_END = "<|endoftext|>", "<|im_start|>", "<|im_end|>"
SPECIAL_TOKENS = (ENDOFTEXT, IM_START, IM_END)  # MiniMind's ids 0, 1, 2
MAX_TOKENIZER_BYTES = 64 * 1024 * 1024  # MiniMind's is 0.5 MB; the largest vocabularies ~35 MB

# ChatML, as MiniMind's tokenizer_config.json writes it (Jinja, for transformers users).
CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)


class TextTokenizer:
    """A `tokenizers.Tokenizer` plus the few ids and templates the engine needs."""

    def __init__(self, tokenizer: Tokenizer) -> None:
        self._tk = tokenizer
        self.vocab_size: int = tokenizer.get_vocab_size(with_added_tokens=True)
        self.eos_id = self._id_or_none(IM_END)
        self.endoftext_id = self._id_or_none(ENDOFTEXT)
        self.bos_id = self._id_or_none(IM_START)
        self.has_chat_tokens = self.bos_id is not None and self.eos_id is not None

    def _id_or_none(self, token: str) -> int | None:
        return self._tk.token_to_id(token)

    # ---- loading -------------------------------------------------------------------------
    @classmethod
    def from_file(cls, path: str | Path) -> TextTokenizer:
        p = Path(path)
        if p.is_dir():
            p = p / "tokenizer.json"
        if not p.exists():
            raise ValueError(
                f"No tokenizer found at {p}. Put the model's tokenizer.json in the model folder "
                "(or choose the folder that holds it)."
            )
        text = read_text(p, MAX_TOKENIZER_BYTES, "a tokenizer.json")  # no FIFO, no /dev/zero
        try:
            return cls(Tokenizer.from_str(text))
        except Exception as exc:  # tokenizers raises a bare Exception on bad JSON
            raise ValueError(
                f"{p} is not a readable tokenizer.json ({exc}). Re-export it with the "
                "`tokenizers` library or copy it again from the model's folder."
            ) from exc

    def save(self, folder: str | Path) -> None:
        """Write tokenizer.json and a tokenizer_config.json carrying the chat template."""
        out = Path(folder)
        out.mkdir(parents=True, exist_ok=True)
        self._tk.save(str(out / "tokenizer.json"))
        config = {
            "tokenizer_class": "PreTrainedTokenizerFast",
            "bos_token": IM_START,
            "eos_token": IM_END,
            "pad_token": ENDOFTEXT,
            "unk_token": ENDOFTEXT,
            "model_max_length": 32768,
            "chat_template": CHAT_TEMPLATE,
        }
        (out / "tokenizer_config.json").write_text(
            json.dumps(config, ensure_ascii=False, indent=2) + "\n", encoding="utf-8"
        )

    @property
    def backend(self) -> Tokenizer:
        return self._tk

    # ---- text ↔ ids ----------------------------------------------------------------------
    def encode(self, text: str) -> list[int]:
        return list(self._tk.encode(text, add_special_tokens=False).ids)

    def decode(self, ids: Iterable[int], skip_special_tokens: bool = False) -> str:
        return str(self._tk.decode(list(ids), skip_special_tokens=skip_special_tokens))

    def token_text(self, token_id: int) -> str:
        """A single token's text for tables (may be � for a partial syllable)."""
        return self.decode([token_id])

    def chat_prompt(self, question: str, system: str | None = None) -> str:
        """ChatML for one user turn, ending where the assistant's answer begins."""
        parts = []
        if system:
            parts.append(f"{IM_START}system\n{system}{IM_END}\n")
        parts.append(f"{IM_START}user\n{question}{IM_END}\n{IM_START}assistant\n")
        return "".join(parts)

    def token_pieces(self, ids: Sequence[int]) -> list[str]:
        """The text each token adds to the running decode; '' while a syllable is incomplete."""
        decoder = IncrementalDecoder(self)
        return [decoder.push(i) for i in ids]


class IncrementalDecoder:
    """Decode a growing id sequence piece by piece without ever emitting ``�``.

    Keeps two offsets (as vLLM's detokenizer does): text before `read_offset` has
    been emitted; decoding restarts at `prefix_offset`, a clean token boundary,
    so a byte sequence is never cut in the middle.
    """

    def __init__(
        self, tokenizer: TextTokenizer, ids: Sequence[int] = (), context: Sequence[int] = ()
    ) -> None:
        """`ids` are decoded into `text`; `context` (e.g. the prompt's last tokens) only
        sets where decoding starts, so a syllable begun in the prompt and finished by
        the first new token comes out whole instead of as ``�``."""
        self._tok = tokenizer
        self.ids: list[int] = []
        self._prefix_offset = 0
        self._read_offset = 0
        self.text = ""
        for i in context:
            self.push(i)
        self.text = ""
        for i in ids:
            self.push(i)

    def push(self, token_id: int) -> str:
        """Add one token; return the new complete text it releases (maybe '')."""
        self.ids.append(token_id)
        prefix = self._tok.decode(self.ids[self._prefix_offset : self._read_offset])
        full = self._tok.decode(self.ids[self._prefix_offset :])
        if full.endswith(REPLACEMENT) and len(self.ids) - self._read_offset < 4:
            return ""  # wait: the syllable's remaining bytes come in the next token(s)
        piece = full[len(prefix) :]
        self._prefix_offset = self._read_offset
        self._read_offset = len(self.ids)
        self.text += piece
        return piece

    def flush(self) -> str:
        """Release whatever is held back (at the end of a run), even if incomplete."""
        if self._read_offset == len(self.ids):
            return ""
        prefix = self._tok.decode(self.ids[self._prefix_offset : self._read_offset])
        full = self._tok.decode(self.ids[self._prefix_offset :])
        piece = full[len(prefix) :]
        self._prefix_offset = self._read_offset = len(self.ids)
        self.text += piece
        return piece
