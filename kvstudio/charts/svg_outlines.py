"""SVG that looks the same everywhere: text as glyph outlines, bars in page coordinates.

Owns the post-processing of the SVG pyqtgraph writes:

- every ``<text>`` becomes a ``<path>`` of its glyph outlines
  (`QPainterPath.addText` with the font the chart was drawn in), so a viewer
  with no Korean font shows Hangul, not boxes; the text stays readable to
  tools in an ``aria-label``;
- groups drawn in data coordinates (bars: ``transform="matrix(sx,0,0,sy,…)"``
  around rects with a non-scaling stroke) are baked into page coordinates, so
  their outlines keep their width in viewers that ignore non-scaling strokes
  (librsvg merged the bars into one block);
- small embedded rasters (a heat map: one pixel per cell) are enlarged with
  nearest-neighbour copies, so cells stay sharp squares in viewers that
  ignore ``image-rendering`` and smooth the image (librsvg blurred the
  Cache inspector's K, V and attention maps into gradients);
- `compose_canvas` puts the chart on a slide-sized page under a headline.

It does not render charts (see ``render.py``).
"""

from __future__ import annotations

import base64
import re
import xml.etree.ElementTree as ET
from functools import lru_cache

from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QPointF, Qt
from PySide6.QtGui import QFont, QImage, QPainterPath

SVG_NS = "http://www.w3.org/2000/svg"
XLINK_NS = "http://www.w3.org/1999/xlink"
ET.register_namespace("", SVG_NS)
ET.register_namespace("xlink", XLINK_NS)

_MATRIX = re.compile(r"matrix\(([^)]*)\)")
PNG_DATA = "data:image/png;base64,"
SHARP_SIDE = 512  # px: a small raster is enlarged until its longer side is at least this
SHARP_MAX_PIXELS = 4_000_000  # never enlarge past this many pixels
_NUMBER_PAIR = re.compile(r"(-?[\d.]+(?:e-?\d+)?),(-?[\d.]+(?:e-?\d+)?)")


def _tag(element: ET.Element) -> str:
    return element.tag.rsplit("}", 1)[-1]


def _q(name: str) -> str:
    return f"{{{SVG_NS}}}{name}"


# ---- text → outlines ---------------------------------------------------------------------
def _first_family(families: str) -> str:
    first = families.split(",")[0].strip().strip("'\"")
    return first or "sans-serif"


@lru_cache(maxsize=4096)
def _outline(family: str, size: float, weight: int, italic: bool, text: str) -> str:
    """Path data of `text` drawn at the origin (baseline at y = 0)."""
    font = QFont(family)
    font.setPixelSize(max(1, round(size)))
    font.setWeight(QFont.Weight(min(max(weight, 100), 900)))
    font.setItalic(italic)
    path = QPainterPath()
    path.addText(QPointF(0, 0), font, text)
    return path_data(path)


def path_data(path: QPainterPath) -> str:
    """A QPainterPath as SVG path data (absolute M, L and C commands)."""
    parts: list[str] = []
    i, count = 0, path.elementCount()
    while i < count:
        e = path.elementAt(i)
        if e.isMoveTo():
            parts.append(f"M{e.x:.2f},{e.y:.2f}")
        elif e.isLineTo():
            parts.append(f"L{e.x:.2f},{e.y:.2f}")
        elif e.isCurveTo() and i + 2 < count:
            c1, c2 = path.elementAt(i + 1), path.elementAt(i + 2)
            parts.append(f"C{e.x:.2f},{e.y:.2f} {c1.x:.2f},{c1.y:.2f} {c2.x:.2f},{c2.y:.2f}")
            i += 2
        i += 1
    return " ".join(parts)


def _number(value: str | None, default: float = 0.0) -> float:
    try:
        return float(re.sub(r"[a-z%]+$", "", value or ""))
    except ValueError:
        return default


def text_to_paths(root: ET.Element, fallback_family: str = "") -> int:
    """Replace every <text> under `root` by its outline path; returns how many."""
    replaced = 0
    for parent in list(root.iter()):
        for index, child in enumerate(list(parent)):
            if _tag(child) != "text":
                continue
            text = "".join(child.itertext())
            path = ET.Element(_q("path"))
            if text.strip():
                family = _first_family(child.get("font-family", "")) or fallback_family
                size = _number(child.get("font-size"), 12.0)
                weight = int(_number(child.get("font-weight"), 400))
                italic = child.get("font-style", "normal") == "italic"
                data = _outline(family, size, weight, italic, text)
                x, y = _number(child.get("x")), _number(child.get("y"))
                path.set("d", data or "M0,0")
                path.set("transform", f"translate({x:g},{y:g})")
                path.set("fill", child.get("fill", "#000000"))
                if child.get("fill-opacity") is not None:
                    path.set("fill-opacity", child.get("fill-opacity", "1"))
                path.set("stroke", "none")
                path.set("aria-label", text)
            parent.remove(child)
            if text.strip():
                parent.insert(index, path)
                replaced += 1
    return replaced


# ---- data coordinates → page coordinates -------------------------------------------------
def _scale_matrix(transform: str | None) -> tuple[float, float, float, float] | None:
    """(sx, sy, tx, ty) of a matrix without rotation or shear, else None."""
    if not transform:
        return None
    found = _MATRIX.fullmatch(transform.strip())
    if found is None:
        return None
    try:
        a, b, c, d, e, f = (float(v) for v in found.group(1).split(","))
    except ValueError:
        return None
    if b != 0 or c != 0:
        return None
    return a, d, e, f


def bake_scaled_groups(root: ET.Element) -> int:
    """Move data-coordinate transforms of rect/path groups into their coordinates.

    Only groups that scale (not the plain translations Qt writes around text)
    and hold nothing but rects and paths are changed. Returns how many groups.
    """
    baked = 0
    for group in root.iter(_q("g")):
        matrix = _scale_matrix(group.get("transform"))
        if matrix is None:
            continue
        sx, sy, tx, ty = matrix
        if abs(sx) == 1 and abs(sy) == 1:
            continue  # a translation: strokes are already in page units
        children = list(group)
        if not children or any(_tag(c) not in ("rect", "path") for c in children):
            continue
        for child in children:
            if _tag(child) == "rect":
                _bake_rect(child, sx, sy, tx, ty)
            else:
                child.set("d", _map_pairs(child.get("d", ""), sx, sy, tx, ty))
            child.attrib.pop("vector-effect", None)
        del group.attrib["transform"]
        baked += 1
    return baked


def _bake_rect(rect: ET.Element, sx: float, sy: float, tx: float, ty: float) -> None:
    x, y = _number(rect.get("x")), _number(rect.get("y"))
    w, h = _number(rect.get("width")), _number(rect.get("height"))
    x0, y0 = sx * x + tx, sy * y + ty
    w1, h1 = sx * w, sy * h
    if w1 < 0:
        x0, w1 = x0 + w1, -w1
    if h1 < 0:
        y0, h1 = y0 + h1, -h1
    rect.set("x", f"{x0:.3f}")
    rect.set("y", f"{y0:.3f}")
    rect.set("width", f"{w1:.3f}")
    rect.set("height", f"{h1:.3f}")


def _map_pairs(data: str, sx: float, sy: float, tx: float, ty: float) -> str:
    """Scale and move every "x,y" pair of path data."""

    def replace(match: re.Match[str]) -> str:
        x, y = float(match.group(1)), float(match.group(2))
        return f"{sx * x + tx:.3f},{sy * y + ty:.3f}"

    return _NUMBER_PAIR.sub(replace, data)


# ---- the page ----------------------------------------------------------------------------
def sharpen_small_images(root: ET.Element) -> int:
    """Enlarge small embedded PNGs by a whole factor, nearest neighbour; return how many.

    The ``<image>`` keeps its width and height (user units), so only its
    resolution grows: a viewer that smooths the scaled image blurs a sliver
    at each cell edge instead of the whole cell.
    """
    count = 0
    href = f"{{{XLINK_NS}}}href"
    for image in root.iter(_q("image")):
        data = image.get(href) or image.get("href") or ""
        if not data.startswith(PNG_DATA):
            continue
        picture = QImage.fromData(base64.b64decode(data[len(PNG_DATA):]))
        longer = max(picture.width(), picture.height())
        if picture.isNull() or longer >= SHARP_SIDE:
            continue
        factor = -(-SHARP_SIDE // longer)
        while factor > 1 and picture.width() * picture.height() * factor**2 > SHARP_MAX_PIXELS:
            factor -= 1
        if factor <= 1:
            continue
        big = picture.scaled(
            picture.width() * factor, picture.height() * factor,
            Qt.AspectRatioMode.IgnoreAspectRatio, Qt.TransformationMode.FastTransformation,
        )
        encoded = QByteArray()
        buffer = QBuffer(encoded)
        buffer.open(QIODevice.OpenModeFlag.WriteOnly)
        big.save(buffer, "PNG")  # type: ignore[call-overload]  # stubs say bytes; str works
        buffer.close()
        text = PNG_DATA + base64.b64encode(bytes(encoded.data())).decode("ascii")
        image.set(href if image.get(href) is not None else "href", text)
        count += 1
    return count


def compose_canvas(
    svg: str,
    width: int,
    height: int,
    chart_at: tuple[float, float],
    background: str,
    headline_paths: list[tuple[str, str]],
) -> str:
    """The chart SVG on a `width` × `height` page, moved to `chart_at`, text outlined.

    `headline_paths`: (path data in page coordinates, fill colour) drawn above it.
    """
    root = ET.fromstring(svg)
    text_to_paths(root)
    bake_scaled_groups(root)
    sharpen_small_images(root)
    root.set("width", f"{width}px")
    root.set("height", f"{height}px")
    root.attrib.pop("viewBox", None)
    root.attrib.pop("viewBox ", None)
    root.set("viewBox", f"0 0 {width} {height}")
    move = f"translate({chart_at[0]:g},{chart_at[1]:g})"
    page = ET.Element(_q("g"), {"id": "chart", "transform": move})
    head: list[ET.Element] = []
    for child in list(root):
        name = _tag(child)
        if name in ("title", "desc", "style", "defs"):
            head.append(child)
        elif name == "rect" and child.get("width") == "100%":
            root.remove(child)  # the chart's background: replaced by the page's
            continue
        else:
            page.append(child)
        root.remove(child)
    for child in head:
        root.append(child)
    root.append(ET.Element(_q("rect"), {
        "x": "0", "y": "0", "width": str(width), "height": str(height), "fill": background}))
    if headline_paths:
        group = ET.SubElement(root, _q("g"), {"id": "headline"})
        for data, colour in headline_paths:
            ET.SubElement(group, _q("path"), {"d": data, "fill": colour, "stroke": "none"})
    root.append(page)
    return '<?xml version="1.0" encoding="UTF-8" standalone="no"?>\n' + ET.tostring(
        root, encoding="unicode")
