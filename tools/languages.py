"""The course's languages, declared once for every tool.

Editions: ``"both"`` (the bilingual notebooks as written), ``"ko"`` and ``"en"`` (one-language
editions). A bilingual line joins its Korean and English halves with :data:`SEP`; text is
Korean where it holds Hangul (:data:`HANGUL`). :data:`MATH` and :data:`NOT_PROSE` say what in a
markdown cell is not prose in either language.
"""

from __future__ import annotations

import argparse
import re

__all__ = ["EDITIONS", "HANGUL", "MATH", "NOT_PROSE", "ONE_LANGUAGE", "SEP", "parse_languages"]

#: Every edition, the bilingual one first.
EDITIONS: tuple[str, ...] = ("both", "ko", "en")
#: The one-language editions, Korean first (the order of the paired cells).
ONE_LANGUAGE: tuple[str, ...] = ("ko", "en")
#: Joins the Korean and English halves of a bilingual line (``posviz.t``'s default too).
SEP = " · "
#: A Hangul syllable or compatibility jamo.
HANGUL = re.compile(r"[\uac00-\ud7a3\u3131-\u318e]")
#: Display math ``$$…$$`` and inline math ``$…$`` (an escaped ``\$`` opens nothing).
MATH = re.compile(r"\$\$.+?\$\$|(?<![\\$])\$[^$\n]+\$", re.DOTALL)
#: Inline code, math, link targets and HTML tags (a tag opens with ``<`` and a letter or ``/``, so
#: ``a < b`` … ``c > d`` in prose is not a tag).
NOT_PROSE = re.compile(r"`[^`\n]*`|" + MATH.pattern + r"|\]\([^)\n]*\)|</?[A-Za-z][^<>\n]*>", re.DOTALL)


def parse_languages(text: str, allowed: tuple[str, ...] = EDITIONS) -> tuple[str, ...]:
    """``--lang`` of a tool: comma-separated edition names, each one of ``allowed``.

    Raises:
        argparse.ArgumentTypeError: for an empty list or a name not in ``allowed``.
    """
    langs = tuple(part.strip() for part in text.split(",") if part.strip())
    unknown = [lang for lang in langs if lang not in allowed]
    if unknown or not langs:
        raise argparse.ArgumentTypeError(f"editions are {', '.join(allowed)}; got {text!r}")
    return langs


def language_argument(parser: argparse.ArgumentParser, allowed: tuple[str, ...] = EDITIONS) -> None:
    """Add ``--lang`` (default: every name in ``allowed``) to a tool's command line."""
    parser.add_argument(
        "--lang",
        type=lambda text: parse_languages(text, allowed),
        default=allowed,
        help=f"comma-separated editions to build, from {', '.join(allowed)} (default: all of them)",
    )
