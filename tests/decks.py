"""Lecture-deck checks shared by tests/test_slides.py and tests/test_notebooks.py.

    from decks import check_course_deck
    check_course_deck(executed_notebook, "ko", tmp_path)   # build its deck, walk it in Chromium

A deck is walked in the system's headless Chromium (tests/browser.py): every slide is measured
with all its fragments shown, and screenshots go to build/screenshots/.
"""

from __future__ import annotations

import gc
import json
import re
import shutil
import warnings
from pathlib import Path

from tools import slides, webfont


def reveal() -> Path:
    """reveal.js for a deck test: the cached copy, else fetched once with npm. Without npm and
    without a cached copy the test is skipped (it fails under ``POSVIZ_BROWSER_TESTS=required``),
    as the browser tests are without Chromium."""
    if shutil.which("npm") is None and not all(
        (slides.REVEAL_CACHE / f).is_file() for f in slides.REVEAL_FILES
    ):
        from browser import _unavailable

        _unavailable("npm (Node.js) is needed once to fetch reveal.js")
    return slides.fetch_reveal()


def check_deck_html(html: str) -> None:
    """A deck loads nothing from the network, no reveal.js theme, and the course's web fonts
    (Korean and math)."""
    assert '<script src="../reveal.js/dist/reveal.js">' in html and "/dist/theme/" not in html
    assert not re.search(r'<(?:img|link|iframe|script)[^>]*(?:src|href)="https?://', html)
    assert "fonts.googleapis" not in html and "@import" not in html
    assert f'font-family: "{webfont.FAMILY}"' in html and 'url("../fonts/' in html
    assert f'url("../fonts/{webfont.MATH_FILE}")' in html
    assert f"math {{ font-family: {webfont.math_font_stack()}; }}" in html


MATH_FONT_PROBE = """(selector) => {
  // the first formula on a slide (speaker notes are not drawn in the deck)
  const math = [...document.querySelectorAll(selector)].find((m) => m.querySelector('mo, mi') && !m.closest('aside.notes'));
  if (!math) return false;
  math.querySelector('mo, mi').id = 'math-font-probe';
  const slide = math.closest('.reveal .slides section');  // shown, so that it is laid out
  if (slide && window.Reveal) { const {h, v} = Reveal.getIndices(slide); Reveal.slide(h, v || 0, 1e6); }
  return true;
}"""


def assert_math_font(page, selector: str = ".reveal .slides math") -> None:
    """The glyphs of the first formula matching ``selector`` (its first operator or letter) are
    drawn with the bundled math font, whose MATH table stretches brackets (tools/webfont.py).
    In a deck, the formula's slide is shown first."""
    from browser import platform_fonts

    assert page.evaluate(MATH_FONT_PROBE, selector), f"no formula matches {selector!r}"
    fonts = platform_fonts(page, "#math-font-probe")
    drawn = {(f["familyName"], f["isCustomFont"]) for f in fonts}
    assert drawn == {(webfont.MATH_SOURCE_FAMILY, True)}, f"a formula not drawn with the math font: {fonts}"


WALK = """() => {
  const config = Reveal.getConfig();
  const out = [];
  for (const slide of Reveal.getSlides()) {
    const {h, v} = Reveal.getIndices(slide);
    Reveal.slide(h, v, 1e6);  // every fragment shown
    const right = slide.getBoundingClientRect().right + 1;  // nothing drawn past the slide's edge
    const wide = [...slide.querySelectorAll("pre, img, table, math")].filter(
      (el) => el.getBoundingClientRect().right > right || (el.tagName === "PRE" && el.scrollWidth > el.clientWidth + 1));
    // nothing the deck draws on top (the slide number, any on-screen control) covers the slide's text
    const covers = [...document.querySelectorAll(".reveal .slide-number, .reveal .controls")]
      .filter((el) => getComputedStyle(el).display !== "none").map((el) => el.getBoundingClientRect())
      .filter((r) => r.width && r.height);
    const range = document.createRange();  // the boxes of the text itself, not of its full-width block
    const covered = [...slide.querySelectorAll("p, li, pre, img, table, math, h1, h2, h3, h4")].filter((el) => {
      if (el.tagName !== "IMG") range.selectNodeContents(el);
      const boxes = el.tagName === "IMG" ? [el.getBoundingClientRect()] : [...range.getClientRects()];
      return boxes.some((r) => r.width && r.height && covers.some(
        (c) => r.left < c.right && c.left < r.right && r.top < c.bottom && c.top < r.bottom));
    }).length;
    const zoom = parseFloat(slide.style.zoom) || 1;  // the deck's last-resort fit scales a slide down
    out.push({h, v, height: Math.round(slide.scrollHeight * zoom), width: Math.round(slide.scrollWidth * zoom), wide: wide.length,
              covered, text: slide.innerText.slice(0, 60), zoom: slide.style.zoom || "", images: slide.querySelectorAll("img").length,
              shrunk: [...slide.querySelectorAll("img")].some((img) => img.style.maxHeight)});
  }
  return {total: Reveal.getTotalSlides(), slides: out};
}"""


# A course deck holds dozens of figures as data: URLs (deck 06: about 10 MB of HTML). Loading it
# under a busy machine takes longer than Playwright's default 30 s, which is why deck 06 timed out:
# wait for the page as long as a cell may run, and walk it without animations.
DECK_LOAD_MS = 300_000


def walk_deck(page, deck: Path, name: str, every_screenshot: bool = True) -> dict:
    """Open ``deck``, measure every slide with all its fragments shown (one script, no
    transitions), and return Reveal.getTotalSlides() with each slide's content size in CSS pixels.

    Screenshots go to build/screenshots/<name>_<n>.png: of every slide, or (``every_screenshot=False``,
    for the course's long decks) of the title slide, the first slide with a figure and the tallest
    slide, as ``<name>_title``, ``<name>_figure`` and ``<name>_tallest``.
    """
    from browser import screenshot

    page.goto(deck.as_uri(), wait_until="load", timeout=DECK_LOAD_MS)
    page.wait_for_function("() => window.Reveal && Reveal.isReady()", timeout=DECK_LOAD_MS)
    page.evaluate("document.fonts.ready.then(() => true)")
    page.evaluate("Reveal.configure({transition: 'none', backgroundTransition: 'none', fragments: true})")
    result = page.evaluate(WALK)
    slides_ = result["slides"]
    if every_screenshot:
        chosen = {f"{number:02d}": slide for number, slide in enumerate(slides_)}
    else:
        figure = next(
            (s for s in slides_ if s["shrunk"] or s.get("images")), slides_[min(1, len(slides_) - 1)]
        )
        chosen = {"title": slides_[0], "figure": figure, "tallest": max(slides_, key=lambda s: s["height"])}
    for label, slide in chosen.items():
        page.evaluate(f"Reveal.slide({slide['h']}, {slide['v']}, 1e6)")
        page.wait_for_timeout(50)
        screenshot(page, f"{name}_{label}")
    return result


def oversized(result: dict) -> list[dict]:
    """The slides of a :func:`walk_deck` result taller or wider than the 1280×720 screen, with
    something drawn past the slide's edge, or with text under the slide number (or a control)."""
    return [
        s for s in result["slides"]
        if s["height"] > slides.HEIGHT or s["width"] > slides.WIDTH or s["wide"] or s["covered"]
    ]


def check_course_deck(source: Path, lang: str, out: Path) -> None:
    """Build the deck of the executed notebook ``source`` (edition ``lang``) in ``out`` and walk it:
    every slide at most 1280×720 with its fragments shown, speaker notes present, nothing asked of
    the network, headings drawn with the web font (Hangul from the web font in the Korean and
    bilingual decks; the machine has no Korean font), formulas with the bundled math font. Screenshots: ``deck_<lang>_<stem>_*.png``."""
    from browser import chromium_page, platform_fonts

    prefix = slides.copy_reveal(reveal(), out)
    with warnings.catch_warnings():  # fontTools leaves the .ttf files to the garbage collector
        warnings.simplefilter("ignore", ResourceWarning)
        (deck,) = slides.write_decks({lang: [source]}, out, prefix)
        gc.collect()
    html = deck.read_text(encoding="utf-8")
    check_deck_html(html)
    assert html.count('<aside class="notes">') >= 3, "the prose is in the speaker notes"
    with chromium_page(width=slides.WIDTH, height=slides.HEIGHT) as page:
        result = walk_deck(page, deck, f"deck_{lang}_{Path(source).stem}", every_screenshot=False)
        assert result["total"] == len(result["slides"]) >= 5
        too_big = oversized(result)
        assert not too_big, json.dumps(too_big, ensure_ascii=False, indent=1)
        page.evaluate("Reveal.slide(0, 0)")
        fonts = platform_fonts(page, ".reveal .slides h1")
        if lang != "en":
            korean = [f for f in fonts if f["familyName"] == webfont.SOURCE_FAMILY]
            assert korean and all(f["isCustomFont"] for f in korean), fonts
        if "<math" in html:
            assert_math_font(page)
        assert page.blocked == [], "the deck asked the network for something"
