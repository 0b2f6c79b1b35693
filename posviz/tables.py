"""Printed tables whose columns line up when the text mixes Hangul and Latin letters.

Python's ``f"{text:>15}"`` pads by characters, but a monospaced font (Jupyter's output, a
terminal) draws a Hangul syllable two columns wide, so a Korean label pushes the rest of its row
to the right. These helpers count columns instead.
"""

from __future__ import annotations

import unicodedata

__all__ = ["pad_text", "text_columns"]


def text_columns(text: str) -> int:
    """Width of one line of ``text`` in a monospaced font, in columns.

    A Hangul syllable (and any other East Asian wide or full-width character) takes two columns,
    every other character one, as in Jupyter's and a terminal's fixed-width output.
    """
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def pad_text(text: str, width: int, *, align_right: bool = False) -> str:
    """``text`` padded with spaces to ``width`` columns (see :func:`text_columns`) for a printed table.

    Spaces go after the text, or before it with ``align_right=True``; text already ``width``
    columns wide or wider is returned unchanged.
    """
    gap = " " * max(0, width - text_columns(text))
    return gap + text if align_right else text + gap
