"""Refresh the Korean translation: lupdate the UI sources, fill new entries, lrelease the .qm.

Usage: .venv/bin/python scripts/update_translations.py [--check]

- lupdate (PySide6's) extracts every tr()/translate() string of kvstudio/ui and charts into
  kvstudio/resources/i18n/kvstudio_ko.ts, keeping existing translations;
- entries still unfinished are filled from scripts/ko_glossary.json (source → Korean),
  then from the finished translation of the same text elsewhere (a string that moved);
- lrelease compiles kvstudio/resources/i18n/kvstudio_ko.qm.
With --check it only reports untranslated strings and exits 1 if there are any.
"""

from __future__ import annotations

import argparse
import json
import logging
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TS = ROOT / "kvstudio" / "resources" / "i18n" / "kvstudio_ko.ts"
QM = TS.with_suffix(".qm")
GLOSSARY = Path(__file__).parent / "ko_glossary.json"  # source → Korean, for new strings
BIN = Path(sys.executable).parent
log = logging.getLogger("update_translations")


def lupdate() -> None:
    sources = sorted(str(p) for folder in ("ui", "charts")
                     for p in (ROOT / "kvstudio" / folder).rglob("*.py"))
    # -locations none: the .ts holds no source line numbers, so a code change that moves a
    # string does not rewrite the translation file (it did in 106 of 550 commits).
    subprocess.run([str(BIN / "pyside6-lupdate"), *sources, "-no-obsolete", "-locations", "none",
                    "-ts", str(TS), "-target-language", "ko_KR"], check=True)


def finished() -> dict[str, str]:
    """Every finished translation in the .ts now, by source text: a string that moves to
    another class (another lupdate context) keeps its Korean."""
    known: dict[str, str] = {}
    for message in ET.parse(TS).getroot().iter("message"):
        translation = message.find("translation")
        if translation is not None and translation.get("type") is None and translation.text:
            known.setdefault(message.findtext("source") or "", translation.text)
    return known


def fill(glossary: dict[str, str]) -> list[str]:
    """Fill unfinished translations from the glossary; return sources still missing."""
    tree = ET.parse(TS)
    missing = []
    for message in tree.getroot().iter("message"):
        source = message.findtext("source") or ""
        translation = message.find("translation")
        if translation is None:
            translation = ET.SubElement(message, "translation")
        if translation.get("type") is None and translation.text:
            continue  # finished by hand or by an earlier run: keep it
        if source in glossary:
            translation.text = glossary[source]
            translation.attrib.pop("type", None)
        else:
            missing.append(source)
    tree.write(TS, encoding="utf-8", xml_declaration=True)
    return missing


def lrelease() -> None:
    subprocess.run([str(BIN / "pyside6-lrelease"), str(TS), "-qm", str(QM)], check=True)


def main() -> int:
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    glossary = finished()
    lupdate()
    glossary.update(json.loads(GLOSSARY.read_text(encoding="utf-8")))  # wins over the .ts
    missing = fill(glossary)
    for source in missing:
        log.warning("untranslated: %r", source)
    if args.check:
        return 1 if missing else 0
    lrelease()
    log.info("wrote %s (%d untranslated)", QM, len(missing))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
