"""What one chat turn measured: `WayResult` per way (reuse or re-feed) and the `ChatTurn`;
a scripted conversation's turns together: `ChatScript`.

Frozen records `kvstudio.labs.chat.session.ChatSession` yields (and re-exports). Times
follow the course's one policy: `WayResult.ttft_median_s` is the median of the
turn's interleaved TTFT rounds with `ttft_range_s` and `ttft_rounds` (1 = a
single measurement, to be said so wherever it is shown); `decode_ms_per_token`
is the median decode step.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Literal

Way = Literal["reuse", "refeed"]
WAYS: tuple[Way, ...] = ("reuse", "refeed")


@dataclass(frozen=True)
class WayResult:
    """One turn answered one way, measured."""

    way: Way
    prompt_tokens_fed: int  # tokens in this turn's prefill tensors (its chunks together)
    decode_tokens_fed: int  # tokens fed after the prefill (one per further answer token)
    ttft_s: float  # prefill (every chunk) + first choice (perf_counter)
    decode_s: float  # the decode steps together
    cache_bytes: int  # bytes the cache holds after the turn, measured from its tensors
    cache_tokens: int  # tokens the cache holds after the turn
    token_ids: tuple[int, ...]  # the answer, eos included when the model chose it
    decode_steps_s: tuple[float, ...] = ()  # every decode step's time
    ttft_repeats_s: tuple[float, ...] = ()  # the prefill timed again, interleaved (k rounds)

    @property
    def tokens_fed(self) -> int:
        return self.prompt_tokens_fed + self.decode_tokens_fed

    @property
    def decode_ms_per_token(self) -> float:
        """The course's ms/token: the median decode step (0 when the answer had none)."""
        if self.decode_steps_s:
            return 1000.0 * statistics.median(self.decode_steps_s)
        return 1000.0 * self.decode_s / self.decode_tokens_fed if self.decode_tokens_fed else 0.0

    @property
    def ttft_samples_s(self) -> tuple[float, ...]:
        """The TTFTs the shown one is the median of: the repeats, else the single one."""
        return self.ttft_repeats_s or (self.ttft_s,)

    @property
    def ttft_rounds(self) -> int:
        """k: how many TTFTs `ttft_median_s` is the median of (1 = a single measurement)."""
        return len(self.ttft_samples_s)

    @property
    def ttft_median_s(self) -> float:
        return float(statistics.median(self.ttft_samples_s))

    @property
    def ttft_range_s(self) -> tuple[float, float]:
        samples = self.ttft_samples_s
        return min(samples), max(samples)


@dataclass(frozen=True)
class ChatTurn:
    """One user turn and the assistant's answer, with both ways' measurements."""

    turn: int  # 1, 2, …
    user_text: str
    new_tokens: int  # tokens the cache did not hold yet when the turn began (reuse's prompt)
    history_tokens: int  # the whole conversation up to the assistant header (refeed's prompt)
    answer_ids: tuple[int, ...]  # what went into the history
    answer_text: str
    reuse: WayResult | None  # None when that way was not run this turn
    refeed: WayResult | None
    cut_by_limit: bool  # the answer was cut short because the context limit was reached
    context_limit: int  # positions the conversation may use
    # max |Δlogit| between the ways, over the tokens chosen after the same history (float32
    # rounding: reuse's prefill and re-feed's have different row counts); None: one way ran
    max_abs_logit_diff: float | None = None

    @property
    def identical(self) -> bool | None:
        """Both ways chose the same tokens (None when only one way ran); their logits agree
        to float32 rounding (`max_abs_logit_diff`), not bit for bit."""
        if self.reuse is None or self.refeed is None:
            return None
        return self.reuse.token_ids == self.refeed.token_ids

    def way(self, way: Way) -> WayResult | None:
        return self.reuse if way == "reuse" else self.refeed


@dataclass(frozen=True)
class ChatScript:
    """A scripted conversation run from its first line to its last (``script.run_script``)."""

    turns: tuple[ChatTurn, ...]  # the turns that ran, in order
    script_turns: int  # lines in the script
    context_limit: int  # positions the conversation could use (capped at the model's)
    ttft_rounds: int  # k: each turn's TTFT is the median of k interleaved prefills (1: single)
    stopped: str = ""  # why it stopped before the script's end (a turn past the limit); "": not
