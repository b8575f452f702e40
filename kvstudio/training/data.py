"""Read the course's public Korean text and split the chat pairs deterministically.

Owns file formats of the four sources in ``docs/data.md`` (ChatbotData, Question_pair,
paraKQC, KorNLU) and the held-out splits. It returns plain Python strings and never
touches torch. The data folder is always given by the caller (a command-line path):
nothing here is copied into the project.
"""

from __future__ import annotations

import csv
import io
import logging
import random
from dataclasses import dataclass
from pathlib import Path

from kvstudio.engine.small_files import read_text

log = logging.getLogger(__name__)

CHAT_FILE = Path("chatbot_data") / "ChatbotData.csv"
MAX_DATA_FILE_BYTES = 1024 * 1024 * 1024  # the largest source file (KorNLI) is ~100 MB


@dataclass(frozen=True)
class ChatPair:
    """One question/answer pair from ChatbotData (label 0 everyday, 1 breakup, 2 love)."""

    question: str
    answer: str
    label: int


@dataclass(frozen=True)
class ChatSplit:
    """Chat pairs split by *question*: a question's pairs all land in one part."""

    train: list[ChatPair]
    valid: list[ChatPair]  # for the validation (answer) loss
    eval_questions: list[str]  # never seen in SFT or pretraining: the greedy-diversity check


def _require(path: Path) -> Path:
    if not path.exists():
        raise ValueError(
            f"{path} does not exist. Pass --data the folder that holds chatbot_data/, "
            "question_pair/, parakqc/ and kornlu/ (docs/data.md says where to get each)."
        )
    return path


def _open_text(path: Path) -> io.StringIO:
    """The data file as text (size-capped, a regular file; a spreadsheet's BOM dropped)."""
    text = read_text(path, MAX_DATA_FILE_BYTES, "a data file from docs/data.md",
                     encoding="utf-8-sig")
    return io.StringIO(text, newline="")


def _clean(text: str) -> str:
    return " ".join(text.replace("\ufeff", "").split())


def read_chat_pairs(data_dir: str | Path) -> list[ChatPair]:
    """All ChatbotData pairs in file order (columns Q, A, label)."""
    path = _require(Path(data_dir) / CHAT_FILE)
    pairs: list[ChatPair] = []
    with _open_text(path) as f:
        for row in csv.DictReader(f):
            q, a = _clean(row.get("Q") or ""), _clean(row.get("A") or "")
            if q and a:
                pairs.append(ChatPair(q, a, int(row.get("label") or 0)))
    if not pairs:
        raise ValueError(
            f"{path} has no Q,A rows; is it ChatbotData.csv from songys/Chatbot_data "
            "(docs/data.md)?"
        )
    return pairs


def split_chat(
    pairs: list[ChatPair], seed: int = 0, n_eval: int = 50, valid_fraction: float = 0.05
) -> ChatSplit:
    """Hold out whole questions: `n_eval` for the greedy check, a fraction for validation."""
    questions = sorted({p.question for p in pairs})
    random.Random(seed).shuffle(questions)
    eval_q = questions[:n_eval]
    n_valid = max(1, int(len(questions) * valid_fraction))
    valid_q = set(questions[n_eval : n_eval + n_valid])
    held = set(eval_q)
    train = [p for p in pairs if p.question not in held and p.question not in valid_q]
    valid = [p for p in pairs if p.question in valid_q]
    return ChatSplit(train=train, valid=valid, eval_questions=eval_q)


def _read_tsv_columns(path: Path, columns: tuple[str, ...]) -> list[str]:
    out: list[str] = []
    with _open_text(path) as f:
        reader = csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE)
        for row in reader:
            out.extend(_clean(row.get(c) or "") for c in columns)
    return out


def read_other_texts(data_dir: str | Path) -> list[str]:
    """Sentences from Question_pair, paraKQC and KorNLU (not the chat pairs), deduplicated."""
    root = Path(data_dir)
    texts: list[str] = []
    for name in ("kor_pair_train.csv", "kor_Pair_test.csv"):
        path = _require(root / "question_pair" / name)
        with _open_text(path) as f:
            for row in csv.DictReader(f):
                texts += [_clean(row.get("question1") or ""), _clean(row.get("question2") or "")]
    para = _require(root / "parakqc" / "paraKQC_v1.txt")
    for line in _open_text(para).getvalue().splitlines():
        texts.append(_clean(line.split("\t")[-1]))
    kornlu = _require(root / "kornlu")
    for path in sorted(kornlu.glob("*.tsv")):
        texts += _read_tsv_columns(path, ("sentence1", "sentence2"))
    seen: set[str] = set()
    unique = [t for t in texts if t and not (t in seen or seen.add(t))]  # type: ignore[func-returns-value]
    log.info("read %d unique sentences (of %d) outside the chat data", len(unique), len(texts))
    return unique


def pretrain_documents(data_dir: str | Path, split: ChatSplit) -> list[str]:
    """Every text for pretraining: other sources plus the *training* chat pairs (Q then A).

    Held-out chat questions (validation and greedy check) stay out, so the
    chat model's held-out figures are honest.
    """
    held = {p.question for p in split.valid} | set(split.eval_questions)
    docs = read_other_texts(data_dir)
    docs = [d for d in docs if d not in held]
    docs += [f"{p.question}\n{p.answer}" for p in split.train]
    return docs
