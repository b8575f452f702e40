"""Folders written atomically (issue 14.7): write beside, then swap; a failure changes nothing."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from kvstudio.engine.model import MiniMindLM
from kvstudio.engine.tokenizer import TextTokenizer
from kvstudio.files import folder_write
from kvstudio.files.checkpoints import load_model_folder, save_model_folder


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def _full_disk_after(monkeypatch: pytest.MonkeyPatch, good_writes: int) -> None:
    """The next writes succeed `good_writes` times, then the disk is full (half a file written)."""
    real = folder_write._write_file
    calls = {"n": 0}

    def write(path: Path, data: bytes) -> None:
        calls["n"] += 1
        if calls["n"] > good_writes:
            path.write_bytes(data[: len(data) // 2])
            raise OSError(errno.ENOSPC, "No space left on device")
        real(path, data)

    monkeypatch.setattr(folder_write, "_write_file", write)


def test_a_new_folder_appears_whole(tmp_path: Path) -> None:
    written = folder_write.write_files(tmp_path / "pack", {"a.txt": b"1", "b.txt": b"2"})
    assert [p.name for p in written] == ["a.txt", "b.txt"]
    assert _snapshot(tmp_path / "pack") == {"a.txt": b"1", "b.txt": b"2"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pack"]  # no staging left
    mask = os.umask(0)
    os.umask(mask)
    assert (tmp_path / "pack").stat().st_mode & 0o777 == 0o777 & ~mask


def test_a_full_disk_midway_keeps_the_earlier_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pack = tmp_path / "pack"
    old = {f"{i}.png": f"old {i}".encode() for i in range(6)}
    folder_write.write_files(pack, old)
    (pack / "mine.txt").write_text("the user's own file")
    _full_disk_after(monkeypatch, 3)
    new = {f"{i}.png": f"new {i}".encode() for i in range(8)}
    with pytest.raises(OSError) as info:
        folder_write.write_files(pack, new)
    assert info.value.errno == errno.ENOSPC
    assert _snapshot(pack) == {**old, "mine.txt": b"the user's own file"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pack"]
    # To a folder that did not exist: nothing is created, not even an empty folder.
    with pytest.raises(OSError):
        folder_write.write_files(tmp_path / "fresh", new)
    assert not (tmp_path / "fresh").exists()


def test_a_link_in_the_folder_is_replaced_not_written_through(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere.txt"
    elsewhere.write_text("keep me")
    pack = tmp_path / "pack"
    pack.mkdir()
    (pack / "a.txt").symlink_to(elsewhere)
    folder_write.write_files(pack, {"a.txt": b"new"})
    assert elsewhere.read_text() == "keep me"
    assert not (pack / "a.txt").is_symlink() and (pack / "a.txt").read_bytes() == b"new"


def test_a_file_in_the_way_and_bad_names(tmp_path: Path) -> None:
    blocker = tmp_path / "pack"
    blocker.write_text("x")
    with pytest.raises(NotADirectoryError):
        folder_write.write_files(blocker, {"a": b"1"})
    with pytest.raises(ValueError, match="plain file name"):
        folder_write.write_files(tmp_path / "p", {"../evil": b"1"})


def test_save_model_folder_on_a_full_disk_keeps_the_earlier_model(
    tiny_model: MiniMindLM, tokenizer: TextTokenizer, tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from kvstudio.files import checkpoints

    folder = save_model_folder(tiny_model, tokenizer, tmp_path / "model")
    before = _snapshot(folder)
    real_save = checkpoints.save_file

    def full_disk(state, path, metadata=None):  # type: ignore[no-untyped-def]
        real_save(state, path, metadata=metadata)
        with open(path, "r+b") as fh:
            fh.truncate(os.path.getsize(path) // 2)
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(checkpoints, "save_file", full_disk)
    with pytest.raises(ValueError, match="No space left"):
        save_model_folder(tiny_model, tokenizer, folder, weights_dtype="float16")
    assert _snapshot(folder) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model"]
    load_model_folder(folder)  # still a whole model


def test_save_model_folder_does_not_write_through_links(
    tiny_model: MiniMindLM, tokenizer: TextTokenizer, tmp_path: Path
) -> None:
    victim = tmp_path / "victim.bin"
    victim.write_bytes(b"precious")
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "model.safetensors").symlink_to(victim)
    save_model_folder(tiny_model, tokenizer, folder)
    assert victim.read_bytes() == b"precious"
    assert not (folder / "model.safetensors").is_symlink()
    load_model_folder(folder)


def test_convert_on_a_full_disk_leaves_no_half_folder(
    tiny_model: MiniMindLM, tokenizer: TextTokenizer, tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from kvstudio.files import convert

    def full_disk(state, path, metadata=None):  # type: ignore[no-untyped-def]
        Path(path).write_bytes(b"half")
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(convert, "save_file", full_disk)
    with pytest.raises(ValueError, match="No space left"):
        convert.export_hf(tiny_model, tokenizer, tmp_path / "hf")
    assert list(tmp_path.iterdir()) == []
