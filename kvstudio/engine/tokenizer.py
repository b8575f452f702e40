"""Tokenizer wrapper: byte-level BPE from a ``tokenizer.json``, ChatML prompts, clean decoding.

Owns text ↔ ids and the one subtle part of showing text token by token:
byte-level BPE can split a Hangul syllable (3 UTF-8 bytes) across tokens, so
a token decoded alone shows ``�``. ``IncrementalDecoder`` holds such bytes back
until the syllable is complete; ``TokenTexts`` shows a lone token as its bytes
(``<0xEB><0x8B>``), read through GPT-2's byte-level table. Training the tokenizer lives in
``kvstudio.training``.

Text is always encoded as text: ``<|im_start|>`` typed by a user (or found in
a file) becomes ordinary BPE pieces, never the control token, so nobody can
plant a fake assistant turn. Only the chat template inserts control tokens:
`chat_ids` builds a prompt from template parts (their control tokens
recognised) and the user's text (plain), so the ids are the same as encoding
the whole ChatML string whenever the text holds no control-token string.
"""

from __future__ import annotations

import codecs
import json
import re
from collections.abc import Iterable, Sequence
from pathlib import Path

from tokenizers import Tokenizer

from kvstudio.engine.small_files import read_text

REPLACEMENT = "\ufffd"
ENDOFTEXT, IM_START, IM_END = "<|endoftext|>", "<|im_start|>", "<|im_end|>"
SPECIAL_TOKENS = (ENDOFTEXT, IM_START, IM_END)  # MiniMind's ids 0, 1, 2
# MiniMind's tokenizer.json is 0.5 MB; the largest vocabularies KV Studio steps are
# Qwen3's (151,669 tokens, 11.4 MB), Llama 3's (128,256, 9 MB) and EXAONE-4.0's
# (102,400). Parsing holds the interpreter lock (the window froze 4.1 s on a
# 60 MB file, the command took 1.26 GB and 17 s before the vocabulary check
# refused it): 16 MiB is room for these and no more.
MAX_TOKENIZER_BYTES = 16 * 1024 * 1024

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
        self._plain = plain_text_encoder(tokenizer)
        self._control = control_token_pattern(tokenizer)
        self.vocab_size: int = tokenizer.get_vocab_size(with_added_tokens=True)
        self.eos_id = self._id_or_none(IM_END)
        self.endoftext_id = self._id_or_none(ENDOFTEXT)
        self.bos_id = self._id_or_none(IM_START)
        self.has_chat_tokens = self.bos_id is not None and self.eos_id is not None
        self._control_ids: frozenset[int] | None = None

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
        if p.is_file() and p.stat().st_size > MAX_TOKENIZER_BYTES:  # before reading a byte
            raise ValueError(
                f"{p} is larger than {MAX_TOKENIZER_BYTES // (1024 * 1024)} MiB "
                f"({p.stat().st_size:,} bytes): the largest vocabularies KV Studio steps "
                "(Qwen3's 151,669 tokens) take 11.4 MB. Choose the model's own tokenizer.json."
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
        """`text` as text: a control-token string in it (``<|im_end|>``) becomes plain pieces."""
        return list(self._plain.encode(text, add_special_tokens=False).ids)

    def encode_template(self, segments: Sequence[tuple[str, bool]]) -> list[int]:
        """Ids for a prompt given as (text, is_template) segments.

        Control-token strings are recognised in template segments only; everything
        else is plain text. Plain text between two control tokens is encoded in one
        piece (template text and user text together), exactly as the tokenizer splits
        a whole prompt string, so a normal prompt gets the ids it always had.
        """
        ids: list[int] = []
        plain: list[str] = []
        for text, is_template in segments:
            if not is_template or self._control is None:
                plain.append(text)
                continue
            # split() with the pattern's group: text, token, text, token, …, text
            for index, piece in enumerate(self._control.split(text)):
                token_id = self._tk.token_to_id(piece) if index % 2 else None
                if token_id is None:
                    plain.append(piece)
                    continue
                ids += self.encode("".join(plain))
                plain = []
                ids.append(token_id)
        return ids + self.encode("".join(plain))

    def decode(self, ids: Iterable[int], skip_special_tokens: bool = False) -> str:
        return str(self._tk.decode(list(ids), skip_special_tokens=skip_special_tokens))

    def token_text(self, token_id: int) -> str:
        """A single token's text for tables (may be � for a partial syllable)."""
        return self.decode([token_id])

    def chat_segments(self, question: str, system: str | None = None) -> list[tuple[str, bool]]:
        """ChatML for one user turn as (text, is_template) segments; see `encode_template`."""
        segments: list[tuple[str, bool]] = []
        if system:
            segments += [(f"{IM_START}system\n", True), (system, False), (f"{IM_END}\n", True)]
        segments += [(f"{IM_START}user\n", True), (question, False)]
        segments.append((f"{IM_END}\n{IM_START}assistant\n", True))
        return segments

    def chat_ids(self, question: str, system: str | None = None) -> list[int]:
        """One user turn's prompt ids, ending where the assistant's answer begins.

        The template's control tokens are the only ones: `question` and `system` are
        encoded as text whatever they contain.
        """
        return self.encode_template(self.chat_segments(question, system))

    def chat_prompt(self, question: str, system: str | None = None) -> str:
        """The text of `chat_ids` (to show or compare); encode a turn with `chat_ids`, since
        `encode` would read this string's control tokens as plain text."""
        return "".join(text for text, _ in self.chat_segments(question, system))

    def control_ids(self) -> frozenset[int]:
        """Ids of the control tokens (``<|im_start|>``, ``<|im_end|>``, ``<think>`` …)."""
        if self._control_ids is None:
            self._control_ids = frozenset(
                i for i, t in self._tk.get_added_tokens_decoder().items()
                if is_control_token(str(t.content), bool(t.special))
            )
        return self._control_ids

    def answer_text(self, ids: Sequence[int]) -> str:
        """What a student reads of a generated answer: clean text, cut at the end of the turn.

        The answer ends at its first control token (``<|im_end|>``, or ``<|im_start|>``
        where the model starts a new turn), so no role word (``user``, ``assistant``)
        and no template marker is shown; a token that is only part of a character (a
        Hangul syllable cut by the token budget, or bytes the model wrote that form no
        character) shows as its bytes, ``<0xEC>``, never ``�``; so does a control
        character the model wrote (``\x01``, ``\r``: invisible, or a jump to the line's
        start), except the newline and the tab.
        """
        controls = self.control_ids()
        kept: list[int] = []
        for i in ids:
            if i in controls:
                break
            kept.append(int(i))
        return visible_controls(strip_role_line(self.bytes_text(kept)))

    def plain_text(self, ids: Sequence[int]) -> str:
        """A continuation's text (eos ignored): every control token left out, never ``�``."""
        controls = self.control_ids()
        return self.bytes_text([i for i in ids if i not in controls])

    def bytes_text(self, ids: Sequence[int]) -> str:
        """`ids` decoded as a whole; bytes that form no character as ``<0xEC>``, never ``�``."""
        raw = bytearray()
        for i in ids:
            piece = bytelevel_to_bytes(self._tk.id_to_token(int(i)) or "\0")
            if piece is None:  # not a byte-level vocabulary: its own decoder, � as bytes
                text = self.decode(ids, skip_special_tokens=True)
                return text.replace(REPLACEMENT, "<0x??>")
            raw += piece
        return bytes(raw).decode("utf-8", errors=BYTES_ERRORS)

    def whole_characters(self, ids: Sequence[int]) -> int:
        """How many of `ids`, from the start, end on a character boundary (≤ len(ids)).

        Cutting a prompt at a token count can split a Hangul syllable; this many
        tokens hold whole characters only (the cut token's bytes are left out).
        """
        n = len(ids)
        while n > 0 and self._ends_cut(ids[:n]):
            n -= 1
        return n

    def _ends_cut(self, ids: Sequence[int]) -> bool:
        """Whether the bytes of `ids` end inside a character (a lead byte without its rest)."""
        raw = bytearray()
        for i in ids[-4:]:  # a UTF-8 character is at most 4 bytes
            piece = bytelevel_to_bytes(self._tk.id_to_token(int(i)) or "\0")
            if piece is None:
                return self.decode(ids).endswith(REPLACEMENT)
            raw += piece
        back = 0  # continuation bytes (10xxxxxx) at the end
        while back < min(len(raw), 3) and raw[-1 - back] & 0xC0 == 0x80:
            back += 1
        if back == len(raw):
            return False  # only continuation bytes seen: not a cut we can mend by dropping
        lead = raw[-1 - back]
        needed = 2 if lead >> 5 == 0b110 else 3 if lead >> 4 == 0b1110 else (
            4 if lead >> 3 == 0b11110 else 1)
        return back + 1 < needed

    def token_pieces(self, ids: Sequence[int]) -> list[str]:
        """The text each token adds to the running decode; '' while a syllable is incomplete."""
        decoder = IncrementalDecoder(self)
        return [decoder.push(i) for i in ids]


ROLE_WORDS = ("system", "user", "assistant")
BYTES_ERRORS = "kvstudio.bytes"  # a codecs error handler: undecodable bytes as <0xEC>


def _bytes_as_notation(error: UnicodeError) -> tuple[str, int]:
    if not isinstance(error, UnicodeDecodeError):
        raise error
    bad = error.object[error.start : error.end]
    return "".join(f"<0x{b:02X}>" for b in bad), error.end


codecs.register_error(BYTES_ERRORS, _bytes_as_notation)


def strip_role_line(text: str) -> str:
    """`text` without a leading role line (``assistant`` + newline) a model may write."""
    head, newline, rest = text.lstrip().partition("\n")
    if newline and head.strip().lower() in ROLE_WORDS:
        return rest
    return text


MARKUP_TOKEN = re.compile(r"<[^<>\s]+>|\[[^\[\]\s]+\]")  # <think>, </tool_call>, [|user|]


def is_control_token(content: str, special: bool) -> bool:
    """Whether an added token is a control token: special, or markup such as ``<think>``
    (often added unmarked). Other added tokens (runs of spaces, whole words) are text."""
    return special or MARKUP_TOKEN.fullmatch(content) is not None


def plain_text_encoder(tokenizer: Tokenizer) -> Tokenizer:
    """A copy of `tokenizer` that encodes every control token's string as ordinary text.

    `tokenizers` matches added tokens before BPE, even with ``add_special_tokens=False``;
    ``encode_special_tokens`` turns that off, but only for tokens marked special, so the
    copy marks the unmarked control tokens special first.
    """
    data = json.loads(tokenizer.to_str())
    for token in data.get("added_tokens") or []:
        if is_control_token(str(token.get("content", "")), bool(token.get("special"))):
            token["special"] = True
    plain = Tokenizer.from_str(json.dumps(data))
    plain.encode_special_tokens = True
    return plain


def control_token_pattern(tokenizer: Tokenizer) -> re.Pattern[str] | None:
    """A regex matching any added token's string (longest first), as one group; None if none."""
    contents = sorted(
        {t.content for t in tokenizer.get_added_tokens_decoder().values() if t.content},
        key=len,
        reverse=True,
    )
    if not contents:
        return None
    return re.compile("(" + "|".join(re.escape(c) for c in contents) + ")")


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


class TokenTexts:
    """Memoised text of single tokens for candidate chips.

    A byte-level token that is only part of a UTF-8 character (half a Hangul
    syllable) would decode to ``�``; such tokens are shown as their bytes,
    e.g. ``<0xEB><0x8B>``, so no chip ever shows ``�``.
    """

    def __init__(self, tokenizer: TextTokenizer) -> None:
        self._tokenizer = tokenizer
        self._texts: dict[int, str] = {}

    def __call__(self, token_id: int) -> str:
        text = self._texts.get(token_id)
        if text is None:
            text = self._tokenizer.decode([token_id])
            if REPLACEMENT in text:
                text = byte_notation(self._tokenizer, token_id)
            self._texts[token_id] = text
        return text


def byte_notation(tokenizer: TextTokenizer, token_id: int) -> str:
    """A token's raw bytes as ``<0xEB><0x8B>`` (or ``<id 7>`` if it is not byte-level)."""
    piece = tokenizer.backend.id_to_token(token_id) or ""
    raw = bytelevel_to_bytes(piece)
    if raw is None:
        return f"<id {token_id}>"
    return "".join(f"<0x{b:02X}>" for b in raw)


def bytelevel_to_bytes(piece: str) -> bytes | None:
    """Undo GPT-2's byte→unicode mapping used by byte-level BPE vocabularies."""
    table = _unicode_to_byte()
    try:
        return bytes(table[ch] for ch in piece)
    except KeyError:
        return None


_U2B: dict[str, int] = {}  # GPT-2's printable stand-in character → the byte it stands for


def _unicode_to_byte() -> dict[str, int]:
    if not _U2B:
        printable = (
            list(range(ord("!"), ord("~") + 1))
            + list(range(ord("¡"), ord("¬") + 1))
            + list(range(ord("®"), ord("ÿ") + 1))
        )
        codes = printable[:]
        extra = 0
        for b in range(256):
            if b not in printable:
                printable.append(b)
                codes.append(256 + extra)
                extra += 1
        _U2B.update({chr(c): b for b, c in zip(printable, codes, strict=True)})
    return _U2B


_INVISIBLE = {c: f"<0x{c:02X}>" for c in (*range(0x20), 0x7F) if chr(c) not in "\n\t"}


def visible_controls(text: str) -> str:
    """`text` with each control character but newline and tab as its byte, ``<0x01>``."""
    return text.translate(_INVISIBLE)
