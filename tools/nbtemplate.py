"""The cells every course notebook shares: the title cell with its Colab badge, the setup
cell and the last navigation cell (the last two made from the course table in
``tools/course_table.py``).

The repository address lives in one place, ``pyproject.toml`` ([project.urls] Repository);
``repo_url()`` reads it. Notebook authors build these cells with the functions below (or
copy their output), and ``tests/test_project.py`` checks every notebook against them.
"""

from __future__ import annotations

import re
from pathlib import Path

if __package__:  # python -m tools.NAME, or imported as tools.NAME
    from . import course_table
    from .languages import EDITIONS
else:  # python tools/NAME.py: tools/ itself is on sys.path
    import course_table
    from languages import EDITIONS

ROOT = Path(__file__).resolve().parent.parent
BRANCH = "main"


def repo_url() -> str:
    """``https://github.com/OWNER/NAME`` from pyproject.toml."""
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    match = re.search(r'^Repository\s*=\s*"(https://github\.com/[^"]+)"', text, re.MULTILINE)
    if not match:
        raise RuntimeError("pyproject.toml has no [project.urls] Repository = \"https://github.com/...\"")
    return match.group(1).rstrip("/")


def colab_url(notebook_name: str) -> str:
    """The "Open in Colab" address of ``notebooks/<notebook_name>``."""
    owner_repo = repo_url().removeprefix("https://github.com/")
    return f"https://colab.research.google.com/github/{owner_repo}/blob/{BRANCH}/notebooks/{notebook_name}"


BADGE_ALT = {"both": "Open In Colab", "en": "Open In Colab", "ko": "Colab에서 열기"}


def badge_markdown(notebook_name: str, lang: str = "both") -> str:
    """Markdown for the badge that opens ``notebooks/<notebook_name>`` in Colab. The image is
    the same in every edition; only its alternative text follows ``lang`` ("both", "ko", "en")."""
    if lang not in BADGE_ALT:
        raise ValueError(f"lang must be one of {tuple(BADGE_ALT)}, got {lang!r}")
    return (
        f'<a href="{colab_url(notebook_name)}" target="_parent">'
        f'<img src="https://colab.research.google.com/assets/colab-badge.svg" alt="{BADGE_ALT[lang]}"/></a>'
    )


def setup_code(lang: str = "both") -> str:
    """Source of the setup cell: on Colab only, fetch the course; then import and set up.

    ``lang`` ("both", "ko" or "en") is the figure language passed to ``posviz.setup``; the
    one-language editions (``tools/editions.py``) use "ko" or "en", the notebooks "both".
    """
    if lang not in EDITIONS:
        raise ValueError(f"lang must be one of {EDITIONS}, got {lang!r}")
    url = repo_url()
    folder = "/content/" + url.rsplit("/", 1)[-1]
    heading = {
        "both": "# Setup · 설정 (on Colab this first fetches the course code and data; elsewhere it downloads nothing)",
        "en": "# Setup (on Colab this first fetches the course code and data; elsewhere it downloads nothing)",
        "ko": "# 설정 (Colab에서는 먼저 강좌 코드와 데이터를 받아 오고, 다른 곳에서는 아무것도 내려받지 않습니다)",
    }[lang]
    return f'''{heading}
import sys

if "google.colab" in sys.modules:
    import os
    import subprocess

    if not os.path.isdir("{folder}"):
        # capture git's output (it reports progress on stderr even when all goes well); show it on failure
        clone = subprocess.run(["git", "clone", "--depth", "1", "{url}", "{folder}"], capture_output=True, text=True)
        if clone.returncode != 0:
            print(clone.stdout + clone.stderr)
            raise RuntimeError(f"git clone of {url} failed (exit status {{clone.returncode}}): git's message is above")
    sys.path.insert(0, "{folder}")  # Colab's own torch, numpy and matplotlib are used as they are

import matplotlib.pyplot as plt
import numpy as np
import torch

import posviz

posviz.setup(lang="{lang}", seed=0)  # lang: "ko", "en" or "both" (figure text and printed messages)'''


# --- Keeping notebooks in step with this template (used by tools/sync_notebooks.py) -----------

LANG_TAGS = {"ko": "lang-ko", "en": "lang-en"}
_BADGE = re.compile(
    r'<a href="https://colab\.research\.google\.com/[^"]*"[^>]*>\s*<img [^>]*colab-badge\.svg[^>]*>\s*</a>'
    r"|\[!\[[^\]]*\]\(https://colab\.research\.google\.com/assets/colab-badge\.svg\)\]\([^)]*\)"
)
_BADGE_NOTEBOOK = re.compile(r'colab\.research\.google\.com/github/[^"]*/notebooks/([^"/]+\.ipynb)"')
_SETUP_LAST_LINE = re.compile(r"^posviz\.setup\(.*$", re.MULTILINE)


def source(cell: dict) -> str:
    """A cell's source as one string (notebook JSON may store it as a list of lines)."""
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else src


def tags(cell: dict) -> set[str]:
    """A cell's tags (``metadata.tags``)."""
    return set(cell.get("metadata", {}).get("tags", []))


def language(cell: dict) -> str | None:
    """Return "ko" or "en" for a prose cell tagged ``lang-ko``/``lang-en``; None for cells of both editions."""
    cell_tags = tags(cell)
    for lang, tag in LANG_TAGS.items():
        if tag in cell_tags:
            return lang
    return None


def setup_cell_index(cells: list) -> int | None:
    """Index of the first code cell, which every course notebook uses as its setup cell."""
    return next((i for i, c in enumerate(cells) if c["cell_type"] == "code"), None)


def with_setup(code: str, lang: str = "both") -> str | None:
    """``code`` with its leading setup block (up to the ``posviz.setup(...)`` line) replaced by
    ``setup_code(lang)``, keeping any lines after it; None if ``code`` holds no setup block."""
    match = _SETUP_LAST_LINE.search(code)
    if not match or "import posviz" not in code[: match.start()]:
        return None
    return setup_code(lang) + code[match.end() :]


def with_badge(title: str, notebook_name: str) -> str:
    """The title cell's markdown with its Colab badge pointing at ``notebooks/<notebook_name>``
    (a badge is added after the first line when there is none)."""
    badge = badge_markdown(notebook_name)
    if _BADGE.search(title):
        return _BADGE.sub(lambda _: badge, title, count=1)
    first, _, rest = title.partition("\n")
    return f"{first}\n\n{badge}\n{rest}".rstrip("\n")


#: A "what to notice" cell: the sentences under a figure or printed result that say what it shows.
NOTICE = re.compile(r"^\s*\*\*(?:눈여겨볼 점|What to notice)")
#: The end of a line that introduces what follows it: a colon, "다음과 같습니다." or "as follows".
INTRO = re.compile(r"(?:[:：]|(?:다음과|아래와) 같습니다\.|as follows[.:]?)$")


def is_notice(cell: dict) -> bool:
    """Whether ``cell`` is a "what to notice" cell (markdown starting with the bold label)."""
    return cell.get("cell_type") == "markdown" and bool(NOTICE.match(source(cell)))


def introduces(text: str) -> bool:
    """Whether the last line of ``text`` introduces something that must follow it on the same
    slide (ends with ":", "다음과 같습니다." or "as follows")."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return bool(lines) and bool(INTRO.search(lines[-1]))


def _is_heading_only(cell: dict) -> bool:
    lines = [line for line in source(cell).splitlines() if line.strip()]
    return cell["cell_type"] == "markdown" and bool(lines) and all(line.startswith("#") for line in lines)


def slide_types(cells: list) -> list[str]:
    """The reveal.js slide type of each cell, from the notebook's structure alone.

    - the title cell and every ``#``/``##`` heading start a new slide (a section);
    - a ``###`` heading, each prose cell and each code cell start a sub-slide (one idea per
      screen, so a figure is never pushed off the bottom by the prose above it), except right
      after a heading-only cell, where they share the heading's screen;
    - a "what to notice" cell right after a code cell stays on that cell's sub-slide, under the
      output it is about, and a cell right after a markdown cell that ends by introducing it
      (":", "다음과 같습니다.", "as follows") stays on that cell's slide;
    - a ``lang-en`` cell right after its ``lang-ko`` twin is a fragment: the English appears
      under the Korean on the next click (in a one-language edition it takes the Korean's place);
    - the setup cell is skipped (it prints versions, not lecture content).
    """
    setup = setup_cell_index(cells)
    types = []
    for i, cell in enumerate(cells):
        text = source(cell).lstrip()
        previous = cells[i - 1] if i else None
        if i == 0:
            kind = "slide"
        elif i == setup:
            kind = "skip"
        elif language(cell) == "en" and previous is not None and language(previous) == "ko":
            kind = "fragment"
        elif cell["cell_type"] == "markdown" and re.match(r"#{1,2} ", text):
            kind = "slide"
        elif cell["cell_type"] == "markdown" and text.startswith("### "):
            kind = "subslide"
        elif previous is not None and _is_heading_only(previous):
            kind = "-"
        elif previous is not None and previous["cell_type"] == "code" and is_notice(cell):
            kind = "-"
        elif previous is not None and previous["cell_type"] == "markdown" and introduces(source(previous)):
            kind = "-"
        else:
            kind = "subslide"
        types.append(kind)
    return types


def apply_slide_types(cells: list) -> None:
    """Set ``metadata.slideshow.slide_type`` of every cell to :func:`slide_types`."""
    for cell, kind in zip(cells, slide_types(cells), strict=True):
        cell.setdefault("metadata", {})["slideshow"] = {"slide_type": kind}


def sync_cells(cells: list, notebook_name: str, lang: str = "both") -> list[str]:
    """Bring a notebook's cells (edited in place) in step with this template.

    For a notebook of the course table (``tools/course_table.py``) the title cell and the
    last navigation cell (tagged ``course-nav``; added, or moved to the end, when needed) are
    written from the table; for any other notebook only the title cell's Colab badge is
    rewritten. The setup block of the first code cell is rewritten (a setup cell is added when
    the first code cell has none), and the slide metadata is set.
    Returns a list of what changed (empty when the notebook was already in step).
    """
    changes = []
    entry = course_table.BY_FILE.get(notebook_name)
    if entry is not None:
        changes += _sync_title_and_nav(cells, entry, lang)
    elif cells and cells[0]["cell_type"] == "markdown":
        title = with_badge(source(cells[0]), notebook_name)
        if title != source(cells[0]):
            cells[0]["source"] = title
            changes.append("badge")
    first_code = setup_cell_index(cells)
    code = source(cells[first_code]) if first_code is not None else ""
    synced = with_setup(code, lang)
    if synced is None:
        from nbformat.v4 import new_code_cell

        where = first_code if first_code is not None else len(cells)
        cells.insert(where, new_code_cell(setup_code(lang)))
        changes.append("setup cell added")
    elif synced != code:
        cells[first_code]["source"] = synced
        changes.append("setup cell")
    before = [c.get("metadata", {}).get("slideshow") for c in cells]
    apply_slide_types(cells)
    if before != [c["metadata"]["slideshow"] for c in cells]:
        changes.append("slide metadata")
    return changes


def nav_cell_index(cells: list) -> int | None:
    """Index of the navigation cell (tagged ``course-nav``), or None."""
    return next((i for i, c in enumerate(cells) if course_table.NAV_TAG in tags(c)), None)


def notebook_name(cells: list) -> str | None:
    """The notebook file named by the Colab badge in the title cell (``"05_rope.ipynb"``), or None."""
    if not cells or cells[0]["cell_type"] != "markdown":
        return None
    match = _BADGE_NOTEBOOK.search(source(cells[0]))
    return match.group(1) if match else None


def navigation_entries(entry: course_table.Entry) -> list[course_table.Entry]:
    """The notebooks the navigation links: those in notebooks/, and ``entry`` itself."""
    present = {e.file for e in course_table.existing()}
    return [e for e in course_table.COURSE if e.file in present or e.file == entry.file]


def title_and_nav(entry: course_table.Entry, lang: str = "both") -> tuple[str, str]:
    """Sources of the title cell and the navigation cell of ``entry`` in ``lang``."""
    title = course_table.title_markdown(entry, badge_markdown(entry.file, lang), lang)
    return title, course_table.nav_markdown(entry, lang, navigation_entries(entry))


def _sync_title_and_nav(cells: list, entry: course_table.Entry, lang: str) -> list[str]:
    from nbformat.v4 import new_markdown_cell

    changes = []
    title, nav = title_and_nav(entry, lang)
    if not cells or cells[0]["cell_type"] != "markdown":
        cells.insert(0, new_markdown_cell(title, id="course-title"))
        changes.append("title added")
    elif source(cells[0]) != title:
        cells[0]["source"] = title
        changes.append("title")
    where = nav_cell_index(cells)
    if where is None:
        cell = new_markdown_cell(nav, id="course-nav", metadata={"tags": [course_table.NAV_TAG]})
        cells.append(cell)
        changes.append("navigation added")
    else:
        if where != len(cells) - 1:
            cells.append(cells.pop(where))
            changes.append("navigation moved to the end")
        if source(cells[-1]) != nav:
            cells[-1]["source"] = nav
            changes.append("navigation")
    return changes
