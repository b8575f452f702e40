"""The package stays readable in pieces a newcomer can hold: short modules, small folders.

Issue 31 set the limits: no module of ``kvstudio/`` over 500 lines, no package folder with
more than 15 modules directly in it (a sixteenth means a subpackage is due).
"""

from __future__ import annotations

from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "kvstudio"
MAX_MODULE_LINES = 500
MAX_MODULES_PER_FOLDER = 15


def _modules() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts)


def test_no_module_is_longer_than_500_lines() -> None:
    long = {str(p.relative_to(PACKAGE)): n for p in _modules()
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES}
    assert long == {}, f"split these modules: {long}"


def test_no_folder_holds_more_than_15_modules() -> None:
    folders: dict[Path, int] = {}
    for path in _modules():
        folders[path.parent] = folders.get(path.parent, 0) + 1
    crowded = {str(f.relative_to(PACKAGE.parent)): n for f, n in folders.items()
               if n > MAX_MODULES_PER_FOLDER}
    assert crowded == {}, f"give these folders subpackages: {crowded}"
