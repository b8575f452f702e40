"""The engine and the CLI never import Qt; the import-linter contract holds."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

CHECK = """
import sys
import kvstudio.engine.backends.minimind, kvstudio.files.checkpoints, kvstudio.labs.experiments
import kvstudio.engine.formulas, kvstudio.engine.sampling, kvstudio.engine.generate
import kvstudio.cli.main, kvstudio.cli.bench
bad = sorted(m for m in sys.modules if m.split('.')[0] in ('PySide6', 'pyqtgraph', 'shiboken6')
             or m.startswith('kvstudio.ui'))
print(','.join(bad))
"""


def test_core_and_cli_do_not_import_qt() -> None:
    out = subprocess.run(
        [sys.executable, "-c", CHECK], capture_output=True, text=True, cwd=ROOT, check=True
    )
    assert out.stdout.strip() == "", f"Qt modules imported: {out.stdout}"


def test_import_linter_contract() -> None:
    exe = shutil.which("lint-imports") or str(Path(sys.executable).parent / "lint-imports")
    if not Path(exe).exists():
        pytest.skip("import-linter is not installed (pip install -e '.[test]')")
    out = subprocess.run([exe], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stdout + out.stderr
