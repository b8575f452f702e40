"""llama.cpp as a second engine: the same GGUF model stepped one token at a time.

Owns `LlamaCppModel`, a thin layer over llama-cpp-python's low-level API (the
optional ``llama`` extra: ``pip install 'kvstudio[llama]'``; imported only when a
model is opened). It answers what the engine twin lab puts beside KV Studio's
numbers, each as llama.cpp itself reports it:

- the tokens, fed one at a time through ``llama_decode`` on llama.cpp's own KV
  cache (`generate`): greedy, or sampled by KV Studio's own sampler (MiniMind's
  temperature → penalty → top-k → top-p, one uniform draw a step from a
  generator seeded as ours), so with the same seed the two engines differ only
  in their forward; each step's logits are kept to measure a gap;
- the KV cache's size: the ``llama_kv_cache: size = …`` line llama.cpp logs when
  the context is made (`kv_report`), and the per-sequence state
  ``llama_state_seq_get_size`` (`seq_state_bytes`), which grows by a token's K/V
  plus 12 B of cell bookkeeping (its position and sequence id) per token;
- prompt reuse: ``n_p_eval`` from ``llama_perf_context`` for a second prompt that
  shares a prefix with the cached one, with and without keeping that prefix
  (`prompt_reuse`);
- a copy and a crop of a sequence (``llama_memory_seq_cp``/``seq_rm``), KV
  Studio's row copy and crop (`seq_cp`, `seq_rm`, `seq_length`).

The K and V caches are f32 (llama.cpp's default is f16) so the bytes compare
with KV Studio's fp32 cache, and one unified buffer serves every sequence
(``kv_unified``): a copied sequence shares the cells, as a prefix cache does.
Writing the GGUF is ``kvstudio.files.gguf_export``'s job.
"""

from __future__ import annotations

import ctypes
import re
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from kvstudio.engine.records import SamplingSettings
from kvstudio.engine.sampling import new_generator, presence_mask, sample_next

LLAMA_MISSING = (
    "The llama.cpp engine needs llama-cpp-python (the optional llama extra): "
    "pip install 'kvstudio[llama]'  (it builds llama.cpp from source: about 15 CPU-minutes)."
)
GGML_TYPE_F32 = 0  # ggml's type id for float32, as type_k/type_v take it
# "llama_kv_cache: size =    0.50 MiB (   256 cells,   4 layers,  1/1 seqs), K (f32): …"
_KV_LINE = re.compile(
    r"llama_kv_cache: size =\s*([\d.]+) MiB \(\s*(\d+) cells,\s*(\d+) layers.*?"
    r"K \((\w+)\):\s*([\d.]+) MiB, V \((\w+)\):\s*([\d.]+) MiB"
)

_log_lock = threading.Lock()
_log_lines: list[str] = []  # what llama.cpp logged since the last `_take_log`
_log_callback: Any = None  # kept alive: llama.cpp holds a pointer to it


def _import_llama_cpp() -> Any:
    """llama_cpp, with its log routed into `_log_lines` (quiet); ValueError when missing."""
    global _log_callback
    try:
        import llama_cpp
    except ImportError as exc:
        raise ValueError(LLAMA_MISSING) from exc
    if _log_callback is None:

        @llama_cpp.llama_log_callback  # type: ignore[misc]
        def collect(level: int, text: bytes, user_data: Any) -> None:
            with _log_lock:
                _log_lines.append(text.decode("utf-8", "replace"))

        _log_callback = collect
        llama_cpp.llama_log_set(_log_callback, ctypes.c_void_p(0))
        llama_cpp.llama_backend_init()
    return llama_cpp


def _take_log() -> str:
    with _log_lock:
        text = "".join(_log_lines)
        _log_lines.clear()
    return text


@dataclass(frozen=True)
class KVReport:
    """llama.cpp's own line about its KV cache, read when the context was made."""

    total_bytes: int  # K and V of every cell and layer
    cells: int  # token slots (n_ctx, rounded up by llama.cpp)
    layers: int
    k_type: str  # "f32"
    v_type: str
    line: str  # the log line itself

    @property
    def bytes_per_token(self) -> float:
        return self.total_bytes / self.cells


@dataclass(frozen=True)
class TokenRun:
    """Tokens from llama.cpp, greedy or sampled: step 0 is the prefill (the prompt in one
    decode)."""

    tokens: list[int]
    last_logits: list[np.ndarray]  # (V,) per step, the logits each token was chosen from
    seconds: list[float]  # per step, decode + argmax (perf_counter)


@dataclass(frozen=True)
class PromptReuse:
    """Tokens llama.cpp evaluated for a second prompt, with and without the cached prefix."""

    prompt_tokens: int  # the second prompt's length
    shared_prefix: int  # tokens it shares with the first
    evaluated_reusing: int  # llama.cpp's n_p_eval with the prefix kept
    evaluated_fresh: int  # the same after clearing the cache


class LlamaCppModel:
    """One GGUF model in llama.cpp with one context: f32 KV, `threads` threads."""

    def __init__(
        self, path: str | Path, *, n_ctx: int = 512, threads: int = 1, sequences: int = 2
    ) -> None:
        lc = _import_llama_cpp()
        self._lc = lc
        p = Path(path)
        if not p.is_file():
            raise ValueError(f"{p} is not a file; give a .gguf (kvstudio convert --to gguf).")
        if n_ctx < 1 or threads < 1 or sequences < 1:
            raise ValueError("n_ctx, threads and sequences must each be at least 1.")
        _take_log()
        mparams = lc.llama_model_default_params()
        self._model = lc.llama_model_load_from_file(str(p).encode(), mparams)
        if not self._model:
            raise ValueError(f"llama.cpp could not load {p}:\n{_take_log()[-2000:]}")
        cparams = lc.llama_context_default_params()
        cparams.n_ctx = cparams.n_batch = cparams.n_ubatch = n_ctx  # a prompt in one decode
        cparams.n_seq_max = sequences
        cparams.n_threads = cparams.n_threads_batch = threads
        cparams.type_k = cparams.type_v = GGML_TYPE_F32
        cparams.kv_unified = True
        cparams.no_perf = False
        self._ctx = lc.llama_init_from_model(self._model, cparams)
        if not self._ctx:
            lc.llama_model_free(self._model)
            raise ValueError(f"llama.cpp could not make a context for {p}:\n{_take_log()[-2000:]}")
        self.load_log = _take_log()
        self.path = p
        self.threads = threads
        self.n_ctx = int(lc.llama_n_ctx(self._ctx))
        self._vocab = lc.llama_model_get_vocab(self._model)
        self.vocab_size = int(lc.llama_vocab_n_tokens(self._vocab))
        self._mem = lc.llama_get_memory(self._ctx)
        self._batch = lc.llama_batch_init(self.n_ctx, 0, sequences)

    def close(self) -> None:
        if getattr(self, "_ctx", None):
            self._lc.llama_batch_free(self._batch)
            self._lc.llama_free(self._ctx)
            self._lc.llama_model_free(self._model)
            self._ctx = None

    def __del__(self) -> None:
        self.close()

    def __enter__(self) -> LlamaCppModel:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---- tokens and steps ------------------------------------------------------------------
    def tokenize(self, text: str) -> list[int]:
        """llama.cpp's own tokenisation of `text` (no bos, control tokens as plain text)."""
        data = text.encode("utf-8")
        room = len(data) + 8
        ids = (self._lc.llama_token * room)()
        n = self._lc.llama_tokenize(self._vocab, data, len(data), ids, room, False, False)
        return list(ids[:n])

    def decode(self, tokens: list[int], seq: int = 0) -> np.ndarray:
        """Feed `tokens` to sequence `seq` after its cached ones → the last one's logits (V,)."""
        if not tokens:
            raise ValueError("decode needs at least one token.")
        start = self.seq_length(seq)
        if start + len(tokens) > self.n_ctx:
            raise ValueError(
                f"{start + len(tokens)} tokens do not fit llama.cpp's context of {self.n_ctx}."
            )
        b = self._batch
        for i, token in enumerate(tokens):
            b.token[i] = token
            b.pos[i] = start + i
            b.n_seq_id[i] = 1
            b.seq_id[i][0] = seq
            b.logits[i] = i == len(tokens) - 1
        b.n_tokens = len(tokens)
        status = self._lc.llama_decode(self._ctx, b)
        if status != 0:
            raise ValueError(f"llama_decode returned {status}:\n{_take_log()[-2000:]}")
        row = self._lc.llama_get_logits_ith(self._ctx, -1)
        return np.ctypeslib.as_array(row, shape=(self.vocab_size,)).copy()

    def generate(
        self, prompt: list[int], new_tokens: int, sampling: SamplingSettings | None = None,
        seq: int = 0, banned: int | None = None,
    ) -> TokenRun:
        """`new_tokens` tokens after `prompt` on a cleared sequence `seq`.

        Greedy when `sampling` is None or greedy; otherwise KV Studio's `sample_next` on
        llama.cpp's logits with a generator seeded by ``sampling.seed`` (one draw a step,
        the penalty's seen tokens kept as our loop keeps them), so the same seed draws the
        same numbers as our own run. `banned` (eos, for exactly `new_tokens` tokens as KV
        Studio's ``stop_at_eos=False`` does) is never chosen; the logits kept are
        llama.cpp's, untouched.
        """
        self.seq_rm(seq)
        sampler = sampling if sampling is not None and not sampling.greedy else None
        generator = new_generator(sampler.seed) if sampler is not None else None
        seen = None  # (1, V) tokens seen, for the repetition penalty
        if sampler is not None and sampler.repetition_penalty != 1.0:
            seen = presence_mask(torch.tensor([prompt]), self.vocab_size)
        tokens: list[int] = []
        logits: list[np.ndarray] = []
        seconds: list[float] = []
        feed = list(prompt)
        for _ in range(new_tokens):
            started = time.perf_counter()
            row = self.decode(feed, seq)  # (V,)
            if sampler is not None:
                out = sample_next(torch.from_numpy(row)[None], sampler, generator, seen=seen,
                                  top_n=0, banned_token=banned)
                token = int(out.token_ids[0])
                if seen is not None:
                    seen[0, token] = True
            elif banned is None:
                token = int(row.argmax())
            else:
                token = int(np.where(np.arange(row.size) == banned, -np.inf, row).argmax())
            seconds.append(time.perf_counter() - started)
            tokens.append(token)
            logits.append(row)
            feed = [token]
        return TokenRun(tokens, logits, seconds)

    def greedy(
        self, prompt: list[int], new_tokens: int, seq: int = 0, banned: int | None = None
    ) -> TokenRun:
        """`generate` with greedy choice: the argmax of llama.cpp's logits each step."""
        return self.generate(prompt, new_tokens, None, seq, banned)

    # ---- the KV cache, as llama.cpp reports it ---------------------------------------------
    def kv_report(self) -> KVReport:
        """The ``llama_kv_cache: size = …`` line llama.cpp logged when the context was made."""
        match = _KV_LINE.search(self.load_log)
        if match is None:
            raise ValueError("llama.cpp's load log has no 'llama_kv_cache: size' line.")
        # The line prints MiB to 2 decimals: its total (one rounding) is nearer than K + V
        # (two: a 0.25 MiB cache reads as 0.12 + 0.12).
        return KVReport(
            total_bytes=round(float(match[1]) * 2**20), cells=int(match[2]),
            layers=int(match[3]), k_type=match[4], v_type=match[6], line=match[0],
        )

    def seq_state_bytes(self, seq: int = 0) -> int:
        """``llama_state_seq_get_size``: the bytes that save sequence `seq`: a header, then per
        token its K/V and 12 B for the cell (measured on llama.cpp in llama-cpp-python 0.3.36)."""
        return int(self._lc.llama_state_seq_get_size(self._ctx, seq))

    def seq_length(self, seq: int = 0) -> int:
        """Tokens cached for `seq` (``llama_memory_seq_pos_max`` + 1; 0 when empty)."""
        return int(self._lc.llama_memory_seq_pos_max(self._mem, seq)) + 1

    def seq_cp(self, src: int, dst: int, end: int = -1) -> None:
        """Sequence `dst` gets `src`'s positions [0, end) (all when -1): shared cells."""
        self._lc.llama_memory_seq_cp(self._mem, src, dst, 0, end)

    def seq_rm(self, seq: int, start: int = 0) -> None:
        """Crop sequence `seq` to its first `start` tokens (0: empty it)."""
        if not self._lc.llama_memory_seq_rm(self._mem, seq, start, -1):
            raise ValueError(f"llama.cpp could not crop sequence {seq} at {start}.")

    # ---- prompt reuse ----------------------------------------------------------------------
    def prompt_evaluated(self) -> int:
        """llama.cpp's ``n_p_eval`` since the last reset: the prompt tokens it evaluated.

        One decode of k ≥ 2 tokens adds k; a lone token counts in ``n_eval`` instead, but
        ``llama_perf_context`` reports both as at least 1, so after a reset n_p_eval reads 1
        for it: right for a prompt decode of one token, which is how it is used here.
        """
        return int(self._lc.llama_perf_context(self._ctx).n_p_eval)

    def prompt_reuse(self, first: list[int], second: list[int], seq: int = 0) -> PromptReuse:
        """Evaluate `first`, then `second` keeping the shared prefix; then `second` afresh."""
        shared = 0
        for a, b in zip(first, second, strict=False):
            if a != b:
                break
            shared += 1
        keep = min(shared, len(second) - 1)  # the last token is fed again for its logits
        self.seq_rm(seq)
        self.decode(first, seq)
        self.seq_rm(seq, keep)
        self._lc.llama_perf_context_reset(self._ctx)
        self.decode(second[keep:], seq)
        reusing = self.prompt_evaluated()
        self.seq_rm(seq)
        self._lc.llama_perf_context_reset(self._ctx)
        self.decode(second, seq)
        fresh = self.prompt_evaluated()
        return PromptReuse(len(second), shared, reusing, fresh)
