"""ALiBi: attention with linear biases instead of position embeddings.

Source: Press, Smith and Lewis 2022, "Train Short, Test Long: Attention with Linear Biases
Enables Input Length Extrapolation", ICLR 2022, https://arxiv.org/abs/2108.12409

ALiBi adds nothing to the token embeddings. In every layer, head ``h`` adds a fixed penalty
proportional to the distance between query and key to the scaled attention logits (§3):

    softmax(q_i Kᵀ / √d + m_h · [-(i-1), …, -2, -1, 0])

The slopes ``m_h`` are a fixed geometric sequence (:func:`alibi_slopes`), not trained.
Because the bias depends only on ``i - j``, a model can be run at any length and any shift.
"""

from __future__ import annotations

import math

import torch

from ._checks import check_int
from .attention import MultiheadSelfAttention, scaled_dot_product_attention

__all__ = ["ALiBiMultiheadAttention", "alibi_bias", "alibi_slopes"]


def _power_of_two_slopes(n: int) -> list[float]:
    # 2^(-8/n), 2^(-16/n), …, 2^(-8): ratio equal to the start value (§3).
    start = 2.0 ** (-8.0 / n)
    return [start ** (h + 1) for h in range(n)]


def alibi_slopes(num_heads: int) -> torch.Tensor:
    """The per-head ALiBi slopes ``m_h`` (Press et al. 2022, §3 "ALiBi" and its footnote).

    For ``n`` a power of two the slopes are the geometric sequence that starts at
    ``2^(-8/n)`` with the same ratio: ``n = 8`` gives ``1/2, 1/4, …, 1/256``. For other ``n``,
    take the ``2^⌊log2 n⌋`` slopes of the nearest smaller power of two, then add the first
    ``n - 2^⌊log2 n⌋`` of every second slope (the 1st, 3rd, 5th, …) of ``2·2^⌊log2 n⌋`` heads,
    as in the authors' released code. Computed in float64.

    Args:
        num_heads: number of attention heads, ``>= 1``.

    Returns:
        float64 tensor of shape ``(num_heads,)``, every value in ``(0, 1)``.

    Raises:
        TypeError: if ``num_heads`` is not an int. ValueError: if it is ``< 1``.
    """
    n = check_int("num_heads", num_heads, minimum=1)
    lower = 2 ** int(math.floor(math.log2(n)))
    slopes = _power_of_two_slopes(lower)
    if lower != n:
        slopes += _power_of_two_slopes(2 * lower)[0::2][: n - lower]
    return torch.tensor(slopes, dtype=torch.float64)


def alibi_bias(
    slopes: torch.Tensor, query_positions: torch.Tensor, key_positions: torch.Tensor, *, symmetric: bool = False
) -> torch.Tensor:
    """The additive attention bias ``-m_h · (i - j)`` of ALiBi (Press et al. 2022, §3, Fig. 3).

    Args:
        slopes: ``(num_heads,)`` float, from :func:`alibi_slopes`.
        query_positions: integer tensor ``(..., query_len)`` (token positions ``i``).
        key_positions: integer tensor ``(..., key_len)`` (token positions ``j``).
        symmetric: ``False`` (the paper, causal models): ``-m_h (i - j)``, which is ``≤ 0`` for every
            key a causal mask lets through (``j ≤ i``). ``True``: ``-m_h |i - j|``, a common choice for
            bidirectional (encoder) models, which the paper does not define.

    Returns:
        float tensor ``(..., num_heads, query_len, key_len)`` in the dtype of ``slopes``.

    Raises:
        TypeError: if the positions are not integer tensors. ValueError: if ``slopes`` is not 1-D.
    """
    if slopes.ndim != 1:
        raise ValueError(f"slopes must have shape (num_heads,), got {tuple(slopes.shape)}")
    for name, pos in (("query_positions", query_positions), ("key_positions", key_positions)):
        if not isinstance(pos, torch.Tensor) or pos.dtype.is_floating_point or pos.dtype == torch.bool:
            raise TypeError(f"{name} must be an integer torch.Tensor")
    distance = (query_positions[..., :, None] - key_positions[..., None, :]).to(slopes.dtype)
    if symmetric:
        distance = distance.abs()
    return -slopes[:, None, None] * distance[..., None, :, :]


class ALiBiMultiheadAttention(MultiheadSelfAttention):
    """Multi-head self-attention with ALiBi biases (Press et al. 2022, §3).

    Same projections and shapes as :class:`~posviz.attention.MultiheadSelfAttention`; the only
    change is the bias ``-m_h (i - j)`` added to head ``h``'s scaled logits. The slopes are a
    non-trainable buffer, so ALiBi adds no parameters. Distances come from the ``positions``
    passed to ``forward``, so shifting every position by the same amount changes nothing.

    Args:
        d_model, num_heads, causal: as for the parent class.
        symmetric: use ``-m_h |i - j|`` (default: ``True`` when not causal, as the paper defines
            ALiBi for causal models only; see :func:`alibi_bias`).

    Raises:
        ValueError: as the parent class.
    """

    def __init__(self, d_model: int, num_heads: int, *, causal: bool = False, symmetric: bool | None = None) -> None:
        super().__init__(d_model, num_heads, causal=causal)
        self.symmetric = (not self.causal) if symmetric is None else bool(symmetric)
        self.register_buffer("slopes", alibi_slopes(self.num_heads).to(torch.float32), persistent=False)

    def attend(self, q, k, v, *, mask, positions):
        bias = alibi_bias(self.slopes, positions, positions, symmetric=self.symmetric).to(q.dtype)
        return scaled_dot_product_attention(q, k, v, mask=mask, bias=bias)

    def extra_repr(self) -> str:
        return f"d_model={self.d_model}, num_heads={self.num_heads}, causal={self.causal}, symmetric={self.symmetric}"
