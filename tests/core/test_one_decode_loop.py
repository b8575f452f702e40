"""One decode loop (issue #31): only ``engine/decode.py`` feeds a language model.

An AST scan of kvstudio/ for calls of the model's forward: the protocol's verbs
(``forward_last``, ``forward_tail``, ``forward_packed``), a call with the model's
keywords (``logits_to_keep=``, ``probe=``) and a call of an object named ``model``
or ``target`` with arguments (``self.model(ids, cache)``). Allowed outside the loop: the model
and its backends (they *are* the forward), the packed serving runner, the
benchmark's deliberately bare reference loop and the trainer's training forward.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "kvstudio"

FORWARD_VERBS = {"forward_last", "forward_tail", "forward_packed"}
MODEL_KEYWORDS = {"logits_to_keep", "probe"}
MODEL_NAMES = {"model", "target"}

ALLOWED = (
    "engine/decode.py",  # the one loop
    "engine/model.py",  # the model runs its own blocks
    "engine/backends/",  # the protocol's implementations call their model
    "engine/serving/",  # the packed serving runner (its own packed forward)
    "cli/tools/bench.py",  # the bare loop a benchmark compares the engine against
    "training/trainer.py",  # training's forward over whole batches, not decoding
)


def forward_calls(source: str) -> list[str]:
    """The calls in `source` that feed a model: 'line: call' for each."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = (
            func.attr if isinstance(func, ast.Attribute)
            else func.id if isinstance(func, ast.Name) else ""
        )
        keywords = {k.arg for k in node.keywords}
        fed = bool(node.args or node.keywords)  # Qt's `table.model()` feeds nothing
        if name in FORWARD_VERBS or (name in MODEL_NAMES and fed) or keywords & MODEL_KEYWORDS:
            found.append(f"{node.lineno}: {ast.unparse(node)[:80]}")
    return found


def test_the_scan_finds_a_planted_forward() -> None:
    planted = (
        "def step(self, ids, cache):\n"
        "    a = self.model(ids, cache, logits_to_keep=1)\n"
        "    b = backend.forward_last(ids, cache, None)\n"
        "    c = net(ids, probe=print)\n"
        "    d = self.target(ids)\n"
    )
    assert len(forward_calls(planted)) == 4


def test_only_the_decode_loop_feeds_the_model() -> None:
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE).as_posix()
        if relative.startswith(ALLOWED):
            continue
        offenders += [f"kvstudio/{relative}:{call}" for call in forward_calls(path.read_text())]
    assert not offenders, (
        "Feed the model through kvstudio/engine/decode.py (run, feed, feed_tail), not here:\n"
        + "\n".join(offenders)
    )


def test_the_loop_module_stays_small() -> None:
    lines = (PACKAGE / "engine" / "decode.py").read_text().count("\n")
    assert lines <= 150, f"decode.py has {lines} lines; the one loop should read top to bottom"
