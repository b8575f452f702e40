"""Writing a folder of files atomically: build the whole new folder beside it, then swap.

Owns `staged_folder`, `write_files` and `recover`, and `atomic_write_bytes` for one file
(a temp file beside it, fsync, `os.replace`). It knows nothing about what
the files hold (slide packs, model folders).

The invariant: **a kill at any moment (even `kill -9`) leaves at the target
path either the folder as it was or the folder as it is meant to be, whole**,
never a mix, never a half-written file. Anything left beside it by a killed
write is recognised by its name (``.<name>.<random>.part`` or ``.old``) and
dealt with by the next write (or `recover`).

How:

1. Every new file is written into a hidden staging folder next to the target
   (same disk) and flushed. A full disk or any other failure stops here; the
   target is untouched and the staging folder is removed.
2. Everything else the target holds (the user's own files, files of an
   earlier export that this one does not write) is hard-linked into the staging
   folder (copied where the disk has no hard links), so the staging folder is
   the complete new folder. Symbolic links are recreated as links, never
   followed, so an export never writes through a link left in the folder.
3. The two folders trade places in one atomic step:
   ``renameat2(RENAME_EXCHANGE)`` on Linux, ``renamex_np(RENAME_SWAP)`` on
   macOS. The old folder, now under the staging name, is removed. A target
   that did not exist is created by one ``rename`` of the staging folder.

Where neither call is available (Windows, or a file system that refuses the
exchange) the swap takes two renames: target → ``.<name>.<random>.old``, then
staging → target. A kill between the two leaves no folder at the target, the
old one whole in the ``.old`` backup: `recover`, which the next write runs
first and `checkpoints.load_model_folder` runs for a missing folder, renames
it back. Only that short window differs; the target is never a mix.

The folder's identity changes with each write (a new directory is swapped in),
so a file manager or a shell sitting in the old folder has to reopen it. A
target that is a symbolic link to a folder stays a link: the folder it names
is the one swapped. Two programs writing the same target at once are not
supported (the second one's first step removes the first one's staging).
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import logging
import os
import re
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

log = logging.getLogger(__name__)

STAGING_SUFFIX = ".part"  # the new folder being built (or, after an exchange, the old one)
BACKUP_SUFFIX = ".old"  # the old folder during a two-rename swap

_AT_FDCWD = -100
_RENAME_EXCHANGE = 2  # Linux renameat2 flag
_RENAME_SWAP = 2  # macOS renamex_np flag
# The call cannot exchange here (old kernel, file system without support): swap by two renames.
_CANNOT_EXCHANGE = {errno.EINVAL, errno.ENOSYS, errno.ENOTSUP, errno.EOPNOTSUPP}


def umask() -> int:
    """The process's umask (read by setting it and putting it back)."""
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _leftover_name(target_name: str) -> re.Pattern[str]:
    """Names `tempfile.mkdtemp` gives this module's staging and backup folders for `target_name`."""
    return re.compile(
        re.escape(f".{target_name}.") + r"[A-Za-z0-9_]+"
        + f"({re.escape(STAGING_SUFFIX)}|{re.escape(BACKUP_SUFFIX)})"
    )


def _sync_dir(folder: Path) -> None:
    """Flush a folder's entries (a rename's durability against a power cut; a no-op on Windows)."""
    with contextlib.suppress(OSError, AttributeError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def recover(target: str | os.PathLike[str]) -> None:
    """Repair what a killed write left beside `target`; a no-op when it left nothing.

    If `target` is missing and a backup of it is beside it (a kill during a
    two-rename swap), the backup is renamed back. A backup beside a present
    target gives back any entry the target lacks (a kill during an older,
    non-atomic version of this module). Then every leftover staging or backup
    folder of `target` is removed. Raises `OSError` if the backup cannot be
    renamed back.
    """
    out = Path(target)
    parent = out.parent
    pattern = _leftover_name(out.name)
    try:
        leftovers = [p for p in parent.iterdir()
                     if pattern.fullmatch(p.name) and p.is_dir() and not p.is_symlink()]
    except OSError:  # no parent folder yet, or not readable: nothing to repair
        return
    backups = sorted((p for p in leftovers if p.name.endswith(BACKUP_SUFFIX)),
                     key=lambda p: p.stat().st_mtime_ns)
    if backups and not out.exists() and not out.is_symlink():
        restored = backups.pop()  # the newest
        os.rename(restored, out)
        _sync_dir(parent)
        leftovers.remove(restored)
        log.warning("%s was missing after an interrupted write; put the earlier copy back", out)
    elif out.is_dir():
        for backup in backups:
            for entry in backup.iterdir():
                dest = out / entry.name
                if not dest.exists() and not dest.is_symlink():
                    os.rename(entry, dest)
                    log.warning("put %s back from an interrupted write", dest)
    for leftover in leftovers:
        shutil.rmtree(leftover, ignore_errors=True)


@contextlib.contextmanager
def staged_folder(target: str | os.PathLike[str]) -> Iterator[Path]:
    """Yield an empty staging folder; on a normal exit its files replace those in `target`.

    Same-named entries of `target` are replaced, the others kept; the swap is
    atomic (see the module docstring). On an exception nothing in `target`
    changes (and `target` is not created) and the exception propagates.
    Leftovers of an earlier killed write are repaired first (`recover`).
    Raises `OSError` (e.g. ENOSPC; EACCES also for a read-only `target`) or
    `NotADirectoryError` if `target` is a file or a broken link.
    """
    out = Path(target)
    if out.is_symlink():
        if not out.is_dir():
            raise NotADirectoryError(20, "a broken link with this name is in the way", str(out))
        out = Path(os.path.realpath(out))  # swap the folder the link names; the link stays
    recover(out)
    if out.exists() and not out.is_dir():
        raise NotADirectoryError(20, "a file with this name is in the way", str(out))
    if out.is_dir() and not os.access(out, os.W_OK):  # a read-only folder is not replaced
        raise PermissionError(errno.EACCES, "Permission denied", str(out))
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=STAGING_SUFFIX,
                                    dir=out.parent))
    try:
        os.chmod(staging, 0o777 & ~umask())  # mkdtemp makes 0700; a new folder is for sharing
        yield staging
        _swap_in(staging, out)
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)


def _swap_in(staging: Path, out: Path) -> None:
    """Make `out` hold `staging`'s entries plus its own other entries, in one atomic step."""
    if not out.exists() and not out.is_symlink():
        os.rename(staging, out)  # a new folder appears whole
        _sync_dir(out.parent)
        return
    _carry_over(out, staging)
    shutil.copymode(out, staging)
    if _exchange(staging, out):
        _sync_dir(out.parent)
        shutil.rmtree(staging, ignore_errors=True)  # the old folder, under the staging name
        return
    backup = staging.with_name(staging.name[: -len(STAGING_SUFFIX)] + BACKUP_SUFFIX)
    os.rename(out, backup)
    try:
        os.rename(staging, out)
    except OSError:
        os.rename(backup, out)
        raise
    _sync_dir(out.parent)
    shutil.rmtree(backup, ignore_errors=True)


def _carry_over(out: Path, staging: Path) -> None:
    """Link every entry of `out` that `staging` does not replace into `staging`."""
    with os.scandir(out) as entries:
        for entry in entries:
            dest = staging / entry.name
            if not dest.exists() and not dest.is_symlink():
                _link_tree(Path(entry.path), dest)


def _link_tree(source: Path, dest: Path) -> None:
    """`dest` as a copy of `source` made of hard links (links recreated, never followed)."""
    if source.is_symlink():
        os.symlink(os.readlink(source), dest)
    elif source.is_dir():
        os.mkdir(dest)
        shutil.copymode(source, dest)
        for child in source.iterdir():
            _link_tree(child, dest / child.name)
    else:
        try:
            os.link(source, dest)
        except OSError:  # no hard links on this disk (FAT, some network shares)
            shutil.copy2(source, dest)


def _exchange_call() -> Callable[[Path, Path], int] | None:
    """A function that swaps two paths atomically (0 or an errno), or None on this system."""
    if not sys.platform.startswith(("linux", "darwin")):
        return None  # Windows and the rest: two renames
    try:
        libc = ctypes.CDLL(None, use_errno=True)
    except (OSError, TypeError):  # no C library to load
        return None
    if sys.platform.startswith("linux") and hasattr(libc, "renameat2"):
        renameat2 = libc.renameat2
        renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p,
                              ctypes.c_uint]
        renameat2.restype = ctypes.c_int

        def linux(a: Path, b: Path) -> int:
            done = renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b),
                             _RENAME_EXCHANGE)
            return 0 if done == 0 else ctypes.get_errno()

        return linux
    if sys.platform == "darwin" and hasattr(libc, "renamex_np"):
        renamex_np = libc.renamex_np
        renamex_np.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_uint]
        renamex_np.restype = ctypes.c_int

        def macos(a: Path, b: Path) -> int:
            done = renamex_np(os.fsencode(a), os.fsencode(b), _RENAME_SWAP)
            return 0 if done == 0 else ctypes.get_errno()

        return macos
    return None


_EXCHANGE: Callable[[Path, Path], int] | None = _exchange_call()


def _exchange(a: Path, b: Path) -> bool:
    """Swap `a` and `b` atomically; False where this system or disk cannot (swap by renames)."""
    if _EXCHANGE is None:
        return False
    err = _EXCHANGE(a, b)
    if err == 0:
        return True
    if err in _CANNOT_EXCHANGE:
        return False
    raise OSError(err, os.strerror(err), str(b))


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


# ---- one file --------------------------------------------------------------------------------
def atomic_write_bytes(path: str | os.PathLike[str], data: bytes) -> Path:
    """Write via a temp file in the same folder, fsync, then `os.replace`.

    The target is complete or untouched. Raises the `OSError` after removing
    the temp file; callers turn it into a message for the user.
    """
    target = Path(path)
    tmp_name: str | None = None
    try:
        fd, tmp_name = tempfile.mkstemp(
            dir=target.parent, prefix=f".{target.name}.", suffix=".part"
        )
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp_name, _file_mode(target))  # mkstemp makes 0600; exports are for sharing
        os.replace(tmp_name, target)
        tmp_name = None
    finally:
        if tmp_name is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp_name)
    return target


def _file_mode(target: Path) -> int:
    """The mode a new file would get (0666 minus the umask), or the replaced file's mode."""
    try:
        return target.stat().st_mode & 0o777
    except OSError:
        return 0o666 & ~umask()
