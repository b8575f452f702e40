"""A folder write killed by SIGKILL at any step leaves the old folder or the new one whole.

Issue 19.5: killed during the swap, a slide pack held 11 old and 3 new files
with one file only in a hidden backup; killed while writing, a staging folder
with a half file was left for good. Here a real process writes a pack over an
earlier one and is killed before its k-th file-system operation, for every k
(tests/core/folder_write_kill_child.py); each folder must then hold exactly
the old files or exactly the new ones, and the next write must clean up.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from kvstudio.files import folder_write

CHILD = Path(__file__).with_name("folder_write_kill_child.py")
OLD = {
    "cache_bytes.png": "old png " * 8,
    "cache_bytes.csv": "old csv\n1,2\n",
    "numbers.json": '{"old": true}\n',
    "dropped.svg": "a chart only the old pack has",
}
NEW = {
    "cache_bytes.png": "new png " * 8,
    "cache_bytes.csv": "new csv\n3,4\n",
    "numbers.json": '{"new": true}\n',
    "tokens_fed.png": "a chart only the new pack has",
}
NEXT = {"cache_bytes.png": "the third export", "extra.csv": "x\n"}


def _tree(folder: Path) -> dict[str, str]:
    """Every entry under `folder` (relative path → text, "/" for a folder, "-> x" for a link)."""
    tree: dict[str, str] = {}
    for path in sorted(folder.rglob("*")):
        name = path.relative_to(folder).as_posix()
        if path.is_symlink():
            tree[name] = "-> " + os.readlink(path)
        elif path.is_dir():
            tree[name] = "/"
        else:
            tree[name] = path.read_text("utf-8")
    return tree


def _old_pack(work: Path, outside: Path) -> Path:
    """An earlier pack with the lecturer's own things in it: a file, a folder, a link."""
    pack = work / "pack"
    folder_write.write_files(pack, {name: text.encode() for name, text in OLD.items()})
    (pack / "notes.txt").write_text("the lecturer's notes", "utf-8")
    (pack / "mine").mkdir()
    (pack / "mine" / "slide.odp").write_text("an own slide", "utf-8")
    (pack / "elsewhere").symlink_to(outside)
    return pack


def _run_child(tmp_path: Path, swap: str, runs: list[dict[str, object]]) -> list[str]:
    plan = tmp_path / f"plan-{swap}-{len(runs)}.json"
    plan.write_text(json.dumps({"swap": swap, "files": NEW, "runs": runs}), "utf-8")
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    done = subprocess.run([sys.executable, str(CHILD), str(plan)], capture_output=True,
                          text=True, timeout=300, env=env, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout.splitlines()


@pytest.mark.skipif(not hasattr(os, "fork"), reason="the child forks one process per kill")
@pytest.mark.parametrize("swap", ["exchange", "renames"])
def test_a_kill_at_any_step_leaves_the_old_or_the_new_folder_whole(
    tmp_path: Path, swap: str
) -> None:
    if swap == "exchange" and getattr(folder_write, "_EXCHANGE", True) is None:
        pytest.skip("no atomic exchange on this system")
    outside = tmp_path / "outside.txt"
    outside.write_text("not part of the pack", "utf-8")
    # One write with no kill counts the steps (and shows what "new" is).
    first = _old_pack(tmp_path / "count", outside)
    old = _tree(first)
    lines = _run_child(tmp_path, swap, [{"target": str(first), "kill_at": 0}])
    steps = int(re.fullmatch(r"operations (\d+)", lines[0]).group(1))  # type: ignore[union-attr]
    new = _tree(first)
    assert new == {**old, **NEW}
    assert [p.name for p in first.parent.iterdir()] == ["pack"]
    assert steps > 15

    packs = [_old_pack(tmp_path / f"kill-{k}", outside) for k in range(1, steps + 1)]
    lines = _run_child(tmp_path, swap, [{"target": str(pack), "kill_at": k}
                                        for k, pack in enumerate(packs, start=1)])
    assert lines == [f"run {i}: killed" for i in range(steps)]

    seen = {"old": 0, "new": 0, "missing until read": 0}
    states = []
    for k, pack in enumerate(packs, start=1):
        where = f"killed before step {k} of {steps}"
        if swap == "renames" and not pack.exists():
            seen["missing until read"] += 1
            folder_write.recover(pack)  # what the next write or a model folder's load does
        assert pack.is_dir(), where
        state = _tree(pack)
        assert state in (old, new), f"{where}: a mix of the old and the new pack: {state}"
        seen["old" if state == old else "new"] += 1
        states.append(state)
    for k, (pack, state) in enumerate(zip(packs, states, strict=True), start=1):
        where = f"killed before step {k} of {steps}"
        # The next write repairs and removes whatever the kill left beside the folder.
        folder_write.write_files(pack, {name: text.encode() for name, text in NEXT.items()})
        assert _tree(pack) == {**state, **NEXT}, where
        assert [p.name for p in pack.parent.iterdir()] == ["pack"], where
    assert seen["old"] > 0 and seen["new"] > 0, seen
    # Only the two-rename fallback has a moment with no folder (which the next read repairs).
    assert (seen["missing until read"] > 0) == (swap == "renames"), seen
    assert outside.read_text("utf-8") == "not part of the pack"


def test_leftovers_of_the_old_non_atomic_swap_are_repaired(tmp_path: Path) -> None:
    """The probe's state: a file only in a hidden .old backup, a .part with new files beside."""
    pack = tmp_path / "pack"
    pack.mkdir()
    (pack / "numbers.json").write_text("new", "utf-8")
    backup = tmp_path / ".pack.k2j4h5gq.old"
    backup.mkdir()
    (backup / "cache_bytes.png").write_text("old png", "utf-8")
    staging = tmp_path / ".pack.a_b9c0de.part"
    staging.mkdir()
    (staging / "tokens_fed.png").write_text("half", "utf-8")
    other = tmp_path / ".pack-2.zzzzzzzz.part"  # another folder's, left alone
    other.mkdir()
    folder_write.write_files(pack, {"numbers.json": b"newer"})
    assert _tree(pack) == {"cache_bytes.png": "old png", "numbers.json": "newer"}
    assert sorted(p.name for p in tmp_path.iterdir()) == [".pack-2.zzzzzzzz.part", "pack"]


def test_a_missing_folder_is_restored_from_its_backup_on_load(tmp_path: Path) -> None:
    """A two-rename swap killed between the renames: the model folder's load puts it back."""
    from kvstudio.files.checkpoints import load_model_folder

    backup = tmp_path / ".model.abcdefgh.old"
    backup.mkdir()
    (backup / "config.json").write_text("{}", "utf-8")
    with pytest.raises(ValueError, match=r"missing model\.safetensors"):
        load_model_folder(tmp_path / "model")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model"]
    assert (tmp_path / "model" / "config.json").read_text("utf-8") == "{}"


def test_a_link_to_a_folder_stays_a_link(tmp_path: Path) -> None:
    real = tmp_path / "real-pack"
    folder_write.write_files(real, {"a.txt": b"1"})
    link = tmp_path / "pack"
    link.symlink_to(real)
    folder_write.write_files(link, {"a.txt": b"2"})
    assert link.is_symlink() and (real / "a.txt").read_bytes() == b"2"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pack", "real-pack"]
    (tmp_path / "broken").symlink_to(tmp_path / "nowhere")
    with pytest.raises(NotADirectoryError):
        folder_write.write_files(tmp_path / "broken", {"a.txt": b"1"})
    assert not (tmp_path / "nowhere").exists()


def test_a_read_only_folder_is_refused_not_replaced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Swapping whole folders needs only the parent writable; a read-only pack stays as it is."""
    pack = tmp_path / "pack"
    folder_write.write_files(pack, {"a.txt": b"1"})
    real_access = os.access

    def access(path: object, mode: int, **kwargs: object) -> bool:  # as for a non-root user
        if Path(str(path)) == pack and mode & os.W_OK:
            return False
        return real_access(path, mode, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "access", access)
    with pytest.raises(PermissionError):
        folder_write.write_files(pack, {"a.txt": b"2"})
    assert _tree(pack) == {"a.txt": "1"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pack"]
