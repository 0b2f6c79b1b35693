"""Course set-up: seeding, plot style, a Korean-capable font and the figure language.

Every notebook starts with ``posviz.setup(lang=...)``. It

1. seeds ``random``, numpy and torch (:func:`seed_everything`);
2. applies the seaborn theme (which resets fonts, so it must come first);
3. picks a font that can draw Hangul (:func:`use_korean_font`) and keeps a proper
   minus sign (U+2212) on negative tick labels;
4. sets the language of figure text (:func:`set_language`, read by :func:`t`);
5. prints the versions that matter.
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
    """Set the language of figure text written with :func:`t`.

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
