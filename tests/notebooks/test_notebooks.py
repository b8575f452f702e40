"""The course notebooks: stored without outputs, in step with their script, and executed.

Every notebook in notebooks/ runs top to bottom headless (nbclient) on a kernel
of this venv's Python (`execute_all.py`, started as soon as the session has collected
its tests), then its outputs are read: the tokens-fed notebook shows
246 and 13,728, the cache-bytes notebook 204,800, the serving, beam-search and
speculative notebooks numbers that agree with their formulas (recomputed here
from what they printed), and every cell that runs a lab left the chart as an image. The
notebooks share one kernel (imports and models load once) but each starts from
an empty namespace (``%reset -f``), so none can lean on another's variables.
Needs the ``notebook`` extra; skipped without it.
"""

from __future__ import annotations

import ast
import importlib.util
import itertools
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from execute_all import NotebookRun

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
EXTRA = ("nbclient", "nbformat", "ipykernel", "jupyter_rfb")
MISSING = [name for name in EXTRA if importlib.util.find_spec(name) is None]
needs_extra = pytest.mark.skipif(
    bool(MISSING),
    reason=f"the notebook extra is not installed (missing {', '.join(MISSING)}): "
           'pip install -e ".[notebook]"',
)
# A cell that runs a lab: `name = kv.<lab>(…)` at the start of the cell.
LAB_CELL = re.compile(
    r"^\w+ = kv\.(compare|sample|cutoff|cache_kinds|sweep|chat|paged|quantized|serving|beam|"
    r"speculative)\(")


def test_the_notebooks_are_there() -> None:
    assert len(NOTEBOOKS) >= 12, [p.name for p in NOTEBOOKS]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_stored_without_outputs(path: Path) -> None:
    document = json.loads(path.read_text(encoding="utf-8"))
    for index, cell in enumerate(document["cells"]):
        if cell["cell_type"] == "code":
            assert cell["outputs"] == [], f"{path.name} cell {index} was stored with outputs"
            assert cell["execution_count"] is None, f"{path.name} cell {index} has a count"


def test_notebooks_match_their_script() -> None:
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "make_notebooks.py"),
                           "--check"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_first_cell_installs_only_when_missing() -> None:
    for path in NOTEBOOKS:
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        first = "".join(next(c for c in cells if c["cell_type"] == "code")["source"])
        assert 'importlib.util.find_spec("kvstudio") is None' in first, path.name
        assert '"kvstudio[notebook] @ {source}"' in first, path.name
        assert 'glob.glob("kvstudio-*.whl")' in first, path.name  # an uploaded wheel first
        assert f'COURSE_ADDRESS = "{course_address()}"' in first, path.name  # one address
        assert "download.pytorch.org/whl/cpu" in first, path.name


def course_address() -> str:
    """The one address every notebook installs from, as scripts/make_notebooks.py sets it."""
    script = (ROOT / "scripts" / "make_notebooks.py").read_text(encoding="utf-8")
    found = re.search(r'^COURSE_ADDRESS = "([^"]+)"$', script, re.MULTILINE)
    assert found, "scripts/make_notebooks.py sets COURSE_ADDRESS"
    return found.group(1)


def test_every_notebook_prints_the_models_it_loaded() -> None:
    for path in NOTEBOOKS:
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        code = [("".join(c["source"])) for c in cells if c["cell_type"] == "code"]
        assert "print(kv.about())" in code[1], path.name


@pytest.fixture(scope="module")
def executed(notebook_run: NotebookRun) -> dict[str, Any]:
    """Every notebook, executed (`execute_all.py`, started when the session collected its
    tests: see ``conftest.py``), by name; "_work" is the kernel's working folder."""
    import nbformat

    code = notebook_run.process.wait()
    if code != 0:
        pytest.fail(f"executing the notebooks failed (exit status {code}):\n"
                    + notebook_run.log.read_text(encoding="utf-8")[-12000:], pytrace=False)
    results: dict[str, Any] = {
        path.name: nbformat.read(path, as_version=4)
        for path in sorted((notebook_run.folder / "executed").glob("*.ipynb"))
    }
    results["_work"] = notebook_run.folder / "work"
    return results


def _text(nb: Any) -> str:
    parts = []
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            parts.append(output.get("text", ""))
            parts.append(str(output.get("data", {}).get("text/plain", "")))
    return "\n".join(parts)


def _has_image(cell: Any) -> bool:
    return any("image/png" in o.get("data", {}) for o in cell.get("outputs", []))


@needs_extra
@pytest.mark.notebook
@pytest.mark.slow
def test_every_notebook_runs_and_shows_its_numbers(executed: dict[str, Any]) -> None:
    names = [p.name for p in NOTEBOOKS]
    assert sorted(k for k in executed if not k.startswith("_")) == names
    tokens = _text(executed["01_tokens_fed.ipynb"])
    assert "246" in tokens and "13,728" in tokens
    assert "204,800" in _text(executed["03_cache_bytes.ipynb"])
    seed = _text(executed["00_seed_cache_on_off.ipynb"])
    assert "cached 79 vs recompute 3,040 tokens fed" in seed
    assert "distinct answers of 30" in _text(executed["04_temperature.ipynb"])


@needs_extra
@pytest.mark.notebook
@pytest.mark.slow
def test_the_serving_notebook_checks_its_numbers(executed: dict[str, Any]) -> None:
    chat = _text(executed["07_chat.ipynb"])
    assert len(re.findall(r"same tokens, max \|Δlogit\| [0-9.e+-]+", chat)) == 3
    text = _text(executed["09_serving.ipynb"])
    for policy in ("static", "continuous"):
        assert re.search(rf"{policy} +\d+ steps: all 6 answers the same tokens as their solo "
                         r"runs, max \|Δlogit\| [0-9.e+-]+", text), policy
    wasted = re.search(r"static: (\d+) wasted slots = .* = (\d+); continuous: 0", text)
    assert wasted and wasted[1] == wasted[2] and int(wasted[1]) > 0  # static pads; continuous not
    for mode in ("blocks", "radix"):
        found = re.search(rf"{mode} +shared (\d+), b = (\d+): hits per request (\[.*\])", text)
        assert found, mode
        shared, b, hits = int(found[1]), int(found[2]), ast.literal_eval(found[3])
        hit = shared // b * b if mode == "blocks" else shared
        assert hits[:2] == [0, 0] and hits[2:] == [hit] * (len(hits) - 2), (mode, hits)
        assert hit > 0
    fit = re.search(r"(\d+) blocks of ([\d,]+) B, (\d+) blocks a request: (\d+) users fit; "
                    r"the scheduler admitted (\d+) of (\d+)", text)
    assert fit, "the users-that-fit line"
    blocks, per_request, users, admitted, offered = (int(fit[i]) for i in (1, 3, 4, 5, 6))
    assert users == blocks // per_request == admitted < offered
    assert "B = 8:" in text and "ms per step" in text


@needs_extra
@pytest.mark.notebook
@pytest.mark.slow
def test_the_beam_notebook_checks_its_numbers(executed: dict[str, Any]) -> None:
    text = _text(executed["10_beam_search.ipynb"])
    head = re.search(r"P = (\d+), ([\d,]+) B per token: reorders copied ([\d,]+) B", text)
    assert head, "the totals line"
    prompt, per_token = int(head[1]), int(head[2].replace(",", ""))
    steps = re.findall(r"step +(\d+): parents (\[[\d, ]+\]) +rows moved (\d+) +reorder +([\d,]+) B",
                       text)
    assert len(steps) >= 2
    for step, parents, moved, reorder in steps:
        rows = ast.literal_eval(parents)
        assert int(moved) == sum(1 for i, p in enumerate(rows) if p != i)
        assert int(reorder.replace(",", "")) == int(moved) * per_token * (prompt + int(step))
    assert sum(int(r.replace(",", "")) for *_, r in steps) == int(head[3].replace(",", ""))
    if importlib.util.find_spec("transformers") is not None:
        assert "same as transformers' generate(num_beams=4)" in text
    else:
        assert "the comparison is skipped" in text


# The speculative notebook's round records and totals, as it prints them.
SPEC_ROUND = re.compile(
    r"^(model|prompt-lookup) k=(\d+) round +(\d+): m=(\d+) a=(\d+) "
    r"target +(\d+) \(\+(\d+) -(\d+)\)(?: draft +(\d+) \(\+(\d+) -(\d+)\))?$", re.MULTILINE)
SPEC_TOTAL = re.compile(
    r"^(model|prompt-lookup) +k=(\d+): α = (\d+)/(\d+) = ([\d.]+) +tokens per target call "
    r"([\d.]+) +formula \(each round's m\) ([\d.]+) +formula \(k\) ([\d.]+) +"
    r"target calls (\d+) for (\d+) tokens$", re.MULTILINE)


def _tokens_per_call(alpha: float, k: int) -> float:
    """(1 − α^(k+1)) / (1 − α), Leviathan et al.'s expected tokens per target call."""
    return k + 1.0 if alpha == 1 else (1 - alpha ** (k + 1)) / (1 - alpha)


@needs_extra
@pytest.mark.notebook
@pytest.mark.slow
def test_the_speculative_notebook_checks_its_numbers(executed: dict[str, Any]) -> None:
    text = _text(executed["11_speculative.ipynb"])
    configs = [(kind, k) for kind in ("model", "prompt-lookup") for k in (1, 2, 4)]
    for kind, k in configs:
        assert re.search(rf"^{kind} +k={k}: 32 tokens identical to plain greedy$", text, re.M)
    rounds: dict[tuple[str, int], list[tuple[int | None, ...]]] = {c: [] for c in configs}
    for found in SPEC_ROUND.finditer(text):
        values = tuple(None if v is None else int(v) for v in found.groups()[2:])
        rounds[(found[1], int(found[2]))].append(values)
    totals = {(t[1], int(t[2])): t for t in SPEC_TOTAL.finditer(text)}
    assert sorted(totals) == sorted(configs)
    for config, records in rounds.items():
        kind, k = config
        index, m, a, rows, appended, cropped, d_rows, d_appended, d_cropped = records[0]
        assert index == m == a == cropped == 0 and rows == appended > 0  # the prefill: P rows
        prompt = rows
        accepted = judged = committed = 0
        for before, now in itertools.pairwise(records):
            index, m, a, rows, appended, cropped, d_rows, d_appended, d_cropped = now
            assert index == before[0] + 1 and m is not None and a is not None and m <= k, now
            assert rows - before[3] == a + 1, (config, now)  # the target grew by a + 1
            room = 32 - (before[3] - prompt + 1) - 1  # drafts that fit the token budget
            if kind == "model":  # k drafts a round, fewer only at the budget's end
                assert m == min(k, room), (config, now)
            else:  # prompt lookup: as many as it found
                assert m <= min(k, room), (config, now)
            assert (appended, cropped) == (1 + m, m - a), (config, now)  # crop: m − a
            if kind == "model":  # the draft model's cache: cropped m − 1 − a (0: all passed)
                assert d_cropped == (0 if a == m else m - 1 - a), (config, now)
                assert d_rows - before[6] == d_appended - d_cropped, (config, now)
            else:
                assert d_rows is None  # prompt lookup has no cache
            accepted += a
            judged += a + (a < m)
            committed += a + 1
        verify = len(records) - 1
        assert rows == prompt + 32 - 1  # every token but the last is in the cache
        assert sum(m > 0 for _, m, *_ in records[1:]) >= (verify - 1 if kind == "model" else 1)
        total = totals[config]
        alpha = accepted / judged
        assert (int(total[3]), int(total[4])) == (accepted, judged)
        assert float(total[5]) == pytest.approx(alpha, abs=5e-4)
        assert float(total[6]) == pytest.approx(committed / verify, abs=5e-4)
        assert float(total[8]) == pytest.approx(_tokens_per_call(alpha, k), abs=5e-4)
        assert (int(total[9]), int(total[10])) == (len(records), 32)  # one call a round
    # A draft model that is right at all beats one target call per token.
    assert float(totals[("model", 4)][6]) > 1.0


@needs_extra
@pytest.mark.notebook
@pytest.mark.slow
def test_every_chart_cell_left_an_image(executed: dict[str, Any]) -> None:
    charts = 0
    for name in (p.name for p in NOTEBOOKS):
        for cell in executed[name].cells:
            if cell.cell_type == "code" and LAB_CELL.match(cell.source):
                charts += 1
                assert _has_image(cell), f"{name}: {cell.source.splitlines()[0]} left no image"
    assert charts >= 16
    compare = executed["01_tokens_fed.ipynb"]
    assert any(_has_image(cell) for cell in compare.cells)


@needs_extra
@pytest.mark.notebook
@pytest.mark.slow
def test_the_notebook_exports_are_written(executed: dict[str, Any]) -> None:
    work: Path = executed["_work"]
    for suffix in ("png", "svg", "pdf", "csv"):
        assert (work / f"tokens_fed.{suffix}").stat().st_size > 0
    assert (work / "tokens_fed.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    from PySide6.QtGui import QImage

    for name in ("cache_bytes", "serving", "beam_search", "speculative", "speculative_k"):
        image = QImage(str(work / f"{name}.png"))
        assert (image.width(), image.height()) == (1920, 1080), name  # the window's 16:9 slide
    for name in ("serving", "beam_search", "speculative"):
        assert (work / f"{name}.csv").read_text(encoding="utf-8").strip(), name
