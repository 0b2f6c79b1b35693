"""Checks on the course's text that a reader would see: emphasis that renders, figure text
in the figure's language, and figure text that fits its figure.

    python tools/textcheck.py                # check the markdown of notebooks/NN_*.ipynb; exit 1 on a problem
    python tools/textcheck.py FILE ...       # check these notebooks

1. Emphasis. JupyterLab, GitHub and the website render markdown by CommonMark rules, under which
   a closing ``**`` right after punctuation and right before a letter (``**사인파(sine)**는``)
   does not close, and the reader sees the asterisks. :func:`unrendered_emphasis` renders a cell
   with markdown-it-py (CommonMark) and reports any ``**`` or ``__`` left in its text (code,
   formulas and HTML are not text).
2. Figure language. ``posviz.style`` can record the text of every figure drawn and every
   ``posviz.t(ko, en)`` call (environment variable ``POSVIZ_FIGURE_TEXT``, see
   :func:`posviz.style.enable_figure_text_log`); :func:`figure_language_problems` reads such a
   record and reports Korean figure text that holds English words and English figure text that
   holds Hangul. The record is made during the ordinary bilingual run of the notebooks (the
   tests' run), so the check costs no extra execution: in a ``lang="both"`` run every text
   drawn is known as (a) the Korean half of a ``t()`` call, (b) its English half, or (c) text
   outside ``t()``, which the one-language editions draw unchanged and so must suit both.
3. Figure fit. The same log gives each text's window extent and its figure's;
   :func:`figure_fit_problems` reports text that runs off the figure or overlaps other text.
4. The "what to notice" label. Every notebook writes it one way, with a full stop inside the bold:
   ``**눈여겨볼 점.**`` and ``**What to notice.**`` (a qualifier may stand before the stop,
   ``**눈여겨볼 점(큰 설정).**``); :func:`notice_label_problems` reports any other form (``**눈여겨볼 점:**``).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import nbformat

if __package__:  # python -m tools.NAME, or imported as tools.NAME
    from . import nbtemplate
    from .languages import HANGUL, MATH
    from .nbrun import ROOT, notebook_paths
else:  # python tools/NAME.py: tools/ itself is on sys.path
    import nbtemplate
    from languages import HANGUL, MATH
    from nbrun import ROOT, notebook_paths


# English a Korean figure may keep: method and model code names, abbreviations, function names
# and units. Everything else written in Latin letters (two letters or more) must be Korean.
ALLOWED_LATIN = frozenset(
    """
    none nope sinusoidal learned shaw alibi rope rotary t5 yarn ntk pi xpos linear dynamic llama3
    rnn gru lstm tanh relu softmax sdpa pca minilm bert gpt llama qwen smollm hf
    sin cos exp log max min mean std argmax clip
    id ids pos dim dims head heads query key value d_model head_dim base
    ms s rad nats nat bits mib gib kib kb mb gb fp16 fp32 bf16 float16 float32 float64 bfloat16 int8
    x y k q v l d p n i j m t b h w
    """.split()
)
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_]*(?:-[A-Za-z0-9_]+)*")  # NTK-aware is one name
_KEYWORD = re.compile(r"\b[A-Za-z_]\w*\s*=")
_QUOTED = re.compile(r"'[^'\n]*'|\"[^\"\n]*\"|‘[^’\n]*’|“[^”\n]*”|<[a-z]+>")


def example_words() -> frozenset[str]:
    """The tokens of the course's example sentences, English and Korean (``data/sentences.json``,
    lower-cased): a figure that shows such a sentence token by token shows data, not figure
    language, and the same tokens appear in both editions."""
    data = json.loads((ROOT / "data" / "sentences.json").read_text(encoding="utf-8"))
    words: set[str] = set()

    def walk(node, english=False):
        if isinstance(node, dict):
            for key, value in node.items():
                walk(value, english or key in ("en", "ko"))
        elif isinstance(node, list):
            for value in node:
                walk(value, english)
        elif isinstance(node, str) and english:
            words.update(w.lower() for w in node.split())
            words.update(w.lower() for w in _WORD.findall(node))

    walk(data)
    return frozenset(words)


def _drop_math(markdown: str) -> str:
    return MATH.sub("MATH", markdown)  # a word, as JupyterLab and GitHub protect math


def unrendered_emphasis(markdown: str) -> list[str]:
    """Lines of rendered text (outside code, formulas and HTML) that still show ``**`` or ``__``.

    ``markdown`` is rendered with markdown-it-py's CommonMark preset (tables enabled, as on GitHub
    and in JupyterLab). Formulas ``$…$`` and ``$$…$$`` are replaced before rendering, since their
    ``*`` and ``_`` are not emphasis. Returns the offending text fragments, empty if all is well.
    """
    from markdown_it import MarkdownIt

    parser = MarkdownIt("commonmark").enable("table")
    problems = []
    for token in parser.parse(_drop_math(markdown)):
        for child in token.children or []:
            if child.type == "text" and ("**" in child.content or "__" in child.content):
                problems.append(child.content.strip())
    return problems


#: A "what to notice" label at the start of a line, in either language, in any form.
_NOTICE_LABEL = re.compile(r"^[ \t]*\*\*(?:눈여겨볼 점|What to notice)[^*\n]*\*\*", re.MULTILINE)
NOTICE_LABELS = ("**눈여겨볼 점.**", "**What to notice.**")  # the course's one form


def notice_label_problems(markdown: str) -> list[str]:
    """Labels "what to notice" at the start of a line that are not in the course's one form,
    :data:`NOTICE_LABELS`: the full stop inside the bold, after any qualifier."""
    return [m.group(0).strip() for m in _NOTICE_LABEL.finditer(markdown) if not m.group(0).endswith(".**")]


def check_notebook(path: Path) -> list[str]:
    """Unrendered emphasis and "what to notice" labels of another form in every markdown cell of
    one notebook, as ``"NAME cell N: …"`` lines."""
    nb = nbformat.read(path, as_version=4)
    problems = []
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != "markdown":
            continue
        text = nbtemplate.source(cell)
        problems += [
            f"{Path(path).name} cell {i}: '**' or '__' shows as text: {fragment[:120]!r}"
            for fragment in unrendered_emphasis(text)
        ]
        problems += [
            f"{Path(path).name} cell {i}: notice label {label!r}: the course writes "
            f"{' / '.join(NOTICE_LABELS)} (the full stop inside the bold)"
            for label in notice_label_problems(text)
        ]
    return problems


def english_words(text: str, data: frozenset[str] = frozenset()) -> list[str]:
    """Words in Latin letters that a Korean figure must not show (see ``ALLOWED_LATIN``).

    Kept: words in ``ALLOWED_LATIN`` or in ``data`` (any case), words with a capital after the
    first letter or with a digit or underscore (``RoPE``, ``ALiBi``, ``W_hh``, ``PC1``), one-letter
    symbols, formulas between ``$``, keyword arguments (``layout=``), quoted examples (``'dog'``) and special tokens (``<pad>``).
    """
    text = _QUOTED.sub(" ", re.sub(r"\$[^$]*\$", " ", text))
    text = _KEYWORD.sub(" ", text)  # layout="half": a keyword argument is code
    words = []
    for word in _WORD.findall(text):
        bare = word.lower()
        if bare in ALLOWED_LATIN or bare in data or len(word) == 1 or any(c.isdigit() or c == "_" for c in word):
            continue
        if any(c.isupper() for c in word[1:]):  # RoPE, ALiBi, FLOPs, NoPE, GPU
            continue
        words.append(word)
    return words


def read_figure_text_log(path: Path) -> list[dict]:
    """The records written by ``posviz.style``'s figure-text log (one JSON object per line)."""
    if not Path(path).exists():
        return []
    return [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines() if line.strip()]


def figure_language_problems(records: list[dict]) -> list[str]:
    """Figure text in the wrong language, from a figure-text log of a ``lang="both"`` run.

    Records are ``{"kind": "t", "ko": …, "en": …, "sep": …}`` for each ``posviz.t`` call and
    ``{"kind": "text", "text": …, "where": …}`` for each text drawn in a figure. Each drawn text
    is split into the halves of the ``t()`` calls it contains and the rest: a Korean half must
    hold no English word (:func:`english_words`), an English half no Hangul, and the rest
    (drawn the same in both editions) neither; there, the words of the course's example
    sentences (:func:`example_words`, e.g. tokens as tick labels) count as data.
    """
    joined = {}
    for record in records:
        if record.get("kind") == "t":
            joined[record["ko"] + record["sep"] + record["en"]] = (record["ko"], record["en"])
    data = example_words()
    pieces = sorted(joined, key=len, reverse=True)  # longest first, so a call inside another is not split
    problems = set()
    for record in records:
        if record.get("kind") != "text":
            continue
        text, where = record["text"], record.get("where", "")
        rest = text
        halves = []
        for piece in pieces:
            if piece and piece in rest:
                halves.append(joined[piece])
                rest = rest.replace(piece, "\n")
        for ko, en in halves:
            if english_words(ko):
                problems.add(f"{where}: Korean figure text {ko!r} has English {english_words(ko)}")
            if HANGUL.search(en):
                problems.add(f"{where}: English figure text {en!r} has Hangul")
        if HANGUL.search(" ".join(w for w in re.split(r"[\s:,]+", rest) if w.lower() not in data)):
            problems.add(f"{where}: text outside posviz.t() has Hangul, so the English edition shows it: {text!r}")
        if english_words(rest, data):
            problems.add(
                f"{where}: text outside posviz.t() has English {english_words(rest, data)}, so the Korean edition "
                f"shows it: {text!r}"
            )
    return sorted(problems)


#: Pixels a text may reach past the figure's edge, or into another text, before it counts (antialiasing).
FIT_TOLERANCE = 1.5


def _overlap(a: list[float], b: list[float]) -> float:
    """Width × height in pixels of the intersection of two ``[x0, y0, x1, y1]`` boxes (0 if they
    do not overlap by more than :data:`FIT_TOLERANCE` in both directions)."""
    width = min(a[2], b[2]) - max(a[0], b[0])
    height = min(a[3], b[3]) - max(a[1], b[1])
    return width * height if width > FIT_TOLERANCE and height > FIT_TOLERANCE else 0.0


def figure_fit_problems(records: list[dict]) -> list[str]:
    """Figure text that leaves its figure or overlaps other text, from a figure-text log.

    Each ``{"kind": "text", …}`` record with an ``extent`` (written by ``posviz._textlog``) is one
    text as drawn: its window extent and its figure's, in pixels, and the draw it belongs to. A
    text fails if it reaches more than :data:`FIT_TOLERANCE` pixels past any edge of its figure
    (a y label cut at both ends, a title off the right), or if its box and the box of another
    text of the same draw overlap by more than that in both directions: tick labels of one axis
    that touch, a title over a legend, a colorbar label over its tick labels. The same text drawn
    twice at the same place (a figure drawn again) is one text. Only the last draw of each figure
    counts (records with ``figure_id``): Jupyter draws an inline figure once to find its tight
    box and again for the image the reader sees. Records without an extent (older logs) are skipped.
    """
    draws: dict[str, list[dict]] = {}
    last_draw: dict[str, str] = {}  # figure -> its last draw: the image the reader sees
    for record in records:
        if record.get("kind") == "text" and "extent" in record:
            draws.setdefault(record["draw"], []).append(record)
            if "figure_id" in record:
                last_draw[record["figure_id"]] = record["draw"]
    shown = set(last_draw.values())
    draws = {d: texts for d, texts in draws.items() if d in shown or "figure_id" not in texts[0]}
    problems = set()
    for texts in draws.values():
        unique = list({(r["text"], tuple(r["extent"])): r for r in texts}.values())
        for record in unique:
            box, canvas = record["extent"], record["figure"]
            out = [
                side
                for side, past in (
                    ("left", canvas[0] - box[0]),
                    ("bottom", canvas[1] - box[1]),
                    ("right", box[2] - canvas[2]),
                    ("top", box[3] - canvas[3]),
                )
                if past > FIT_TOLERANCE
            ]
            if out:
                problems.add(
                    f"{record['where']}: {record.get('role', 'text')} {record['text']!r} runs off the figure "
                    f"({', '.join(out)})"
                )
        for i, first in enumerate(unique):
            for second in unique[i + 1 :]:
                if _overlap(first["extent"], second["extent"]):
                    names = sorted(f"{r.get('role', 'text')} {r['text'][:40]!r}" for r in (first, second))
                    problems.add(f"{first['where']}: {names[0]} overlaps {names[1]}")
    return sorted(problems)


def main(argv: list[str] | None = None) -> int:
    paths = [Path(a) for a in (argv if argv is not None else sys.argv[1:])] or notebook_paths()
    problems = [p for path in paths for p in check_notebook(path)]
    done = f"{len(paths)} notebook(s): every emphasis renders, every notice label in one form"
    print("\n".join(problems) or done)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
