"""Rewrite the figures in README.md and docs/*.md from the code that prints them.

Every figure the code prints (the quantized table's bytes and errors, the
projector's bytes, the paged blocks, tokens fed, distinct answers …) sits in
the Markdown between markers

    <!-- figures:NAME -->…<!-- /figures -->

and this script replaces what lies between them with what `FIGURES[NAME]`
prints now: a fenced block of command output (the command on its first
line), or a few inline words. Timings are never among them (they change from
run to run); everything here is a count, a byte size or a seeded result on
the shipped models, so two runs print the same. One exception is allowed for:
a float such as the quantized table's largest logit error can differ in its
last printed digit between CPUs (SIMD width changes the order of a sum), so a
decimal number counts as unchanged within one unit of its last digit or 1 %
(`same_figure`); counts and bytes must match exactly.

    python scripts/readme_figures.py          # rewrite the marked blocks
    python scripts/readme_figures.py --check  # exit 1 and name the blocks that drifted

`tests/core/test_readme_figures.py` runs the check, so a figure that no longer
equals the code's output fails the tests.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import re
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kvstudio.engine.backends.minimind import LanguageModel
    from kvstudio.engine.tokenizer import TextTokenizer

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as a script from anywhere
    sys.path.insert(0, str(ROOT))

MARKER = re.compile(r"<!-- figures:([\w-]+) -->(.*?)<!-- /figures -->", re.DOTALL)
DECIMAL = re.compile(r"(?<![\d.,])\d+\.\d+(?![\d.])")  # 0.00256, 7.11 (not 1,234 or 3)


def same_figure(old: str, new: str) -> bool:
    """True when `new` prints what `old` does, decimals within one unit of their last digit
    (or 1 %): the same model on another CPU can round a float's last digit the other way."""
    if old == new:
        return True
    if DECIMAL.sub("#", old) != DECIMAL.sub("#", new):
        return False  # different words, counts or bytes
    for a, b in zip(DECIMAL.findall(old), DECIMAL.findall(new), strict=True):
        unit = 10.0 ** -len(a.split(".")[1])
        if abs(float(a) - float(b)) > max(unit * 1.01, 0.01 * abs(float(a))):
            return False
    return True


def _printed(print_it: Callable[[], object]) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        print_it()
    return out.getvalue()


def _block(command: str, output: str) -> str:
    lines = [line.rstrip() for line in output.strip("\n").splitlines()]
    return "\n```\n$ " + command + "\n" + "\n".join(lines) + "\n```\n"


def _cli(command: str, keep: Callable[[str], bool] = lambda _line: True) -> str:
    """`kvstudio COMMAND` as printed (lines filtered by `keep`), as a fenced block."""
    from kvstudio.cli.main import main

    argv = command.split()
    output = _printed(lambda: main(argv))
    return _block("kvstudio " + command, "\n".join(x for x in output.splitlines() if keep(x)))


def _course_model(name: str) -> tuple[LanguageModel, TextTokenizer]:
    import torch

    from kvstudio.files.loaded import load_model

    torch.set_num_threads(1)
    loaded = load_model(name, dtype="float32")
    return loaded.backend, loaded.tokenizer


def quantized() -> str:
    """The quantized table of `kvstudio compare --cache int8` (no timings in it)."""
    from kvstudio.cli.tools.project import print_quantized
    from kvstudio.labs.cache.quantized import QuantLabResult, quantized_cache
    from kvstudio.labs.common import finish, lab_prompt_ids
    from kvstudio.labs.course import COURSE

    backend, tokenizer = _course_model(COURSE.cache_model)
    prompt = lab_prompt_ids(tokenizer, COURSE.prompt_tokens)
    result = finish(
        quantized_cache(backend, tokenizer, prompt, new_tokens=COURSE.new_tokens,
                        kinds=("fp16", "int8", "int4")),
        QuantLabResult,
    )
    return _block("kvstudio compare --cache int8   # the table it adds",
                  _printed(lambda: print_quantized(result)))


def paged() -> str:
    """The paged section of `kvstudio compare --cache paged` (counts and bytes only)."""
    from kvstudio.cli.common import DEFAULT_QUESTION
    from kvstudio.cli.tools.project import print_paged
    from kvstudio.labs.cache.paged import PagedLabResult, paged_memory
    from kvstudio.labs.common import finish, lab_prompt_ids
    from kvstudio.labs.course import COURSE

    backend, tokenizer = _course_model(COURSE.model_for_cache("paged"))
    result = finish(
        paged_memory(backend, tokenizer, tokenizer.chat_ids(DEFAULT_QUESTION),
                     greedy_prompt=lab_prompt_ids(tokenizer, COURSE.prompt_tokens),
                     greedy_tokens=COURSE.new_tokens),
        PagedLabResult,
    )
    return _block("kvstudio compare --cache paged   # the section it adds",
                  _printed(lambda: print_paged(result)))


def project_llama() -> str:
    return _cli("project --preset llama-3.1-8b --context 32768 --batch 8")


def project_ko_base() -> str:
    return _cli("project --config kvstudio/resources/models/ko-base --context 100 --batch 1")


def info() -> str:
    return _cli("info")


def tokens_fed() -> str:
    """Inline: the course's tokens fed, cached vs recompute, from the formulas."""
    from kvstudio.engine import formulas
    from kvstudio.labs.course import COURSE

    p, n = COURSE.prompt_tokens, COURSE.new_tokens
    cached = formulas.tokens_fed("cached", p, n)
    recompute = formulas.tokens_fed("recompute", p, n)
    return f"{cached:,} vs {recompute:,} tokens fed"


def sample_distinct() -> str:
    """Inline: distinct answers of the course's samples per temperature, on the chat model."""
    from kvstudio.labs.common import finish
    from kvstudio.labs.course import COURSE
    from kvstudio.labs.sampling.sample import SamplingResult, repeated_sampling

    backend, tokenizer = _course_model(COURSE.chat_model)
    result = finish(
        repeated_sampling(backend, tokenizer, tokenizer.chat_ids(COURSE.question),
                          COURSE.temperatures, COURSE.samples, COURSE.answer_tokens),
        SamplingResult,
    )
    counts = [f"{t.distinct}" for t in result.temperatures]
    temps = ", ".join(f"{t:g}" for t in COURSE.temperatures)
    return (f"{', '.join(counts[:-1])} and {counts[-1]} distinct answers of {COURSE.samples} "
            f"at T = {temps}")


FIGURES: dict[str, Callable[[], str]] = {
    "quantized": quantized,
    "paged": paged,
    "project-llama": project_llama,
    "project-ko-base": project_ko_base,
    "info": info,
    "tokens-fed": tokens_fed,
    "sample-distinct": sample_distinct,
}


def pages(root: Path = ROOT) -> list[Path]:
    """The Markdown the figures live in: README.md and docs/*.md."""
    return [root / "README.md", *sorted((root / "docs").glob("*.md"))]


def rewrite(text: str, render: Callable[[str], str]) -> str:
    """`text` with every marked block's content replaced by `render(name)`."""

    def replace(match: re.Match[str]) -> str:
        name = match.group(1)
        return f"<!-- figures:{name} -->{render(name)}<!-- /figures -->"

    return MARKER.sub(replace, text)


def _blocks(text: str) -> dict[str, str]:
    return {m.group(1): m.group(2) for m in MARKER.finditer(text)}


def _kept(old_blocks: dict[str, str], name: str, render: Callable[[str], str]) -> str:
    """`render(name)`, or the block's old text when that equals it by `same_figure`."""
    new = render(name)
    old = old_blocks.get(name)
    return old if old is not None and same_figure(old, new) else new


def run(paths: Iterable[Path], check: bool) -> list[str]:
    """Rewrite (or, with `check`, only compare) the marked blocks; the blocks that drifted."""
    cache: dict[str, str] = {}

    def render(name: str) -> str:
        if name not in FIGURES:
            raise SystemExit(f"unknown figure {name!r}; known: {', '.join(FIGURES)}")
        if name not in cache:
            cache[name] = FIGURES[name]()
        return cache[name]

    drifted = []
    for path in paths:
        old = path.read_text(encoding="utf-8")
        # A block within `same_figure`'s tolerance keeps its text, so the page does not churn.
        old_blocks = _blocks(old)
        new = rewrite(old, lambda name: _kept(old_blocks, name, render))  # noqa: B023
        if new == old:
            continue
        for a, b in zip(MARKER.finditer(old), MARKER.finditer(new), strict=True):
            if a.group(0) != b.group(0):
                drifted.append(f"{path.relative_to(ROOT)}: {a.group(1)}")
        if not check:
            path.write_text(new, encoding="utf-8")
    return drifted


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="only compare; exit 1 on drift")
    args = parser.parse_args(argv)
    drifted = run(pages(), args.check)
    for line in drifted:
        print(("drifted: " if args.check else "rewrote: ") + line)
    return 1 if args.check and drifted else 0


if __name__ == "__main__":
    sys.exit(main())
