"""The figure-text log the course's tests read (not for learners; switched on by an environment variable).

When ``POSVIZ_FIGURE_TEXT`` names a file as :func:`posviz.setup` runs, every :func:`posviz.t`
call and every text of every figure drawn (with its extent) are appended to it as JSON lines, so that
``tools/textcheck.py`` can check that each figure's text follows the language setting and fits the figure.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

__all__ = ["FIGURE_TEXT_ENV", "enable_figure_text_log", "record_t"]

#: Environment variable naming a file: if set when :func:`posviz.setup` runs, figure text is logged there.
FIGURE_TEXT_ENV = "POSVIZ_FIGURE_TEXT"
_text_log: Path | None = None
_draw_patched = False
_drawn: list | None = None  # texts drawn during the figure draw in progress, with their extents
_draws = 0


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
    drawn (shown inline, saved, or ``canvas.draw()``), each non-empty text actually drawn in it
    (titles, axis labels, tick labels, legend entries, annotations, colorbar labels) is logged as
    ``{"kind": "text", "text", "shown", "where", "draw", "extent", "figure", "role"}``: ``text`` as
    written (before :func:`posviz.style.fit_figure_text` wrapped it), ``shown`` as drawn, ``where`` names the
    figure by its first title, ``draw`` tells one draw of one figure from another and ``figure_id``
    one figure from another (a figure shown inline is drawn twice: to find its tight box, then for
    the image), ``extent`` is the
    text's window extent ``[x0, y0, x1, y1]`` and ``figure`` the figure's ``[x0, y0, x1, y1]``, both
    in display pixels at the draw's dpi, and ``role`` says what the text is (see :func:`_role`).
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

    original_figure_draw, original_text_draw = Figure.draw, Text.draw

    def text_draw_and_note(text, renderer):
        result = original_text_draw(text, renderer)
        if _drawn is not None and text.get_visible() and text.get_text().strip():
            try:
                box = text.get_window_extent(renderer)
            except (RuntimeError, ValueError):  # e.g. a text without a figure
                return result
            _drawn.append((text, [round(float(v), 1) for v in (box.x0, box.y0, box.x1, box.y1)]))
        return result

    def draw_and_log(figure, renderer):
        global _drawn, _draws
        if _text_log is None:
            return original_figure_draw(figure, renderer)
        outer, _drawn = _drawn, []
        try:
            result = original_figure_draw(figure, renderer)
            drawn = _drawn
        finally:
            _drawn = outer
        _draws += 1
        titles = [t for a in figure.axes for t in (a.get_title(),) if t.strip()]
        suptitle = figure.get_suptitle() if hasattr(figure, "get_suptitle") else ""
        where = (suptitle or (titles[0] if titles else "untitled figure")).replace("\n", " ")[:80]
        bounds = [round(float(v), 1) for v in figure.bbox.bounds]
        canvas = [bounds[0], bounds[1], bounds[0] + bounds[2], bounds[1] + bounds[3]]
        draw_id = f"{os.getpid()}-{_draws}"
        for text, extent in drawn:
            shown = text.get_text()
            wrapped = shown == getattr(text, "_posviz_wrapped", None)  # posviz.style wrapped it to fit
            _log(
                {
                    "kind": "text",
                    "text": text._posviz_unwrapped if wrapped else shown,
                    "shown": shown,
                    "where": where,
                    "draw": draw_id,
                    "figure_id": f"{os.getpid()}-{id(figure)}",
                    "extent": extent,
                    "figure": canvas,
                    "role": _role(figure, text),
                }
            )
        return result

    Figure.draw = draw_and_log
    Text.draw = text_draw_and_note


def _role(figure, text) -> str:
    """What a text is in its figure: "suptitle", "title", "xlabel", "ylabel", "xtick", "ytick",
    "legend", "offset" (an axis's ×10ⁿ offset text) or "text" (annotations and the rest)."""
    if text is getattr(figure, "_suptitle", None):
        return "suptitle"
    for ax in figure.axes:
        if text in (ax.title, getattr(ax, "_left_title", None), getattr(ax, "_right_title", None)):
            return "title"
        for name, axis in (("x", ax.xaxis), ("y", ax.yaxis)):
            if text is axis.label:
                return f"{name}label"
            if text is axis.offsetText:
                return "offset"
            if any(text in (tick.label1, tick.label2) for tick in (*axis.majorTicks, *axis.minorTicks)):
                return f"{name}tick"
        legend = ax.get_legend()
        if legend is not None and (text in legend.get_texts() or text is legend.get_title()):
            return "legend"
    for legend in getattr(figure, "legends", []):
        if text in legend.get_texts() or text is legend.get_title():
            return "legend"
    return "text"
