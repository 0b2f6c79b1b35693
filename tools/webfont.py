"""The course's web fonts for the offline website and slides: Korean and math, both bundled.

    import webfont
    webfont.build(out / "fonts", text)         # writes NanumGothic{,Bold}-course.woff2 + OFL.txt,
                                               # NotoSansMath-Regular.woff2 + OFL-NotoSansMath.txt
    css = webfont.font_face_css("../fonts")    # the @font-face rules, for pages one folder down
    webfont.font_stack("system-ui", "sans-serif")   # a font-family value for prose
    webfont.math_font_stack()                  # the font-family value for <math>

Korean: Hangul has 11,172 precomposed syllables; NanumGothic subset to all of them is about 0.5 MB per
weight in WOFF2 (and takes several seconds to make), while the course uses roughly a thousand,
which subset to about 0.15 MB. So the font is subset to the Korean characters that the built
pages actually contain (``text``), and made again only when that set changes. The @font-face rules
carry a ``unicode-range`` of the Hangul and CJK punctuation blocks: the browser uses the web font
for Korean characters only, Latin text keeps the page's own font, and a page with no Korean never
downloads it.

Math: formulas are MathML (tools/website.py), which Chromium lays out with the OpenType MATH table
of the first font of ``<math>``'s font-family (stretched brackets, bars, braces, radicals). The
generic family ``math`` is such a font only where the machine has one installed; elsewhere brackets
stay small, a matrix falls apart, ``\\overline`` becomes a short dash and ``\\underbrace`` a stray mark.
So the bundled Noto Sans Math (``posviz/fonts/NotoSansMath-Regular.woff2``, with its MATH table;
not subset, about 0.27 MB) is copied next to the pages and comes first in :func:`math_font_stack`,
before the Korean web font (Hangul in ``\\text{...}``) and ``math``.

Everything stays next to the pages (no font service, no CDN). Both fonts are under the SIL Open
Font License 1.1 (``posviz/fonts/OFL.txt``, ``posviz/fonts/OFL-NotoSansMath.txt``, which also say
where each font comes from); the licences are copied next to them.

Needs ``fontTools`` and ``brotli`` (WOFF2 compression): ``pip install fonttools brotli``, in the
project's ``site`` extras.
"""

from __future__ import annotations

import hashlib
import io
import logging
import re
import shutil
from pathlib import Path

FONTS = Path(__file__).resolve().parent.parent / "posviz" / "fonts"
FAMILY = "Course NanumGothic"  # the CSS family name; the font file itself calls it "NanumGothic"
SOURCE_FAMILY = "NanumGothic"  # what Chromium reports for the glyphs drawn (CSS.getPlatformFontsForNode)
WEIGHTS = {"normal": "NanumGothic.ttf", "bold": "NanumGothicBold.ttf"}
# Hangul Jamo, CJK symbols and punctuation, Hangul compatibility jamo, Jamo extended A,
# Hangul syllables, Jamo extended B, half/full-width forms.
KOREAN_RANGES = (
    (0x1100, 0x11FF),
    (0x3000, 0x303F),
    (0x3130, 0x318F),
    (0xA960, 0xA97F),
    (0xAC00, 0xD7AF),
    (0xD7B0, 0xD7FF),
    (0xFF00, 0xFFEF),
)
_KOREAN = re.compile("[" + "".join(f"{chr(lo)}-{chr(hi)}" for lo, hi in KOREAN_RANGES) + "]")
_KEY_FILE = ".webfont-key"
MATH_FAMILY = "Course Noto Sans Math"  # the CSS family name of the math font
MATH_SOURCE_FAMILY = "Noto Sans Math"  # what Chromium reports for the glyphs it draws
MATH_FILE = "NotoSansMath-Regular.woff2"  # in FONTS, copied unchanged next to the pages
MATH_LICENSE = "OFL-NotoSansMath.txt"  # its licence and provenance, in FONTS and next to it


def korean_characters(text: str) -> str:
    """The distinct characters of ``text`` in :data:`KOREAN_RANGES`, sorted (a string)."""
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    return "".join(sorted(set(_KOREAN.findall(text))))


def file_name(weight: str) -> str:
    """The WOFF2 file written for ``weight`` ("normal" or "bold")."""
    if weight not in WEIGHTS:
        raise ValueError(f"weight must be one of {sorted(WEIGHTS)}, got {weight!r}")
    return Path(WEIGHTS[weight]).stem + "-course.woff2"


def subset_woff2(source: Path, characters: str) -> bytes:
    """``source`` (a TrueType file) subset to ``characters``, as WOFF2 bytes (fontTools + brotli).

    Layout features and names are kept; characters the font lacks are skipped.
    Raises ``ValueError`` if ``characters`` is empty and ``ImportError`` without fontTools/brotli.
    """
    if not characters:
        raise ValueError("no characters to subset to")
    import brotli  # noqa: F401 - fontTools needs it for WOFF2; fail here with a clear name
    from fontTools import subset

    logging.getLogger("fontTools").setLevel(logging.ERROR)  # "TSI0 NOT subset" notes on hinting sources
    options = subset.Options()
    options.flavor = "woff2"
    options.layout_features = ["*"]
    options.name_IDs = ["*"]
    options.notdef_outline = True
    font = subset.load_font(str(source), options)
    subsetter = subset.Subsetter(options)
    subsetter.populate(text=characters)
    subsetter.subset(font)
    buffer = io.BytesIO()
    try:
        subset.save_font(font, buffer, options)
    finally:
        font.close()
    return buffer.getvalue()


def build(out: Path | str, text: str) -> list[Path]:
    """Write the web fonts for ``text`` into folder ``out``; returns their paths.

    Korean: one WOFF2 file per weight (:func:`file_name`), subset to the Korean characters of
    ``text``, and the font's licence ``OFL.txt``; made again only when the character set changed
    (a key file in ``out``). A ``text`` without Korean still gets a font of a few Hangul
    characters, so pages always find the files their @font-face rules name.
    Math: the bundled :data:`MATH_FILE` and its licence :data:`MATH_LICENSE`, copied whole
    (whatever ``text`` holds) where missing or different.
    """
    out = Path(out)
    characters = korean_characters(text) or "가나다"
    key = hashlib.sha256(characters.encode("utf-8")).hexdigest()
    korean = [out / file_name(weight) for weight in WEIGHTS] + [out / "OFL.txt"]
    key_file = out / _KEY_FILE
    out.mkdir(parents=True, exist_ok=True)
    if not (all(p.is_file() for p in korean) and key_file.is_file() and key_file.read_text() == key):
        for weight, source in WEIGHTS.items():
            (out / file_name(weight)).write_bytes(subset_woff2(FONTS / source, characters))
        shutil.copy(FONTS / "OFL.txt", out / "OFL.txt")
        key_file.write_text(key)
    math = [out / MATH_FILE, out / MATH_LICENSE]
    for target in math:
        source = FONTS / target.name
        if not target.is_file() or target.read_bytes() != source.read_bytes():
            shutil.copy(source, target)
    return korean + math


def font_face_css(prefix: str) -> str:
    """The @font-face rules for fonts in ``prefix``, a URL path relative to the page (e.g.
    ``"../fonts"``): family :data:`FAMILY` (normal and bold, Korean characters only) and
    family :data:`MATH_FAMILY` (the math font, every character it has)."""
    prefix = prefix.rstrip("/")
    ranges = ", ".join(f"U+{lo:04X}-{hi:04X}" for lo, hi in KOREAN_RANGES)
    rules = []
    for weight in WEIGHTS:
        rules.append(
            f'@font-face {{ font-family: "{FAMILY}"; font-style: normal; font-weight: {weight}; '
            f'font-display: swap; src: url("{prefix}/{file_name(weight)}") format("woff2"); '
            f"unicode-range: {ranges}; }}"
        )
    rules.append(
        f'@font-face {{ font-family: "{MATH_FAMILY}"; font-style: normal; font-weight: normal; '
        f'font-display: swap; src: url("{prefix}/{MATH_FILE}") format("woff2"); }}'
    )
    return "\n".join(rules)


def font_stack(*fallbacks: str) -> str:
    """A CSS font-family value: the Korean web font, then ``fallbacks`` (e.g. the page's own fonts).

    The web font covers only Korean (its unicode-range), so Korean is always drawn with it,
    whatever fonts the machine has, and every other character falls through to ``fallbacks``."""
    return ", ".join([f'"{FAMILY}"', *fallbacks])


def math_font_stack() -> str:
    """The CSS font-family value for ``<math>``: the bundled math font, the Korean web font, ``math``.

    The math font comes first, so that it is the one whose MATH table lays the formula out (the
    browser uses the first font of the list that covers a space; the Korean font, limited to
    Korean by its unicode-range, cannot be that one). Hangul in ``\\text{...}``, which the math
    font lacks, falls through to the Korean web font."""
    return ", ".join([f'"{MATH_FAMILY}"', font_stack("math")])
