"""Check that everything a reader sees uses the course glossary (glossary.tsv) consistently.

    python tools/glossary.py              # check the course (see below); exit 1 on a problem
    python tools/glossary.py FILE ...     # check these files (.ipynb, .md or .py)

What the course shows a reader: the notebooks' markdown cells, the Korean strings of their code
cells (figure titles and labels in ``t(...)`` calls, printed lines), ``README.md``, ``docs/*.md``,
and the Korean strings in ``posviz/`` (checker feedback, plot labels, printed tables).

glossary.tsv (tab-separated, one idea per row) has the columns ``english``, ``korean``,
``pair``, ``avoid`` and ``note``; ``|`` separates forms, the first Korean form being the
preferred one. Two rules are checked:

- pair (rows with ``pair`` = yes, the technical terms): where a ``lang-en`` cell uses the
  English term, its ``lang-ko`` twin (the cell just before it) uses one of the Korean forms;
  so a translation that drops a term, or says it another way, is found where it is. Everyday
  words ("token", "accuracy") are not pair-checked: a good translation need not repeat them,
  nor is cited text that both cells hold verbatim (a title in ``*…*``, a quoted ``"…"`` section
  name, as in the references): it is quoted, not translated.
- avoid (every row): no Korean text (``lang-ko`` cells, untagged markdown, Markdown files and
  string literals with Hangul in code) uses a form
  listed under ``avoid`` (e.g. 위치 부호화 for 위치 인코딩), so one idea keeps one name. An avoid
  form written ``re:PATTERN`` is a regular expression, for a form that is also part of a good
  word (``re:폭(?!발)`` finds 폭 "width" but not 폭발 "explosion").

English matches ignore case, accept plurals and treat hyphens and spaces alike ("self
attention", "self-attentions"); Korean matches ignore spaces ("셀프어텐션"), so particles and
spacing never matter. Code spans, code blocks, formulas, link targets and HTML tags are not read.
"""

from __future__ import annotations

import ast
import csv
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import nbformat

if __package__:  # python -m tools.NAME, or imported as tools.NAME
    from . import nbtemplate
    from .languages import HANGUL, NOT_PROSE
    from .nbrun import ROOT, notebook_paths
else:  # python tools/NAME.py: tools/ itself is on sys.path
    import nbtemplate
    from languages import HANGUL, NOT_PROSE
    from nbrun import ROOT, notebook_paths

GLOSSARY = ROOT / "glossary.tsv"
# Code blocks and bare URLs first, then what tools.languages counts as not prose (code spans, math,
# link targets, HTML tags: the tags only, never the text between a "<" and a later ">").
_NOT_PROSE = [re.compile(r"```.*?```", re.DOTALL), re.compile(r"https?://\S+"), NOT_PROSE]
# Cited text, a title in *…* or a quoted "…" (a section name): not pair-checked where both cells hold it.
_CITED = re.compile(r'\*[^*\n]+\*|"[^"\n]+"')


@dataclass(frozen=True)
class Term:
    """One glossary row: accepted English and Korean forms, whether pairs are checked, the
    Korean forms to avoid, and a note."""

    english: tuple[str, ...]
    korean: tuple[str, ...]
    pair: bool = True
    avoid: tuple[str, ...] = ()
    note: str = ""

    def english_pattern(self) -> re.Pattern:
        forms = []
        for form in self.english:
            words = [re.escape(w) for w in re.split(r"[\s-]+", form.strip())]
            body = r"[\s-]+".join(words)
            plural = r"(?:s|es)?" if not form.endswith("y") else ""
            if form.endswith("y"):
                body = body[:-1] + r"(?:y|ies)"
            forms.append(body + plural)
        return re.compile(r"(?<![A-Za-z])(?:" + "|".join(forms) + r")(?![A-Za-z])", re.IGNORECASE)


def load(path: Path = GLOSSARY) -> list[Term]:
    """The glossary rows. Raises ValueError for a row that breaks the file's rules."""
    with path.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle, delimiter="\t"))
    terms = []
    for number, row in enumerate(rows, start=2):
        english, korean, avoid = (
            tuple(f.strip() for f in (row.get(column) or "").split("|") if f.strip())
            for column in ("english", "korean", "avoid")
        )
        if (row.get("pair") or "").strip() not in ("yes", "no"):
            raise ValueError(f"{path.name} line {number}: pair must be yes or no")
        if not english or not korean:
            raise ValueError(f"{path.name} line {number}: needs an english and a korean term")
        if any(HANGUL.search(f) for f in english):
            raise ValueError(f"{path.name} line {number}: the english column holds Hangul")
        if not all(HANGUL.search(f) for f in korean):
            raise ValueError(f"{path.name} line {number}: every korean form needs Hangul")
        if set(map(_squeeze, avoid)) & set(map(_squeeze, korean)):
            raise ValueError(f"{path.name} line {number}: a form is both accepted and avoided")
        for form in avoid:
            if form.startswith("re:"):
                try:
                    re.compile(form[3:])
                except re.error as error:
                    raise ValueError(f"{path.name} line {number}: bad pattern {form!r}: {error}") from None
        terms.append(
            Term(english, korean, row["pair"].strip() == "yes", avoid, (row.get("note") or "").strip())
        )
    return terms


def _squeeze(text: str) -> str:
    return re.sub(r"\s+", "", text)


def _avoided(form: str, squeezed_korean: str) -> str | None:
    """The avoided text found in the (space-free) Korean prose, or None."""
    if form.startswith("re:"):
        found = re.search(_squeeze(form[3:]), squeezed_korean)
        return found.group(0) if found else None
    return form if _squeeze(form) in squeezed_korean else None


def prose(markdown: str) -> str:
    """The prose of a markdown cell: code, formulas, link targets and HTML tags removed."""
    for pattern in _NOT_PROSE:
        markdown = pattern.sub(" ", markdown)
    return markdown


def avoided_terms(korean: str, terms: list[Term]) -> list[str]:
    """The avoid rule on one Korean text (already stripped of what is not prose): one
    ``"says '…'; the glossary term is '…'"`` per avoided form found."""
    squeezed = _squeeze(korean)
    return [
        f"says {found!r}; the glossary term is {term.korean[0]!r}"
        for term in terms
        for form in term.avoid
        if (found := _avoided(form, squeezed))
    ]


def korean_strings(source: str) -> list[tuple[int, str]]:
    """``(line, text)`` of every string literal holding Hangul in Python ``source`` (the literal
    parts of f-strings too). IPython lines (``%magic``, ``!shell``) are skipped.

    Raises:
        SyntaxError: if ``source`` (without its IPython lines) is not Python.
    """
    lines = ["" if line.lstrip().startswith(("%", "!")) else line for line in source.splitlines()]
    tree = ast.parse("\n".join(lines))
    found = [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and HANGUL.search(node.value)
    ]
    return sorted(found)


def check_markdown_file(path: Path, terms: list[Term]) -> list[str]:
    """The avoid rule on the Korean lines of a Markdown file (README, guide), ``"NAME line N: …"``."""
    text = Path(path).read_text(encoding="utf-8")
    text = re.sub(r"```.*?```", lambda block: "\n" * block.group(0).count("\n"), text, flags=re.DOTALL)
    return [
        f"{Path(path).name} line {number}: {problem}"
        for number, line in enumerate(text.splitlines(), start=1)
        if HANGUL.search(line)
        for problem in avoided_terms(prose(line), terms)
    ]


def check_python_file(path: Path, terms: list[Term]) -> list[str]:
    """The avoid rule on the Korean string literals of a Python module (messages, labels)."""
    return [
        f"{Path(path).name} line {number}: {problem}"
        for number, text in korean_strings(Path(path).read_text(encoding="utf-8"))
        for problem in avoided_terms(text, terms)
    ]


def _uncited(english: str, korean: str) -> str:
    """``english`` without the cited text (:data:`_CITED`) that ``korean`` holds verbatim."""
    return _CITED.sub(lambda m: " " if m.group(0) in korean else m.group(0), english)


def check_cells(cells: list, terms: list[Term]) -> list[str]:
    """Disagreements between the cells and the glossary (both rules, see the module docstring).

    Markdown cells get both rules; code cells the avoid rule on their Korean string literals
    (``"cell N line M: …"``)."""
    problems = []
    patterns = [(term, term.english_pattern()) for term in terms if term.pair]
    for i, cell in enumerate(cells):
        if cell.get("cell_type") == "code":
            try:
                strings = korean_strings(nbtemplate.source(cell))
            except SyntaxError as error:
                problems.append(f"cell {i}: cannot be read as Python ({error.msg}, line {error.lineno})")
                continue
            problems += [f"cell {i} line {n}: {p}" for n, text in strings for p in avoided_terms(text, terms)]
            continue
        if cell.get("cell_type") != "markdown" or nbtemplate.language(cell) == "en":
            continue
        korean = prose(nbtemplate.source(cell))
        problems += [f"cell {i}: {problem}" for problem in avoided_terms(korean, terms)]
        korean = _squeeze(korean)
        if (
            nbtemplate.language(cell) != "ko"
            or i + 1 >= len(cells)
            or nbtemplate.language(cells[i + 1]) != "en"
        ):
            continue
        english = _uncited(prose(nbtemplate.source(cells[i + 1])), nbtemplate.source(cell))
        for term, pattern in patterns:
            found = pattern.search(english)
            if found and not any(_squeeze(form) in korean for form in term.korean):
                problems.append(
                    f"cells {i}/{i + 1}: English says {found.group(0)!r}, Korean has none of {' | '.join(term.korean)}"
                )
    return problems


def check_notebook(path: Path, terms: list[Term] | None = None) -> list[str]:
    """Glossary disagreements in one notebook file, each prefixed with the file name."""
    nb = nbformat.read(path, as_version=4)
    return [f"{Path(path).name} {problem}" for problem in check_cells(nb.cells, terms or load())]


def course_files() -> list[Path]:
    """What :func:`main` checks by default: the notebooks, ``README.md``, ``docs/*.md`` and the
    modules of ``posviz/``."""
    return [
        *notebook_paths(),
        ROOT / "README.md",
        *sorted((ROOT / "docs").glob("*.md")),
        *sorted((ROOT / "posviz").glob("*.py")),
    ]


def check_file(path: Path, terms: list[Term] | None = None) -> list[str]:
    """Glossary problems in one file, chosen by its suffix (``.ipynb``, ``.md``, ``.py``).

    Raises:
        ValueError: for any other suffix.
    """
    terms = terms or load()
    checks = {".ipynb": check_notebook, ".md": check_markdown_file, ".py": check_python_file}
    path = Path(path)
    if path.suffix not in checks:
        raise ValueError(f"cannot check {path.name}: expected a .ipynb, .md or .py file")
    return checks[path.suffix](path, terms)


def main(argv: list[str] | None = None) -> int:
    paths = [Path(a) for a in (argv if argv is not None else sys.argv[1:])] or course_files()
    terms = load()
    problems = [p for path in paths for p in check_file(path, terms)]
    print("\n".join(problems) or f"{len(paths)} file(s) agree with {GLOSSARY.name} ({len(terms)} terms)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
