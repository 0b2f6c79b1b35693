"""A Korean web font for the offline website and slides, made from the bundled NanumGothic.

    import webfont
    webfont.build(out / "fonts", text)         # writes NanumGothic{,Bold}-course.woff2 + OFL.txt
    css = webfont.font_face_css("../fonts")    # the @font-face rules, for pages one folder down

Hangul has 11,172 precomposed syllables; NanumGothic subset to all of them is about 0.5 MB per
weight in WOFF2 (and takes several seconds to make), while the course uses roughly a thousand,
which subset to about 0.15 MB. So the font is subset to the Korean characters that the built
pages actually contain (``text``), and made again only when that set changes. The @font-face rules
carry a ``unicode-range`` of the Hangul and CJK punctuation blocks: the browser uses the web font
for Korean characters only, Latin text keeps the page's own font, and a page with no Korean never
downloads it. Everything stays next to the pages (no font service, no CDN). The font is under the
SIL Open Font License 1.1 (``posviz/fonts/OFL.txt``), which is copied next to it.

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
    """Write the web font for the Korean characters of ``text`` into folder ``out``.

    Writes one WOFF2 file per weight (:func:`file_name`) and the font's licence ``OFL.txt``;
    returns their paths. Made again only when the character set changed (a key file in ``out``).
    A ``text`` without Korean still gets a font of a few Hangul characters, so pages always
    find the files their @font-face rules name.
    """
    out = Path(out)
    characters = korean_characters(text) or "가나다"
    key = hashlib.sha256(characters.encode("utf-8")).hexdigest()
    paths = [out / file_name(weight) for weight in WEIGHTS] + [out / "OFL.txt"]
    key_file = out / _KEY_FILE
    if all(p.is_file() for p in paths) and key_file.is_file() and key_file.read_text() == key:
        return paths
    out.mkdir(parents=True, exist_ok=True)
    for weight, source in WEIGHTS.items():
        (out / file_name(weight)).write_bytes(subset_woff2(FONTS / source, characters))
    shutil.copy(FONTS / "OFL.txt", out / "OFL.txt")
    key_file.write_text(key)
    return paths


def font_face_css(prefix: str) -> str:
    """The @font-face rules (family :data:`FAMILY`, normal and bold) for fonts in ``prefix``,
    a URL path relative to the page (e.g. ``"../fonts"``)."""
    ranges = ", ".join(f"U+{lo:04X}-{hi:04X}" for lo, hi in KOREAN_RANGES)
    rules = []
    for weight in WEIGHTS:
        rules.append(
            f'@font-face {{ font-family: "{FAMILY}"; font-style: normal; font-weight: {weight}; '
            f'font-display: swap; src: url("{prefix.rstrip("/")}/{file_name(weight)}") format("woff2"); '
            f"unicode-range: {ranges}; }}"
        )
    return "\n".join(rules)


def font_stack(*fallbacks: str) -> str:
    """A CSS font-family value: the web font, then ``fallbacks`` (e.g. the page's own fonts).

    The web font covers only Korean (its unicode-range), so Korean is always drawn with it,
    whatever fonts the machine has, and every other character falls through to ``fallbacks``."""
    return ", ".join([f'"{FAMILY}"', *fallbacks])
