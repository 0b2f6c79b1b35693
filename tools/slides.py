"""Export every course notebook as a reveal.js lecture deck that works offline.

    python tools/slides.py                  # build/slides/{both,ko,en}/NN_name.slides.html
    python tools/slides.py --lang ko 05     # Korean deck of notebooks matching "05"
    python tools/slides.py --reveal-cdn     # load reveal.js from the public CDN instead (needs a network)
    python tools/slides.py --reveal-dir DIR # use a reveal.js 4 folder you already have

The decks come from the executed editions that tools/website.py keeps in
build/executed-editions/ (notebooks not yet executed there are executed first). A deck is a
lecture deck, not the notebook on a projector (:func:`lecture_cells`):

- each ``##`` section is a slide and each ``###`` heading, code cell and figure a sub-slide
  below it (↓ or space), every one headed by its section's title;
- what a slide shows is the heading, the key formula (the prose's display math), the code,
  the figure, and the "what to notice" line under the figure; the full prose of the notebook
  goes into reveal.js speaker notes (press ``s`` for the speaker view);
- a "what to notice" line is on one sub-slide with every output it is about: the printed
  output and figures of the code cells right above it (or, when those print only a few lines,
  with the code and its output), and a shown line that introduces something (":",
  "다음과 같습니다.", "as follows") is shown with what it introduces;
- so that nothing is cut on a 16:9 screen (1280×720), a code cell and its figure are on
  separate sub-slides, long code and long printed output are split across sub-slides, code
  lines wrap instead of running off the right edge, and figures are scaled to the screen.

Offline by default: reveal.js 4 (:data:`REVEAL_VERSION`) is fetched once from the npm
registry with ``npm pack`` (Node.js's npm), kept in build/reveal.js-<version>/, and copied to
build/slides/reveal.js/; the Korean web font made from the bundled NanumGothic and the bundled
math font Noto Sans Math (tools/webfont.py) go to build/slides/fonts/. No reveal.js theme is
loaded (the "simple" theme would fetch Google Fonts); the deck's own style sheet is in the
template. Formulas are MathML made at build time (no MathJax), drawn with the math font, whose
OpenType MATH table stretches brackets and braces. So build/slides/ presents anywhere without
a network.
"""

from __future__ import annotations

import argparse
import base64
import copy
import html
import math
import os
import re
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell

if __package__:  # python -m tools.NAME, or imported as tools.NAME
    from . import course_table, nbtemplate, webfont, website
    from .languages import SEP, language_argument
    from .nbrun import ROOT
else:  # python tools/NAME.py: tools/ itself is on sys.path
    import course_table
    import nbtemplate
    import webfont
    import website
    from languages import SEP, language_argument
    from nbrun import ROOT

SLIDES = ROOT / "build" / "slides"
REVEAL_VERSION = "4.6.1"
REVEAL_CACHE = ROOT / "build" / f"reveal.js-{REVEAL_VERSION}"
CDN_PREFIX = f"https://unpkg.com/reveal.js@{REVEAL_VERSION}"
REVEAL_FILES = ("dist/reveal.js", "dist/reveal.css", "dist/reset.css", "plugin/notes/notes.js", "LICENSE")
WIDTH, HEIGHT = 1280, 720
CODE_LINES = 22  # most screen lines of code (or printed output) on one sub-slide
WRAP = 118  # characters per screen line of code at the deck's code font size
_HEADING = re.compile(r"^(#{1,6})\s+(.*)$")
_LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+|^\s{2,}\S")
SHORT_LIST = 700  # characters: a list cell up to this long is shown, a longer one goes to the notes
GOALS_LIST = 1200  # characters: the learning goals are shown up to this long (English runs longer)
_GOALS = ("학습 목표", "Learning goals")
_DISPLAY_MATH = re.compile(r"\$\$.+?\$\$|\\begin\{(equation|align)\*?\}.+?\\end\{\1\*?\}", re.DOTALL)


# --- From a notebook to a lecture deck -----------------------------------------------------------


def _screen_lines(text: str) -> int:
    """Lines ``text`` takes on a slide once long lines wrap at :data:`WRAP` characters."""
    return sum(max(1, math.ceil(len(line) / WRAP)) for line in text.rstrip("\n").split("\n"))


def _chunks(text: str, limit: int = CODE_LINES) -> list[str]:
    """``text`` cut at line ends into pieces of at most ``limit`` screen lines each."""
    pieces, current, used = [], [], 0
    for line in text.rstrip("\n").split("\n"):
        size = _screen_lines(line)
        if current and used + size > limit:
            pieces.append("\n".join(current))
            current, used = [], 0
        current.append(line)
        used += size
    pieces.append("\n".join(current))
    return pieces


def _kind(cell: dict, index: int, setup: int | None) -> str:
    """What a cell is for the deck: title, setup, heading, notice, nav, list, prose or code."""
    if index == 0:
        return "title"
    if index == setup:
        return "setup"
    if cell["cell_type"] == "code":
        return "code"
    if course_table.NAV_TAG in nbtemplate.tags(cell):
        return "nav"
    text = nbtemplate.source(cell)
    if nbtemplate.is_notice(cell):
        return "notice"
    lines = [line for line in text.splitlines() if line.strip()]
    if lines and all(_HEADING.match(line) for line in lines):
        return "heading"
    other = [line for line in lines if not (_HEADING.match(line) or _LIST_ITEM.match(line))]
    heading = _HEADING.match(lines[0]) if lines else None
    limit = GOALS_LIST if heading and heading.group(2).strip() in _GOALS else SHORT_LIST
    if len(text) <= limit and len(other) <= 1 and len(other) < len(lines) - 1:
        return "list"  # learning goals, a short summary (a list, perhaps after one line): shown
    return "prose"


def _notice_runs(cells: list, setup: int | None) -> dict[int, list[int]]:
    """For each "what to notice" cell that follows code, the code cells right above it (back to
    the previous markdown cell): their outputs are what it is about."""
    runs = {}
    for index, cell in enumerate(cells):
        if _kind(cell, index, setup) == "notice":
            start = index
            while start > 1 and _kind(cells[start - 1], start - 1, setup) == "code":
                start -= 1
            if start < index:
                runs[index] = list(range(start, index))
    return runs


def _fits_under_code(cell: dict) -> bool:
    """Whether a code cell's outputs are only printed text that fits under its last piece of code."""
    groups = _output_groups(cell.get("outputs", []))
    pieces = _chunks(nbtemplate.source(cell)) if nbtemplate.source(cell).strip() else []
    if not groups:
        return True
    return (
        bool(pieces)
        and len(groups) == 1
        and groups[0][0] == "text"
        and _screen_lines(pieces[-1]) + _screen_lines(_text_of(groups[0][1])) <= CODE_LINES
    )


def _shown_notice(text: str) -> str:
    """The part of a "what to notice" cell a slide shows: its first paragraph (a bare label with
    its first point), and then, while the shown part ends by introducing something (":",
    "다음과 같습니다.", "as follows"), the paragraph it introduces."""
    paragraphs = text.strip().split("\n\n")
    shown, rest = [paragraphs[0]], paragraphs[1:]
    if rest and len(paragraphs[0]) < 30:  # a bare label: add its first point
        items = re.split(r"\n(?=[-*+] |\d+[.)] )", rest[0])
        shown.append(items[0])
        rest = (["\n".join(items[1:])] if len(items) > 1 else []) + rest[1:]
    while rest and nbtemplate.introduces(shown[-1]):
        shown.append(rest.pop(0))
    return "\n\n".join(shown)


def _md(text: str, slide_type: str, part: str) -> nbformat.NotebookNode:
    return new_markdown_cell(text, metadata={"slideshow": {"slide_type": slide_type}, "deck_part": part})


def _code(cell: dict, slide_type: str, part: str, source: str | None = None, outputs=None):
    new = new_code_cell(
        nbtemplate.source(cell) if source is None else source,
        metadata={"slideshow": {"slide_type": slide_type}, "deck_part": part},
        execution_count=cell.get("execution_count"),
    )
    new.outputs = [] if outputs is None else outputs
    return new


def _output_groups(outputs: list) -> list[tuple[str, list]]:
    """Outputs grouped for slides: ("figure", [one image]), ("text", [outputs]) or ("html", [one])."""
    groups: list[tuple[str, list]] = []
    for output in outputs:
        data = output.get("data", {})
        if "image/png" in data or "image/svg+xml" in data:
            groups.append(("figure", [output]))
        elif "text/html" in data:
            groups.append(("html", [output]))
        elif groups and groups[-1][0] == "text":
            groups[-1][1].append(output)
        else:
            groups.append(("text", [output]))
    return groups


def _text_of(outputs: list) -> str:
    parts = []
    for output in outputs:
        if output.get("output_type") == "stream":
            parts.append(output.get("text", ""))
        elif "data" in output:
            parts.append(output["data"].get("text/plain", ""))
        elif output.get("output_type") == "error":
            parts.append("\n".join(output.get("traceback", [])))
    return "".join(parts)


def _split_text_outputs(outputs: list) -> list[list]:
    """Printed output cut into pieces of at most :data:`CODE_LINES` screen lines (as streams)."""
    text = _text_of(outputs)
    if _screen_lines(text) <= CODE_LINES:
        return [outputs]
    return [[nbformat.v4.new_output("stream", name="stdout", text=piece)] for piece in _chunks(text)]


def _twin_heading(cells: list, index: int, deck: list):
    """The deck's heading cell made from the heading that opens the ``lang-ko`` twin of
    ``cells[index]``, when ``cells[index]`` is a ``lang-en`` prose cell opening with a heading of
    the same level; None otherwise. (Its English heading joins that slide instead of making an
    empty one: the prose of both goes to the notes.)"""
    pair = [nbtemplate.language(c) for c in cells[max(index - 1, 0) : index + 1]]
    if index == 0 or pair != ["ko", "en"]:
        return None
    firsts = [nbtemplate.source(c).lstrip().partition("\n")[0] for c in cells[index - 1 : index + 1]]
    levels = [_HEADING.match(line).group(1) if _HEADING.match(line) else None for line in firsts]
    if levels[0] is None or levels[0] != levels[1]:
        return None
    last = next((c for c in reversed(deck) if c.metadata["deck_part"] not in ("notes", "formula")), None)
    if last is None or last.metadata["deck_part"] != "heading" or last.source != firsts[0]:
        return None
    return last


def lecture_cells(cells: list) -> list:
    """The cells of a lecture deck made from an executed (edition) notebook's ``cells``.

    Returns new cells whose ``metadata.slideshow.slide_type`` cuts the deck (see the module
    docstring): headings start slides (``#``/``##``) or sub-slides (``###``); prose becomes
    speaker notes (``"notes"``) and its display math a visible formula; a code cell becomes
    one sub-slide per piece of its source and one per figure or long output.

    A "what to notice" cell's first paragraph (:func:`_shown_notice`; all of it goes to the
    notes) is shown on one sub-slide with the outputs it is about, those of the code cells
    right above it (:func:`_notice_runs`): under the code and its output when these are a
    few printed lines of the last cell (:func:`_fits_under_code`), else on a sub-slide of all
    those outputs in order (printed text, tables, figures; the deck's script shrinks the
    figures to fit), after the code. Printed output longer than a screen is the one
    exception: its pieces but the last are on sub-slides before. Every generated sub-slide
    repeats its section's title as a small running head (a ``####`` heading, ``deck_part: "head"``).
    """
    setup = nbtemplate.setup_cell_index(cells)
    deck: list = []
    section = ""  # the running head: the current ## (and ###) title
    formulas_shown: set[str] = set()  # formulas already on a slide
    deferred: set[int] = set()  # code cells whose outputs go on the next notice's sub-slide
    for run in _notice_runs(cells, setup).values():
        if any(cells[j].get("outputs") for j in run[:-1]) or not _fits_under_code(cells[run[-1]]):
            deferred.update(run)
    pending: list = []  # (code cell, outputs) for the next notice's sub-slide

    def head(slide_type: str = "subslide") -> None:
        deck.append(_md(f"#### {section}", slide_type, "head"))

    for index, cell in enumerate(cells):
        kind = _kind(cell, index, setup)
        text = nbtemplate.source(cell)
        if kind == "setup":
            continue
        if kind == "title":
            deck.append(_md(text, "slide", "title"))
        elif kind == "heading":
            level = len(_HEADING.match(text.strip().splitlines()[0]).group(1))
            titles = [_HEADING.match(line).group(2) for line in text.splitlines() if line.strip()]
            if level <= 2:
                section = " / ".join(titles)
                deck.append(_md(text, "slide", "heading"))
            else:
                section = (
                    section.split(" / ")[0] + " / " + " / ".join(titles) if section else " / ".join(titles)
                )
                deck.append(_md(text, "subslide", "heading"))
        elif kind == "notice":  # under the outputs it is about; all of it in the notes
            if pending:
                head()
                deck.extend(_code(code_cell, "-", "output", "", outputs) for code_cell, outputs in pending)
                pending.clear()
            visible = _shown_notice(text)
            deck.append(_md(visible, "-", "notice"))
            if visible != text.strip():
                deck.append(_md(text, "notes", "notes"))
        elif kind == "nav":
            deck.append(_md(text, "subslide", "nav"))
        elif kind == "list":
            first, _, rest = text.partition("\n")
            match = _HEADING.match(first)
            if match and len(match.group(1)) <= 2:
                section = match.group(2)
            slide_type = "slide" if match and len(match.group(1)) <= 2 else "subslide" if match else "-"
            if slide_type == "-" and not (deck and deck[-1].metadata["deck_part"] == "heading"):
                head()  # a list under a code slide, or the English twin of a list: a sub-slide of its own
            deck.append(_md(text, slide_type, "list"))
        elif kind == "prose":
            lines = text.splitlines()
            heading = [line for line in lines[:1] if _HEADING.match(line)]
            twin = _twin_heading(cells, index, deck) if heading else None
            if twin is not None:  # "## 참고 문헌" then "## References": one slide, "참고 문헌 · References"
                twin.source += SEP + _HEADING.match(heading[0]).group(2)
                if _HEADING.match(heading[0]).group(1) in ("#", "##"):
                    section = _HEADING.match(twin.source).group(2)
            elif heading and _HEADING.match(heading[0]).group(1) in ("#", "##"):
                section = _HEADING.match(heading[0]).group(2)
                deck.append(_md(heading[0], "slide", "heading"))
            elif heading:
                deck.append(_md(heading[0], "subslide", "heading"))
            formulas = [m.group(0) for m in _DISPLAY_MATH.finditer(text) if m.group(0) not in formulas_shown]
            if formulas:  # the English twin holds the same formulas: show them once
                formulas_shown.update(formulas)
                deck.append(_md("\n\n".join(formulas), "-", "formula"))
            deck.append(_md(text, "notes", "notes"))
        elif index in deferred:  # code whose outputs go with the notice below it
            for piece in _chunks(text) if text.strip() else []:
                head()
                deck.append(_code(cell, "-", "code", piece))
            for kind_of, outputs in _output_groups(cell.get("outputs", [])):
                parts = _split_text_outputs(outputs) if kind_of == "text" else [outputs]
                for part in parts[:-1]:  # printed output longer than a screen: all but its last piece
                    head()
                    deck.append(_code(cell, "-", "output", "", part))
                pending.append((cell, parts[-1]))
        else:  # code
            pieces = _chunks(text) if text.strip() else []
            groups = _output_groups(cell.get("outputs", []))
            for number, piece in enumerate(pieces):
                head()
                last = number == len(pieces) - 1
                outputs = []
                if last and groups and groups[0][0] == "text":
                    shown = _text_of(groups[0][1])
                    if _screen_lines(piece) + _screen_lines(shown) <= CODE_LINES:
                        outputs = groups.pop(0)[1]
                deck.append(_code(cell, "-", "code", piece, outputs))
            for kind_of, outputs in groups:
                for part in _split_text_outputs(outputs) if kind_of == "text" else [outputs]:
                    head()
                    deck.append(_code(cell, "-", "output", "", part))
    return deck


def lecture_notebook(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """A copy of ``nb`` whose cells are :func:`lecture_cells` (metadata kept)."""
    deck = copy.deepcopy(nb)
    deck.cells = lecture_cells(nb.cells)
    return deck


# --- reveal.js, offline -----------------------------------------------------------------------


def fetch_reveal(cache: Path = REVEAL_CACHE, version: str = REVEAL_VERSION) -> Path:
    """A reveal.js ``version`` folder (``dist/``, ``plugin/``), fetched once from the npm registry.

    Runs ``npm pack reveal.js@<version>`` and unpacks the tarball into ``cache``; later calls
    return ``cache`` at once. Raises SystemExit with what to do when npm is missing or fails.
    """
    if all((cache / name).is_file() for name in REVEAL_FILES):
        return cache
    npm = shutil.which("npm")
    if npm is None:
        raise SystemExit(
            "reveal.js is needed for offline slides and is fetched with npm, which was not found.\n"
            "Install Node.js (which includes npm, https://nodejs.org), or pass a reveal.js 4 folder\n"
            "with --reveal-dir DIR, or load reveal.js from the network with --reveal-cdn."
        )
    download = cache.parent / f"{cache.name}.download"
    shutil.rmtree(download, ignore_errors=True)
    download.mkdir(parents=True)
    print(f"fetching reveal.js {version} from the npm registry (once) ...", flush=True)
    done = subprocess.run(
        [npm, "pack", f"reveal.js@{version}", "--silent"], cwd=download, capture_output=True, text=True
    )
    tarballs = sorted(download.glob("reveal.js-*.tgz"))
    if done.returncode != 0 or not tarballs:
        raise SystemExit(
            f"npm pack reveal.js@{version} failed ({done.stderr.strip()[-500:] or 'no tarball'}).\n"
            "Check the network or npm's registry setting (npm config get registry), or pass a\n"
            "reveal.js 4 folder with --reveal-dir DIR, or use --reveal-cdn."
        )
    with tarfile.open(tarballs[0]) as archive:
        archive.extractall(download, filter="data")
    shutil.rmtree(cache, ignore_errors=True)
    (download / "package").rename(cache)
    shutil.rmtree(download, ignore_errors=True)
    return cache


def copy_reveal(reveal_dir: Path, out: Path = SLIDES) -> str:
    """Copy what the decks load from reveal.js (:data:`REVEAL_FILES`) from ``reveal_dir`` to
    ``out/reveal.js``; returns the prefix the decks in ``out/<lang>/`` use to load it."""
    missing = [name for name in REVEAL_FILES[:-1] if not (reveal_dir / name).is_file()]
    if missing:
        raise SystemExit(f"{reveal_dir} is not a reveal.js 4 folder (missing {', '.join(missing)})")
    for name in REVEAL_FILES:
        if (reveal_dir / name).is_file():
            (out / "reveal.js" / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(reveal_dir / name, out / "reveal.js" / name)
    return "../reveal.js"


# --- Export ----------------------------------------------------------------------------------


def export(
    executed: Path,
    lang: str,
    target: Path,
    reveal_prefix: str = "../reveal.js",
    fonts_prefix: str = "../fonts",
) -> Path:
    """Write the lecture deck of one executed notebook (of edition ``lang``) to ``target``.

    ``reveal_prefix`` and ``fonts_prefix`` are where the page finds reveal.js and the web
    font, relative to ``target`` (or URLs). Returns ``target``.
    """
    page = website.for_static_page(nbformat.read(executed, as_version=4), lang, link_suffix=".slides.html")
    deck = lecture_notebook(page)
    for cell in deck.cells:  # the keys that move the deck on, under the title (the deck has no on-screen arrows)
        if cell.metadata.get("deck_part") == "title":
            cell.source += f'\n\n<p class="deck-keys">{html.escape(website.LABELS[lang]["deck_keys"])}</p>\n'
            break
    # formulas in the speaker notes: the speaker view needs the math font
    math = any(cell.metadata.get("deck_part") == "notes" and "$" in cell.source for cell in deck.cells)
    exporter = website.CourseSlidesExporter(
        language_code=website.LABELS[lang]["html_lang"],  # nbconvert writes <html lang> from this
        reveal_url_prefix=reveal_prefix,
        reveal_width=str(WIDTH),
        reveal_height=str(HEIGHT),
        reveal_number="c/t",
        exclude_input_prompt=True,
        exclude_output_prompt=True,
    )
    resources = {
        "metadata": {"name": page.metadata["title"]},
        "figure_alt": website.LABELS[lang]["figure"],
        "language_code": website.LABELS[lang]["html_lang"],
        "course_font_css": webfont.font_face_css(fonts_prefix),
        "course_font_stack": webfont.font_stack('"Source Sans 3"', '"Helvetica Neue"', "Arial", "sans-serif"),
        "course_fonts_prefix": fonts_prefix,
        "course_speaker_css": _speaker_css(Path(os.path.normpath(target.parent / fonts_prefix)), math=math),
        "course_mono_stack": webfont.font_stack('"DejaVu Sans Mono"', "Menlo", "Consolas", "monospace"),
        "course_math_stack": webfont.math_font_stack(),
    }
    body, _ = exporter.from_notebook_node(deck, resources=resources)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(body, encoding="utf-8")
    return target


def write_decks(executed: dict[str, list[Path]], out: Path = SLIDES, reveal_prefix: str = "../reveal.js") -> list[Path]:
    """Write the deck of each executed notebook (``{edition: [executed .ipynb, ...]}``) to
    ``out/<edition>/<name>.slides.html``, the web font to ``out/fonts`` and the data page to
    ``out/data``; returns the decks.

    Decks link only to decks that exist: in a narrowed build (``--lang ko 03``) the previous and
    next links to decks neither this build nor an earlier one wrote become plain text, as on the
    website (:func:`website.unlink_missing`).
    """
    # the characters the decks show: their notebooks', the decks an earlier (narrowed) build left
    # in ``out`` (they share the font, so a narrower set would blank their Hangul) and the decks'
    # own labels (the keys line); built first, since each deck's speaker view names the font files
    sources = [path for paths in executed.values() for path in paths] + sorted(out.glob("*/*.slides.html"))
    text = "".join(path.read_text(encoding="utf-8") for path in sources)
    # ... and the deck index's own text (headings, edition names, the line under the title)
    index_text = website.index_page({lang: [] for lang in website.EDITIONS}, about=website.DECK_INDEX_ABOUT)
    labels = "".join(labels["deck_keys"] for labels in website.LABELS.values()) + index_text
    webfont.build(out / "fonts", text + labels)
    decks = [
        export(path, lang, out / lang / f"{path.stem}.slides.html", reveal_prefix)
        for lang, paths in executed.items()
        for path in paths
    ]
    website.write_data_page(out, index_link=False)  # the decks link to the data folder's description
    for deck in decks:
        website.unlink_missing(deck)
    write_deck_index(out)
    return decks


def write_deck_index(out: Path = SLIDES) -> Path:
    """``out/index.html``: a link to every deck in ``out`` (this build's and an earlier one's), by edition."""
    rows = {}
    for lang in website.EDITIONS:
        found = {path.name.removesuffix(".slides.html"): path for path in (out / lang).glob("*.slides.html")}
        ordered = website.course_order(set(found))
        rows[lang] = [(f"{lang}/{name}.slides.html", website.page_title(found[name])) for name in ordered]
    index = out / "index.html"
    page = website.index_page({lang: r for lang, r in rows.items() if r}, about=website.DECK_INDEX_ABOUT)
    index.write_text(page, encoding="utf-8")
    return index


def _speaker_css(fonts: Path, math: bool = True) -> str:
    """Style for the speaker view's window (press s), which does not see the deck's style sheet:
    the regular Korean web font embedded as a data: URL (the bold is synthesised) and, where the
    notes hold formulas (``math``), the math font too (0.36 MB more); when a font has not been
    built, its @font-face rule by address. Embedded, because the window (about:blank, opened by the
    deck) resolves no address relative to the deck, and its requests for files next to the deck
    do not complete under Playwright's request interception, which the browser tests use."""
    stack = webfont.font_stack('"Helvetica Neue"', "Arial", "sans-serif")
    # the deck's script puts the fonts' address in place of __FONTS__
    by_address = webfont.font_face_css("__FONTS__").splitlines()
    faces = []
    for family, path, wanted in (
        (webfont.FAMILY, fonts / webfont.file_name("normal"), True),
        (webfont.MATH_FAMILY, fonts / webfont.MATH_FILE, math),
    ):
        if not wanted:
            continue
        if path.is_file():
            data = base64.b64encode(path.read_bytes()).decode("ascii")
            faces.append(
                f'@font-face {{ font-family: "{family}"; font-weight: normal; '
                f'src: url("data:font/woff2;base64,{data}") format("woff2"); }}'
            )
        else:
            faces += [rule for rule in by_address if f'font-family: "{family}";' in rule]
    notes = ".speaker-controls-notes"
    return "\n".join(
        [
            *faces,
            f"body, {notes}, {notes} * {{ font-family: {stack}; }}",
            f"{notes} math, {notes} math * {{ font-family: {webfont.math_font_stack()}; }}",
        ]
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("pattern", nargs="?", default="", help="only notebooks whose file name contains this")
    language_argument(parser)
    source = parser.add_mutually_exclusive_group()
    source.add_argument(
        "--reveal-dir", type=Path, help="a local reveal.js 4 folder to copy next to the decks"
    )
    source.add_argument(
        "--reveal-cdn", action="store_true", help=f"load reveal.js from {CDN_PREFIX} (needs a network)"
    )
    parser.add_argument("--force", action="store_true", help="execute the notebooks again")
    args = parser.parse_args(argv)
    if args.reveal_cdn:
        prefix = CDN_PREFIX
    else:
        prefix = copy_reveal(args.reveal_dir or fetch_reveal())
    executed, failed = website.execute_editions(args.lang, args.pattern, force=args.force)
    count = len(write_decks(executed, SLIDES, prefix))
    where = "the network (--reveal-cdn)" if args.reveal_cdn else f"{SLIDES / 'reveal.js'}"
    print(f"\n{count} slide deck(s) in {SLIDES} (reveal.js from {where}); open {SLIDES / 'index.html'}; press s in a deck for the notes")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
