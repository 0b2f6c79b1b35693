"""Course set-up: seeding, plot style, a Korean-capable font and the figure language.

Every notebook starts with ``posviz.setup(lang=...)``. It

1. seeds ``random``, numpy and torch (:func:`seed_everything`);
2. applies the seaborn theme (which resets fonts, so it must come first);
3. picks a font that can draw Hangul (:func:`use_korean_font`) and keeps a proper
   minus sign (U+2212) on negative tick labels;
4. sets the language of figure text and printed messages (:func:`set_language`, read by :func:`t`);
5. makes every figure fit its text at draw time (:func:`fit_figure_text`): long titles and
   labels wrap to their axes in balanced lines, log axes read 2, 4, 8 or 10, 20, 50 instead of
   2×10¹ (or powers of ten throughout, where an axis reaches past 10⁻³…10⁵);
6. prints the versions that matter.
"""

from __future__ import annotations

import dataclasses
import os
import platform
import random
import sys
from pathlib import Path

import numpy as np

from . import _textlog

__all__ = [
    "LANGUAGES",
    "fit_figure_text",
    "plain_log_ticks",
    "wrap_text",
    "get_language",
    "seed_everything",
    "set_language",
    "setup",
    "t",
    "use_korean_font",
]

#: Allowed values of the figure language.
LANGUAGES = ("ko", "en", "both")

_FONT_DIR = Path(__file__).with_name("fonts")
_BUNDLED_FONTS = ("NanumGothic.ttf", "NanumGothicBold.ttf")
# Installed fonts are preferred in this order (Windows, macOS, common Linux/Colab packages);
# the bundled NanumGothic is the last resort and is always available.
_KOREAN_FONT_CANDIDATES = (
    "Malgun Gothic",
    "Apple SD Gothic Neo",
    "AppleGothic",
    "NanumGothic",
    "NanumBarunGothic",
    "Noto Sans CJK KR",
    "Noto Sans KR",
    "Source Han Sans KR",
)
_HANGUL_PROBE = "가각한글위치인코딩"
_LATIN_FALLBACK = "DejaVu Sans"  # ships with matplotlib; has U+2212 MINUS SIGN and math glyphs

_language = "both"
_fitting_installed = False

def seed_everything(seed: int) -> None:
    """Seed Python's ``random``, numpy's global generator and torch (CPU and CUDA).

    Args:
        seed: a non-negative ``int``.

    Raises:
        TypeError: if ``seed`` is not an ``int`` (``bool`` is rejected too).
        ValueError: if ``seed`` is negative.
    """
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise TypeError(f"seed must be an int, got {type(seed).__name__}")
    if seed < 0:
        raise ValueError(f"seed must be non-negative, got {seed}")
    import torch

    random.seed(int(seed))
    np.random.seed(int(seed))
    torch.manual_seed(int(seed))  # also seeds every CUDA device


def _covers_hangul(path: str) -> bool:
    from matplotlib.ft2font import FT2Font

    try:
        font = FT2Font(path)
    except (OSError, RuntimeError, ValueError):
        return False
    return all(font.get_char_index(ord(ch)) != 0 for ch in _HANGUL_PROBE)


def use_korean_font() -> str:
    """Make matplotlib draw Hangul, and return the name of the Korean font in use.

    An installed Korean font is used when one is found (Malgun Gothic on Windows, Apple SD
    Gothic Neo on macOS, Nanum or Noto CJK on Linux and Colab); otherwise the NanumGothic
    font bundled with ``posviz`` (SIL OFL 1.1, see ``posviz/fonts/OFL.txt``). Works offline,
    without a kernel restart and without ``distutils``.

    ``font.family`` becomes ``["DejaVu Sans", korean_font]``: matplotlib (>= 3.6) takes each
    glyph from the first family that has it, so Latin letters, digits and the minus sign U+2212
    come from DejaVu Sans (which ships with matplotlib) and Hangul from the Korean font.
    DejaVu Sans must come first because mathtext (log-scale tick labels such as 10⁻³) has no
    fallback and draws with the first family only; NanumGothic has no U+2212. So
    ``axes.unicode_minus`` stays ``True`` and no "glyph missing" warning is ever raised.

    Returns:
        The family name of the Korean font, e.g. ``"NanumGothic"``.
    """
    import matplotlib as mpl
    from matplotlib import font_manager

    manager = font_manager.fontManager
    registered = {Path(f.fname).name for f in manager.ttflist}
    for name in _BUNDLED_FONTS:
        if name not in registered:
            manager.addfont(str(_FONT_DIR / name))
    # matplotlib reads NanumGothicBold's weight as 600 and then logs "Failed to find font
    # weight bold" for every bold title; it is the family's bold face, so file it as 700.
    manager.ttflist = [
        dataclasses.replace(f, weight=700) if Path(f.fname).name == "NanumGothicBold.ttf" else f
        for f in manager.ttflist
    ]
    if hasattr(manager, "_findfont_cached"):  # drop lookups made before the change
        manager._findfont_cached.cache_clear()

    by_name: dict[str, list[str]] = {}
    for entry in font_manager.fontManager.ttflist:
        by_name.setdefault(entry.name, []).append(entry.fname)
    chosen = "NanumGothic"
    for name in _KOREAN_FONT_CANDIDATES:
        if any(_covers_hangul(path) for path in by_name.get(name, [])):
            chosen = name
            break

    mpl.rcParams["font.family"] = [_LATIN_FALLBACK, chosen]
    mpl.rcParams["axes.unicode_minus"] = True
    return chosen


def set_language(lang: str) -> None:
    """Set the language of figure text and printed messages written with :func:`t`.

    Args:
        lang: ``"ko"`` (Korean only), ``"en"`` (English only) or ``"both"``.

    Raises:
        ValueError: for any other value.
    """
    global _language
    if lang not in LANGUAGES:
        raise ValueError(f"lang must be one of {LANGUAGES}, got {lang!r}")
    _language = lang


def get_language() -> str:
    """Return the current figure language: ``"ko"``, ``"en"`` or ``"both"``."""
    return _language


def t(ko: str, en: str, *, sep: str = " · ") -> str:
    """Pick figure text for the current language.

    Args:
        ko: the Korean text.
        en: the English text.
        sep: joins the two when the language is ``"both"`` (use ``"\\n"`` for titles).

    Keep Hangul out of ``$…$`` mathtext: a string containing ``$`` is drawn by mathtext, which
    has no per-glyph font fallback, so Hangul anywhere in it (the ``"both"`` join included)
    would come out as boxes. Write symbols in Unicode instead (``"‖∂h/∂x‖ (평균)"``).

    Returns:
        ``ko``, ``en``, or ``ko + sep + en``.
    """
    _textlog.record_t(ko, en, sep)
    if _language == "ko":
        return ko
    if _language == "en":
        return en
    return f"{ko}{sep}{en}"


# --- figures that fit their text ---------------------------------------------------------------

_MATH_OR_WORD = None  # compiled on first use (keeps ``import posviz`` light)


def _words(line: str) -> list[str]:
    """``line`` cut at spaces outside ``$…$`` mathtext (a formula is never broken)."""
    import re

    global _MATH_OR_WORD
    if _MATH_OR_WORD is None:
        _MATH_OR_WORD = re.compile(r"(?:\$[^$]*\$|[^\s$])+")
    return _MATH_OR_WORD.findall(line)


def _fill(words: list[str], width: float, measure) -> list[str]:
    """``words`` filled greedily into lines no wider than ``width`` (a word wider than that alone)."""
    lines, current = [], ""
    for word in words:
        candidate = f"{current} {word}" if current else word
        if current and measure(candidate) > width:
            lines.append(current)
            current = word
        else:
            current = candidate
    return [*lines, current]


def _balanced(words: list[str], width: float, measure) -> list[str]:
    """``words`` in as few lines as :func:`_fill` needs at ``width``, filled to the narrowest width
    (bisected to 1/256 of ``width``) that needs no more: even lines, as CSS ``text-wrap: balance``."""
    lines = _fill(words, width, measure)
    if len(lines) < 2:
        return lines
    low, high = max(measure(word) for word in words), width  # no width below the widest word helps
    best = lines
    step = max(width / 256, 1e-9)
    while high - low > step:
        middle = (low + high) / 2
        trial = _fill(words, middle, measure)
        if len(trial) <= len(lines):
            best, high = trial, middle
        else:
            low = middle
    return best


def wrap_text(text: str, width: float, measure) -> str:
    """``text`` broken into lines no wider than ``width`` where it can be, the lines balanced.

    ``measure(line)`` gives a line's width in the unit of ``width`` (e.g. pixels). Lines that fit
    are kept; a line that does not is first cut at the bilingual separator " · " (Korean above,
    English below), then each part that still does not fit is broken between words into as few
    lines as filling word by word needs, of even length (no single word left alone on the last
    line when the words allow it). A word (or ``$…$`` formula) wider than ``width`` stays on a
    line of its own. Existing line breaks are kept.

    Raises:
        ValueError: if ``width`` is not positive.
    """
    if not width > 0:
        raise ValueError(f"width must be positive, got {width!r}")
    import functools

    measured = functools.cache(measure)  # the bisection measures the same lines again and again
    out = []
    for line in text.split("\n"):
        if measured(line) <= width:
            out.append(line)
            continue
        for part in line.split(" · ") if " · " in line else [line]:
            out.extend(_balanced(_words(part), width, measured))
    return "\n".join(out)


def _plain_number(value: float) -> str:
    """A tick value as a plain number: 2, 20, 0.5, 1000 (no 2×10¹), 0 (a symlog axis's zero);
    ``None`` outside 10⁻³…10⁵."""
    if value == 0:
        return "0"
    if not 1e-3 <= abs(value) < 1e5:
        return None
    text = f"{value:.6g}"
    return text.replace("-", "\N{MINUS SIGN}")


def plain_log_ticks(ax, axis: str = "both", *, only_default: bool = False) -> None:
    """Label the log-scaled (or symlog) ``axis`` (``"x"``, ``"y"`` or ``"both"``) of ``ax`` with plain numbers.

    Matplotlib writes log ticks as ``10¹`` and, on an axis spanning less than a decade or two, the
    minor ticks as ``2×10¹``; this keeps matplotlib's choice of which ticks get a label and
    writes each as ``2``, ``20``, ``50``, ``1000`` when every label of the axis lies between 10⁻³
    and 10⁵. An axis with a label outside that range (10⁻⁶, 10¹²) keeps the power form for all of
    its labels, ``10⁰`` included, so that one axis never mixes ``1``, ``0.001`` and ``10⁻⁶``.
    Linear axes are left alone. :func:`setup` applies it at draw time to every log axis
    that still has matplotlib's default labels (``only_default=True``: a formatter a notebook set
    itself is kept).

    Raises:
        ValueError: for an ``axis`` other than ``"x"``, ``"y"``, ``"both"``.
    """
    from ._checks import check_choice

    check_choice("axis", axis, ("x", "y", "both"))
    for name in ("x", "y") if axis == "both" else (axis,):
        target = getattr(ax, f"{name}axis")
        if target.get_scale() not in ("log", "symlog"):
            continue
        for setter, getter in (
            (target.set_major_formatter, target.get_major_formatter),
            (target.set_minor_formatter, target.get_minor_formatter),
        ):
            current = getter()
            if isinstance(current, _PlainLogFormatter()):
                continue
            if only_default and type(current).__name__ != "LogFormatterSciNotation":
                continue
            setter(_plain_formatter(current))


_PLAIN_CLASS = None


def _PlainLogFormatter():
    """The formatter class (made on first use, so that ``import posviz`` does not load matplotlib)."""
    global _PLAIN_CLASS
    if _PLAIN_CLASS is None:
        from matplotlib.ticker import LogFormatterSciNotation

        class PlainLogFormatter(LogFormatterSciNotation):
            """Matplotlib's log labels (which ticks, which minor ticks), written as plain numbers where
            every label of the axis can be, and all in the power form otherwise."""

            _plain = None  # the axis's choice while its ticks are labelled (format_ticks)

            def format_ticks(self, values):
                self._plain = self._axis_reads_plain()
                try:
                    return super().format_ticks(values)
                finally:
                    self._plain = None

            def __call__(self, x, pos=None):
                label = super().__call__(x, pos)
                if not label:
                    return label
                plain = self._axis_reads_plain() if self._plain is None else self._plain
                return (_plain_number(x) or label) if plain else label

            def _axis_reads_plain(self) -> bool:
                """Whether every tick this axis labels (major and minor, in view) has a plain form."""
                axis = self.axis
                if axis is None:
                    return True
                low, high = sorted(axis.get_view_interval())
                for formatter, locs in (
                    (axis.get_major_formatter(), axis.get_majorticklocs()),
                    (axis.get_minor_formatter(), axis.get_minorticklocs()),
                ):
                    if not isinstance(formatter, PlainLogFormatter):
                        continue  # a formatter set by hand labels its ticks its own way
                    formatter.set_locs(locs)  # which minor ticks get a label (as format_ticks does)
                    for value in locs:
                        shown = low - 1e-9 * abs(low) <= value <= high + 1e-9 * abs(high)
                        labelled = shown and LogFormatterSciNotation.__call__(formatter, value)
                        if labelled and _plain_number(value) is None:
                            return False
                return True

        _PLAIN_CLASS = PlainLogFormatter
    return _PLAIN_CLASS


def _plain_formatter(current):
    from matplotlib.ticker import LogFormatter

    cls = _PlainLogFormatter()
    if isinstance(current, LogFormatter):
        return cls(
            base=current._base,
            labelOnlyBase=current.labelOnlyBase,
            minor_thresholds=current.minor_thresholds,
            linthresh=getattr(current, "_linthresh", None),
        )
    return cls()


def _wrap_to(text, width: float, renderer) -> bool:
    """Wrap one matplotlib ``Text`` to ``width`` display pixels (along its own direction); True if
    its text changed."""
    original = getattr(text, "_posviz_unwrapped", None)
    if original is None or text.get_text() != getattr(text, "_posviz_wrapped", None):
        original = text.get_text()  # first time, or the text was changed since it was wrapped
    if not original.strip() or width <= 0:
        return False

    prop = text.get_fontproperties()
    # the fit's passes often ask for the same width again: reuse the last answer
    key = (original, round(width, 1), hash(prop), getattr(renderer, "dpi", None))
    last = getattr(text, "_posviz_wrap_cache", None)
    if last is not None and last[0] == key:
        wrapped = last[1]
    else:

        def measure(line: str) -> float:
            if not line:
                return 0.0
            clean, ismath = text._preprocess_math(line)
            return renderer.get_text_width_height_descent(clean, prop, ismath=ismath)[0]

        wrapped = wrap_text(original, width, measure)
        text._posviz_wrap_cache = (key, wrapped)
    text._posviz_unwrapped, text._posviz_wrapped = original, wrapped
    if wrapped == text.get_text():
        return False
    text.set_text(wrapped)
    return True


def fit_figure_text(figure, renderer=None) -> bool:
    """Make ``figure``'s text fit before it is drawn (called by every draw once :func:`setup` ran).

    * Titles and x labels wrap to their axes' width (a title over an image or another fixed-aspect
      axes: to its place in the layout, see :func:`_title_width`), y labels (colorbar labels too)
      to their axes' height, the suptitle to the figure's width, in balanced lines
      (:func:`wrap_text`: a bilingual "한국어 · English" breaks at its separator first, and no
      word is left alone on a last line where the words allow). The layout engine (constrained layout,
      on by default) runs first, so the widths are the final ones, and again when drawing, so
      the wrapped lines get their room.
    * Log axes that still carry matplotlib's default labels read plain numbers, or powers of
      ten throughout where one label needs it (:func:`plain_log_ticks`).

    The text is re-wrapped from its original on every draw, so resizing a figure re-flows it.

    Returns ``True`` when the layout engine's last pass saw the final text (so the draw that
    follows need not lay the figure out again), ``False`` otherwise (no engine, the text still
    changing after four passes, or the layout gave up).
    """
    if renderer is None:
        renderer = figure.canvas.get_renderer()
    for ax in figure.axes:
        plain_log_ticks(ax, only_default=True)
    import warnings

    engine = figure.get_layout_engine()
    touched = []
    # Wrapped titles take height from the axes, which may call for more wrapping; and constrained
    # layout (colorbars, images with a fixed aspect) settles only on its second pass.
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for step in range(4):
            if engine is not None:
                engine.execute(figure)
            changed = False
            for text, width in _fit_targets(figure, renderer):
                if _wrap_to(text, width, renderer):
                    changed = True
                    touched.append(text)
            if engine is None or (not changed and step >= 1):
                break
    if any("not applied" in str(w.message) for w in caught):
        # More text than the figure can hold even wrapped (the layout gave up): leave the text as
        # written, so the figure draws as it would without posviz; the fit check reports it.
        for text in dict.fromkeys(touched):
            text.set_text(text._posviz_unwrapped)
            text._posviz_wrapped = None
        return False
    return engine is not None and not changed


def _title_width(box, drawn) -> float:
    """Pixels for a centred title: the widest span centred on the ``drawn`` box inside the axes'
    place in the layout (``box``). A fixed-aspect axes (an image) is drawn smaller than its place;
    wrapping to the drawn width fed back (more lines, a smaller image, a narrower title, ...).
    Centred in its place, the title gets the place's width; pushed against a colorbar (the anchor a
    colorbar sets), the drawn width, so that it never reaches over the colorbar's ticks."""
    centre = (drawn.x0 + drawn.x1) / 2
    room = 2 * min(centre - box.x0, box.x1 - centre)
    return max(min(box.width, max(room, drawn.width)), 1.0)


def _fit_targets(figure, renderer):
    """(text, width in pixels) of every title and axis label of ``figure`` to wrap, and the suptitle."""
    for ax in figure.axes:
        if not ax.get_visible():
            continue
        # The axes' place in the layout (before an image's fixed aspect shrinks it): wrapping to
        # the shrunk box would feed back (taller titles, smaller image, narrower box, ...).
        box = ax.get_position(original=True).transformed(figure.transSubfigure)
        ax.apply_aspect()  # the box as drawn: an image's, narrower, centred or pushed against its colorbar
        drawn = ax.get_position(original=False).transformed(figure.transSubfigure)
        if ax.title.get_visible():
            yield ax.title, _title_width(box, drawn)
        for title in (getattr(ax, "_left_title", None), getattr(ax, "_right_title", None)):
            if title is not None and title.get_visible():  # flush with one edge of the drawn box
                yield title, min(box.width, drawn.width)
        if ax.xaxis.label.get_visible():
            yield ax.xaxis.label, box.width
        if ax.yaxis.label.get_visible():
            yield ax.yaxis.label, box.height
    suptitle = getattr(figure, "_suptitle", None)
    if suptitle is not None and suptitle.get_visible():
        yield suptitle, 0.98 * figure.bbox.width


def _install_figure_fitting() -> None:
    """Run :func:`fit_figure_text` at the start of every figure draw (once per process)."""
    global _fitting_installed
    if _fitting_installed:
        return
    _fitting_installed = True
    from matplotlib.figure import Figure
    from matplotlib.layout_engine import PlaceHolderLayoutEngine

    original_draw = Figure.draw

    def draw(figure, renderer):
        if getattr(figure, "_posviz_fitting", False):  # a layout engine may draw again inside: fit once
            return original_draw(figure, renderer)
        figure._posviz_fitting = True
        try:
            settled = fit_figure_text(figure, renderer)
        finally:
            figure._posviz_fitting = False
        engine = figure.get_layout_engine()
        if not settled or not figure.axes or engine is None or isinstance(engine, PlaceHolderLayoutEngine):
            return original_draw(figure, renderer)
        # The fit has just laid the figure out with its final text (two passes or more, where
        # matplotlib's own draw makes one): draw without a third pass, as matplotlib's
        # print_figure does for its second draw, and restore the engine afterwards.
        figure.set_layout_engine("none")
        try:
            return original_draw(figure, renderer)
        finally:
            figure.set_layout_engine(engine)

    Figure.draw = draw


def setup(lang: str = "both", seed: int = 0, *, torch_threads: int | None = 1, quiet: bool = False) -> None:
    """Prepare a notebook: seed, plot style, Korean font, figure language; print versions.

    Args:
        lang: figure language, ``"ko"``, ``"en"`` or ``"both"``.
        seed: seed for ``random``, numpy and torch (see :func:`seed_everything`).
        torch_threads: CPU threads for torch (``torch.set_num_threads``). The course's models are
            tiny: one thread is as fast as several, and two kernels running side by side (e.g.
            the tests on a 2-core machine) do not fight over cores, which can make each one many
            times slower. ``None`` keeps PyTorch's default.
        quiet: if ``True``, print nothing.

    Returns ``None`` (so the notebook cell shows only the printed line); the same facts are
    available from the libraries themselves and :func:`get_language`.

    Raises:
        ValueError: for an unknown ``lang`` or a negative seed.
        TypeError: for a non-integer seed.
    """
    set_language(lang)  # validate before touching global state
    if torch_threads is not None:
        from ._checks import check_int

        check_int("torch_threads", torch_threads, minimum=1)
    seed_everything(seed)
    if os.environ.get(_textlog.FIGURE_TEXT_ENV):
        _textlog.enable_figure_text_log(os.environ[_textlog.FIGURE_TEXT_ENV])

    import matplotlib as mpl
    import seaborn as sns
    import torch

    if torch_threads is not None:
        torch.set_num_threads(torch_threads)

    # The seaborn theme resets fonts, so it comes before the Korean font.
    sns.set_theme(context="notebook", style="whitegrid", palette="colorblind", font_scale=1.1)
    font = use_korean_font()
    _install_figure_fitting()
    mpl.rcParams.update(
        {
            "figure.figsize": (10.0, 5.6),  # 16:9-friendly
            "figure.constrained_layout.use": True,
            "figure.dpi": 100,
            "savefig.dpi": 150,
            "axes.titlesize": "large",
            "axes.titleweight": "bold",
            "image.cmap": "viridis",
        }
    )

    from ._version import __version__

    info = {
        "python": platform.python_version(),
        "numpy": np.__version__,
        "torch": torch.__version__,
        "matplotlib": mpl.__version__,
        "seaborn": sns.__version__,
        "posviz": __version__,
        "font": font,
        "torch threads": str(torch.get_num_threads()),
        "lang": lang,
        "seed": str(seed),
    }
    if not quiet:
        print(" | ".join(f"{k} {v}" for k, v in info.items()), file=sys.stdout)
