"""The numerical tests again, under the kernels other machines run, on this machine.

A claim that compares computations of different shapes (batched against alone,
cached against recomputed, a cropped cache against the first tokens fed) can
hold bit for bit on the CPU it was written on and fail on another: the
matrix-product and attention kernels pick their summation order from the
shape *and* the instruction set. Those tests carry the ``numeric`` marker and
assert what holds everywhere (`core.rounding`). This module runs them again in
a child ``pytest -m numeric`` for each setting below, which makes torch and MKL
take the code paths of an older CPU:

- ``ATEN_CPU_CAPABILITY=default``: ATen's kernels without AVX (softmax, SDPA,
  reductions, elementwise), as on a CPU torch knows no vector unit of;
  ``MKL_ENABLE_INSTRUCTIONS=AVX2``: MKL's matrix product limited to AVX2, as
  on an AVX2-only Intel CPU (an AVX-512 machine's default differs from it);
- ``ATEN_CPU_CAPABILITY=avx2``: ATen's AVX2 kernels; ``MKL_ENABLE_INSTRUCTIONS=
  SSE4_2`` and ``MKL_CBWR=COMPATIBLE``: MKL's SSE4.2 and its compatible code
  path (on AMD CPUs MKL ignores the first and takes its AVX2 path anyway; the
  second still moves it).

Each child reports its ATen capability and a fingerprint of kernel-dependent
bits (`core.kernels`): the capability must be the one asked for and the
fingerprint must differ from this process's, or the run proved nothing. On a
machine that is not x86 with AVX2 (an ARM Mac: NEON and Accelerate) the
settings mean nothing and the test is skipped; docs/development.md says what
is assumed there.
"""

from __future__ import annotations

import faulthandler
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from core.kernels import REPORT_ENV, capability, fingerprint

ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class ChildRun:
    """A child ``pytest -m numeric`` under one setting: the process, its report and log."""

    process: subprocess.Popen[str]
    report: Path
    log: Path

CHILD_WAIT_S = 1200  # a child run's limit (alone: about 75 s of CPU on the 2-core machine)

# Only the folders that hold numeric tests: collecting tests/ui would import Qt for nothing.
FOLDERS = ("tests/core", "tests/cli", "tests/models")
MARKER = "mark.numeric"  # how a test file marks a test (or its module) `numeric`

SETTINGS = [
    pytest.param({"ATEN_CPU_CAPABILITY": "default", "MKL_ENABLE_INSTRUCTIONS": "AVX2"},
                 "DEFAULT", id="aten-default-mkl-avx2"),
    pytest.param({"ATEN_CPU_CAPABILITY": "avx2", "MKL_ENABLE_INSTRUCTIONS": "SSE4_2",
                  "MKL_CBWR": "COMPATIBLE"},
                 "AVX2", id="aten-avx2-mkl-compatible"),
]


def numeric_files() -> list[str]:
    """The test files in `FOLDERS` that mark a test `numeric`, for the child to collect.

    A file can only carry the marker by naming it, so the others hold no test the child
    would select; collecting them too (importing each module and what it imports, only to
    deselect every test) cost each child about 2 s of CPU on the 2-core machine."""
    return sorted(str(path.relative_to(ROOT)) for folder in FOLDERS
                  for path in (ROOT / folder).rglob("test_*.py")
                  if path != Path(__file__) and MARKER in path.read_text(encoding="utf-8"))


def _skip_reason() -> str | None:
    if os.environ.get(REPORT_ENV):
        return "already a child run under other kernels"
    if platform.machine().lower() not in ("x86_64", "amd64") or capability() not in (
            "AVX2", "AVX512"):
        return (f"the settings name x86 kernels; this is {platform.machine()}, "
                f"ATen {capability()}")
    return None


# The child runs this session started (`start_child_runs`), by setting.
_started: dict[str, ChildRun] = {}


def start_child_runs() -> None:
    """Start both child runs, once a session; output goes to a file, so neither can block
    on a pipe. ``tests/core/conftest.py`` calls this as soon as the session has collected
    this module's tests, so the children (mostly start-up, one core each) run beside the
    tests before them; `child_runs` starts them itself otherwise."""
    if _started or _skip_reason() is not None:
        return
    root = Path(tempfile.mkdtemp(prefix="kvstudio-other-cpus-"))
    for setting in SETTINGS:
        env, _ = setting.values
        folder = root / str(setting.id)
        folder.mkdir()
        report, log = folder / "kernels.json", folder / "pytest.log"
        child_env = {**os.environ, **env, REPORT_ENV: str(report)}
        child_env.pop("PYTEST_ADDOPTS", None)
        command = [sys.executable, "-m", "pytest", "-m", "numeric", "-q", "-p",
                   "no:cacheprovider", *numeric_files()]
        with log.open("w", encoding="utf-8") as out:
            process = subprocess.Popen(command, cwd=ROOT, env=child_env, stdout=out,
                                       stderr=subprocess.STDOUT, text=True)
        _started[str(setting.id)] = ChildRun(process, report, log)


def stop_child_runs() -> None:
    """End a child still running (an interrupted session) and remove what they wrote."""
    for run in _started.values():
        if run.process.poll() is None:
            run.process.kill()
            run.process.wait()
        shutil.rmtree(run.report.parent.parent, ignore_errors=True)
    _started.clear()


@pytest.fixture(scope="module")
def child_runs() -> Iterator[dict[str, ChildRun]]:
    """Both child runs, started together and each waited for by its own test."""
    start_child_runs()
    yield dict(_started)
    stop_child_runs()


@pytest.mark.slow  # about 75 s a setting, alone, on the 2-core machine; the two run side by side
@pytest.mark.parametrize(("env", "expected"), SETTINGS)
def test_the_numeric_tests_pass_under_other_kernels(
    env: dict[str, str], expected: str, child_runs: dict[str, ChildRun],
    request: pytest.FixtureRequest,
) -> None:
    reason = _skip_reason()
    if reason is not None:
        pytest.skip(reason)
    run = child_runs[request.node.callspec.id]
    # The child collects only the files its command names (`numeric_files`): every file
    # holding a numeric test this session collected must be among them.
    marked = {str(Path(item.path).relative_to(ROOT)) for item in request.session.items
              if item.get_closest_marker("numeric") is not None}
    assert marked <= set(run.process.args), marked - set(run.process.args)
    # This test only waits for its child, which runs ~150 tests and, beside two busy
    # neighbours on a slow 2-core machine, can take past the suite's hang guard
    # (pyproject.toml: faulthandler_timeout); the wait below is this test's own limit, and
    # the hang guard, re-armed past it, still ends the process if the wait itself hangs.
    faulthandler.dump_traceback_later(CHILD_WAIT_S + 60, exit=True)
    code = run.process.wait(timeout=CHILD_WAIT_S)
    output = run.log.read_text(encoding="utf-8")
    assert code == 0, f"the numeric tests fail under {env}:\n{output[-12000:]}"
    ran = json.loads(run.report.read_text(encoding="utf-8"))
    assert ran["capability"] == expected, ran  # ATen really took the kernels asked for
    assert ran["fingerprint"] != fingerprint(), ran  # and the bits really moved
    assert ran["collected"] >= 150 and ran["failed"] == 0, ran
