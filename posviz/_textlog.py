"""The figure-text log the course's tests read (not for learners; switched on by an environment variable).

When ``POSVIZ_FIGURE_TEXT`` names a file as :func:`posviz.setup` runs, every :func:`posviz.t`
call and every text of every figure drawn are appended to it as JSON lines, so that
``tools/textcheck.py`` can check that each figure's text follows the language setting.
"""

from __future__ import annotations

import json
from pathlib import Path

__all__ = ["FIGURE_TEXT_ENV", "enable_figure_text_log", "record_t"]

#: Environment variable naming a file: if set when :func:`posviz.setup` runs, figure text is logged there.
FIGURE_TEXT_ENV = "POSVIZ_FIGURE_TEXT"
_text_log: Path | None = None
_draw_patched = False


def record_t(ko: str, en: str, sep: str) -> None:
    """Log one :func:`posviz.t` call (nothing happens while the log is off)."""
    if _text_log is not None:
        _log({"kind": "t", "ko": ko, "en": en, "sep": sep})


def _log(record: dict) -> None:
    with _text_log.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(record, ensure_ascii=False) + "\n")


def enable_figure_text_log(path: str | Path | None) -> None:
    """Append every :func:`posviz.t` call and every text of every figure drawn to ``path`` (JSON lines).

    For the course's tests (``tests/test_notebooks.py``, checked by ``tools/textcheck.py``): a
    ``t(ko, en)`` call is logged as ``{"kind": "t", "ko", "en", "sep"}``; each time a figure is
    drawn (shown inline, saved, or ``canvas.draw()``), each visible, non-empty text in it
    (titles, axis labels, tick labels, legend entries, annotations, colorbar labels) is logged as
    ``{"kind": "text", "text", "where"}``, ``where`` naming the figure by its first title.
    :func:`posviz.setup` calls this when the environment variable ``POSVIZ_FIGURE_TEXT`` is set.
    Calling it again changes the file; ``None`` stops logging.

    Raises:
        TypeError: if ``path`` is not a ``str``, ``Path`` or ``None``.
    """
    global _text_log, _draw_patched
    if path is not None and not isinstance(path, (str, Path)):
        raise TypeError(f"path must be a str, Path or None, got {type(path).__name__}")
    _text_log = None if path is None else Path(path)
    if _draw_patched or path is None:
        return
    _draw_patched = True
    from matplotlib.figure import Figure
    from matplotlib.text import Text

    original_draw = Figure.draw

    def draw_and_log(figure, renderer):
        result = original_draw(figure, renderer)
        if _text_log is None:
            return result
        texts = [
            text.get_text()
            for text in figure.findobj(Text)
            if text.get_visible() and text.get_text().strip()
        ]
        titles = [t for a in figure.axes for t in (a.get_title(),) if t.strip()]
        suptitle = figure.get_suptitle() if hasattr(figure, "get_suptitle") else ""
        where = (suptitle or (titles[0] if titles else "untitled figure")).replace("\n", " ")[:80]
        for text in dict.fromkeys(texts):
            _log({"kind": "text", "text": text, "where": where})
        return result

    Figure.draw = draw_and_log
