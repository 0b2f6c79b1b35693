"""Build the Korean-only and English-only editions of the course notebooks.

    python tools/editions.py                 # build/editions/ko/*.ipynb and build/editions/en/*.ipynb
    python tools/editions.py --lang en 03    # only the English edition of notebooks matching "03"

The bilingual notebooks in notebooks/ are the source. An edition keeps the cells of both
languages (code, figures, untagged cells) and the prose cells tagged with its own language
(``lang-ko`` or ``lang-en``); in untagged markdown such as ``## 3. 사인파 위치 인코딩 · Sinusoidal
positional encoding`` it keeps its own side of each ``·`` pair. The setup cell calls
``posviz.setup(lang="ko")`` or ``lang="en"`` so that figure text follows the edition, and the
slide metadata is derived again for the one-language notebook. Editions are written without
outputs; ``tools/website.py`` executes them for the website.
"""

from __future__ import annotations

import argparse
import copy
import re
import sys
from pathlib import Path

import nbformat

sys.path.insert(0, str(Path(__file__).resolve().parent))
import nbtemplate
from nbrun import ROOT, notebook_paths

EDITIONS = ("ko", "en")
OUT = ROOT / "build" / "editions"
HANGUL = re.compile(r"[\uac00-\ud7a3\u3131-\u318e]")
LATIN = re.compile(r"[A-Za-z]")
SEP = " · "
_PREFIX = re.compile(r"^(\s*(?:#{1,6}\s+|>\s*|[-*+]\s+|\d+[.)]\s+)*(?:\d+(?:\.\d+)*\.?\s+)?)")
_NUMBER = re.compile(r"^(\d+(?:\.\d+)*\.?\s+)")
_PAIR_IN_LINK = re.compile(r"\[([^\[\]\n]+?)" + re.escape(SEP) + r"([^\[\]\n]+?)\]")
_PAIR_IN_BOLD = re.compile(r"\*\*([^*\n]+?)" + re.escape(SEP) + r"([^*\n]+?)\*\*")
_PIECE_BREAK = re.compile(r"(?<=[.!?])\s+|\s*(?=\*\*[^*\n]+:\*\*)|(?<=:\*\*)\s*")


def _side(text: str) -> str | None:
    """Return "ko" for text with Hangul, "en" for text with Latin letters only, None for neither."""
    if HANGUL.search(text):
        return "ko"
    if LATIN.search(text):
        return "en"
    return None


def _pick(left: str, right: str, lang: str) -> str | None:
    """The ``lang`` side of a ``left · right`` pair, keeping a leading number ("02. ") and a
    trailing colon that only one side carries; None if the pair is not Korean · English."""
    number = _NUMBER.match(left)
    lead = number.group(1) if number else ""
    left = left[len(lead) :]
    colon = ":" if (left.endswith(":") or right.endswith(":")) else ""
    left, right = left.rstrip(":"), right.rstrip(":")
    if (_side(left), _side(right)) != ("ko", "en"):
        return None
    return lead + (left if lang == "ko" else right) + colon


def one_language_line(line: str, lang: str) -> str | None:
    """One line of untagged (bilingual) markdown as the ``lang`` edition shows it.

    Handles the course's ways of writing both languages on one line: ``KO · EN`` as the whole
    line or heading (``## 3. KO · EN``), inside a link text (``[02. KO · EN](02_x.ipynb)``) or a
    bold label (``**KO · EN:**``), and runs of ``KO · EN. KO · EN.`` pieces. Pieces in neither
    language (numbers, arrows) stay. A line without Hangul is the same in both editions.
    Returns None for a line the English edition drops (Korean with no English side).
    """
    if not HANGUL.search(line):
        return line

    def resolver(opening: str, closing: str):
        def resolve(match: re.Match) -> str:
            picked = _pick(match.group(1), match.group(2), lang)
            return match.group(0) if picked is None else opening + picked + closing

        return resolve

    prefix = _PREFIX.match(line).group(1)
    body = _PAIR_IN_LINK.sub(resolver("[", "]"), line[len(prefix) :])
    body = _PAIR_IN_BOLD.sub(resolver("**", "**"), body)
    pieces = [
        piece
        for part in body.split(SEP)
        for piece in _PIECE_BREAK.split(part)  # sentences, and bold labels such as **Time:**
        if piece.strip()
    ]
    kept = [piece for piece in pieces if _side(piece) in (lang, None)]
    if not any(_side(piece) == lang for piece in kept):
        return line if lang == "ko" else None
    text = ""
    for piece in kept:
        if text:
            text += " " if text.endswith((".", "!", "?", ":", ":**")) else SEP
        text += piece.strip()
    return prefix + text


def one_language_markdown(text: str, lang: str) -> str:
    """Untagged markdown with every line passed through :func:`one_language_line`."""
    lines = [one_language_line(line, lang) for line in text.split("\n")]
    return "\n".join(line for line in lines if line is not None)


def make_edition(nb: nbformat.NotebookNode, lang: str) -> nbformat.NotebookNode:
    """The ``lang`` ("ko" or "en") edition of a bilingual course notebook (a new notebook)."""
    if lang not in EDITIONS:
        raise ValueError(f"lang must be one of {EDITIONS}, got {lang!r}")
    edition = copy.deepcopy(nb)
    cells = []
    for cell in edition.cells:
        cell_lang = nbtemplate.language(cell)
        if cell_lang is not None and cell_lang != lang:
            continue
        if cell["cell_type"] == "markdown" and cell_lang is None:
            cell["source"] = one_language_markdown(nbtemplate.source(cell), lang)
        cells.append(cell)
    setup = nbtemplate.setup_cell_index(cells)
    if setup is not None:
        code = nbtemplate.with_setup(nbtemplate.source(cells[setup]), lang)
        if code is None:
            raise ValueError("the first code cell is not the course setup cell (run tools/sync_notebooks.py)")
        cells[setup]["source"] = code
    edition.cells = cells
    nbtemplate.apply_slide_types(edition.cells)
    edition.metadata["language_info"] = edition.metadata.get("language_info", {"name": "python"})
    edition.metadata["posviz_edition"] = lang
    return edition


def build(langs: tuple[str, ...] = EDITIONS, pattern: str = "", out: Path = OUT) -> list[Path]:
    """Write the editions of every notebook whose name contains ``pattern``; returns the files."""
    written = []
    for lang in langs:
        (out / lang).mkdir(parents=True, exist_ok=True)
        for path in notebook_paths():
            if pattern in path.name:
                edition = make_edition(nbformat.read(path, as_version=4), lang)
                target = out / lang / path.name
                nbformat.write(edition, target)
                written.append(target)
    return written


def parse_languages(text: str) -> tuple[str, ...]:
    """argparse type for ``--lang``: comma-separated edition names, each one of EDITIONS."""
    langs = tuple(part.strip() for part in text.split(",") if part.strip())
    unknown = [lang for lang in langs if lang not in EDITIONS]
    if unknown or not langs:
        raise argparse.ArgumentTypeError(f"editions are {', '.join(EDITIONS)}; got {text!r}")
    return langs


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("pattern", nargs="?", default="", help="only notebooks whose file name contains this")
    parser.add_argument(
        "--lang",
        type=parse_languages,
        default=EDITIONS,
        help=f"comma-separated editions to build (default: {','.join(EDITIONS)})",
    )
    args = parser.parse_args(argv)
    written = build(args.lang, args.pattern)
    for lang in args.lang:
        print(f"{lang}: {sum(p.parent.name == lang for p in written)} notebook(s) in {OUT / lang}")
    return 0 if written else 1


if __name__ == "__main__":
    sys.exit(main())
