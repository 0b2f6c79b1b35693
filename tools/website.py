"""Build the course website: every notebook executed, in three editions, fully offline.

    python tools/website.py              # build/site/index.html, build/site/{both,ko,en}/NN_name.html
    python tools/website.py --lang en 03 # only the English edition of notebooks matching "03"
    python tools/website.py --force      # execute again even where nothing changed

Each edition (bilingual "both", Korean "ko", English "en"; see tools/editions.py) of each
notebook is executed in a fresh kernel (tools/nbrun.py, as the tests do), in parallel (one
worker process per core, ``--jobs``), and the executed notebooks are kept in
build/executed-editions/ (reused while the notebook, posviz and data/ are unchanged;
``course.py run`` writes the bilingual ones, tools/slides.py uses them too). Pages are rendered
with nbconvert's HTML exporter (lab template) into plain, self-contained HTML files: figures are
embedded PNGs, formulas are turned into MathML at build time (latex2mathml; browsers draw
MathML natively) and drawn with the bundled math font Noto Sans Math, Korean text is drawn
with a web font made from the bundled NanumGothic (both tools/webfont.py, in
build/site/fonts/), and nothing is loaded from the network — no MathJax, require.js, widget
scripts or font service. Links go only to pages that exist (a narrowed build
leaves the others as plain text); data/README.md becomes build/site/data/README.html.
Interactive ipywidgets explorers cannot run without a kernel; the page shows a note in their
place and the notebooks' static fallback figures below them. Open build/site/index.html.
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import html
import multiprocessing
import os
import re
import sys
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

import nbformat
from jinja2 import pass_context
from nbconvert import HTMLExporter, SlidesExporter
from nbconvert.filters.markdown_mistune import IPythonRenderer, MarkdownWithMath

if __package__:  # python -m tools.NAME, or imported as tools.NAME
    from . import editions, nbtemplate, webfont
    from .languages import EDITIONS, language_argument
    from .nbrun import ROOT, execute, notebook_paths
else:  # python tools/NAME.py: tools/ itself is on sys.path
    import editions
    import nbtemplate
    import webfont
    from languages import EDITIONS, language_argument
    from nbrun import ROOT, execute, notebook_paths

SITE = ROOT / "build" / "site"
EXECUTED = ROOT / "build" / "executed-editions"
TEMPLATES = Path(__file__).resolve().parent / "templates"
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
LABELS = {
    "both": {
        "name": "한·영 · Bilingual",
        "figure": "그림 · Figure",
        "home": "강좌 목차 · Course index",
        "prev": "이전 · Previous",
        "next": "다음 · Next",
        "html_lang": "ko",
        "deck_keys": "→ 또는 스페이스: 다음 · Esc: 전체 보기 · S: 발표자 노트 · "
        "→ or Space: next · Esc: overview · S: speaker notes",
        "widget": "대화형 탐색기: Jupyter나 Colab에서 노트북을 실행하면 슬라이더를 쓸 수 있습니다. 아래 그림은 같은 내용을 "
        "정적으로 보여 줍니다. · Interactive explorer: run the notebook in Jupyter or Colab to use the "
        "sliders; the figure below shows the same view statically.",
    },
    "ko": {
        "name": "한국어",
        "figure": "그림",
        "home": "강좌 목차",
        "prev": "이전",
        "next": "다음",
        "html_lang": "ko",
        "deck_keys": "→ 또는 스페이스: 다음 · Esc: 전체 보기 · S: 발표자 노트",
        "widget": "대화형 탐색기: Jupyter나 Colab에서 노트북을 실행하면 슬라이더를 쓸 수 있습니다. 아래 그림은 같은 내용을 "
        "정적으로 보여 줍니다.",
    },
    "en": {
        "name": "English",
        "figure": "Figure",
        "home": "Course index",
        "prev": "Previous",
        "next": "Next",
        "html_lang": "en",
        "deck_keys": "→ or Space: next · Esc: overview · S: speaker notes",
        "widget": "Interactive explorer: run the notebook in Jupyter or Colab to use the sliders; the figure "
        "below shows the same view statically.",
    },
}
_NOTEBOOK_LINK = re.compile(r"(?<![/\w])(\d\d[a-z]?_[A-Za-z0-9_]+)\.ipynb\b")
_DATA_LINK = re.compile(r"(?<![/\w])(\.\./data/[A-Za-z0-9_./-]+)\.md\b")  # rendered as out/data/*.html
_BADGE_IMAGE = re.compile(
    r'<img [^>]*src="https://colab\.research\.google\.com/assets/colab-badge\.svg"[^>]*>'
)
def offline_badge(lang: str) -> str:
    """The Colab badge without its image (a link still, but nothing to fetch), in the edition's language."""
    return f'<span class="colab-badge">{html.escape(nbtemplate.BADGE_ALT[lang])}</span>'


# --- Rendering ---------------------------------------------------------------------------------


# latex2mathml's \overline{x} (\underline{x}): x with a U+2015 HORIZONTAL BAR as its accent
_BAR_ACCENT = '<mo accent="true">&#x02015;</mo>'
# the rule as TeX draws it, in Noto Sans Math's MATH constants (OverbarRuleThickness 0.071 em,
# OverbarVerticalGap 0.15 em; the same under the base)
_BAR_STYLE = "border-{side}: 0.07em solid; padding-{side}: 0.15em"


def rule_bars(mathml: str) -> str:
    """``mathml`` with latex2mathml's ``\\overline`` and ``\\underline`` drawn as a rule over
    (under) the whole of their content.

    latex2mathml writes ``\\overline{x}`` as ``<mover>x<mo accent="true">―</mo></mover>``, U+2015
    HORIZONTAL BAR over x, which a browser stretches to the width of x only with a math font that
    has wide variants of U+2015; the bundled Noto Sans Math (tools/webfont.py) has none, so the
    bar stayed one character wide (the conjugate bar over ``(W_k x_n)`` in notebook 05). Such an
    ``mover`` (``munder``) becomes an ``mrow`` whose CSS border is the rule; every other formula is
    returned unchanged."""
    for tag, side in (("mover", "top"), ("munder", "bottom")):
        end = f"{_BAR_ACCENT}</{tag}>"
        while (stop := mathml.find(end)) >= 0:
            depth = 0
            for opening in reversed(list(re.finditer(rf"<(/?){tag}\b[^>]*>", mathml[:stop]))):
                if opening.group(1):
                    depth += 1
                elif depth:
                    depth -= 1
                else:
                    break
            else:  # no opening tag: not latex2mathml's output, leave it
                break
            rule = f'<mrow style="{_BAR_STYLE.format(side=side)}">'
            mathml = f"{mathml[: opening.start()]}{rule}{mathml[opening.end() : stop]}</mrow>{mathml[stop + len(end) :]}"
    return mathml


_FENCED_TABLE = re.compile(r"<mo>(?:[(\[{|‖⟨]|&#x0*(?:28|5B|7B|7C|2016|27E8);)</mo><mtable\b", re.IGNORECASE)
_TABLE_TAG = re.compile(r"<(/?)mtable\b[^>]*>")
_CLOSING_FENCE = re.compile(r"<mo>(?:[)\]}|‖⟩]|&#x0*(?:29|5D|7D|7C|2016|27E9);)</mo>", re.IGNORECASE)


def group_matrices(mathml: str) -> str:
    """``mathml`` with each fenced matrix (``pmatrix``, ``bmatrix``, ...) in an ``mrow`` of its own.

    latex2mathml writes a matrix as its fences and table, ``<mo>(</mo><mtable>...</mtable><mo>)</mo>``,
    straight into the surrounding row, where a browser stretches the fences to the tallest thing
    in that row: next to a taller neighbour (the underbraced matrix of notebook 03, section 7) a
    two-row vector got parentheses twice its height. In a row of their own they fit their table."""
    out, at = [], 0
    while match := _FENCED_TABLE.search(mathml, at):
        depth, end = 0, None
        for tag in _TABLE_TAG.finditer(mathml, match.end() - len("<mtable")):
            depth += -1 if tag.group(1) else 1
            if depth == 0:
                end = tag.end()
                break
        closing = _CLOSING_FENCE.match(mathml, end) if end else None
        if closing is None:  # not a fenced table
            out.append(mathml[at : match.end()])
            at = match.end()
            continue
        start, stop = match.start(), closing.end()
        wrapped = mathml.endswith("<mrow>", 0, start) and mathml.startswith("</mrow>", stop)
        inner = group_matrices(mathml[match.end() - len("<mtable") : end])  # matrices inside its cells
        group = f"{mathml[start : match.end() - len('<mtable')]}{inner}{mathml[end:stop]}"
        out.append(mathml[at:start] + (group if wrapped else f"<mrow>{group}</mrow>"))
        at = stop
    return "".join(out) + mathml[at:]


class MathMLRenderer(IPythonRenderer):
    """nbconvert's markdown renderer, with TeX math turned into MathML at build time
    (latex2mathml, then :func:`rule_bars` and :func:`group_matrices`).

    A formula latex2mathml cannot convert is shown as its TeX source in ``<code>`` and listed
    in ``problems`` (the site build prints them).
    """

    problems: list[str] = []

    def _mathml(self, tex: str, display: str) -> str:
        try:
            from latex2mathml.converter import convert

            return group_matrices(rule_bars(convert(tex, display=display)))
        except ImportError:
            problem = "latex2mathml is not installed (pip install latex2mathml): formulas are shown as TeX"
        except Exception as error:  # latex2mathml raises many kinds; keep the page and report
            problem = f"formula not converted ({type(error).__name__}): {tex[:80]}"
        if problem not in MathMLRenderer.problems:
            MathMLRenderer.problems.append(problem)
        return f'<code class="tex">{self.escape_html(tex)}</code>'

    def block_math(self, body: str) -> str:
        return self._mathml(body, "block")

    def inline_math(self, body: str) -> str:
        return self._mathml(body, "inline")

    def latex_environment(self, name: str, body: str) -> str:
        return self._mathml(f"\\begin{{{name}}}{body}\\end{{{name}}}", "block")


class _OfflineMixin:
    """Render markdown with :class:`MathMLRenderer`; look for templates in tools/templates."""

    def __init__(self, **kw):
        kw.setdefault("extra_template_basedirs", [str(TEMPLATES)])
        super().__init__(**kw)

    @pass_context
    def markdown2html(self, context, source):
        cell = context.get("cell", {})
        renderer = MathMLRenderer(
            escape=False,
            attachments=cell.get("attachments", {}),
            embed_images=self.embed_images,
            path=context.get("resources", {}).get("metadata", {}).get("path", ""),
            anchor_link_text=self.anchor_link_text,
            exclude_anchor_links=self.exclude_anchor_links,
        )
        return MarkdownWithMath(renderer=renderer).render(source)


class CourseHTMLExporter(_OfflineMixin, HTMLExporter):
    """A page of the course website (template ``tools/templates/course_html``)."""

    def __init__(self, **kw):
        super().__init__(template_name="course_html", **kw)


class CourseSlidesExporter(_OfflineMixin, SlidesExporter):
    """reveal.js slides (template ``tools/templates/course_slides``; see tools/slides.py)."""

    def __init__(self, **kw):
        super().__init__(template_name="course_slides", **kw)


def for_static_page(
    nb: nbformat.NotebookNode, lang: str, link_suffix: str = ".html"
) -> nbformat.NotebookNode:
    """A copy of an executed notebook ready for a kernel-less page: links between notebooks
    point at the .html pages, live widgets are replaced by a note, the title follows the edition."""
    nb = copy.deepcopy(nb)
    nb.metadata.pop("widgets", None)
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            text = _NOTEBOOK_LINK.sub(lambda m: m.group(1) + link_suffix, nbtemplate.source(cell))
            text = _DATA_LINK.sub(r"\1.html", text)
            cell.source = _BADGE_IMAGE.sub(offline_badge(lang), text)
        for output in cell.get("outputs", []):
            if WIDGET_MIME in output.get("data", {}):
                output["data"] = {
                    "text/html": f'<div class="widget-note">{html.escape(LABELS[lang]["widget"])}</div>'
                }
    nb.metadata["title"] = notebook_title(nb)
    return nb


def notebook_title(nb: nbformat.NotebookNode) -> str:
    """The text of the notebook's first heading (its title), without markdown markers."""
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            for line in nbtemplate.source(cell).splitlines():
                if line.startswith("#"):
                    return re.sub(r"[*_`]", "", line.lstrip("#").strip())
    return "notebook"


def _link(href: str | None, text: str, current: bool = False) -> str:
    if href is None:
        return f'<span class="current">{html.escape(text)}</span>' if current else ""
    return f'<a href="{href}">{html.escape(text)}</a>'


def _nav(names: list[str], name: str, lang: str, titles: dict, exists: dict, position: str) -> str:
    """The navigation bar of page ``lang/name``: index, previous/next among ``names`` (the pages
    of this edition, in course order), and the other editions' pages that exist (``exists``)."""
    labels = LABELS[lang]
    index = names.index(name)
    parts = [_link("../index.html", "⌂ " + labels["home"])]
    if index > 0:
        parts.append(_link(f"{names[index - 1]}.html", f"← {labels['prev']}: {titles[names[index - 1]]}"))
    if index + 1 < len(names):
        parts.append(_link(f"{names[index + 1]}.html", f"{labels['next']}: {titles[names[index + 1]]} →"))
    other = " | ".join(
        _link(
            None if other == lang else f"../{other}/{name}.html", LABELS[other]["name"], current=other == lang
        )
        for other in EDITIONS
        if other == lang or name in exists[other]
    )
    return f'<nav class="course-nav {position}">{" ".join(parts)}<span class="langs">{other}</span></nav>'


def page_font_css(font_prefix: str) -> str:
    """CSS for a course page whose web fonts lie in ``font_prefix``: the @font-face rules,
    nbconvert's lab font variables with the Korean web font first, and the bundled math font
    for formulas (tools/webfont.py)."""
    sans = webfont.font_stack("system-ui", "-apple-system", '"Segoe UI"', "Helvetica", "Arial", "sans-serif")
    mono = webfont.font_stack("menlo", "consolas", '"DejaVu Sans Mono"', "monospace")
    return f"""{webfont.font_face_css(font_prefix)}
:root {{ --jp-content-font-family: {sans}; --jp-ui-font-family: {sans}; --jp-code-font-family: {mono}; }}
body, nav.course-nav, span.colab-badge {{ font-family: var(--jp-content-font-family); }}
math {{ font-family: {webfont.math_font_stack()}; }}"""


def course_order(names) -> list[str]:
    """``names`` (notebook stems) in course order; names that are no course notebook go last."""
    order = {path.stem: i for i, path in enumerate(notebook_paths())}
    return sorted(set(names), key=lambda n: (order.get(n, len(order)), n))


_LOCAL_LINK = re.compile(
    r'<a\b([^>]*?)\bhref="(?![a-zA-Z][a-zA-Z0-9+.-]*:|#|/)([^"#?]+)([#?][^"]*)?"([^>]*)>(.*?)</a>', re.S
)


def unlink_missing(page: Path) -> int:
    """Turn every local link of ``page`` whose target file does not exist into plain text
    (``<span class="not-built">``), e.g. a link to a notebook a narrowed build did not build.
    Returns how many links were removed."""
    text = page.read_text(encoding="utf-8")
    removed = 0

    def fix(match: re.Match) -> str:
        nonlocal removed
        if (page.parent / html.unescape(match.group(2))).is_file():
            return match.group(0)
        removed += 1
        return f'<span class="not-built">{match.group(5)}</span>'

    fixed = _LOCAL_LINK.sub(fix, text)
    if removed:
        page.write_text(fixed, encoding="utf-8")
    return removed


_REFERENCE = re.compile(r"""\b(?:href|src)\s*=\s*["']([^"']*)["']|url\(\s*["']?([^"')]+)["']?\s*\)""")


def dead_links(folder: Path) -> list[str]:
    """Every local reference (``href``, ``src``, CSS ``url()``) of the HTML files under ``folder``
    whose target file does not exist, as ``"page: target"``. References with a scheme
    (``https:``, ``data:``, ``mailto:``), to an anchor of the same page (``#x``) or empty are
    not local and not checked."""
    dead = []
    for page in sorted(Path(folder).rglob("*.html")):
        for match in _REFERENCE.finditer(page.read_text(encoding="utf-8")):
            target = html.unescape(match.group(1) if match.group(1) is not None else match.group(2)).strip()
            target = re.split(r"[#?]", target, maxsplit=1)[0]
            if not target or re.match(r"[a-zA-Z][a-zA-Z0-9+.-]*:", target) or target.startswith("//"):
                continue
            if not (page.parent / target).is_file():
                dead.append(f"{page.relative_to(folder).as_posix()}: {target}")
    return dead


def with_cell_languages(body: str, lang: str) -> str:
    """Mark the English prose of a bilingual page (``<html lang="ko">``) with ``lang="en"``, so
    that screen readers and browser translation read each cell in its own language."""
    if lang != "both":
        return body
    return re.sub(r'(<div class="[^"]*\bcelltag_lang-en\b[^"]*")', r'\1 lang="en"', body)


def render_pages(executed: dict[str, list[Path]], out: Path = SITE) -> list[Path]:
    """Write one HTML page per executed notebook into ``out/<edition>/``, and ``out/index.html``.

    ``executed`` maps an edition ("both", "ko", "en") to its executed notebook files. Pages
    already in ``out`` from an earlier build are kept and linked (so building one edition keeps
    the others); links to pages that exist neither way are left as plain text, so the site has
    no dead link. Also writes ``out/data/README.html`` (the data folder's description, which the
    notebooks link to) and the web fonts ``out/fonts/`` (tools/webfont.py): the Korean one subset
    to the characters of every page in ``out``, and the math font. Returns the pages written, index first. Formulas that
    could not be converted are printed and left in ``MathMLRenderer.problems``.
    """
    exporter = CourseHTMLExporter()
    written = []
    MathMLRenderer.problems.clear()
    notebooks = {lang: {p.stem: p for p in executed.get(lang, [])} for lang in EDITIONS}
    exists = {
        lang: set(notebooks[lang])
        | ({p.stem for p in (out / lang).glob("*.html")} if (out / lang).is_dir() else set())
        for lang in EDITIONS
    }
    page_css = page_font_css("../fonts")
    for lang in EDITIONS:
        if not notebooks[lang]:
            continue
        (out / lang).mkdir(parents=True, exist_ok=True)
        loaded = {name: nbformat.read(path, as_version=4) for name, path in notebooks[lang].items()}
        names = course_order(exists[lang])
        titles = {
            name: notebook_title(loaded[name]) if name in loaded else page_title(out / lang / f"{name}.html")
            for name in names
        }
        for name in course_order(loaded):
            page_nb = for_static_page(loaded[name], lang)
            resources = {
                "metadata": {"name": titles[name]},
                "language_code": LABELS[lang]["html_lang"],
                "figure_alt": LABELS[lang]["figure"],
                "font_css": page_css,
                "course_nav": _nav(names, name, lang, titles, exists, "top"),
                "course_nav_bottom": _nav(names, name, lang, titles, exists, "bottom"),
            }
            exporter.language_code = LABELS[lang]["html_lang"]  # nbconvert writes <html lang> from this, not from resources
            body, _ = exporter.from_notebook_node(page_nb, resources=resources)
            body = with_cell_languages(body, lang)
            target = out / lang / f"{name}.html"
            target.write_text(body, encoding="utf-8")
            written.append(target)
    for problem in MathMLRenderer.problems:
        print(f"  problem: {problem}")
    write_data_page(out)
    rows = {}
    for lang in EDITIONS:
        names = course_order(exists[lang])
        rows[lang] = [(f"{lang}/{name}.html", page_title(out / lang / f"{name}.html")) for name in names]
    index = out / "index.html"
    index.write_text(index_page({lang: r for lang, r in rows.items() if r}), encoding="utf-8")
    for page in written:
        unlink_missing(page)
    pages = [
        index,
        out / "data" / "README.html",
        *(out / lang / f"{n}.html" for lang in EDITIONS for n in exists[lang]),
    ]
    webfont.build(out / "fonts", "".join(p.read_text(encoding="utf-8") for p in pages if p.is_file()))
    return [index, *written]


def page_title(page: Path) -> str:
    match = re.search(r"<title>(.*?)</title>", page.read_text(encoding="utf-8"), re.DOTALL)
    return html.unescape(match.group(1).strip()) if match else page.stem


_PLAIN_CSS = """body {{ font-family: {font}; max-width: 68em; margin: 2em auto; padding: 0 1em; line-height: 1.5; }}
main {{ display: flex; flex-wrap: wrap; gap: 2em; }}
section {{ flex: 1 1 18em; }}
ul {{ list-style: none; padding-left: 0; }}
li {{ margin: 0.4em 0; }}
a {{ text-decoration: none; }}
table {{ border-collapse: collapse; }} td, th {{ border: 1px solid #d0d7de; padding: 0.2em 0.6em; text-align: left; }}
code {{ font-family: {code_font}; }}
.anchor-link {{ visibility: hidden; margin-left: 0.3em; }} :hover > .anchor-link {{ visibility: visible; }}"""


def _plain_page(title: str, body: str, font_prefix: str, lang: str = "ko") -> str:
    """A simple page (index, data description) with the course's fonts."""
    css = _PLAIN_CSS.format(
        font=webfont.font_stack("system-ui", "sans-serif"),
        code_font=webfont.font_stack("menlo", "consolas", "'DejaVu Sans Mono'", "monospace"),
    )
    return f"""<!DOCTYPE html>
<html lang="{lang}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{html.escape(title)}</title>
<style>
{webfont.font_face_css(font_prefix)}
{css}
</style>
</head>
<body>
{body}
</body>
</html>
"""


_EMPTY_THEAD = re.compile(r"<thead>\s*<tr>(?:\s*<th(?:\s[^>]*)?>\s*</th>)+\s*</tr>\s*</thead>\s*")


def _without_empty_table_heads(body: str) -> str:
    """``body`` without the header row of key-value tables written ``| | |`` in markdown (GFM needs a
    header row; one whose cells are all empty would show as an empty first row)."""
    return _EMPTY_THEAD.sub("", body)


def write_data_page(out: Path, *, index_link: bool = True) -> Path:
    """``out/data/README.html``: ``data/README.md`` as a page (the notebooks link to it).

    ``index_link``: start the page with a link back to ``out/index.html`` (the site has one, the decks do not).
    """
    from nbconvert.filters.markdown_mistune import markdown2html_mistune

    body = _without_empty_table_heads(markdown2html_mistune((ROOT / "data" / "README.md").read_text(encoding="utf-8")))
    back = '<p><a href="../index.html">⌂ 강좌 목차 · Course index</a></p>' if index_link else ""
    target = out / "data" / "README.html"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(_plain_page("data/", back + body, "../fonts", lang="en"), encoding="utf-8")
    return target


DECK_INDEX_ABOUT = """언어판마다 모은 강의 슬라이드입니다. 슬라이드에서 <kbd>s</kbd>를 누르면 발표자 화면이 열립니다.<br>
The lecture decks, by edition. Press <kbd>s</kbd> in a deck for the speaker view."""


def index_page(rows: dict[str, list[tuple[str, str]]], about: str | None = None) -> str:
    """The index page: one column of links per edition in ``rows`` (``{edition: [(href, title)]}``).
    ``about`` is the line under the heading; by default, the website's (which editions it holds)."""
    columns = []
    for lang, links in rows.items():
        items = "\n".join(f'<li><a href="{href}">{html.escape(title)}</a></li>' for href, title in links)
        columns.append(
            f'<section lang="{LABELS[lang]["html_lang"]}"><h2>{LABELS[lang]["name"]}</h2><ul>{items}</ul></section>'
        )
    title = "트랜스포머의 위치 인코딩 · Positional Encoding in Transformers"
    if about is None and len(rows) == len(EDITIONS):
        about = """실행된 노트북을 세 가지 판으로 봅니다: 한·영 병기, 한국어, 영어. 그림은 각 판의 언어로 그려져 있습니다.<br>
The executed notebooks in three editions: bilingual, Korean and English, with figures drawn in each edition's language."""
    elif about is None:  # a narrowed build (course.py run builds the bilingual edition only)
        built = " · ".join(LABELS[lang]["name"] for lang in rows)
        about = f"""이 빌드에 있는 판: {built}. 세 판(한·영 병기, 한국어, 영어)을 모두 만들려면 <code>python3 course.py site</code>를 실행하세요.<br>
The editions in this build: {built}. To build all three (bilingual, Korean and English), run <code>python3 course.py site</code>."""
    body = f"""<h1>{title}</h1>
<p>{about}</p>
<main>
{"".join(columns)}
</main>
<p><a href="data/README.html">data/</a>: 강좌가 읽는 데이터 · the data the course reads</p>"""
    return _plain_page(title, body, "fonts")


# --- Executing the editions --------------------------------------------------------------------


def _inputs_digest() -> str:
    """A digest of what a notebook's outputs depend on besides the notebook: posviz and data/."""
    digest = hashlib.sha256()
    for folder in (ROOT / "posviz", ROOT / "data"):
        for path in sorted(folder.rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                digest.update(path.relative_to(ROOT).as_posix().encode() + path.read_bytes())
    return digest.hexdigest()


def edition_notebook(path: Path, lang: str) -> nbformat.NotebookNode:
    """The source notebook (``lang="both"``) or its one-language edition."""
    nb = nbformat.read(path, as_version=4)
    return nb if lang == "both" else editions.make_edition(nb, lang)


def default_jobs() -> int:
    """One worker per CPU core this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # macOS, Windows
        return max(1, os.cpu_count() or 1)


def _build_key(nb: nbformat.NotebookNode, inputs: str) -> str:
    key = hashlib.sha256((nbformat.writes(nb) + inputs).encode()).hexdigest()
    # An execution that replayed training runs (the tests' POSVIZ_MEMO, posviz/_memo.py) prints
    # timings that are not its own: it is kept under another key, so no build publishes it.
    return key + "-replayed" if os.environ.get("POSVIZ_MEMO") else key


def execution_key(path: Path, lang: str) -> str:
    """The key under which :func:`execute_editions` keeps edition ``lang`` of ``path``: a hash of
    the edition notebook as written (take it before executing) with posviz/ and data/."""
    return _build_key(edition_notebook(path, lang), _inputs_digest())


def store_execution(run, key: str, target: Path) -> Path:
    """Write the executed notebook of ``run`` (a :class:`tools.nbrun.Run`) to ``target`` under
    ``key``, so that :func:`execute_editions` reuses it (``out/<lang>/<name>``; a run with
    problems is stored under a key that never matches). Returns ``target``."""
    run.notebook.metadata["posviz_build_key"] = key if not run.problems else "had-problems"
    run.notebook.metadata["posviz_build_seconds"] = round(run.seconds, 1)
    target.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(run.notebook, target)
    return target


def _execute_task(path: Path, lang: str, key: str, target: Path) -> tuple[float, list[str]]:
    """Execute edition ``lang`` of ``path`` into ``target`` (in a worker process); returns
    ``(seconds, problems)``. A cell error raises."""
    run = execute(path, notebook=edition_notebook(path, lang))
    store_execution(run, key, target)
    return run.seconds, run.problems


# Seconds each notebook took to execute (bilingual edition, one torch thread each, two workers on a
# quiet 2-core machine, 2026-12). Only the order matters: a first build, before any execution has
# recorded its own time, starts the slowest notebooks first, so that 06 does not start last.
FIRST_BUILD_SECONDS = {
    "06": 107, "07": 52, "01": 47, "04": 42, "02": 37, "05b": 30, "05": 29, "08": 25, "03": 15,
}  # fmt: skip


def _expected_seconds(path: Path, lang: str, out: Path) -> float:
    """How long ``path`` took last time, in this edition or else another one; for a notebook never
    executed here, its :data:`FIRST_BUILD_SECONDS` (0 if not listed)."""
    for edition in (lang, *EDITIONS):
        executed = out / edition / path.name
        if executed.is_file():
            seconds = nbformat.read(executed, as_version=4).metadata.get("posviz_build_seconds")
            if seconds:
                return float(seconds)
    return float(FIRST_BUILD_SECONDS.get(path.name.split("_", 1)[0], 0))


def execute_editions(
    langs=EDITIONS,
    pattern: str = "",
    *,
    force: bool = False,
    out: Path = EXECUTED,
    jobs: int | None = None,
):
    """Execute each edition of each notebook matching ``pattern`` into ``out/<lang>/``.

    A notebook is executed again only when it, posviz or data/ changed (or ``force``): the
    executed file keeps a content hash of the edition notebook, posviz/ and data/. So
    ``course.py run`` (edition "both"), ``site`` and ``slides`` share their executions.
    What needs executing runs in ``jobs`` worker processes (default: one per core; each
    kernel uses one torch thread, see ``posviz.setup``), slowest known notebooks first.
    Returns ``(executed, failed)``: a dict edition → executed files in course order, and a
    list of failure messages (a cell error or a warning printed by the notebook).
    """
    inputs = _inputs_digest()
    jobs = default_jobs() if jobs is None else jobs
    if jobs < 1:
        raise ValueError(f"jobs must be >= 1, got {jobs}")
    done: dict[tuple[str, Path], Path] = {}
    tasks = []  # (expected seconds, lang, path, key, target)
    for lang in langs:
        for path in notebook_paths():
            if pattern not in path.name:
                continue
            key = _build_key(edition_notebook(path, lang), inputs)
            target = out / lang / path.name
            if target.exists() and not force:
                if nbformat.read(target, as_version=4).metadata.get("posviz_build_key") == key:
                    done[lang, path] = target
                    continue
            tasks.append((_expected_seconds(path, lang, out), lang, path, key, target))
    tasks.sort(key=lambda task: -task[0])  # longest first, so that no worker is left with it at the end
    failed = []

    def report(lang, path, target, result=None, error=None):
        name = f"{lang}/{path.name}"
        if error is not None:
            failed.append(f"{name}: {type(error).__name__}: {str(error)[-1500:]}")
            print(f"  FAILED: {failed[-1]}", flush=True)
            return
        seconds, problems = result
        for problem in problems:
            failed.append(f"{name}: {problem}")
            print(f"  {name} problem: {problem}", flush=True)
        print(f"  {name} done in {seconds:.1f} s", flush=True)
        done[lang, path] = target

    if tasks:
        workers = min(jobs, len(tasks))
        print(f"executing {len(tasks)} notebook(s) in {workers} process(es) ...", flush=True)
    if len(tasks) == 1 or jobs == 1:
        for _, lang, path, key, target in tasks:
            try:
                report(lang, path, target, _execute_task(path, lang, key, target))
            except Exception as error:  # report and go on with the next notebook
                report(lang, path, target, error=error)
    elif tasks:
        # "spawn": a fresh interpreter per worker, safe whatever threads this process has.
        context = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
            futures = {
                pool.submit(_execute_task, path, lang, key, target): (lang, path, target)
                for _, lang, path, key, target in tasks
            }
            for future in as_completed(futures):
                lang, path, target = futures[future]
                try:
                    report(lang, path, target, future.result())
                except Exception as error:  # report and go on with the next notebook
                    report(lang, path, target, error=error)
    executed = {
        lang: [done[lang, path] for path in notebook_paths() if (lang, path) in done] for lang in langs
    }
    return executed, failed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("pattern", nargs="?", default="", help="only notebooks whose file name contains this")
    language_argument(parser)
    parser.add_argument("--force", action="store_true", help="execute every notebook again")
    parser.add_argument("--jobs", type=int, default=None, help="worker processes (default: one per core)")
    parser.add_argument("--out", type=Path, default=SITE, help="output folder (default build/site)")
    args = parser.parse_args(argv)
    executed, failed = execute_editions(args.lang, args.pattern, force=args.force, jobs=args.jobs)
    pages = render_pages(executed, args.out)
    print(f"\n{len(pages) - 1} page(s); open {args.out / 'index.html'}")
    if failed or MathMLRenderer.problems:
        print(f"{len(failed) + len(MathMLRenderer.problems)} problem(s), see above")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
