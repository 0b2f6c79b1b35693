"""Relative position representations: attention that sees the distance ``j - i`` between tokens.

Source: Shaw, Uszkoreit & Vaswani 2018, "Self-Attention with Relative Position
Representations", https://arxiv.org/abs/1803.02155 (§3.1 eq. 3–4, §3.2 clipping, §3.3 eq. 5).

Every (query ``i``, key ``j``) pair gets two learned vectors, ``a^K_ij`` and ``a^V_ij``, looked
up by the clipped offset ``clip(j - i, -k, k)`` in two tables ``w^K``, ``w^V`` of ``2k + 1`` rows:

* eq. 4: ``e_ij = q_i · (k_j + a^K_ij) / √d``   (the logits), ``α_ij = softmax_j(e_ij)``
* eq. 3: ``z_i = Σ_j α_ij (v_j + a^V_ij)``        (the output)

Sign convention (the paper's, stated once for the whole module): the offset of key ``j`` seen
from query ``i`` is ``j - i``, so row ``k + r`` of a table serves keys ``r`` tokens *after* the
query (``r > 0``) or ``|r|`` tokens *before* it (``r < 0``); row ``k`` is the token itself. Some
code bases (e.g. T5's ``relative_position``) use the same ``memory - query`` sign; others index by
``i - j``. Flipping the table rows converts one to the other.

The tables are shared across the heads of a layer (each layer has its own pair). Shaw §3.1 allows
this and the complexity bound of §3.3 assumes it; in the paper's experiments (§4.1) only the big
model shared them across heads, while the base model learned separate tables per layer and head.
"""

from __future__ import annotations

import functools
import math

import numpy as np
import torch
from torch import nn

from ._checks import check_choice, check_int
from .attention import MultiheadSelfAttention, scaled_dot_product_attention

__all__ = [
    "DEFAULT_MAX_RELATIVE_POSITION",
    "RELATIVE_IMPLEMENTATIONS",
    "RelativeMultiheadAttention",
    "relative_attention",
    "relative_position_index",
]

#: Clipping distance ``k`` of the registered ``"shaw"`` position method: 16, the value of Shaw et
#: al.'s base model (their big model used 8, §4.1; their Table 2 shows ``k >= 2`` already does as
#: well). Use :func:`posviz.shaw_method` for another ``k``.
DEFAULT_MAX_RELATIVE_POSITION = 16

#: Values accepted by ``implementation=``.
RELATIVE_IMPLEMENTATIONS = ("naive", "efficient")


def relative_position_index(query_len: int, key_len: int, max_relative_position: int) -> np.ndarray:
    """Which table row each (query, key) pair uses: ``clip(j - i, -k, k) + k`` (Shaw §3.2).

    Query ``i`` sits at position ``i`` and key ``j`` at position ``j`` (both counted from 0), so
    entry ``(i, j)`` is the clipped offset of key ``j`` *seen from* query ``i`` (``j - i``: positive
    for keys after the query), shifted by ``k`` into ``0 … 2k``. The same index serves any length:
    a table of ``2k + 1`` rows covers every offset, and offsets beyond ``±k`` share the end rows.

    Args:
        query_len: number of queries, ``>= 1``.
        key_len: number of keys, ``>= 1``.
        max_relative_position: the clipping distance ``k`` (tokens), ``>= 0``; ``k = 0`` maps every
            pair to row 0, i.e. no position information.

    Returns:
        ``np.ndarray`` of dtype int64 and shape ``(query_len, key_len)``, values in ``[0, 2k]``.

    Raises:
        TypeError: if an argument is not an integer.
        ValueError: if a length is < 1 or ``k`` < 0.
    """
    query_len = check_int("query_len", query_len, minimum=1)
    key_len = check_int("key_len", key_len, minimum=1)
    k = check_int("max_relative_position", max_relative_position, minimum=0)
    offsets = np.arange(key_len, dtype=np.int64)[None, :] - np.arange(query_len, dtype=np.int64)[:, None]
    return np.clip(offsets, -k, k) + k


def _table_rows(name: str, table: torch.Tensor | None, width: int, ref: torch.Tensor) -> int | None:
    if table is None:
        return None
    if not isinstance(table, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor or None, got {type(table).__name__}")
    if table.ndim != 2 or table.shape[1] != width:
        raise ValueError(f"{name} must have shape (2k + 1, {width}), got {tuple(table.shape)}")
    if table.shape[0] % 2 == 0:
        raise ValueError(
            f"{name} has {table.shape[0]} rows; a relative table needs an odd number 2k + 1 (offsets -k … k)"
        )
    if table.dtype != ref.dtype or table.device != ref.device:
        raise ValueError(
            f"{name} must match q's dtype and device ({ref.dtype}, {ref.device}), got {table.dtype}"
        )
    return table.shape[0]


@functools.lru_cache(maxsize=16)
def _default_index(seq_len: int, k: int) -> torch.Tensor:
    """Cached ``(seq_len, seq_len)`` int64 index (read only), so that repeated calls do not rebuild it."""
    return torch.from_numpy(relative_position_index(seq_len, seq_len, k))


@functools.lru_cache(maxsize=16)
def _band(seq_len: int, k: int) -> tuple[torch.Tensor, ...]:
    """Cached gather indices and 0/1 masks for the diagonal bands ``|j - i| < k`` and the two ends."""
    i = torch.arange(seq_len)[:, None]
    j = i + torch.arange(-k + 1, k)[None, :]  # (L, 2k - 1): keys at offsets -(k-1) … k-1
    inner = ((j >= 0) & (j < seq_len), j.clamp(0, seq_len - 1))
    left = (i >= k, (i - k).clamp(min=0))  # last key of the left end: j = i - k
    right = (i + k <= seq_len - 1, (i + k - 1).clamp(max=seq_len - 1))  # last key before the right end
    return tuple(
        x if x.dtype == torch.long else x.to(torch.float64) for pair in (inner, left, right) for x in pair
    )


def _value_buckets(weights: torch.Tensor, index: torch.Tensor, rows: int, *, banded: bool) -> torch.Tensor:
    """``B[..., i, r] = Σ_{j : index[i, j] = r} α_ij``, shape ``(..., L, 2k + 1)``; no ``(L, L, d)`` tensor.

    General positions: a ``scatter_add`` of the weights into the ``2k + 1`` rows. Default positions
    (``index[i, j] = clip(j - i) + k``, the same along every diagonal): the ``2k - 1`` inner rows are
    single diagonals (a small gather) and the two end rows are sums read off one cumulative sum,
    which is several times faster on a CPU than a scatter over all ``L²`` pairs.
    """
    seq_len = weights.shape[-1]
    k = (rows - 1) // 2
    if not banded:
        buckets = torch.zeros(*weights.shape[:-1], rows, dtype=weights.dtype, device=weights.device)
        return buckets.scatter_add(-1, index.expand(weights.shape), weights)
    if k == 0:
        return weights.sum(-1, keepdim=True)
    lead = weights.shape[:-1]
    in_ok, in_j, left_ok, left_j, right_ok, right_j = (
        x.to(device=weights.device, dtype=weights.dtype if x.is_floating_point() else torch.long)
        for x in _band(seq_len, k)
    )
    inner = torch.gather(weights, -1, in_j.expand(*lead, 2 * k - 1)) * in_ok
    cumulative = weights.cumsum(-1)  # Σ_{j' <= j} α_ij'
    left = torch.gather(cumulative, -1, left_j.expand(*lead, 1)) * left_ok  # Σ_{j <= i-k}
    before_right = torch.gather(cumulative, -1, right_j.expand(*lead, 1))
    right = (cumulative[..., -1:] - before_right) * right_ok  # Σ_{j >= i+k}
    return torch.cat([left, inner, right], dim=-1)


def _checked_positions(
    positions: torch.Tensor | None, batch: int, seq_len: int, device: torch.device
) -> torch.Tensor | None:
    """``(batch, seq_len)`` int64 positions, or ``None`` when every row is ``arange(seq_len) + c``.

    Offsets ``j - i`` do not change when a row is shifted by a constant, so such rows use the
    default (cached, banded) path.
    """
    if positions is None:
        return None
    if (
        not isinstance(positions, torch.Tensor)
        or positions.dtype.is_floating_point
        or positions.dtype == torch.bool
    ):
        raise ValueError("positions must be an integer tensor broadcastable to (batch, seq_len)")
    try:
        positions = torch.broadcast_to(positions.to(device), (batch, seq_len)).long()
    except RuntimeError as err:
        raise ValueError(
            f"positions of shape {tuple(positions.shape)} do not broadcast to (batch, seq_len) = ({batch}, {seq_len})"
        ) from err
    if bool((positions - positions[:, :1] == torch.arange(seq_len, device=device)).all()):
        return None
    return positions


def _index_tensor(seq_len: int, k: int, positions: torch.Tensor | None, device: torch.device) -> torch.Tensor:
    """Row index ``(seq_len, seq_len)``, or ``(batch, 1, seq_len, seq_len)`` from explicit positions."""
    if positions is None:
        return _default_index(seq_len, k).to(device)
    offsets = positions[:, None, :] - positions[:, :, None]  # (batch, i, j): j - i
    return (offsets.clamp(-k, k) + k)[:, None]


def _check_mask(mask: torch.Tensor, shape: torch.Size) -> torch.Tensor:
    """The checks of :func:`posviz.scaled_dot_product_attention`, for the in-place path."""
    if not isinstance(mask, torch.Tensor) or mask.dtype != torch.bool:
        raise ValueError(
            f"mask must be a boolean tensor (True = may attend), got {getattr(mask, 'dtype', mask)!r}"
        )
    try:
        if torch.broadcast_shapes(mask.shape, shape) != shape:
            raise RuntimeError
    except RuntimeError as err:
        raise ValueError(f"mask of shape {tuple(mask.shape)} does not broadcast to {tuple(shape)}") from err
    if not bool(mask.any(dim=-1).all()):
        raise ValueError("mask leaves a query row with no key to attend to")
    return mask


def relative_attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    rel_keys: torch.Tensor | None,
    rel_values: torch.Tensor | None,
    *,
    mask: torch.Tensor | None = None,
    positions: torch.Tensor | None = None,
    implementation: str = "efficient",
) -> tuple[torch.Tensor, torch.Tensor]:
    """Self-attention with relative position representations (Shaw et al. 2018, eq. 3–5).

    ``e_ij = q_i · (k_j + a^K_ij) / √d`` (eq. 4), ``α = softmax_j(e)``, ``z_i = Σ_j α_ij (v_j + a^V_ij)``
    (eq. 3), where ``a^K_ij = rel_keys[clip(j - i, -k, k) + k]`` and likewise ``a^V_ij``
    (see :func:`relative_position_index` for the sign convention).

    Two implementations give the same numbers (to float64 round-off):

    * ``"naive"`` gathers the ``(seq_len, seq_len, head_dim)`` tensors ``a^K`` and ``a^V`` and
      applies eq. 3–4 literally: memory grows as ``L² · d``.
    * ``"efficient"`` never builds them. It splits the logits into two terms as in eq. 5,
      ``q_i·k_j`` (one matmul) plus ``q_i·a^K_ij``; since ``a^K_ij`` takes only ``2k + 1`` values,
      the second term is ``q @ rel_keysᵀ`` (shape ``(L, 2k + 1)``) gathered by the index matrix.
      The output likewise: ``α @ v`` plus, per query, the weights summed into ``2k + 1`` buckets
      (one per table row) times ``rel_values``. For consecutive positions (the default, or any
      ``arange + c``) the inner buckets are single diagonals of ``α`` and the two end buckets
      come from one cumulative sum; other positions use a scatter-add. Memory grows as ``L²``
      (about two ``(L, L)`` buffers, the weights included), like plain attention that returns
      its weights. The ``(L, L)`` int64 index matrix is built once per ``(L, k)`` and cached.
      In float32 the end buckets carry a round-off of order ``L · 1e-7``.

    Self-attention only: queries and keys are the same ``seq_len`` tokens.

    Args:
        q, k: ``(batch, heads, seq_len, head_dim)`` float tensors, same shape, dtype and device.
        v: ``(batch, heads, seq_len, value_dim)``, same dtype.
        rel_keys: the ``w^K`` table, ``(2k + 1, head_dim)``, shared across heads; ``None`` leaves
            out the key term (a values-only ablation, Shaw Table 3).
        rel_values: the ``w^V`` table, ``(2k + 1, value_dim)``; ``None`` leaves out the value term.
            ``k`` is inferred from the tables' length (both must have the same length).
        mask: optional boolean tensor broadcastable to ``(batch, heads, seq_len, seq_len)``,
            ``True`` = may attend (e.g. :func:`posviz.causal_mask`, or a key padding mask of
            shape ``(batch, 1, 1, seq_len)``).
        positions: optional integer tensor broadcastable to ``(batch, seq_len)``: the token
            positions (default ``arange(seq_len)``); offsets are ``positions[j] - positions[i]``,
            so adding a constant to every position changes nothing.
        implementation: ``"naive"`` or ``"efficient"``.

    Returns:
        ``(output, weights)``: ``(batch, heads, seq_len, value_dim)`` and
        ``(batch, heads, seq_len, seq_len)``, dtype of ``q``; each weight row sums to 1.

    Raises:
        TypeError: if an input is not a tensor.
        ValueError: for mismatched shapes, dtypes or devices, an even-length table, tables of
            different lengths, an unknown ``implementation``, or a mask that leaves a query row
            with no key.
    """
    implementation = check_choice("implementation", implementation, RELATIVE_IMPLEMENTATIONS)
    for name, x in (("q", q), ("k", k), ("v", v)):
        if not isinstance(x, torch.Tensor):
            raise TypeError(f"{name} must be a torch.Tensor, got {type(x).__name__}")
        if x.ndim != 4:
            raise ValueError(f"{name} must have shape (batch, heads, seq_len, dim), got {tuple(x.shape)}")
        if not x.dtype.is_floating_point:
            raise ValueError(f"{name} must be a floating tensor, got {x.dtype}")
    if q.shape != k.shape:
        raise ValueError(f"q and k must have the same shape, got {tuple(q.shape)} and {tuple(k.shape)}")
    if v.shape[:3] != k.shape[:3]:
        raise ValueError(
            f"v must have shape (batch, heads, seq_len, value_dim) = {tuple(k.shape[:3])} + (…,), got {tuple(v.shape)}"
        )
    if k.dtype != q.dtype or v.dtype != q.dtype:
        raise ValueError(f"q, k, v must share a dtype, got {q.dtype}, {k.dtype}, {v.dtype}")
    rows_k = _table_rows("rel_keys", rel_keys, q.shape[-1], q)
    rows_v = _table_rows("rel_values", rel_values, v.shape[-1], q)
    if rows_k is not None and rows_v is not None and rows_k != rows_v:
        raise ValueError(
            f"rel_keys and rel_values must have the same length 2k + 1, got {rows_k} and {rows_v}"
        )
    rows = rows_k if rows_k is not None else rows_v
    batch, _, seq_len, head_dim = q.shape
    positions = _checked_positions(positions, batch, seq_len, q.device)
    if mask is not None:
        mask = _check_mask(mask, torch.Size((*q.shape[:-1], seq_len)))
    if rows is None:  # neither term: plain attention
        return scaled_dot_product_attention(q, k, v, mask=mask)
    index = _index_tensor(seq_len, (rows - 1) // 2, positions, q.device)

    scale = math.sqrt(head_dim)
    if implementation == "naive":
        bias = None  # the key term of eq. 4, q_i · a^K_ij / √d, added to the logits q_i · k_j / √d
        if rel_keys is not None:
            a_k = rel_keys[index]  # (L, L, d), or (batch, 1, L, L, d) from explicit positions
            bias = (q.unsqueeze(-2) @ a_k.transpose(-2, -1)).squeeze(-2) / scale
        output, weights = scaled_dot_product_attention(q, k, v, mask=mask, bias=bias)
    else:
        # eq. 5, first term: q_i · k_j / √d (one matmul), then in place, to hold one (L, L) buffer
        logits = q @ k.transpose(-2, -1)
        logits.mul_(1.0 / scale)
        if rel_keys is not None:  # second term: q_i · w^K_r for the 2k + 1 rows r, picked by index[i, j]
            rel_logits = (q @ rel_keys.T) / scale  # (batch, heads, L, 2k + 1)
            logits.add_(torch.gather(rel_logits, -1, index.expand(logits.shape)))
        if mask is not None:
            logits.masked_fill_(~mask, float("-inf"))
        weights = torch.softmax(logits, dim=-1)
        del logits  # free the (L, L) buffer before the value term needs its own
        output = weights @ v
    if rel_values is not None:
        if implementation == "naive":
            a_v = rel_values[index]  # (L, L, value_dim) or (batch, 1, L, L, value_dim)
            output = output + (weights.unsqueeze(-2) @ a_v).squeeze(-2)
        else:
            output = output + _value_buckets(weights, index, rows, banded=positions is None) @ rel_values
    return output, weights


class RelativeMultiheadAttention(MultiheadSelfAttention):
    """Multi-head self-attention with Shaw et al.'s relative position representations (§3).

    Each layer learns two tables, ``w^K`` and ``w^V`` of shape ``(2k + 1, head_dim)``, shared by
    all its heads (like the paper's big model and §3.3; its base model had one pair per head,
    §4.1); :meth:`attend` calls :func:`relative_attention`. No position information enters
    anywhere else, so shifting every position by the same amount changes nothing (translation
    invariance).

    Args:
        d_model: model width; must be divisible by ``num_heads``.
        num_heads: number of heads.
        max_relative_position: the clipping distance ``k`` (tokens), ``>= 0``. ``k = 0`` gives
            one-row tables, i.e. no position information (Shaw Table 2, first row).
        causal: decoder-style masking (query ``i`` sees keys ``j <= i``).
        use_keys: learn ``w^K`` (the key term of eq. 4); ``False`` for a values-only ablation.
        use_values: learn ``w^V`` (the value term of eq. 3); ``False`` for a keys-only ablation.
        implementation: ``"efficient"`` (default) or ``"naive"``; see :func:`relative_attention`.
        init_std: standard deviation of the normal initialisation of the tables
            (default ``head_dim ** -0.5``).

    Attributes:
        rel_keys, rel_values: ``nn.Parameter`` of shape ``(2k + 1, head_dim)``, float32, or
            ``None`` when switched off. Row ``k + r`` belongs to offset ``r = j - i``.

    Shapes:
        as :class:`~posviz.attention.MultiheadSelfAttention`: ``forward(x, positions=None,
        key_padding_mask=None)`` with ``x`` of shape ``(batch, seq_len, d_model)`` returns
        ``(output, weights)`` of shapes ``(batch, seq_len, d_model)`` and
        ``(batch, num_heads, seq_len, seq_len)``.

    Raises:
        TypeError, ValueError: for bad sizes or an unknown ``implementation``.
    """

    def __init__(
        self,
        d_model: int,
        num_heads: int,
        max_relative_position: int = DEFAULT_MAX_RELATIVE_POSITION,
        *,
        causal: bool = False,
        use_keys: bool = True,
        use_values: bool = True,
        implementation: str = "efficient",
        init_std: float | None = None,
    ) -> None:
        super().__init__(d_model, num_heads, causal=causal)
        self.max_relative_position = check_int("max_relative_position", max_relative_position, minimum=0)
        self.implementation = check_choice("implementation", implementation, RELATIVE_IMPLEMENTATIONS)
        rows = 2 * self.max_relative_position + 1
        std = self.head_dim**-0.5 if init_std is None else float(init_std)
        self.rel_keys = nn.Parameter(torch.randn(rows, self.head_dim) * std) if use_keys else None
        self.rel_values = nn.Parameter(torch.randn(rows, self.head_dim) * std) if use_values else None

    def extra_repr(self) -> str:
        return (
            f"k={self.max_relative_position}, keys={self.rel_keys is not None}, "
            f"values={self.rel_values is not None}, implementation={self.implementation!r}"
        )

    def attend(self, q, k, v, *, mask, positions):
        """Shaw attention over ``(batch, heads, seq_len, head_dim)`` tensors (see :func:`relative_attention`)."""
        return relative_attention(
            q,
            k,
            v,
            self.rel_keys,
            self.rel_values,
            mask=mask,
            positions=positions,
            implementation=self.implementation,
        )

