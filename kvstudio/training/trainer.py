"""One small training loop shared by pretraining and SFT.

Owns the optimisation recipe (AdamW, linear warm-up then cosine decay, gradient
clipping), the progress line (loss, lr, tokens/s), periodic validation, resumable
checkpoints in a run folder, and the final ``report.json``. What a batch is comes
from the caller (``datasets.py``); what the model is comes from ``kvstudio.engine``.
"""

from __future__ import annotations

import json
import logging
import math
import pickle
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F

from kvstudio.engine.model import MiniMindLM
from kvstudio.training.datasets import IGNORE, Batch

log = logging.getLogger(__name__)


@dataclass
class TrainSettings:
    """Everything that decides a run; written into the checkpoint and the report."""

    steps: int = 1000  # optimiser steps
    batch_size: int = 32  # sequences per step
    lr: float = 3e-3  # peak learning rate
    min_lr_ratio: float = 0.1  # cosine decays to lr · min_lr_ratio
    warmup_steps: int = 100
    weight_decay: float = 0.1  # on matrices only, not on norms
    grad_clip: float = 1.0
    seed: int = 0
    threads: int = 1  # torch threads (the other core belongs to the people around you)
    eval_every: int = 200  # steps between validation losses
    eval_batches: int = 20
    save_every: int = 200  # steps between checkpoints
    log_every: int = 20
    bf16: bool = False  # CPU autocast; only if it measurably helps
    extra: dict[str, Any] = field(default_factory=dict)  # recipe details for the report


def lr_at(step: int, s: TrainSettings) -> float:
    """Linear warm-up to s.lr, then cosine down to s.lr · min_lr_ratio at the last step."""
    if step < s.warmup_steps:
        return s.lr * (step + 1) / s.warmup_steps
    progress = (step - s.warmup_steps) / max(1, s.steps - s.warmup_steps)
    cosine = 0.5 * (1 + math.cos(math.pi * min(progress, 1.0)))
    return s.lr * (s.min_lr_ratio + (1 - s.min_lr_ratio) * cosine)


def loss_of(
    model: MiniMindLM, x: torch.Tensor, y: torch.Tensor, bf16: bool = False
) -> torch.Tensor:
    """Mean next-token cross-entropy over targets that are not IGNORE."""
    with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
        logits = model(x)  # (B, T, V)
    return F.cross_entropy(logits.float().flatten(0, 1), y.flatten(), ignore_index=IGNORE)


@torch.no_grad()
def evaluate_loss(model: MiniMindLM, batches: Sequence[Batch], bf16: bool = False) -> float:
    """Token-weighted mean loss over fixed batches."""
    model.eval()
    total, count = 0.0, 0
    for x, y in batches:
        n = int((y != IGNORE).sum())
        total += float(loss_of(model, x, y, bf16)) * n
        count += n
    model.train()
    return total / max(count, 1)


def make_optimizer(model: MiniMindLM, s: TrainSettings) -> torch.optim.AdamW:
    decay = [p for n, p in model.named_parameters() if p.ndim >= 2]
    no_decay = [p for n, p in model.named_parameters() if p.ndim < 2]
    groups = [
        {"params": decay, "weight_decay": s.weight_decay},
        {"params": no_decay, "weight_decay": 0.0},
    ]
    return torch.optim.AdamW(groups, lr=s.lr, betas=(0.9, 0.95), eps=1e-8)


CHECKPOINT_KEYS = ("model", "optimizer", "generator", "history", "step")


def read_checkpoint(path: Path) -> dict[str, Any]:
    """A trainer checkpoint, read with ``weights_only=True``: tensors and plain data only.

    Nothing in a checkpoint can run code: a pickle that names anything else
    (a class, a function) is refused with a `ValueError` saying so, and so is
    a file that is damaged or lacks what resuming needs.
    """
    try:
        ckpt: Any = torch.load(path, map_location="cpu", weights_only=True)
    except pickle.UnpicklingError as exc:
        raise ValueError(
            f"{path} was refused: it holds code or objects other than tensors and plain "
            "data, and nothing is run from a file. Delete it (or train with --no-resume) "
            "if you did not make it."
        ) from exc
    except (EOFError, RuntimeError, OSError, ValueError, IndexError) as exc:
        raise ValueError(
            f"Cannot read {path}: the checkpoint is damaged ({type(exc).__name__}). "
            "Delete it or train with --no-resume to start over."
        ) from exc
    if not isinstance(ckpt, dict) or any(k not in ckpt for k in CHECKPOINT_KEYS):
        raise ValueError(
            f"{path} is not a KV Studio trainer checkpoint (it lacks model, optimizer, "
            "generator, history or step). Delete it or train with --no-resume."
        )
    return ckpt


def train(
    model: MiniMindLM,
    next_batch: Callable[[torch.Generator], Batch],
    valid: Sequence[Batch],
    settings: TrainSettings,
    run_dir: str | Path,
    resume: bool = True,
) -> dict[str, Any]:
    """Train `model` in place; checkpoints and report.json go to `run_dir`.

    With `resume`, a ``checkpoint.pt`` in `run_dir` restores model, optimiser,
    batch generator and history, and training continues from its step. The
    checkpoint holds only tensors and plain data, so it is read with
    ``weights_only=True`` (see `read_checkpoint`). The
    best validation weights are kept in ``best.pt``.
    """
    s = settings
    run = Path(run_dir)
    run.mkdir(parents=True, exist_ok=True)
    model.config.save(run / "config.json")  # what export needs to rebuild the model
    torch.set_num_threads(s.threads)
    torch.manual_seed(s.seed)
    gen = torch.Generator().manual_seed(s.seed)
    opt = make_optimizer(model, s)
    history: dict[str, Any] = {"train": [], "valid": [], "tokens_seen": 0, "seconds": 0.0}
    step = 0
    ckpt_path = run / "checkpoint.pt"
    if resume and ckpt_path.exists():
        ckpt = read_checkpoint(ckpt_path)
        model.load_state_dict(ckpt["model"])
        try:
            opt.load_state_dict(ckpt["optimizer"])
        except ValueError as exc:  # e.g. written before q|k|v became one parameter
            raise ValueError(
                f"{ckpt_path} holds optimizer state for other parameters than this model's "
                f"({exc}). Train with --no-resume to start over."
            ) from exc
        gen.set_state(ckpt["generator"])
        history, step = ckpt["history"], int(ckpt["step"])
        log.info("resumed from %s at step %d", ckpt_path, step)
    best = min((v for _, v in history["valid"]), default=math.inf)

    def save_checkpoint() -> None:
        tmp = run / "checkpoint.pt.tmp"
        torch.save(
            {
                "model": model.state_dict(),
                "optimizer": opt.state_dict(),
                "generator": gen.get_state(),
                "history": history,
                "step": step,
                # JSON-plain, so the file loads with weights_only=True
                "settings": json.loads(json.dumps(asdict(s), default=str)),
                "config": model.config.to_dict(),
            },
            tmp,
        )
        tmp.replace(ckpt_path)  # atomic: a kill mid-save never leaves half a checkpoint

    def validate() -> None:
        nonlocal best
        v = evaluate_loss(model, valid, s.bf16)
        history["valid"].append((step, v))
        note = ""
        if v < best:
            best = v
            torch.save(model.state_dict(), run / "best.pt")
            note = " (best)"
        log.info("step %d  validation loss %.4f%s", step, v, note)

    model.train()
    t0 = time.perf_counter() - history["seconds"]
    window_tokens, window_t, window_loss, window_n = 0, time.perf_counter(), 0.0, 0
    if step == 0:
        validate()
    while step < s.steps:
        lr = lr_at(step, s)
        for group in opt.param_groups:
            group["lr"] = lr
        x, y = next_batch(gen)  # (B, T), (B, T)
        loss = loss_of(model, x, y, s.bf16)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), s.grad_clip)
        opt.step()
        step += 1
        history["tokens_seen"] += x.numel()
        window_tokens += x.numel()
        window_loss += float(loss.detach())
        window_n += 1
        if step % s.log_every == 0 or step == s.steps:
            now = time.perf_counter()
            tps = window_tokens / max(now - window_t, 1e-9)
            elapsed = now - t0
            eta = elapsed / step * (s.steps - step) if step else 0.0
            mean = window_loss / window_n
            history["train"].append((step, mean))
            log.info("step %d/%d  loss %.4f  lr %.2e  %.0f tok/s  elapsed %.0fs  eta %.0fs",
                     step, s.steps, mean, lr, tps, elapsed, eta)
            window_tokens, window_t, window_loss, window_n = 0, now, 0.0, 0
        if step % s.eval_every == 0 or step == s.steps:
            validate()
        history["seconds"] = time.perf_counter() - t0
        if step % s.save_every == 0 or step == s.steps:
            save_checkpoint()
    torch.save(model.state_dict(), run / "final.pt")
    report = {
        "settings": asdict(s),
        "config": model.config.to_dict(),
        "parameters": model.num_parameters,
        "steps": step,
        "seconds": round(history["seconds"], 1),
        "tokens_seen": history["tokens_seen"],
        "tokens_per_second": round(history["tokens_seen"] / max(history["seconds"], 1e-9), 1),
        "final_train_loss": history["train"][-1][1] if history["train"] else None,
        "final_valid_loss": history["valid"][-1][1] if history["valid"] else None,
        "best_valid_loss": best,
        "valid_history": history["valid"],
        "train_history": history["train"],
    }
    (run / "report.json").write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    log.info("done: %d steps, %d tokens in %.0fs; report in %s",
             step, history["tokens_seen"], history["seconds"], run / "report.json")
    return report
