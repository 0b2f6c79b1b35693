"""Check that the notebooks use the course glossary (glossary.tsv) consistently.

    python tools/glossary.py              # check notebooks/NN_*.ipynb; exit 1 if a pair disagrees
    python tools/glossary.py FILE ...     # check these notebooks

glossary.tsv (tab-separated, one idea per row) has the columns ``english``, ``korean`` and
``note``; ``|`` separates accepted forms, the first Korean form being the preferred one.
The rule checked: where a ``lang-en`` cell uses an English term, its ``lang-ko`` twin (the
cell just before it) uses one of the Korean forms. English matches ignore case, accept
plurals and treat hyphens and spaces alike ("self attention", "self-attentions"); Korean
matches ignore spaces ("셀프어텐션"), so particles and spacing never matter. Code spans,
code blocks, formulas, link targets and HTML tags are not read. The check is per pair of
cells, so a translation that drops a term, or uses another word for it, is found where it is.
"""

from __future__ import annotations

import csv
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import nbformat

sys.path.insert(0, str(Path(__file__).resolve().parent))
import nbtemplate
from nbrun import ROOT, notebook_paths

GLOSSARY = ROOT / "glossary.tsv"
_NOT_PROSE = [
    re.compile(r"```.*?```", re.DOTALL),  # code blocks
    re.compile(r"\$\$.*?\$\$", re.DOTALL),  # display math
    re.compile(r"\$[^$\n]+\$"),  # inline math
    re.compile(r"`[^`\n]+`"),  # code spans
    re.compile(r"\]\([^)]*\)"),  # link targets
    re.compile(r"<[^>]+>"),  # HTML tags (not the text between them)
    re.compile(r"https?://\S+"),  # bare URLs
]


@dataclass(frozen=True)
class Term:
    """One glossary row: accepted English and Korean forms, and a note."""

    english: tuple[str, ...]
    korean: tuple[str, ...]
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
        english = tuple(f.strip() for f in (row.get("english") or "").split("|") if f.strip())
        korean = tuple(f.strip() for f in (row.get("korean") or "").split("|") if f.strip())
        if not english or not korean:
            raise ValueError(f"{path.name} line {number}: needs an english and a korean term")
        if any(re.search(r"[\uac00-\ud7a3]", f) for f in english):
            raise ValueError(f"{path.name} line {number}: the english column holds Hangul")
        if not all(re.search(r"[\uac00-\ud7a3]", f) for f in korean):
            raise ValueError(f"{path.name} line {number}: every korean form needs Hangul")
        terms.append(Term(english, korean, (row.get("note") or "").strip()))
    return terms


def prose(markdown: str) -> str:
    """The prose of a markdown cell: code, formulas, link targets and HTML tags removed."""
    for pattern in _NOT_PROSE:
        markdown = pattern.sub(" ", markdown)
    return markdown


def check_cells(cells: list, terms: list[Term]) -> list[str]:
    """Disagreements between each ``lang-ko``/``lang-en`` pair of cells and the glossary."""
    problems = []
    patterns = [(term, term.english_pattern()) for term in terms]
    for i in range(1, len(cells)):
        if nbtemplate.language(cells[i]) != "en" or nbtemplate.language(cells[i - 1]) != "ko":
            continue
        english = prose(nbtemplate.source(cells[i]))
        korean = re.sub(r"\s+", "", prose(nbtemplate.source(cells[i - 1])))
        for term, pattern in patterns:
            found = pattern.search(english)
            if found and not any(re.sub(r"\s+", "", form) in korean for form in term.korean):
                problems.append(
                    f"cells {i - 1}/{i}: English says {found.group(0)!r}, Korean has none of {' | '.join(term.korean)}"
                )
    return problems


def check_notebook(path: Path, terms: list[Term] | None = None) -> list[str]:
    """Glossary disagreements in one notebook file, each prefixed with the file name."""
    nb = nbformat.read(path, as_version=4)
    return [f"{Path(path).name} {problem}" for problem in check_cells(nb.cells, terms or load())]


def main(argv: list[str] | None = None) -> int:
    paths = [Path(a) for a in (argv if argv is not None else sys.argv[1:])] or notebook_paths()
    terms = load()
    problems = [p for path in paths for p in check_notebook(path, terms)]
    print("\n".join(problems) or f"{len(paths)} notebook(s) agree with {GLOSSARY.name} ({len(terms)} terms)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
