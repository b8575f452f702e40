"""Writing a folder of files atomically: write beside it, then swap the files in.

Owns `staged_folder` and `write_files`. Everything is first written into a
hidden staging folder next to the target (same disk), so a full disk or any
other failure stops there and the target is untouched: no half-written file,
no empty new folder, nothing of an earlier export removed. Only when every
file is complete are they moved in by `os.rename`, which needs no free space;
a file being replaced is moved aside first and put back if the swap fails.
A rename replaces a symbolic link itself, never the file it points to, so an
export never writes through a link left in the folder. Other files already in
the target (the user's own) are left alone.

It knows nothing about what the files hold (slide packs, model folders).
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path

log = logging.getLogger(__name__)


def _new_folder_mode() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return 0o777 & ~mask


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        path.unlink()


@contextlib.contextmanager
def staged_folder(target: str | os.PathLike[str]) -> Iterator[Path]:
    """Yield an empty staging folder; on a normal exit its files replace those in `target`.

    On an exception nothing in `target` changes (and `target` is not created)
    and the exception propagates. Raises `OSError` (e.g. ENOSPC, EACCES) or
    `NotADirectoryError` if `target` is a file.
    """
    out = Path(target)
    if out.exists() and not out.is_dir():
        raise NotADirectoryError(20, "a file with this name is in the way", str(out))
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".part", dir=out.parent))
    try:
        os.chmod(staging, _new_folder_mode())  # mkdtemp makes 0700; a new folder is for sharing
        yield staging
        _swap_in(staging, out)
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)


def _swap_in(staging: Path, out: Path) -> None:
    """Move every entry of `staging` into `out`, replacing same-named entries, all or none."""
    if not out.exists() and not out.is_symlink():
        os.rename(staging, out)  # a new folder appears whole
        return
    backup = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".old", dir=out.parent))
    moved_aside: list[str] = []
    placed: list[str] = []
    try:
        for entry in sorted(staging.iterdir()):
            dest = out / entry.name
            if dest.exists() or dest.is_symlink():
                os.rename(dest, backup / entry.name)
                moved_aside.append(entry.name)
            os.rename(entry, dest)
            placed.append(entry.name)
    except OSError:
        for name in placed:
            with contextlib.suppress(OSError):
                _remove(out / name)
        restored = True
        for name in moved_aside:
            try:
                os.rename(backup / name, out / name)
            except OSError:
                restored = False
                log.error("could not put %s back; the earlier copy is in %s", name, backup)
        if restored:
            shutil.rmtree(backup, ignore_errors=True)
        raise
    shutil.rmtree(backup, ignore_errors=True)


def _write_file(path: Path, data: bytes) -> None:
    """One file in the staging folder, flushed to disk (a seam for full-disk tests)."""
    with open(path, "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())


def write_files(folder: str | os.PathLike[str], files: Mapping[str, bytes]) -> list[Path]:
    """Write `files` (name → bytes) into `folder` atomically; the paths written, in order."""
    out = Path(folder)
    for name in files:
        if Path(name).name != name or name in ("", ".", ".."):
            raise ValueError(f"{name!r} is not a plain file name.")
    with staged_folder(out) as staging:
        for name, data in files.items():
            _write_file(staging / name, data)
    return [out / name for name in files]
