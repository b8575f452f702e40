"""The `kvstudio convert` command, and the hook `kvstudio.cli.common` uses to open
transformers folders.

Owns the argument parsing and printing for the Hugging Face side of the CLI.
The work itself lives in the core: ``kvstudio.files.convert`` (write a
transformers folder) and ``kvstudio.engine.backends.hf`` (run one). transformers is
imported only when a command needs it.
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path
from typing import Any

from kvstudio.engine.backends.hf import is_hf_folder, load_hf_backend
from kvstudio.engine.tokenizer import TextTokenizer
from kvstudio.files.checkpoints import load_any
from kvstudio.files.convert import export_hf, hf_layout

log = logging.getLogger(__name__)


def add_subcommands(subparsers: Any) -> None:
    """Register `convert` on the `kvstudio` command's subparsers."""
    p = subparsers.add_parser(
        "convert",
        help="write one of our models (or a MiniMind .pth) as a transformers folder",
        description=(
            "Write a model folder (config.json + model.safetensors + tokenizer.json) or a "
            "MiniMind .pth state dict as a Hugging Face transformers folder: Llama layout, "
            "or Qwen3 when the model has QK-norm. The same weights then run in both engines "
            "(kvstudio compare --model OUT)."
        ),
    )
    p.add_argument("source", type=Path, help="our model folder or a MiniMind .pth file")
    p.add_argument("out", type=Path, help="the transformers folder to write")
    p.add_argument(
        "--tokenizer",
        type=Path,
        default=None,
        help="folder with tokenizer.json for a .pth file (default: the .pth's folder)",
    )
    p.add_argument(
        "--dtype",
        choices=("float32", "float16", "bfloat16"),
        default="float32",
        help="dtype of the written weights (default float32)",
    )
    p.add_argument("--overwrite", action="store_true", help="write into a non-empty folder")
    p.set_defaults(func=run_convert)


def run_convert(args: argparse.Namespace) -> int:
    loaded = load_any(args.source, tokenizer_folder=args.tokenizer, dtype="float32")
    out = export_hf(
        loaded.model, loaded.tokenizer, args.out, dtype=args.dtype, overwrite=args.overwrite
    )
    layout = hf_layout(loaded.config)
    print(f"Wrote {loaded.label} as a {layout} transformers folder: {out}")
    print(f"  run it:  kvstudio compare --model {out} --prompt-tokens 16 --new-tokens 64")
    return 0


def open_hf_folder(path: Path, dtype: str, device: str) -> tuple[Any, TextTokenizer, str]:
    """(backend, tokenizer, description) for a transformers folder, for `common.load_backend`."""
    backend, tokenizer = load_hf_backend(path, dtype=dtype, device=device)
    import transformers  # already imported by load_hf_backend; only for the version

    description = (
        f"{backend.name} (transformers {transformers.__version__}, "
        f"{type(backend.model).__name__}): {backend.num_layers} layers, "
        f"{backend.config.num_attention_heads} heads / {backend.num_kv_heads} KV heads × "
        f"{backend.head_dim}, vocab {backend.vocab_size}, {backend.dtype}, {backend.device}"
    )
    return backend, tokenizer, description


def looks_like_hf_folder(path: Path | None) -> bool:
    return path is not None and path.is_dir() and is_hf_folder(path)


def main(argv: list[str] | None = None) -> int:
    """`python -m kvstudio.cli.tools.convert convert …` until the main command registers it."""
    parser = argparse.ArgumentParser(prog="kvstudio")
    add_subcommands(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
