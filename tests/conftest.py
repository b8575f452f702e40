"""Shared fixtures: a tiny seeded model, the course-sized model, and their tokenizer.

Qt stays out of here (tests/ui has its own conftest). Torch runs on one thread:
the machine has two cores and tiny matmuls slow down badly when they compete.
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

import pytest
import torch

from kvstudio.engine.backends.minimind import MiniMindBackend
from kvstudio.engine.config import ModelConfig
from kvstudio.engine.model import MiniMindLM
from kvstudio.engine.tokenizer import TextTokenizer
from kvstudio.files.checkpoints import train_fallback_tokenizer

torch.set_num_threads(1)


def _modules_with(session: pytest.Session, name: str) -> dict[object, list[pytest.Item]]:
    """The collected test modules that define `name`, with their selected tests."""
    found: dict[object, list[pytest.Item]] = {}
    for item in session.items:
        module = getattr(item, "module", None)
        if callable(getattr(module, name, None)):
            found.setdefault(module, []).append(item)
    return found


def pytest_configure(config: pytest.Config) -> None:
    """Under pytest-xdist (the README's `-n auto --dist loadfile`) the files go out in the
    order `pytest_collection_modifyitems` gives them, not xdist's default of most tests
    first: that left the one- and two-test files for last, and they are the heaviest (a
    child pytest under other kernels, a window closed mid-run), with the other workers idle."""
    if hasattr(config.option, "loadscopereorder"):
        config.option.loadscopereorder = False


def _waits_on_a_child(item: pytest.Item) -> bool:
    """A test whose module starts a child process (serially, at collection) and waits for it."""
    module = getattr(item, "module", None)
    return (callable(getattr(module, "start_in_background", None))
            or callable(getattr(module, "start_child_runs", None))
            or "notebook_run" in getattr(item, "fixturenames", ()))


def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    """In an xdist worker, the longest files first, so the short ones even out the end: the
    files that wait on a child process (it works on a core of its own meanwhile), then the
    window tests (tests/ui), then the rest. Every worker sorts the same, as xdist requires.
    A serial run keeps the collection order: its children start at collection and run
    beside the tests before their module."""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return
    ui = Path(__file__).resolve().parent / "ui"
    rank: dict[Path, int] = {}
    for item in items:
        path = Path(item.path)
        here = 0 if _waits_on_a_child(item) else 1 if path.is_relative_to(ui) else 2
        rank[path] = min(rank.get(path, 2), here)
    items.sort(key=lambda item: rank[Path(item.path)])  # stable: each file's order kept


def pytest_collection_finish(session: pytest.Session) -> None:
    """A test module whose checks read a child process (a fresh interpreter that spends
    seconds starting) defines ``start_in_background(items)``: it starts that child now,
    if one of its selected `items` needs it, so the child runs beside the tests before
    the module instead of the session waiting for it there."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        return  # every worker collects every test: each module starts its child when it runs
    for module, items in _modules_with(session, "start_in_background").items():
        module.start_in_background(items)  # type: ignore[attr-defined]


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """A run that tests/core/test_other_cpus.py started reports the kernels it ran on.

    Children started in the background that a session ended before reading are ended
    (``stop_in_background``)."""
    for module in _modules_with(session, "stop_in_background"):
        module.stop_in_background()  # type: ignore[attr-defined]
    report = os.environ.get("KVSTUDIO_KERNEL_REPORT")
    if report:
        from core.kernels import write_report

        write_report(Path(report), session.testscollected, session.testsfailed)


@pytest.fixture(scope="session")
def tokenizer() -> TextTokenizer:
    """A small byte-level BPE (a few hundred tokens) trained in memory."""
    return train_fallback_tokenizer()


@pytest.fixture(scope="session")
def tiny_config(tokenizer: TextTokenizer) -> ModelConfig:
    return ModelConfig(
        hidden_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        vocab_size=tokenizer.vocab_size,
        max_position_embeddings=1024,
        eos_token_id=tokenizer.eos_id if tokenizer.eos_id is not None else 2,
    )


@pytest.fixture(scope="session")
def tiny_model(tiny_config: ModelConfig) -> MiniMindLM:
    return MiniMindLM(tiny_config).init_weights(1234).eval()


@pytest.fixture(scope="session")
def tiny_backend(tiny_model: MiniMindLM) -> MiniMindBackend:
    return MiniMindBackend(tiny_model, name="tiny")


@pytest.fixture(scope="session")
def course_backend(tokenizer: TextTokenizer) -> MiniMindBackend:
    """Course geometry (hidden 256, 4 layers, 2 KV heads × 32, fp32); vocab = the tokenizer's."""
    cfg = replace(ModelConfig(), vocab_size=tokenizer.vocab_size, max_position_embeddings=1024)
    return MiniMindBackend(MiniMindLM(cfg).init_weights(7).eval(), name="course")
