"""Build the Korean-only and English-only editions of the course notebooks.

    python tools/editions.py                 # build/editions/ko/*.ipynb and build/editions/en/*.ipynb
    python tools/editions.py --lang en 03    # only the English edition of notebooks matching "03"

The bilingual notebooks in notebooks/ are the source. An edition keeps the cells of both
languages (code, figures, untagged cells) and the prose cells tagged with its own language
(``lang-ko`` or ``lang-en``). The title cell and the last navigation cell are written in the
edition's language from the course table (``tools/course_table.py``); in other untagged markdown,
such as ``## 3. 사인파 위치 인코딩 · Sinusoidal positional encoding``, it keeps its own side of
each line, split at the top-level " · " that a CommonMark parser finds (never inside link text,
emphasis, code or math). In code cells every ``posviz.t("한국어", "English")`` call whose
arguments can be dropped safely (literals, f-strings of plain values) becomes the edition's
argument (:func:`one_language_code`), so the code speaks one language too. The setup cell calls
``posviz.setup(lang="ko")`` or ``lang="en"`` so that figure text follows the edition, and the
slide metadata is derived again for the one-language notebook. Editions are written without
outputs; ``tools/website.py`` executes them for the website.
"""

from __future__ import annotations

import argparse
import ast
import copy
import re
import sys
from pathlib import Path

import nbformat
from markdown_it import MarkdownIt

if __package__:  # python -m tools.NAME, or imported as tools.NAME
    from . import course_table, nbtemplate
    from .languages import HANGUL, MATH, NOT_PROSE, ONE_LANGUAGE, SEP, language_argument
    from .nbrun import ROOT, notebook_paths
else:  # python tools/NAME.py: tools/ itself is on sys.path
    import course_table
    import nbtemplate
    from languages import HANGUL, MATH, NOT_PROSE, ONE_LANGUAGE, SEP, language_argument
    from nbrun import ROOT, notebook_paths

OUT = ROOT / "build" / "editions"
LATIN = re.compile(r"[A-Za-z]")
_SENTINEL = "\ue000"
_PREFIX = re.compile(r"^(\s*(?:#{1,6}\s+|>\s*|[-*+]\s+|\d+[.)]\s+)*)")
_LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
_NUMBER = re.compile(r"^(\d+(?:\.\d+)*\.?\s+)")
_EN_LABEL = re.compile(r"^([A-Za-z][A-Za-z ]{0,30}):\s+(\S.*)$")
_PARSER = MarkdownIt("commonmark").enable("table")
_VERBATIM = {"fence", "code_block", "html_block", "table_open"}


def _side(text: str) -> str | None:
    """Return "ko" for prose with Hangul, "en" for prose with Latin letters only, None for
    neither; code spans, math, link targets and HTML tags do not count as prose."""
    prose = NOT_PROSE.sub(" ", text)
    if HANGUL.search(prose):
        return "ko"
    if LATIN.search(prose):
        return "en"
    return None


def _top_level_separators(text: str) -> list[int]:
    """Offsets in ``text`` of every " · " that CommonMark parses as top-level inline text:
    not inside link text, emphasis, code, math, a code block, an HTML block or a table."""
    math = [m.span() for m in MATH.finditer(text)]
    found = []
    start = text.find(SEP)
    while start != -1:
        if not any(a <= start < b for a, b in math):
            probe = text[:start] + " " + _SENTINEL + " " + text[start + len(SEP) :]
            if _SENTINEL in _top_level_text(_PARSER.parse(probe)):
                found.append(start)
        start = text.find(SEP, start + 1)
    return found


def _top_level_text(tokens) -> str:
    """The text of paragraphs and headings outside any link, emphasis or code (tables skipped)."""
    parts, in_table = [], 0
    for token in tokens:
        in_table += {"table_open": 1, "table_close": -1}.get(token.type, 0)
        if token.type != "inline" or in_table:
            continue
        depth = 0
        for child in token.children or []:
            depth += child.nesting
            if child.type == "text" and depth == 0:
                parts.append(child.content)
    return "\n".join(parts)


def _verbatim_lines(tokens) -> set[int]:
    """Line numbers of code blocks, HTML blocks and tables, which both editions keep as they are."""
    lines = set()
    for token in tokens:
        if token.type in _VERBATIM and token.map:
            lines.update(range(*token.map))
    return lines


def _split_line(line: str, cuts: list[int], lang: str) -> str | None:
    """The ``lang`` side of one line cut at top-level separators ``cuts`` (offsets in the line).

    The line must read "Korean part · English part" (each part may hold further " · "); a
    leading block marker ("## ", "- ") and a section number ("7. ") belong to both. Returns
    None for a Korean-only line in the English edition. Raises ValueError for a line whose
    languages alternate (which side a piece belongs to would be a guess).
    """
    if not cuts:
        if _side(line) == "ko" and lang == "en":
            return None
        return line
    bounds = [0, *cuts, len(line)]
    pieces = [line[a + (len(SEP) if i else 0) : b] for i, (a, b) in enumerate(zip(bounds, bounds[1:]))]
    prefix = _PREFIX.match(pieces[0]).group(1)
    pieces[0] = pieces[0][len(prefix) :]
    number = _NUMBER.match(pieces[0])
    lead = number.group(1) if number else ""
    pieces[0] = pieces[0][len(lead) :]
    sides = [_side(piece) for piece in pieces]
    if "ko" not in sides:
        return line
    if "en" not in sides:
        return None if lang == "en" else line
    last_ko = max(i for i, side in enumerate(sides) if side == "ko")
    first_en = sides.index("en")
    if first_en < last_ko:
        raise ValueError(
            f"cannot tell the Korean from the English part of {line!r}: write 'Korean · English' "
            "(one part each) or put the two languages in cells tagged lang-ko and lang-en"
        )
    korean, english = pieces[: last_ko + 1] + pieces[last_ko + 1 : first_en], pieces[first_en:]
    label = _EN_LABEL.match(english[0]) if len(korean) == len(english) == 1 else None
    if label and _LIST_ITEM.match(prefix) and ":" not in korean[0]:
        korean = [f"{korean[0]}: {label.group(2)}"]  # "- 데이터 · Data: shared text" (a bilingual label)
    return prefix + lead + SEP.join(korean if lang == "ko" else english)


def one_language_markdown(text: str, lang: str) -> str:
    """Untagged (bilingual) markdown as the ``lang`` edition shows it.

    Each line written "Korean · English" (a heading such as ``## 3. 사인파 · Sinusoidal``, a
    list item, a paragraph line) keeps its own side. Only separators that CommonMark parses
    as top-level text count: a " · " inside link text, emphasis, code or math, and lines of
    code blocks, HTML blocks and tables, are kept as they are. A line without Hangul is the
    same in both editions; a Korean-only line is left out of the English edition.
    Raises ValueError for a line whose Korean and English parts alternate.
    """
    if lang not in ONE_LANGUAGE:
        raise ValueError(f"lang must be one of {ONE_LANGUAGE}, got {lang!r}")
    if not HANGUL.search(text):
        return text
    verbatim = _verbatim_lines(_PARSER.parse(text))
    cuts = _top_level_separators(text)
    out, offset = [], 0
    for number, line in enumerate(text.split("\n")):
        if number in verbatim or not HANGUL.search(line):
            out.append(line)
        else:
            mine = [cut - offset for cut in cuts if offset <= cut < offset + len(line)]
            kept = _split_line(line, mine, lang)
            if kept is not None:
                out.append(kept)
        offset += len(line) + 1
    return "\n".join(out)


def one_language_line(line: str, lang: str) -> str | None:
    """One line of untagged markdown as the ``lang`` edition shows it (None: left out)."""
    if "\n" in line:
        raise ValueError("one line expected; use one_language_markdown for a cell")
    if not HANGUL.search(line):
        return line
    verbatim = _verbatim_lines(_PARSER.parse(line))
    if verbatim:
        return line
    return _split_line(line, _top_level_separators(line), lang)


# --- code cells: posviz.t(...) resolved ------------------------------------------------------------

#: Functions and methods an f-string may call inside a dropped ``t()`` argument: they read values
#: and change nothing, so not evaluating them changes no state.
_PURE_CALLS = frozenset(
    "abs float format int len max mean min repr round str sum type item tolist".split()
)
_MAGIC = re.compile(r"^(\s*)[%!]", re.MULTILINE)


_IMPORTS_T = re.compile(r"^\s*from\s+posviz(?:\.style)?\s+import\s+[^#\n]*\bt\b(?!\s+as)", re.MULTILINE)


def _is_t(func: ast.expr, bare: bool = False) -> bool:
    """``posviz.t`` or ``posviz.style.t``; a bare ``t`` only if ``bare`` (the notebook imports it
    from posviz: elsewhere ``t`` may be anything, a tensor or a loop variable)."""
    if bare and isinstance(func, ast.Name) and func.id == "t":
        return True
    if not isinstance(func, ast.Attribute) or func.attr != "t":
        return False
    owner = func.value
    if isinstance(owner, ast.Attribute) and owner.attr == "style":
        owner = owner.value
    return isinstance(owner, ast.Name) and owner.id == "posviz"


def _droppable(node: ast.expr) -> bool:
    """True if not evaluating ``node`` changes nothing: strings, f-strings, names, attributes,
    subscripts, arithmetic, comparisons and conditionals over them, and calls of :data:`_PURE_CALLS`."""
    for child in ast.walk(node):
        if isinstance(child, ast.Call):
            func = child.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            if name not in _PURE_CALLS:
                return False
        elif isinstance(child, (ast.NamedExpr, ast.Lambda, ast.Await, ast.Yield, ast.YieldFrom)) or isinstance(
            child, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
        ):
            return False
    return True


def _resolvable(call: ast.Call, bare: bool = False) -> bool:
    """A ``posviz.t(ko, en)`` call (``sep=`` a literal, if given) whose two arguments are text that
    can be evaluated alone: each a string, an f-string or an expression that :func:`_droppable` allows."""
    if not _is_t(call.func, bare) or len(call.args) != 2 or any(isinstance(a, ast.Starred) for a in call.args):
        return False
    if any(k.arg != "sep" or not isinstance(k.value, ast.Constant) for k in call.keywords):
        return False
    return all(_droppable(arg) for arg in call.args)


def _offset(lines: list[str], line: int, column: int) -> int:
    """Character offset in the joined ``lines`` of ``ast``'s (1-based line, UTF-8 byte column)."""
    before = sum(len(text) for text in lines[: line - 1])
    return before + len(lines[line - 1].encode("utf-8")[:column].decode("utf-8"))


def one_language_code(code: str, lang: str, *, bare_t: bool = False) -> str:
    """A code cell's source with each resolvable ``posviz.t(ko, en)`` call replaced by its ``lang``
    argument as written (``label=posviz.t("사인", "sine")`` → ``label="sine"`` in English).

    The source is parsed with :mod:`ast` (IPython ``%`` and ``!`` lines are masked for the parse);
    a call is replaced only when dropping the other argument cannot change what the cell does
    (:func:`_resolvable`); others, such as ``posviz.t(ko, en)`` over names, stay and pick the
    language at run time. A bare ``t(...)`` counts only with ``bare_t=True`` (the notebook runs
    ``from posviz import t``). Code that does not parse is returned unchanged. Everything else in
    the cell (Korean data strings, comments) is kept as it is.
    """
    if lang not in ONE_LANGUAGE:
        raise ValueError(f"lang must be one of {ONE_LANGUAGE}, got {lang!r}")
    if "t(" not in code:
        return code
    pick = 0 if lang == "ko" else 1
    while True:
        try:
            tree = ast.parse(_MAGIC.sub(lambda m: m.group(1) + "#", code))
        except SyntaxError:
            return code
        calls = [node for node in ast.walk(tree) if isinstance(node, ast.Call) and _resolvable(node, bare_t)]
        if not calls:
            return code
        call = calls[0]  # outermost first (ast.walk is breadth-first); parse again after each change
        parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
        lines = code.splitlines(keepends=True)
        start = _offset(lines, call.lineno, call.col_offset)
        end = _offset(lines, call.end_lineno, call.end_col_offset)
        chosen = call.args[pick]
        first = _offset(lines, chosen.lineno, chosen.col_offset)
        kept = code[first : _offset(lines, chosen.end_lineno, chosen.end_col_offset)]
        atom = isinstance(chosen, (ast.Constant, ast.JoinedStr, ast.Name, ast.Attribute, ast.Subscript, ast.Call))
        alone = isinstance(parents.get(call), (ast.Call, ast.keyword, ast.Assign, ast.Expr, ast.Return))
        if "\n" in kept or not (atom or alone):
            kept = f"({kept})"  # one expression as before: strings joined over lines, "a" if c else "b"
        code = code[:start] + kept + code[end:]


def make_edition(nb: nbformat.NotebookNode, lang: str, name: str | None = None) -> nbformat.NotebookNode:
    """The ``lang`` ("ko" or "en") edition of a bilingual course notebook (a new notebook).

    ``name`` is the notebook's file name (default: read from the Colab badge of its title
    cell). For a notebook of the course table the title cell and the navigation cell are
    written from the table in ``lang``; other untagged markdown goes through
    :func:`one_language_markdown`; cells tagged for the other language are dropped.
    """
    if lang not in ONE_LANGUAGE:
        raise ValueError(f"lang must be one of {ONE_LANGUAGE}, got {lang!r}")
    edition = copy.deepcopy(nb)
    name = name or nbtemplate.notebook_name(edition.cells)
    entry = course_table.BY_FILE.get(name) if name else None
    title, nav = nbtemplate.title_and_nav(entry, lang) if entry else (None, None)
    bare_t = any(cell["cell_type"] == "code" and _IMPORTS_T.search(nbtemplate.source(cell)) for cell in edition.cells)
    cells = []
    for index, cell in enumerate(edition.cells):
        cell_lang = nbtemplate.language(cell)
        if cell_lang is not None and cell_lang != lang:
            continue
        if cell["cell_type"] == "markdown" and cell_lang is None:
            if entry and index == 0:
                cell["source"] = title
            elif entry and course_table.NAV_TAG in nbtemplate.tags(cell):
                cell["source"] = nav
            else:
                try:
                    cell["source"] = one_language_markdown(nbtemplate.source(cell), lang)
                except ValueError as error:
                    raise ValueError(f"{name or 'notebook'} cell {index}: {error}") from None
        elif cell["cell_type"] == "code":
            cell["source"] = one_language_code(nbtemplate.source(cell), lang, bare_t=bare_t)
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


def build(langs: tuple[str, ...] = ONE_LANGUAGE, pattern: str = "", out: Path = OUT) -> list[Path]:
    """Write the editions of every notebook whose name contains ``pattern``; returns the files."""
    written = []
    for lang in langs:
        (out / lang).mkdir(parents=True, exist_ok=True)
        for path in notebook_paths():
            if pattern in path.name:
                edition = make_edition(nbformat.read(path, as_version=4), lang, path.name)
                target = out / lang / path.name
                nbformat.write(edition, target)
                written.append(target)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("pattern", nargs="?", default="", help="only notebooks whose file name contains this")
    language_argument(parser, ONE_LANGUAGE)
    args = parser.parse_args(argv)
    written = build(args.lang, args.pattern)
    for lang in args.lang:
        print(f"{lang}: {sum(p.parent.name == lang for p in written)} notebook(s) in {OUT / lang}")
    return 0 if written else 1


if __name__ == "__main__":
    sys.exit(main())
