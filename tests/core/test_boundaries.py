"""The engine and the CLI never import Qt; the import-linter contracts hold, and the layers
contract fails on a planted back-import."""

from __future__ import annotations

import contextlib
import importlib.util
import io
import shutil
import subprocess
import sys
from collections.abc import Iterator
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
    passed, report = _lint_imports(ROOT)
    assert passed, report


# One back-import per rule of the layers contract, planted in a copy of the package.
PLANTED = {
    "kvstudio/engine/formulas.py": "kvstudio.labs.common",  # engine reaching up to labs
    "kvstudio/files/folder_write.py": "kvstudio.cli.args",  # files reaching up to the CLI
    "kvstudio/labs/scale.py": "kvstudio.training.data",  # a sibling importing a sibling
    "kvstudio/ui/app/shutdown.py": "kvstudio.notebook.progress",  # the window importing a front
    "kvstudio/ui/app/settings.py": "kvstudio.cli.args",  # one front importing another
    "kvstudio/notebook/progress.py": "kvstudio.ui.app.shutdown",  # the notebook using the window
    "kvstudio/charts/korean.py": "kvstudio.ui.app.shutdown",  # the charts reaching up to the window
}


@contextlib.contextmanager
def _package_found_in(folder: Path) -> Iterator[None]:
    """`kvstudio` as import-linter finds it (`importlib.util.find_spec`): the one in `folder`.

    find_spec answers an imported top-level package from ``sys.modules``, so the imported
    package steps aside while `folder` is first on the path (both are put back after).
    """
    imported = sys.modules.pop("kvstudio", None)
    sys.path.insert(0, str(folder))
    try:
        spec = importlib.util.find_spec("kvstudio")
        assert spec is not None and spec.origin is not None
        assert Path(spec.origin).parent == folder / "kvstudio", spec.origin
        yield
    finally:
        sys.path.remove(str(folder))
        sys.modules.pop("kvstudio", None)
        if imported is not None:
            sys.modules["kvstudio"] = imported


def _lint_imports(folder: Path) -> tuple[bool, str]:
    """`lint-imports --config folder/pyproject.toml --no-cache` on the package in `folder`,
    in this process (import-linter's Python API): (every contract kept, the report)."""
    try:
        from importlinter import api  # noqa: F401  (configures import-linter's adapters)
        from importlinter.application import use_cases
    except ImportError:
        pytest.skip("import-linter is not installed (pip install -e '.[test]')")
    report = io.StringIO()
    with _package_found_in(folder), contextlib.redirect_stdout(report):
        passed = use_cases.lint_imports(config_filename=str(folder / "pyproject.toml"),
                                        cache_dir=None, no_logo=True)
    return bool(passed), report.getvalue()


def test_the_layers_contract_fails_on_a_planted_back_import(tmp_path: Path) -> None:
    shutil.copytree(ROOT / "kvstudio", tmp_path / "kvstudio",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    for path, target in PLANTED.items():
        with (tmp_path / path).open("a", encoding="utf-8") as f:
            f.write(f"\nimport {target}  # planted back-import\n")
    passed, report = _lint_imports(tmp_path)  # the copy, not the installed package
    assert not passed, report
    layers = "Layers: ui | cli | notebook > charts > labs | training > files > engine"
    assert f"{layers} BROKEN" in report
    assert "Fronts: the window, the command and the notebook are independent BROKEN" in report
    for path, target in PLANTED.items():
        importer = path.removesuffix(".py").replace("/", ".")
        assert f"{importer} -> {target}" in report, report
