"""A multi-turn ChatML conversation, run two ways: reusing the KV cache across turns, and not.

Owns `ChatSession` (the conversation: its token history, the cache kept
across turns, the context limit); the frozen records it yields per turn,
`ChatTurn` with one `WayResult` per way, live in `chat_records` and are
re-exported here.

- **reuse**: one cache lives for the whole conversation. A new turn feeds
  only the tokens the cache does not hold yet: the previous answer's last
  token (chosen but never fed), the end of that answer, the user's turn and
  the assistant header.
- **refeed**: every turn starts from an empty cache and feeds the whole
  conversation so far (what a server without prefix caching does).

Both decode with a cache inside the turn and choose greedily (argmax), so
the answers must be the same token for token; `ChatTurn.identical` says
whether they were. The logits they were chosen from agree to float32
rounding, not bit for bit: reuse's prefill is the turn's new tokens on top of
the cache, re-feed's the whole history, and products over different row
counts round differently; `ChatTurn.max_abs_logit_diff` is the largest gap.
Tokens fed are counted from the tensors passed to the model. A turn that
would run past the context limit (the model's positions, or a smaller limit
the caller sets) is refused with `ContextFullError` before anything runs, and
the conversation stays as it was.

A turn yields a `Progress` after every forward call, so whoever drives it
(the lab thread, which checks for Cancel between items) can stop it within one
step. For the same reason a long prefill is fed in chunks of at most
`PREFILL_CHUNK_TOKENS` on the same cache (each chunk continues the cached
sequence, as a reuse turn does): a 16,000-token history is 16 steps, not one.
Its tokens fed and its TTFT are the chunks' together; times are summed over
the forward calls only, never over the time a caller spends between items.

Timing follows the course's one policy: a turn run with ``timing_repeats=k``
times each way's prefill (its TTFT, the lesson of this lab) k more times,
interleaved (reuse, re-feed, then re-feed, reuse, …) on copies of the caches
as they were before the turn, and `WayResult.ttft_median_s` is their median
with `ttft_range_s`; without repeats the one TTFT is a single measurement
(`ttft_rounds` = 1) and says so wherever it is shown. ms/token is the median
decode step.

It does not know about Qt; `read_turns` reads a scripted list of turns from a
size-capped file (``script.py`` runs such a list and says what it would feed).
"""

from __future__ import annotations

import copy
from collections.abc import Generator, Sequence
from dataclasses import replace
from pathlib import Path

import torch

from kvstudio.engine import decode, limits
from kvstudio.engine.backends.minimind import LanguageModel
from kvstudio.engine.cache.base import Cache
from kvstudio.engine.cache.kv_cache import CacheSpec
from kvstudio.engine.small_files import read_text
from kvstudio.engine.tokenizer import IM_END, TextTokenizer
from kvstudio.labs.chat.records import WAYS, ChatTurn, Way, WayResult
from kvstudio.labs.common import Progress
from kvstudio.labs.course import EMPTY_ANSWER

__all__ = ["WAYS", "ChatSession", "ChatTurn", "ContextFullError", "Way", "WayResult",
           "read_turns"]

DEFAULT_MAX_NEW_TOKENS = 48  # ko-chat answers are one or two sentences
# The longest forward a prefill makes: Cancel waits for at most one such step. Under the
# default context limit (1,024) every prefill is one forward, as before chunking.
PREFILL_CHUNK_TOKENS = 1024


class ContextFullError(ValueError):
    """A turn does not fit in the context limit; nothing was run and nothing changed."""


def model_positions(backend: LanguageModel) -> int:
    """The model's position limit (its RoPE table)."""
    return int(backend.max_positions)


class _StepCount:
    """A turn's forward calls as `Progress`: planned up front, counted as they run."""

    def __init__(self, total: int) -> None:
        self.total = total  # forward calls if no answer ends early at eos
        self.done = 0

    def step(self, way: Way) -> Progress:
        self.done += 1
        return Progress("chat", way, self.done, self.total)


class ChatSession:
    """A conversation you add turns to; `run_turn` is a generator (progress, then a `ChatTurn`)."""

    def __init__(
        self,
        backend: LanguageModel,
        tokenizer: TextTokenizer,
        *,
        max_new_tokens: int = DEFAULT_MAX_NEW_TOKENS,
        cache: CacheSpec | None = None,
        context_limit: int | None = None,
        system: str | None = None,
        prefill_chunk: int = PREFILL_CHUNK_TOKENS,
    ) -> None:
        spec = cache or CacheSpec()
        if spec.kind == "sliding":
            raise ValueError(
                "The chat keeps the whole conversation: choose the dynamic or the static cache "
                "(a sliding window would forget earlier turns)."
            )
        if prefill_chunk < 1:
            raise ValueError(f"A prefill chunk needs at least one token, not {prefill_chunk}.")
        positions = model_positions(backend)
        if spec.kind == "static" and spec.max_length > positions:
            # Sized from the model's positions, never from a larger limit asked for: the
            # conversation cannot use more, and the static cache allocates all of it at once.
            spec = replace(spec, max_length=positions)
        self.backend = backend
        self.tokenizer = tokenizer
        self.cache_spec = spec
        self.prefill_chunk = prefill_chunk  # the most tokens one forward call is fed
        self.max_new_tokens = max_new_tokens
        self.context_limit = 0
        self.set_limits(max_new_tokens, context_limit)
        self.system = system
        self.eos_id = tokenizer.eos_id if tokenizer.eos_id is not None else backend.eos_token_id
        self._im_end = tokenizer.backend.token_to_id(IM_END)
        self._newline = tokenizer.encode("\n")
        self.history: list[int] = []  # every token of the conversation, answers included
        self.turns: list[ChatTurn] = []
        self._cache: Cache | None = None  # the reuse way's cache, kept across turns
        self._cached_tokens = 0  # history tokens that cache holds

    def set_limits(self, max_new_tokens: int, context_limit: int | None) -> None:
        """Answer length and context limit for the next turns (capped by the model's positions)."""
        if max_new_tokens < 1:
            raise ValueError(f"Answers need at least one token, not {max_new_tokens}.")
        positions = model_positions(self.backend)
        limit = positions if context_limit is None else min(context_limit, positions)
        if self.cache_spec.kind == "static":
            limit = min(limit, self.cache_spec.max_length)
        if limit < 8:
            raise ValueError(f"A context limit of {limit} tokens leaves no room for a turn.")
        self.max_new_tokens = max_new_tokens
        self.context_limit = limit

    # ---- the conversation ----------------------------------------------------------------
    def reset(self) -> None:
        """Start a new conversation (the reuse cache is dropped)."""
        self.history = []
        self.turns = []
        self._cache = None
        self._cached_tokens = 0

    def turn_tokens(self, text: str) -> list[int]:
        """Tokens the history grows by before the answer: close the last answer, user, header."""
        if not text.strip():
            raise ValueError("The turn is empty: type what the user says.")
        closing = self.closing_tokens(self.history[-1]) if self.history else []
        system = self.system if not self.history else None
        return closing + self.tokenizer.chat_ids(text, system=system)

    def closing_tokens(self, last: int | None = None) -> list[int]:
        """What closes an answer ending in token `last` before the next user turn: the end
        token unless `last` is it (None: an answer the token budget cut), then a line break."""
        if self._im_end is None or last == self._im_end:
            return list(self._newline)
        return [self._im_end, *self._newline]

    def check_fits(self, text: str) -> tuple[list[int], int]:
        """(the turn's tokens, the answer's token budget), or ContextFullError.

        Also refuses, before anything is allocated, a turn whose cache and
        activations would not fit in the free memory (`limits.check_run`).
        """
        added = self.turn_tokens(text)
        prompt_len = len(self.history) + len(added)
        room = self.context_limit - prompt_len
        if room < 1:
            raise ContextFullError(self._full_message(text, len(added)))
        budget = min(self.max_new_tokens, room)
        limits.check_run(
            self.backend, batch=1, prompt_len=prompt_len, new_tokens=budget, cached=True,
            cache_kind=self.cache_spec.kind, cache_length=self.cache_spec.max_length,
        )
        return added, budget

    def _full_message(self, text: str, added: int) -> str:
        """Why `text` (`added` tokens here) does not fit, and what to do that can help."""
        limit = self.context_limit
        can_raise = limit < model_positions(self.backend) and (
            self.cache_spec.kind != "static" or limit < self.cache_spec.max_length
        )
        alone = len(self.tokenizer.chat_ids(text, system=self.system))
        if alone >= limit:  # it would not fit as the first turn of a new chat either
            return (
                f"This turn needs {alone} tokens, but the context limit is {limit} positions "
                "and the answer needs at least one more: shorten the turn"
                + (" (or raise the context limit)" if can_raise else "")
                + ("; the conversation so far is kept." if self.history else ".")
            )
        return (
            f"This turn needs {added} more tokens, but the conversation already holds "
            f"{len(self.history)} of its {limit} positions. Start a new chat"
            + (" (or raise the context limit)" if can_raise else "")
            + " to go on; the conversation so far is kept."
        )

    def run_turn(
        self, text: str, *, reuse: bool = True, refeed: bool = True, refeed_first: bool = False,
        timing_repeats: int = 0,
    ) -> Generator[Progress | ChatTurn, None, ChatTurn]:
        """Answer `text` the chosen ways; yields a `Progress` per forward call, then the `ChatTurn`.

        The progress's stage is the way running; `done` / `total` count forward calls
        (total: as if no answer ended early). `refeed_first` swaps the order the ways
        run in (for timing: alternate it between rounds so neither way always runs on
        a warmer machine). `timing_repeats` k > 0 times each way's prefill k more
        times, interleaved, on copies of the caches as the turn found them (nothing
        of the conversation changes): the TTFT shown is then their median.
        """
        if timing_repeats < 0:
            raise ValueError(f"Repeat the TTFT 0 or more times, not {timing_repeats}.")
        if not (reuse or refeed):
            raise ValueError("Choose at least one way: reuse the cache, re-feed, or both.")
        added, budget = self.check_fits(text)
        prompt = self.history + added  # (P,) the conversation up to the assistant header
        ways: list[Way] = [w for w in WAYS if (reuse if w == "reuse" else refeed)]
        if refeed_first:
            ways.reverse()
        turn_no = len(self.turns) + 1
        results: dict[Way, WayResult] = {}
        cached_before = self._cached_tokens if self._cache is not None else 0
        kept_before = self._copy_of_cache() if timing_repeats and reuse else None
        feeds = {"reuse": len(prompt) - cached_before, "refeed": len(prompt)}
        planned = {w: self._chunks(feeds[w]) + budget - 1 for w in ways}
        steps = _StepCount(sum(planned.values()))
        chosen_from: dict[Way, list[torch.Tensor]] = {w: [] for w in ways}  # logits per token
        committed = False
        try:
            for way in ways:
                way_ends_at = steps.done + planned[way]
                if way == "reuse":
                    results["reuse"] = yield from self._answer_reusing(
                        prompt, budget, steps, chosen_from["reuse"])
                else:
                    cache = self.backend.new_cache(self.cache_spec, 1)
                    results["refeed"] = yield from self._answer(
                        "refeed", prompt, cache, budget, steps, chosen_from["refeed"]
                    )
                    del cache
                steps.done = way_ends_at  # an answer that ended at eos skips its other steps
            if timing_repeats:
                results = self._repeat_prefills(results, prompt, kept_before, cached_before,
                                                timing_repeats)
            answer = (results.get("reuse") or results["refeed"]).token_ids
            new_tokens = len(prompt) - cached_before
            self.history = prompt + list(answer)
            record = ChatTurn(
                turn=turn_no,
                user_text=text,
                new_tokens=new_tokens,
                history_tokens=len(prompt),
                answer_ids=answer,
                answer_text=self._answer_text(answer),
                reuse=results.get("reuse"),
                refeed=results.get("refeed"),
                cut_by_limit=budget < self.max_new_tokens
                and len(answer) == budget
                and answer[-1] != self.eos_id,
                context_limit=self.context_limit,
                max_abs_logit_diff=_logit_gap(results, chosen_from),
            )
            self.turns.append(record)
            committed = True
        finally:
            if not committed and reuse:
                # Cancelled or failed mid-turn: the kept cache may hold part of a turn that
                # never joined the history. Drop it; the next turn re-feeds (and reuses again).
                self._cache = None
                self._cached_tokens = 0
        yield record
        return record

    def _copy_of_cache(self) -> Cache | None:
        """The kept cache as it is now, for timing its prefill again (None: start empty)."""
        if self._cache is None:
            return None
        return copy.deepcopy(self._cache)

    def _repeat_prefills(
        self, results: dict[Way, WayResult], prompt: Sequence[int], kept: Cache | None,
        cached_before: int, repeats: int,
    ) -> dict[Way, WayResult]:
        """Each way's prefill `repeats` more times, interleaved; the conversation is untouched."""
        ways = [w for w in WAYS if w in results]
        times: dict[Way, list[float]] = {w: [] for w in ways}
        for index in range(repeats):
            for way in ways if index % 2 == 0 else list(reversed(ways)):
                if way == "reuse" and kept is not None:
                    cache, feed = copy.deepcopy(kept), prompt[cached_before:]
                else:  # re-feed, or the first turn's reuse: an empty cache, the whole prompt
                    cache, feed = self.backend.new_cache(self.cache_spec, 1), prompt
                seconds, _token, _fed = self._timed_prefill(feed, cache)
                times[way].append(seconds)
                del cache
        return {w: replace(r, ttft_repeats_s=tuple(times[w])) for w, r in results.items()}

    def _timed_prefill(self, feed: Sequence[int], cache: Cache) -> tuple[float, int, int]:
        """Feed `feed` on `cache` in chunks; (seconds of the forward calls, first token, fed)."""
        seconds, fed, token = 0.0, 0, -1
        for first in range(0, len(feed), self.prefill_chunk):
            seconds_chunk, token, count, _ = self._prefill_chunk(
                feed[first:first + self.prefill_chunk], cache)
            seconds += seconds_chunk
            fed += count
        return seconds, token, fed

    def _prefill_chunk(
        self, chunk: Sequence[int], cache: Cache
    ) -> tuple[float, int, int, torch.Tensor]:
        """One timed forward of `chunk` on `cache` and the argmax after it:
        (seconds, token, tokens fed, the logits (V,) that chose the token)."""
        with torch.inference_mode():
            ids = torch.tensor([list(chunk)], dtype=torch.long,
                               device=self.backend.device)  # (1, T)
            step = next(decode.run(self.backend, ids, cache, self._greedy, steps=1))
        return step.seconds, int(step.chosen[0]), int(step.fed.shape[1]), step.logits[0]

    def _greedy(self, logits: torch.Tensor) -> torch.Tensor:
        """The loop's policy: logits (1, V) → the argmax (1,), read back inside the timing."""
        token = int(logits[0].argmax())
        return torch.tensor([token], dtype=torch.long, device=self.backend.device)  # (1,)

    def _chunks(self, tokens: int) -> int:
        """Forward calls a prefill of `tokens` takes."""
        return max(1, -(-tokens // self.prefill_chunk))

    def _answer_reusing(
        self, prompt: Sequence[int], budget: int, steps: _StepCount,
        chosen_from: list[torch.Tensor],
    ) -> Generator[Progress, None, WayResult]:
        """Feed only what the kept cache lacks, answer, and remember what it now holds."""
        if self._cache is None:
            self._cache = self.backend.new_cache(self.cache_spec, 1)
            self._cached_tokens = 0
        feed = prompt[self._cached_tokens :]
        result = yield from self._answer("reuse", feed, self._cache, budget, steps,
                                         chosen_from)
        self._cached_tokens = len(prompt) + len(result.token_ids) - 1  # the last is never fed
        return result

    def _answer_text(self, ids: Sequence[int]) -> str:
        """What a student reads: cut at the turn's end, bytes of a cut character, never �."""
        return self.tokenizer.answer_text(ids).strip() or EMPTY_ANSWER

    # ---- one way -----------------------------------------------------------------------------
    def _answer(
        self, way: Way, feed: Sequence[int], cache: Cache, budget: int, steps: _StepCount,
        chosen_from: list[torch.Tensor],
    ) -> Generator[Progress, None, WayResult]:
        """Prefill `feed` on `cache`, then choose greedily until eos or `budget` tokens;
        the logits (V,) each token was chosen from go to `chosen_from`.

        Yields a `Progress` after every forward call (each prefill chunk, each decode
        step); only the forward calls are timed, not the time spent between items.
        """
        backend = self.backend
        device = backend.device
        prompt_fed = 0
        ttft = 0.0
        token = -1
        for first in range(0, len(feed), self.prefill_chunk):
            seconds, token, count, logits = self._prefill_chunk(
                feed[first : first + self.prefill_chunk], cache)
            ttft += seconds
            prompt_fed += count
            yield steps.step(way)
        answer = [token]
        chosen_from.append(logits)
        decode_fed = 0
        decode_s = 0.0
        decode_steps: list[float] = []
        if token != self.eos_id and len(answer) < budget:
            step_ids = torch.tensor([[token]], dtype=torch.long, device=device)  # (1, 1)
            loop = decode.run(backend, step_ids, cache, self._greedy, steps=budget - len(answer))
            while True:
                with torch.inference_mode():
                    step = next(loop, None)  # one token fed on the cache, the argmax chosen
                if step is None:
                    break
                token = int(step.chosen[0])
                chosen_from.append(step.logits[0])  # (V,)
                decode_s += step.seconds
                decode_steps.append(step.seconds)
                decode_fed += int(step.fed.shape[1])
                answer.append(token)
                yield steps.step(way)
                if token == self.eos_id:
                    break
        return WayResult(
            way=way,
            prompt_tokens_fed=prompt_fed,
            decode_tokens_fed=decode_fed,
            ttft_s=ttft,
            decode_s=decode_s,
            cache_bytes=cache.nbytes,
            cache_tokens=cache.stored_tokens,
            token_ids=tuple(answer),
            decode_steps_s=tuple(decode_steps),
        )


def _logit_gap(
    results: dict[Way, WayResult], chosen_from: dict[Way, list[torch.Tensor]]
) -> float | None:
    """max |Δlogit| between the two ways, over the tokens chosen after the same tokens (up
    to and including the first where the answers part); None when one way ran."""
    if "reuse" not in results or "refeed" not in results:
        return None
    reuse, refeed = results["reuse"].token_ids, results["refeed"].token_ids
    gap = 0.0
    for i, (a, b) in enumerate(zip(chosen_from["reuse"], chosen_from["refeed"], strict=False)):
        gap = max(gap, float((a - b).abs().max()))
        if reuse[i] != refeed[i]:
            break
    return gap


MAX_TURNS_FILE_BYTES = 16 * 1024 * 1024  # a lecture's script is a few KB; 16 MiB is plenty


def read_turns(path: str | Path) -> list[str]:
    """A UTF-8 text file, one user turn per line (blank lines skipped).

    Read with `small_files.read_text`: a regular file of at most
    `MAX_TURNS_FILE_BYTES`, so ``/dev/zero`` or a FIFO is refused at once.
    """
    p = Path(path)
    expected = "a UTF-8 text file, one turn per line"
    if not p.exists():
        raise ValueError(f"No turns file at {p}; give {expected}.")
    text = read_text(p, MAX_TURNS_FILE_BYTES, expected)
    turns = [line.strip() for line in text.splitlines() if line.strip()]
    if not turns:
        raise ValueError(f"{p} has no turns; write one user turn per line.")
    return turns
