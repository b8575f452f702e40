"""The training package on tiny data: tokenizer ids, SFT loss mask, a few resumable steps.

No shipped weights are trained here; everything runs on a handful of sentences
and a model of 64 hidden units, in a second or two.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from safetensors import safe_open

from kvstudio.engine.config import ModelConfig
from kvstudio.engine.model import MiniMindLM
from kvstudio.engine.tokenizer import TextTokenizer
from kvstudio.files.checkpoints import load_model_folder
from kvstudio.training import data
from kvstudio.training.datasets import IGNORE, ChatExamples, PackedStream, encode_chat
from kvstudio.training.export import export_run_weights
from kvstudio.training.tokenizer_train import train_bpe
from kvstudio.training.trainer import TrainSettings, lr_at, train

SENTENCES = [
    "오늘은 날씨가 맑아서 공원에 갔다.",
    "언어 모델은 한 번에 한 토큰씩 만든다.",
    "캐시를 쓰면 같은 계산을 되풀이하지 않는다.",
    "친구와 함께 도서관에서 공부했다.",
] * 5
PAIRS = [
    data.ChatPair("배고파", "맛있는 거 드세요.", 0),
    data.ChatPair("오늘 너무 피곤해", "푹 쉬세요.", 0),
    data.ChatPair("시험 망쳤어", "다음에 더 잘할 거예요.", 0),
]


@pytest.fixture(scope="module")
def small_tok() -> TextTokenizer:
    chat = [
        f"<|im_start|>user\n{p.question}<|im_end|>\n<|im_start|>assistant\n{p.answer}"
        for p in PAIRS
    ]
    return train_bpe(SENTENCES + chat * 3, vocab_size=400)


def tiny(tok: TextTokenizer) -> MiniMindLM:
    cfg = ModelConfig(
        hidden_size=32,
        num_hidden_layers=1,
        num_attention_heads=4,
        num_key_value_heads=2,
        vocab_size=tok.vocab_size,
        max_position_embeddings=256,
    )
    return MiniMindLM(cfg).init_weights(0)


def test_special_tokens_have_minimind_ids(small_tok: TextTokenizer) -> None:
    ids = [
        small_tok.backend.token_to_id(t) for t in ("<|endoftext|>", "<|im_start|>", "<|im_end|>")
    ]
    assert ids == [0, 1, 2]
    text = "캐시를 쓰면 빠르다"
    assert small_tok.decode(small_tok.encode(text)) == text  # byte-level: lossless


def test_sft_loss_only_on_answer_and_im_end(small_tok: TextTokenizer) -> None:
    ids, labels = encode_chat(small_tok, PAIRS[0], max_len=64)
    assert len(ids) == len(labels)
    kept = [t for t in labels if t != IGNORE]
    assert small_tok.decode(kept) == PAIRS[0].answer + "<|im_end|>"
    # The target of position i is the next input token wherever a loss is taken.
    for i, t in enumerate(labels[:-1]):
        if t != IGNORE:
            assert ids[i + 1] == t


def test_split_holds_out_whole_questions() -> None:
    pairs = [data.ChatPair(f"질문 {i % 40}", f"답 {i}", 0) for i in range(120)]
    a = data.split_chat(pairs, seed=3, n_eval=5, valid_fraction=0.1)
    b = data.split_chat(pairs, seed=3, n_eval=5, valid_fraction=0.1)
    assert a == b  # deterministic by seed
    train_q = {p.question for p in a.train}
    assert not train_q & set(a.eval_questions)
    assert not train_q & {p.question for p in a.valid}
    assert len(a.eval_questions) == 5


def test_missing_data_folder_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="does not exist"):
        data.read_chat_pairs(tmp_path)


def test_lr_schedule_warms_up_then_decays() -> None:
    s = TrainSettings(steps=100, lr=1e-3, warmup_steps=10, min_lr_ratio=0.1)
    assert lr_at(0, s) == pytest.approx(1e-4)
    assert lr_at(9, s) == pytest.approx(1e-3)
    assert lr_at(100, s) == pytest.approx(1e-4)
    assert lr_at(50, s) < lr_at(20, s)


def test_train_resume_and_export(small_tok: TextTokenizer, tmp_path: Path) -> None:
    stream = PackedStream(small_tok, SENTENCES, seq_len=16, seed=0)
    chats = ChatExamples(small_tok, PAIRS, max_len=32)
    x, y = chats.batch(2, torch.Generator().manual_seed(0))
    assert x.shape == y.shape
    settings = TrainSettings(
        steps=4,
        batch_size=4,
        lr=1e-2,
        warmup_steps=1,
        eval_every=2,
        save_every=2,
        log_every=2,
        eval_batches=1,
    )
    valid = stream.eval_batches(4, 1)
    report = train(tiny(small_tok), lambda g: stream.batch(4, g), valid, settings, tmp_path)
    assert report["steps"] == 4 and report["tokens_seen"] == 4 * 4 * 16
    assert report["best_valid_loss"] < report["valid_history"][0][1]  # it learned something
    saved = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    assert saved["settings"]["lr"] == 1e-2
    # Resume: a longer run continues from step 4 instead of starting again.
    more = TrainSettings(**{**settings.__dict__, "steps": 6})
    report2 = train(tiny(small_tok), lambda g: stream.batch(4, g), valid, more, tmp_path)
    assert report2["tokens_seen"] == 6 * 4 * 16
    # Export writes the engine's model-folder format (tied head stored once).
    small_tok.save(tmp_path / "tok")
    folder = export_run_weights(tmp_path / "final.pt", tmp_path / "tok", tmp_path / "model")
    loaded = load_model_folder(folder)
    assert loaded.config.hidden_size == 32
    names = safe_open(str(folder / "model.safetensors"), "pt").keys()
    assert "lm_head.weight" not in names and "model.embed_tokens.weight" in names
    (tmp_path / "config.json").unlink()
    (tmp_path / "report.json").unlink()
    with pytest.raises(ValueError, match="does not fit"):  # course config vs tiny weights
        export_run_weights(tmp_path / "final.pt", tmp_path / "tok", tmp_path / "model2")


class _MakesAFile:
    """A pickle payload that would create a file if it were unpickled with code allowed."""

    def __init__(self, target: Path) -> None:
        self.target = target

    def __reduce__(self):  # type: ignore[no-untyped-def]
        return (open, (str(self.target), "w"))


def test_a_hostile_checkpoint_runs_no_code(small_tok: TextTokenizer, tmp_path: Path) -> None:
    """Issue 14.1: resume reads checkpoint.pt with weights_only=True; code is refused."""
    marker = tmp_path / "pwned.txt"
    run = tmp_path / "run"
    run.mkdir()
    torch.save({"model": {}, "step": 0, "x": _MakesAFile(marker)}, run / "checkpoint.pt")
    stream = PackedStream(small_tok, SENTENCES, seq_len=16, seed=0)
    settings = TrainSettings(steps=1, batch_size=2, warmup_steps=1, eval_batches=1)
    with pytest.raises(ValueError, match="holds code"):
        train(tiny(small_tok), lambda g: stream.batch(2, g), stream.eval_batches(2, 1),
              settings, run)
    assert not marker.exists()
    # The trainer's own checkpoint loads with weights_only=True (nothing but tensors and data).
    train(tiny(small_tok), lambda g: stream.batch(2, g), stream.eval_batches(2, 1), settings,
          tmp_path / "good")
    ckpt = torch.load(tmp_path / "good" / "checkpoint.pt", weights_only=True)
    assert ckpt["step"] == 1 and ckpt["settings"]["steps"] == 1
    (run / "checkpoint.pt").write_bytes(b"")
    with pytest.raises(ValueError, match="damaged"):
        train(tiny(small_tok), lambda g: stream.batch(2, g), stream.eval_batches(2, 1),
              settings, run)


def test_optimizer_state_for_other_parameters_is_a_clear_error(
    small_tok: TextTokenizer, tmp_path: Path
) -> None:
    """A checkpoint.pt whose optimizer held separate q, k, v (before they were fused)."""
    stream = PackedStream(small_tok, SENTENCES, seq_len=16, seed=0)
    settings = TrainSettings(steps=1, batch_size=2, warmup_steps=1, eval_batches=1)
    batches = stream.eval_batches(2, 1)
    train(tiny(small_tok), lambda g: stream.batch(2, g), batches, settings, tmp_path)
    ckpt = torch.load(tmp_path / "checkpoint.pt", weights_only=True)
    group = ckpt["optimizer"]["param_groups"][0]
    group["params"] = [*group["params"], max(group["params"]) + 100]  # one parameter more
    torch.save(ckpt, tmp_path / "checkpoint.pt")
    more = TrainSettings(**{**settings.__dict__, "steps": 2})
    with pytest.raises(ValueError, match="--no-resume"):
        train(tiny(small_tok), lambda g: stream.batch(2, g), batches, more, tmp_path)
