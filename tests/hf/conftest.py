"""Fixtures for the Hugging Face tests: a tiny byte-level BPE tokenizer and tiny model folders.

Everything is built in a temp folder from a config: nothing is downloaded.
The whole folder is skipped, with the reason, when transformers is missing.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

pytest.importorskip("transformers", reason="transformers is not installed: pip install -e '.[hf]'")

from hf_fixtures import make_tokenizer

from kvstudio.engine.tokenizer import TextTokenizer


@pytest.fixture(autouse=True)
def _one_thread() -> None:
    torch.set_num_threads(1)  # two shared cores: more threads only add contention


@pytest.fixture(scope="session")
def tokenizer() -> TextTokenizer:
    return make_tokenizer()


@pytest.fixture
def tmp_folder(tmp_path: Path) -> Path:
    return tmp_path / "hf-model"
