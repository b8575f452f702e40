"""The projector lab: a real model's KV cache bytes, checked against a real run.

Owns `projector` (the projection of ``kvstudio.labs.scale`` for one geometry,
with its variants) and `projection_check` (the projector's bytes for the
loaded model against the bytes a real run of that length holds). A generator
that yields `Progress` and ends with a `ProjectorResult`; it never imports Qt.
`run` is the lab as every front runs it: its `source` says what to project (a
preset, a config.json, or the loaded model, which is then checked).
"""

from __future__ import annotations

from collections.abc import Generator, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kvstudio.engine.backends.minimind import LanguageModel
from kvstudio.engine.tokenizer import TextTokenizer
from kvstudio.files.loaded import LoadedModel
from kvstudio.labs.common import Progress, greedy_stepper, lab_prompt_ids
from kvstudio.labs.scale import (
    LOADED,
    PRESETS,
    ModelGeometry,
    ProjectionRow,
    context_points,
    geometry_of_backend,
    load_config,
    variants,
)


# ---- the projector's check -------------------------------------------------------------------
@dataclass(frozen=True)
class ProjectionCheck:
    geometry: ModelGeometry
    context: int  # tokens the cache holds
    batch: int
    projected_bytes: int
    measured_bytes: int  # from the cache tensors of a real run

    @property
    def equal(self) -> bool:
        return self.projected_bytes == self.measured_bytes


def projection_check(
    backend: LanguageModel,
    tokenizer: TextTokenizer,
    prompt_ids: Sequence[int],
    *,
    batch: int = 1,
    new_tokens: int = 8,
) -> Generator[Progress | ProjectionCheck, None, None]:
    """Run P + N tokens on `batch` rows; the cache then holds P + N − 1 tokens per row."""
    geometry = geometry_of_backend(backend)
    stepper = greedy_stepper(backend, tokenizer, prompt_ids, new_tokens, batch_size=batch)
    for record in stepper:
        yield Progress("projector", "run", record.step + 1, new_tokens, record)
    last = stepper.records[-1]
    context = len(prompt_ids) + new_tokens - 1
    yield ProjectionCheck(
        geometry=geometry,
        context=context,
        batch=batch,
        projected_bytes=geometry.cache_bytes(context, batch, bits=backend.dtype_bytes * 8),
        measured_bytes=last.cache_allocated_bytes,
    )


# ---- the projector lab ---------------------------------------------------------------------
@dataclass(frozen=True)
class ProjectorResult:
    geometry: ModelGeometry
    context: int
    batch: int
    bits: int
    rows: tuple[ProjectionRow, ...]  # as configured, then one change at a time
    contexts: tuple[int, ...]  # chart x
    cache_bytes: tuple[int, ...]  # chart y, as configured
    cache_bytes_8bit: tuple[int, ...]  # chart y, the same with an 8-bit cache
    check: ProjectionCheck | None  # the loaded model: projection vs a real run


def projector(
    geometry: ModelGeometry,
    *,
    context: int,
    batch: int,
    bits: int | None = None,
    backend: LanguageModel | None = None,
    tokenizer: TextTokenizer | None = None,
    check_prompt: Sequence[int] | None = None,
) -> Generator[Progress | ProjectionCheck | ProjectorResult, None, None]:
    """The projection for `geometry`; with a backend, also `projection_check` on it.

    `bits` None: the config's own dtype (`ModelGeometry.dtype_bits`).
    """
    bits = geometry.dtype_bits if bits is None else bits
    check: ProjectionCheck | None = None
    if backend is not None and tokenizer is not None and check_prompt is not None:
        for item in projection_check(
            backend, tokenizer, check_prompt, batch=min(batch, 8), new_tokens=8
        ):
            if isinstance(item, ProjectionCheck):
                check = item
            yield item
    points = context_points(context)
    yield ProjectorResult(
        geometry=geometry,
        context=context,
        batch=batch,
        bits=bits,
        rows=tuple(variants(geometry, context, batch, bits)),
        contexts=tuple(points),
        cache_bytes=tuple(geometry.cache_bytes(c, batch, bits) for c in points),
        cache_bytes_8bit=tuple(geometry.cache_bytes(c, batch, 8) for c in points),
        check=check,
    )


def run(model: LoadedModel | None,
        params: Mapping[str, Any]) -> Iterator[Progress | ProjectionCheck | ProjectorResult]:
    """The lab as every front runs it. `source`: a preset's key (`scale.PRESETS`, no model
    needed), a config.json's path, or `LOADED`: `model`, projected and checked by a run."""
    source = params["source"]
    context, batch = params["context"], params["batch"]
    bits = params["bits"] or None  # 0: the config's own dtype
    if source != LOADED:
        geometry = PRESETS[source] if source in PRESETS else load_config(source)
        return projector(geometry, context=context, batch=batch, bits=bits)
    if model is None:
        raise ValueError("No model is loaded yet; wait for it or pick a preset.")
    check_prompt = lab_prompt_ids(model.tokenizer, min(128, model.max_positions - 16))
    return projector(
        geometry_of_backend(model.backend),
        context=context,
        batch=batch,
        bits=bits,
        backend=model.backend,
        tokenizer=model.tokenizer,
        check_prompt=check_prompt,
    )
