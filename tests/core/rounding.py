"""How far two float32 computations of the same logits may differ when they are not one computation.

A claim such as "a request batched gives the logits of its run alone" or "a
cropped cache is the cache of the first n tokens" compares computations of
different shapes: 12 positions against the first 7, a batch of rows against
one row. A CPU's matrix-product and attention kernels choose their code path,
their blocking and their vector width from the shape (and the CPU: AVX-512,
AVX2, NEON, a GPU), so the same dot product is summed in another order and
rounds differently. Such claims are asserted as *the same tokens, and logits
within `ULPS` float32 steps of their largest magnitude* (`assert_within_rounding`),
never with ``torch.equal``; ``torch.equal`` is kept for computations of one
shape (the same call twice, rows copied or sliced, never recomputed).

The tests that compare across shapes carry the ``numeric`` marker, and
``test_other_cpus.py`` runs them again under other kernels on this machine.
"""

from __future__ import annotations

import torch

EPS = torch.finfo(torch.float32).eps  # 2⁻²³: the float32 step at 1.0; at magnitude m, EPS·m
#                                      is one to two steps (ulps)

# The bound, in EPS × the largest |value| of the reference. Why 64: a row of a product sums
# its K terms (K = 64 … 704 in these models) in an order the kernel picks; every float32
# addition rounds by at most half a step of its running sum, so two orders of one dot
# product differ by a few steps of the terms' magnitude, and each layer passes such a
# difference on (RMSNorm, softmax, the residual stream) to the logits. Measured on the
# development machine (AMD EPYC) under ATen's DEFAULT, AVX2 and AVX512 kernels and MKL's
# AVX2 and compatible paths: at most 4 EPS·max|logit| on the tiny test model (5.2e-7 at
# max |logit| 1.31) and 9 on ko-chat's serving example (2.3e-5 at 21.6); 64 leaves seven
# times that. A real fault is thousands of times larger: one stale cached row moves the
# tiny model's next logits by 0.05, 3.7e5 EPS·max|logit| (test_cache_crop.py).
ULPS = 64


def rounding_bound(reference: torch.Tensor) -> float:
    """The largest |Δ| rounding may explain: `ULPS` · EPS · max |reference|."""
    return ULPS * EPS * float(reference.detach().abs().max())


def max_gap(a: torch.Tensor, b: torch.Tensor) -> float:
    """max |a − b| (0.0 for empty tensors)."""
    if a.numel() == 0:
        return 0.0
    return float((a.detach().float() - b.detach().float()).abs().max())


def assert_within_rounding(actual: torch.Tensor, expected: torch.Tensor, what: str = "") -> float:
    """Assert that `actual` is `expected` up to float32 rounding; return the measured max |Δ|."""
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape} ≠ {expected.shape}"
    gap, bound = max_gap(actual, expected), rounding_bound(expected)
    assert gap <= bound, (
        f"{what}: max |Δ| {gap:.3g} is past rounding's bound {bound:.3g} "
        f"({ULPS} EPS × max |value| {float(expected.abs().max()):.3g})"
    )
    return gap
