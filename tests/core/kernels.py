"""Which CPU kernels this process runs, for `test_other_cpus.py`.

`fingerprint` hashes the bits of a few results that depend on the kernels
torch picks and not on anything else: rows of one matrix product taken with 1 … 8
rows (MKL's or another BLAS's code path and blocking), grouped attention (ATen's
vectorised softmax and SDPA) and a long sum (ATen's vectorised reduction). The
same machine under other kernels gives another fingerprint; a pytest run with
``KVSTUDIO_KERNEL_REPORT=<file>`` writes its capability, fingerprint and test
counts there when it ends (``tests/conftest.py``).
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import torch
import torch.nn.functional as F

REPORT_ENV = "KVSTUDIO_KERNEL_REPORT"


def capability() -> str:
    """ATen's CPU capability: DEFAULT, AVX2, AVX512 (x86), or what torch reports elsewhere."""
    return str(torch.backends.cpu.get_cpu_capability())


def fingerprint() -> str:
    """A short hash of results whose last bits depend on the kernels that computed them."""
    gen = torch.Generator().manual_seed(0)
    x, w = torch.randn(8, 256, generator=gen), torch.randn(256, 768, generator=gen)
    rows = torch.stack([(x[:m] @ w)[0] for m in range(1, 9)])  # row 0 of 1 … 8-row products
    q = torch.randn(1, 8, 5, 32, generator=gen)
    k = torch.randn(1, 2, 9, 32, generator=gen)
    attention = F.scaled_dot_product_attention(q, k, k, enable_gqa=True)
    total = torch.randn(4099, generator=gen).exp().sum()
    digest = hashlib.sha256()
    for t in (rows, attention, total):
        digest.update(t.numpy().tobytes())
    return digest.hexdigest()[:16]


def write_report(path: Path, collected: int, failed: int) -> None:
    """What `test_other_cpus.py` checks the child run by."""
    path.write_text(json.dumps({
        "capability": capability(),
        "fingerprint": fingerprint(),
        "collected": collected,
        "failed": failed,
        "mkl_env": {k: v for k, v in os.environ.items() if k.startswith("MKL_")},
    }), encoding="utf-8")
