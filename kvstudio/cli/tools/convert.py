"""The `kvstudio convert` command.

Owns the argument parsing and printing for the Hugging Face side of the CLI.
The work itself lives in the core: ``kvstudio.files.convert`` (write a
transformers folder), ``kvstudio.files.gguf_export`` (write a GGUF file for
llama.cpp, ``--to gguf``), ``kvstudio.engine.backends.hf`` (run one) and
``kvstudio.files.loaded.load_model`` (open one, as every front does). transformers is
imported only when a command needs it.
"""

from __future__ import annotations

import argparse
import logging
from pathlib import Path
from typing import Any

from kvstudio.files.checkpoints import load_any
from kvstudio.files.convert import export_hf, hf_layout
from kvstudio.files.gguf_export import export_gguf
from kvstudio.files.resources import MODELS_DIR

log = logging.getLogger(__name__)


def add_subcommands(subparsers: Any) -> None:
    """Register `convert` on the `kvstudio` command's subparsers."""
    p = subparsers.add_parser(
        "convert",
        help="write one of our models (or a MiniMind .pth) as a transformers folder or GGUF",
        description=(
            "Write a model folder (config.json + model.safetensors + tokenizer.json) or a "
            "MiniMind .pth state dict as a Hugging Face transformers folder: Llama layout, "
            "or Qwen3 when the model has QK-norm. The same weights then run in both engines "
            "(kvstudio compare --model OUT). With --to gguf: one f32 GGUF file in llama.cpp's "
            "llama layout, tokenizer and chat template included, for llama.cpp, LM Studio "
            "and Ollama (needs the gguf package: pip install 'kvstudio[llama]')."
        ),
    )
    p.add_argument(
        "source", type=Path,
        help="our model folder, ko-base / ko-chat / ko-draft, or a MiniMind .pth file",
    )
    p.add_argument("out", type=Path, help="the transformers folder (or .gguf file) to write")
    p.add_argument(
        "--to",
        choices=("hf", "gguf"),
        default="hf",
        help="hf: a transformers folder (default); gguf: one f32 GGUF file for llama.cpp",
    )
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
        help="dtype of the written weights (default float32; a GGUF is always float32)",
    )
    p.add_argument("--overwrite", action="store_true", help="write into a non-empty folder")
    p.set_defaults(func=run_convert)


def run_convert(args: argparse.Namespace) -> int:
    loaded = load_any(_shipped(args.source), tokenizer_folder=args.tokenizer, dtype="float32")
    if args.to == "gguf":
        if args.dtype != "float32":
            raise ValueError("--to gguf writes float32 only; leave out --dtype.")
        path = export_gguf(
            loaded.model, loaded.tokenizer, args.out, name=loaded.name, overwrite=args.overwrite
        )
        size = path.stat().st_size
        print(f"Wrote {loaded.name} as an f32 GGUF (llama layout, {size / 1e6:.1f} MB): {path}")
        print("  run it:  llama.cpp, LM Studio or Ollama; in Python: "
              "kvstudio.engine.backends.llamacpp.LlamaCppModel(path)")
        return 0
    out = export_hf(
        loaded.model, loaded.tokenizer, args.out, dtype=args.dtype, overwrite=args.overwrite
    )
    layout = hf_layout(loaded.config)
    print(f"Wrote {loaded.name} as a {layout} transformers folder: {out}")
    print(f"  run it:  kvstudio compare --model {out} --prompt-tokens 16 --new-tokens 64")
    return 0


def _shipped(source: Path) -> Path:
    """A shipped model's name (ko-base, ko-chat, ko-draft) → its folder; else `source`."""
    folder = MODELS_DIR / str(source)
    if not source.exists() and source.name == str(source) and folder.is_dir():
        return folder
    return source

