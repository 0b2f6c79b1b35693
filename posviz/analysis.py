"""Principal component analysis of position tables, and a plot of the projection.

PCA (Pearson 1901; e.g. Jolliffe & Cadima 2016, https://doi.org/10.1098/rsta.2015.0202) is
computed here by the singular value decomposition of the centred table: if
``X - mean = U S Vᵀ`` then the rows of ``Vᵀ`` are the principal directions, ``U S`` the scores,
and ``S² / Σ S²`` the fraction of variance each direction explains. Notebook 02 uses it to
compare a learned position table (MiniLM, BERT-style; Devlin et al. 2018,
https://arxiv.org/abs/1810.04805) with the sinusoidal one (Vaswani et al. 2017, §3.5,
https://arxiv.org/abs/1706.03762); Wang & Chen 2020 (https://arxiv.org/abs/2010.04903) study
such projections of pretrained position embeddings.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from ._checks import check_int
from .plots import SEQUENTIAL_CMAP, _as_table, _axes
from .style import t

__all__ = ["PCAResult", "pca", "plot_position_pca"]


class PCAResult(NamedTuple):
    """What :func:`pca` returns (all float64).

    Attributes:
        scores: ``(num_rows, n_components)``, the centred rows projected on the components.
        components: ``(n_components, num_columns)``, orthonormal principal directions.
        explained_variance_ratio: ``(n_components,)``, fraction of the total variance per component.
        mean: ``(num_columns,)``, the column means that were subtracted.
    """

    scores: np.ndarray
    components: np.ndarray
    explained_variance_ratio: np.ndarray
    mean: np.ndarray


def pca(table, n_components: int = 2) -> PCAResult:
    """Principal components of the rows of ``table`` (e.g. one row per position), by SVD.

    Computed in float64 on the column-centred table. Components come in decreasing order of
    explained variance. Sign convention (SVD leaves each sign free): every component is
    flipped so that its entry of largest absolute value is positive, as scikit-learn's
    ``svd_flip(u_based_decision=False)`` does, so results are the same on every run.

    Args:
        table: array-like or tensor of shape ``(num_rows, num_columns)`` with finite values,
            at least 2 rows.
        n_components: how many components to return, ``1 <= n_components <= min(num_rows, num_columns)``.

    Returns:
        :class:`PCAResult` ``(scores, components, explained_variance_ratio, mean)``.
        ``scores @ components + mean`` reconstructs the table when ``n_components`` reaches its rank.

    Raises:
        ValueError: if ``table`` is not 2-D, has fewer than 2 rows, holds NaN/inf, has zero
            variance, or ``n_components`` is out of range.
        TypeError: if ``n_components`` is not an ``int``.
    """
    table = _as_table(table).astype(np.float64)
    rows, cols = table.shape
    if rows < 2:
        raise ValueError(f"PCA needs at least 2 rows, got {rows}")
    if not np.all(np.isfinite(table)):
        raise ValueError("table holds NaN or infinite values")
    n_components = check_int("n_components", n_components, minimum=1)
    if n_components > min(rows, cols):
        raise ValueError(f"n_components must be <= min(num_rows, num_columns) = {min(rows, cols)}, got {n_components}")
    mean = table.mean(axis=0)
    centred = table - mean
    u, s, vt = np.linalg.svd(centred, full_matrices=False)
    total = float(np.sum(s**2))
    if total == 0.0:
        raise ValueError("every row is the same: the table has zero variance")
    vt = vt[:n_components]
    signs = np.sign(vt[np.arange(n_components), np.argmax(np.abs(vt), axis=1)])
    vt = vt * signs[:, None]
    scores = u[:, :n_components] * s[:n_components] * signs
    return PCAResult(scores, vt, s[:n_components] ** 2 / total, mean)


def plot_position_pca(
    table,
    *,
    components: Sequence[int] = (0, 1),
    ax=None,
    title: str | None = None,
    colorbar: bool = True,
    cmap: str = SEQUENTIAL_CMAP,
):
    """Scatter the rows of a position table on two principal components, coloured by position.

    Row ``p`` of ``table`` is position ``p`` (tokens). Consecutive positions are joined by a
    thin grey line so the path through the space is visible; each axis is labelled with the
    component and the percentage of variance it explains (see :func:`pca`).

    Args:
        table: ``(num_positions, d_model)`` array or tensor.
        components: two distinct 0-based component indices, e.g. ``(0, 1)`` for PC1 and PC2.
        ax, title: as usual (new figure when ``ax`` is ``None``).
        colorbar: draw a colorbar labelled with the position.
        cmap: a sequential colormap (position is ordered, not signed).

    Returns:
        The axes.

    Raises:
        ValueError: for a bad table (see :func:`pca`) or ``components`` that are not two
            distinct indices within the table's size.
    """
    import matplotlib.pyplot as plt

    components = tuple(components)
    if len(components) != 2 or components[0] == components[1]:
        raise ValueError(f"components must be two distinct indices, got {components}")
    for c in components:
        check_int("component", c, minimum=0)
    result = pca(table, n_components=max(components) + 1)
    x, y = result.scores[:, components[0]], result.scores[:, components[1]]
    ax = _axes(ax)
    ax.plot(x, y, color="0.75", lw=0.6, zorder=1)
    points = ax.scatter(x, y, c=np.arange(len(x)), cmap=cmap, s=12, zorder=2)
    for axis, c in zip(("x", "y"), components, strict=True):
        share = 100 * result.explained_variance_ratio[c]
        label = f"PC{c + 1} ({t(f'분산의 {share:.1f}%', f'{share:.1f}% of variance')})"
        (ax.set_xlabel if axis == "x" else ax.set_ylabel)(label)
    if colorbar:
        bar = plt.colorbar(points, ax=ax, fraction=0.046, pad=0.02)
        bar.set_label(t("위치 (토큰)", "position (tokens)"))
    if title:
        ax.set_title(title)
    return ax
