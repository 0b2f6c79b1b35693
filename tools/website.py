"""Build the course website: every notebook executed, in three editions, fully offline.

    python tools/website.py              # build/site/index.html, build/site/{both,ko,en}/NN_name.html
    python tools/website.py --lang en 03 # only the English edition of notebooks matching "03"
    python tools/website.py --force      # execute again even where nothing changed

Each edition (bilingual "both", Korean "ko", English "en"; see tools/editions.py) of each
notebook is executed in a fresh kernel (tools/nbrun.py, as the tests do) and the executed
notebooks are kept in build/executed-editions/ (reused while the notebook, posviz and data/
are unchanged; tools/slides.py uses them too). Pages are rendered with nbconvert's HTML
exporter (lab template) into plain, self-contained HTML files: figures are embedded PNGs,
formulas are turned into MathML at build time (latex2mathml; browsers draw MathML
natively), and nothing is loaded from the network — no MathJax, require.js or widget scripts.
Interactive ipywidgets explorers cannot run without a kernel; the page shows a note in their
place and the notebooks' static fallback figures below them. Open build/site/index.html.
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import html
import re
import sys
from pathlib import Path

import nbformat
from jinja2 import pass_context
from nbconvert import HTMLExporter, SlidesExporter
from nbconvert.filters.markdown_mistune import IPythonRenderer, MarkdownWithMath

sys.path.insert(0, str(Path(__file__).resolve().parent))
import editions
import nbtemplate
from nbrun import ROOT, execute, notebook_paths

EDITIONS = ("both", "ko", "en")
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
        "widget": "Interactive explorer: run the notebook in Jupyter or Colab to use the sliders; the figure "
        "below shows the same view statically.",
    },
}
_NOTEBOOK_LINK = re.compile(r"(?<![/\w])(\d\d_[A-Za-z0-9_]+)\.ipynb\b")
_BADGE_IMAGE = re.compile(
    r'<img [^>]*src="https://colab\.research\.google\.com/assets/colab-badge\.svg"[^>]*>'
)
OFFLINE_BADGE = '<span class="colab-badge">Open in Colab</span>'  # a link still, but no image to fetch


# --- Rendering ---------------------------------------------------------------------------------


class MathMLRenderer(IPythonRenderer):
    """nbconvert's markdown renderer, with TeX math turned into MathML at build time.

    A formula latex2mathml cannot convert is shown as its TeX source in ``<code>`` and listed
    in ``problems`` (the site build prints them).
    """

    problems: list[str] = []

    def _mathml(self, tex: str, display: str) -> str:
        try:
            from latex2mathml.converter import convert

            return convert(tex, display=display)
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
            cell.source = _BADGE_IMAGE.sub(OFFLINE_BADGE, text)
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


def _nav(names: list[str], index: int, lang: str, titles: dict, position: str) -> str:
    labels = LABELS[lang]
    name = names[index]
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
    )
    return f'<nav class="course-nav {position}">{" ".join(parts)}<span class="langs">{other}</span></nav>'


def render_pages(executed: dict[str, list[Path]], out: Path = SITE) -> list[Path]:
    """Write one HTML page per executed notebook into ``out/<edition>/``, and ``out/index.html``.

    ``executed`` maps an edition ("both", "ko", "en") to its executed notebook files, in
    course order. The index lists every page in ``out`` (so building one edition keeps the
    others). Returns the pages written, index first. Formulas that could not be converted
    are printed and left in ``MathMLRenderer.problems``.
    """
    exporter = CourseHTMLExporter()
    written = []
    MathMLRenderer.problems.clear()
    for lang in EDITIONS:
        if not executed.get(lang):
            continue
        (out / lang).mkdir(parents=True, exist_ok=True)
        notebooks = {p.stem: nbformat.read(p, as_version=4) for p in executed[lang]}
        names = list(notebooks)
        titles = {name: notebook_title(nb) for name, nb in notebooks.items()}
        for i, name in enumerate(names):
            page_nb = for_static_page(notebooks[name], lang)
            resources = {
                "metadata": {"name": titles[name]},
                "language_code": LABELS[lang]["html_lang"],
                "figure_alt": LABELS[lang]["figure"],
                "course_nav": _nav(names, i, lang, titles, "top"),
                "course_nav_bottom": _nav(names, i, lang, titles, "bottom"),
            }
            body, _ = exporter.from_notebook_node(page_nb, resources=resources)
            target = out / lang / f"{name}.html"
            target.write_text(body, encoding="utf-8")
            written.append(target)
    for problem in MathMLRenderer.problems:
        print(f"  problem: {problem}")
    rows = {}
    for lang in EDITIONS:
        pages = sorted((out / lang).glob("[0-9][0-9]*_*.html")) if (out / lang).is_dir() else []
        rows[lang] = [(f"{lang}/{page.name}", _page_title(page)) for page in pages]
    index = out / "index.html"
    index.write_text(_index_page({lang: r for lang, r in rows.items() if r}), encoding="utf-8")
    return [index, *written]


def _page_title(page: Path) -> str:
    match = re.search(r"<title>(.*?)</title>", page.read_text(encoding="utf-8"), re.DOTALL)
    return html.unescape(match.group(1).strip()) if match else page.stem


def _index_page(rows: dict[str, list[tuple[str, str]]]) -> str:
    columns = []
    for lang, links in rows.items():
        items = "\n".join(f'<li><a href="{href}">{html.escape(title)}</a></li>' for href, title in links)
        columns.append(
            f'<section lang="{LABELS[lang]["html_lang"]}"><h2>{LABELS[lang]["name"]}</h2><ul>{items}</ul></section>'
        )
    return f"""<!DOCTYPE html>
<html lang="ko">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>트랜스포머의 위치 인코딩 · Positional Encoding in Transformers</title>
<style>
body {{ font-family: system-ui, sans-serif; max-width: 68em; margin: 2em auto; padding: 0 1em; line-height: 1.5; }}
main {{ display: flex; flex-wrap: wrap; gap: 2em; }}
section {{ flex: 1 1 18em; }}
ul {{ list-style: none; padding-left: 0; }}
li {{ margin: 0.4em 0; }}
a {{ text-decoration: none; }}
</style>
</head>
<body>
<h1>트랜스포머의 위치 인코딩 · Positional Encoding in Transformers</h1>
<p>실행된 노트북을 세 가지 판으로 봅니다: 한·영 병기, 한국어, 영어. 그림은 각 판의 언어로 그려져 있습니다.<br>
The executed notebooks in three editions: bilingual, Korean and English, with figures drawn in each edition's language.</p>
<main>
{"".join(columns)}
</main>
</body>
</html>
"""


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


def execute_editions(langs=EDITIONS, pattern: str = "", *, force: bool = False, out: Path = EXECUTED):
    """Execute each edition of each notebook matching ``pattern`` into ``out/<lang>/``.

    A notebook is executed again only when it, posviz or data/ changed (or ``force``).
    Returns ``(executed, failed)``: a dict edition → executed files in course order, and a
    list of failure messages (a cell error or a warning printed by the notebook).
    """
    inputs = _inputs_digest()
    executed, failed = {}, []
    for lang in langs:
        (out / lang).mkdir(parents=True, exist_ok=True)
        executed[lang] = []
        for path in notebook_paths():
            if pattern not in path.name:
                continue
            nb = edition_notebook(path, lang)
            key = hashlib.sha256((nbformat.writes(nb) + inputs).encode()).hexdigest()
            target = out / lang / path.name
            if not force and target.exists():
                old = nbformat.read(target, as_version=4)
                if old.metadata.get("posviz_build_key") == key:
                    executed[lang].append(target)
                    continue
            print(f"executing {lang}/{path.name} ...", flush=True)
            try:
                run = execute(path, notebook=nb)
            except Exception as error:  # report and go on with the next notebook
                failed.append(f"{lang}/{path.name}: {type(error).__name__}: {str(error)[-1500:]}")
                print(f"  FAILED: {failed[-1]}")
                continue
            for problem in run.problems:
                failed.append(f"{lang}/{path.name}: {problem}")
                print(f"  problem: {problem}")
            run.notebook.metadata["posviz_build_key"] = key if not run.problems else "had-problems"
            nbformat.write(run.notebook, target)
            print(f"  done in {run.seconds:.1f} s")
            executed[lang].append(target)
    return executed, failed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("pattern", nargs="?", default="", help="only notebooks whose file name contains this")
    parser.add_argument(
        "--lang",
        type=editions.parse_languages,
        default=EDITIONS,
        help=f"comma-separated editions to build (default: {','.join(EDITIONS)})",
    )
    parser.add_argument("--force", action="store_true", help="execute every notebook again")
    parser.add_argument("--out", type=Path, default=SITE, help="output folder (default build/site)")
    args = parser.parse_args(argv)
    executed, failed = execute_editions(args.lang, args.pattern, force=args.force)
    pages = render_pages(executed, args.out)
    print(f"\n{len(pages) - 1} page(s); open {args.out / 'index.html'}")
    if failed or MathMLRenderer.problems:
        print(f"{len(failed) + len(MathMLRenderer.problems)} problem(s), see above")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
