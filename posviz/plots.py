"""Plot helpers shared by the notebooks.

Each function takes ``ax=None`` (a new figure is made when omitted), returns the axes, and
never calls ``plt.show()``. Text follows the figure language set by :func:`posviz.setup`.
Position-encoding values use a diverging colormap fixed at [-1, 1]; similarities and
attention weights use a sequential one (course style guide).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ._checks import check_choice, check_int, check_positive_float
from .style import t

__all__ = [
    "DIVERGING_CMAP",
    "SEQUENTIAL_CMAP",
    "offset_similarity",
    "plot_dimension_waves",
    "plot_encoding_heatmap",
    "plot_similarity_vs_offset",
    "tick_stride",
]

DIVERGING_CMAP = "RdBu_r"  # ColorBrewer RdBu: colour-blind safe, red = +1, blue = -1
SEQUENTIAL_CMAP = "viridis"
_NICE_STRIDES = (1, 2, 4, 5, 8, 10, 16, 20, 25, 32, 50, 64, 100, 128, 200, 256, 500, 512, 1000)


def _axes(ax, figsize=None):
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=figsize)
    return ax


def tick_stride(n: int, max_ticks: int = 12) -> int:
    """A readable tick stride (1, 2, 4, 5, 8, 10, 16, …) giving at most ``max_ticks`` ticks over ``n`` items."""
    n = check_int("n", n, minimum=1)
    for stride in _NICE_STRIDES:
        if -(-n // stride) <= max_ticks:
            return stride
    return -(-n // max_ticks)


def _as_table(table) -> np.ndarray:
    try:
        import torch

        if isinstance(table, torch.Tensor):
            table = table.detach().cpu().numpy()
    except ImportError:  # pragma: no cover
        pass
    table = np.asarray(table)
    if table.ndim != 2:
        raise ValueError(f"expected a 2-D table (positions, dimensions), got shape {table.shape}")
    return table


def plot_encoding_heatmap(
    table,
    *,
    ax=None,
    title: str | None = None,
    row_labels: Sequence[str] | None = None,
    colorbar: bool = True,
    vmax: float = 1.0,
):
    """Heatmap of a position table: rows are positions, columns are dimensions.

    Args:
        table: array-like or tensor of shape ``(num_positions, d_model)``.
        ax: axes to draw on (new figure if ``None``).
        title: axes title.
        row_labels: optional labels for the rows (e.g. the tokens of a sentence).
        colorbar: draw a labelled colorbar.
        vmax: colour limits are ``(-vmax, vmax)``; keep 1.0 for encodings so figures compare.

    Returns:
        The axes.

    Raises:
        ValueError: if ``table`` is not 2-D or ``row_labels`` has the wrong length.
    """
    import matplotlib.pyplot as plt

    table = _as_table(table)
    rows, cols = table.shape
    ax = _axes(ax)
    image = ax.imshow(
        table, cmap=DIVERGING_CMAP, vmin=-vmax, vmax=vmax, aspect="auto", interpolation="nearest"
    )
    xs = tick_stride(cols)
    ax.set_xticks(np.arange(0, cols, xs))
    if row_labels is not None:
        if len(row_labels) != rows:
            raise ValueError(f"row_labels has {len(row_labels)} items for {rows} rows")
        ax.set_yticks(np.arange(rows))
        ax.set_yticklabels([f"{i}: {w}" for i, w in enumerate(row_labels)])
    else:
        ax.set_yticks(np.arange(0, rows, tick_stride(rows)))
    ax.set_xlabel(t("차원 번호", "dimension index"))
    ax.set_ylabel(t("위치 (토큰)", "position (tokens)"))
    ax.grid(False)
    if title:
        ax.set_title(title)
    if colorbar:
        bar = plt.colorbar(image, ax=ax, fraction=0.046, pad=0.02)
        bar.set_label(t("값", "value"))
    return ax


def plot_dimension_waves(
    d_model: int,
    dims: Sequence[int],
    num_positions: int,
    *,
    base: float = 10000.0,
    tokens: Sequence[str] | None = None,
    ax=None,
    title: str | None = None,
):
    """Curves of chosen columns of the sinusoidal table against position.

    Each column ``c`` is drawn as the continuous curve ``sin`` (even ``c``) or ``cos`` (odd ``c``)
    of ``p / base^(2⌊c/2⌋/d_model)`` with dots at the integer positions, where the table's
    values live (Vaswani et al. 2017, §3.5).

    Args:
        d_model: model width.
        dims: column indices to draw, each in ``[0, d_model)``.
        num_positions: positions ``0 … num_positions-1``.
        base: wavelength base.
        tokens: optional tokens to label the integer positions on the x axis.
        ax, title: as usual.

    Returns:
        The axes.

    Raises:
        ValueError: for a column outside ``[0, d_model)`` or a token list of the wrong length.
    """
    d_model = check_int("d_model", d_model, minimum=1)
    num_positions = check_int("num_positions", num_positions, minimum=1)
    base = check_positive_float("base", base)
    ax = _axes(ax)
    fine = np.linspace(0, num_positions - 1, 40 * num_positions)
    whole = np.arange(num_positions)
    for c in dims:
        c = check_int("dimension", c, minimum=0)
        if c >= d_model:
            raise ValueError(f"dimension {c} is outside [0, d_model={d_model})")
        freq = base ** (-2.0 * (c // 2) / d_model)
        wave = np.sin if c % 2 == 0 else np.cos
        kind = "sin" if c % 2 == 0 else "cos"
        label = t(f"열 {c} ({kind})", f"column {c} ({kind})")  # each language whole: "열 0 (sin) · column 0 (sin)"
        (line,) = ax.plot(fine, wave(fine * freq), lw=1.8, label=label)
        ax.plot(whole, wave(whole * freq), "o", color=line.get_color(), ms=6)
    ax.set_ylim(-1.15, 1.15)
    ax.set_xlabel(t("위치 (토큰)", "position (tokens)"))
    ax.set_ylabel(t("인코딩 값", "encoding value"))
    if tokens is not None:
        if len(tokens) != num_positions:
            raise ValueError(f"tokens has {len(tokens)} items for {num_positions} positions")
        ax.set_xticks(whole)
        ax.set_xticklabels([f"{i}\n{w}" for i, w in enumerate(tokens)])
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="small")  # outside: never hides a curve
    if title:
        ax.set_title(title)
    return ax


def offset_similarity(
    table,
    max_offset: int,
    *,
    metric: str = "cosine",
    reference: int | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Similarity of position vectors as a function of offset ``k``.

    With ``reference=p``: ``sim(table[p], table[p + k])`` for ``k = 0 … max_offset``.
    With ``reference=None``: the mean over every ``p`` with ``p + k`` in range, which summarises
    a learned table whose rows are not exact functions of the offset.

    Args:
        table: ``(num_positions, d_model)`` array or tensor.
        max_offset: largest offset in tokens, ``< num_positions`` (``- reference`` when given).
        metric: ``"cosine"`` or ``"dot"``.
        reference: a fixed position, or ``None`` to average over positions.

    Returns:
        ``(offsets, values)``: int array ``(max_offset + 1,)`` and float64 array of the same shape.

    Raises:
        ValueError: for an unknown metric or an offset running past the table.
    """
    table = _as_table(table).astype(np.float64)
    check_choice("metric", metric, ("cosine", "dot"))
    max_offset = check_int("max_offset", max_offset, minimum=0)
    n = table.shape[0]
    if metric == "cosine":
        norms = np.linalg.norm(table, axis=1, keepdims=True)
        table = table / np.where(norms == 0, 1.0, norms)
    offsets = np.arange(max_offset + 1)
    if reference is not None:
        reference = check_int("reference", reference, minimum=0)
        if reference + max_offset >= n:
            raise ValueError(f"reference {reference} + max_offset {max_offset} runs past {n} positions")
        values = table[reference + offsets] @ table[reference]
    else:
        if max_offset >= n:
            raise ValueError(f"max_offset must be < num_positions={n}, got {max_offset}")
        values = np.array([np.mean(np.sum(table[: n - k] * table[k:], axis=1)) for k in offsets])
    return offsets, values


def plot_similarity_vs_offset(
    table,
    max_offset: int,
    *,
    metric: str = "cosine",
    references: Sequence[int | None] = (None,),
    ax=None,
    label: str | None = None,
    title: str | None = None,
):
    """Plot :func:`offset_similarity` for one or more reference positions.

    Args:
        table, max_offset, metric: as in :func:`offset_similarity`.
        references: positions to draw a curve from; ``None`` draws the mean over positions.
        label: legend prefix (e.g. the table's name).
        ax, title: as usual.

    Returns:
        The axes.
    """
    ax = _axes(ax)
    for ref in references:
        offsets, values = offset_similarity(table, max_offset, metric=metric, reference=ref)
        where = t("위치 평균", "mean over positions") if ref is None else f"p = {ref}"
        ax.plot(offsets, values, lw=2, label=f"{label}: {where}" if label else where)
    ax.set_xlabel(t("오프셋 k (토큰)", "offset k (tokens)"))
    name = t("코사인 유사도", "cosine similarity") if metric == "cosine" else t("내적", "dot product")
    ax.set_ylabel(f"{name}  PE(p)·PE(p+k)" if metric == "dot" else name)
    ax.legend(fontsize="small")
    if title:
        ax.set_title(title)
    return ax
