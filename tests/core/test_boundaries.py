"""The engine and the CLI never import Qt; the import-linter contracts hold, and the layers
contract fails on a planted back-import."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

CHECK = """
import sys
import kvstudio.engine.backends.minimind, kvstudio.files.checkpoints, kvstudio.labs.common
import kvstudio.engine.formulas, kvstudio.engine.sampling, kvstudio.engine.generate
import kvstudio.cli.main, kvstudio.cli.tools.bench
bad = sorted(m for m in sys.modules if m.split('.')[0] in ('PySide6', 'pyqtgraph', 'shiboken6')
             or m.startswith('kvstudio.ui'))
print(','.join(bad))
"""


def test_core_and_cli_do_not_import_qt() -> None:
    out = subprocess.run(
        [sys.executable, "-c", CHECK], capture_output=True, text=True, cwd=ROOT, check=True
    )
    assert out.stdout.strip() == "", f"Qt modules imported: {out.stdout}"


def test_import_linter_contracts_hold_on_the_real_tree() -> None:
    exe = _lint_imports()
    out = subprocess.run(
        [exe, "--no-cache"], capture_output=True, text=True, cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert out.returncode == 0, out.stdout + out.stderr


# One back-import per rule of the layers contract, planted in a copy of the package.
PLANTED = {
    "kvstudio/engine/formulas.py": "kvstudio.labs.common",  # engine reaching up to labs
    "kvstudio/files/folder_write.py": "kvstudio.cli.args",  # files reaching up to the CLI
    "kvstudio/labs/scale.py": "kvstudio.training.data",  # a sibling importing a sibling
    "kvstudio/ui/app/names.py": "kvstudio.notebook.progress",  # the window reaching up
    "kvstudio/ui/app/korean.py": "kvstudio.cli.args",  # one front importing the other
}


def _lint_imports() -> str:
    exe = shutil.which("lint-imports") or str(Path(sys.executable).parent / "lint-imports")
    if not Path(exe).exists():
        pytest.skip("import-linter is not installed (pip install -e '.[test]')")
    return exe


def test_the_layers_contract_fails_on_a_planted_back_import(tmp_path: Path) -> None:
    exe = _lint_imports()
    shutil.copytree(ROOT / "kvstudio", tmp_path / "kvstudio",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    for path, target in PLANTED.items():
        with (tmp_path / path).open("a", encoding="utf-8") as f:
            f.write(f"\nimport {target}  # planted back-import\n")
    out = subprocess.run(
        [exe, "--config", str(tmp_path / "pyproject.toml"), "--no-cache"],
        capture_output=True, text=True, cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(tmp_path)},  # the copy, not the installed package
    )
    report = out.stdout + out.stderr
    assert out.returncode != 0, report
    assert "Layers: notebook > ui | cli > labs | training > files > engine BROKEN" in report
    for path, target in PLANTED.items():
        importer = path.removesuffix(".py").replace("/", ".")
        assert f"{importer} -> {target}" in report, report
