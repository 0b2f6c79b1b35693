"""T5's relative position bias: one learned scalar per (distance bucket, head), added to the logits.

Source: Raffel et al. 2020, "Exploring the Limits of Transfer Learning with a Unified Text-to-Text
Transformer", JMLR 21(140), §2.1 "Model", https://arxiv.org/abs/1910.10683 . The bucket function
itself is given in the paper only in words ("32 embeddings … whose ranges increase in size
logarithmically up to an offset of 128 beyond which we assign all relative positions to the same
embedding"); its exact form is the one in the authors' Mesh TensorFlow code, which the Hugging Face
``T5Attention._relative_position_bucket`` reproduces and the tests use as an oracle.

Compared with Shaw et al. 2018 (:mod:`posviz.relative`), which learns a *vector* per clipped
offset and adds ``q_i · a^K_ij`` to the logits, T5 learns a *scalar* per head and per bucket and
adds it directly, whatever the query and key contents are; and instead of a hard clip at ``±k``
the buckets grow logarithmically, so distant offsets still differ, coarsely, up to
``max_distance``. Sign convention: ``relative_position = key position − query position``, the
``j - i`` of Shaw's paper and of :func:`posviz.relative_position_index`.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from ._checks import check_int
from .attention import MultiheadSelfAttention, scaled_dot_product_attention

__all__ = [
    "check_bucket_sizes",
    "T5_MAX_DISTANCE",
    "T5_NUM_BUCKETS",
    "T5MultiheadAttention",
    "T5RelativePositionBias",
    "t5_relative_position_bucket",
]

#: T5's defaults (Raffel et al. 2020, §2.1; the released configurations): 32 buckets, log-spaced
#: up to a distance of 128 tokens.
T5_NUM_BUCKETS = 32
T5_MAX_DISTANCE = 128


def check_bucket_sizes(bidirectional: bool, num_buckets: int, max_distance: int) -> tuple[int, int, int]:
    """Check the arguments; return ``(buckets per direction B, exact buckets E, max_distance D)``."""
    num_buckets = check_int("num_buckets", num_buckets, minimum=2)
    max_distance = check_int("max_distance", max_distance, minimum=1)
    if bidirectional:
        if num_buckets < 4 or num_buckets % 2:
            raise ValueError(
                f"bidirectional buckets are split in two halves, so num_buckets must be even and >= 4, "
                f"got {num_buckets}"
            )
        per_direction = num_buckets // 2
    else:
        per_direction = num_buckets
    exact = per_direction // 2
    if max_distance <= exact:
        raise ValueError(
            f"max_distance={max_distance} must exceed the {exact} exact buckets per direction "
            f"(num_buckets={num_buckets}, bidirectional={bidirectional})"
        )
    return per_direction, exact, max_distance


def t5_relative_position_bucket(
    relative_position: torch.Tensor,
    *,
    bidirectional: bool = True,
    num_buckets: int = T5_NUM_BUCKETS,
    max_distance: int = T5_MAX_DISTANCE,
) -> torch.Tensor:
    """Bucket id of each relative position, as in T5 (Raffel et al. 2020, §2.1).

    Let ``r = key position − query position`` and ``B`` the buckets per direction (``num_buckets / 2``
    when ``bidirectional``, else ``num_buckets``), ``E = ⌊B / 2⌋`` exact buckets, ``D = max_distance``.
    The distance is ``n = |r|`` (bidirectional) or ``n = max(−r, 0)`` (causal: keys after the
    query, which a causal mask hides anyway, share bucket 0 with the token itself). Then::

        bucket(n) = n                                                    if n < E
                  = min(B − 1, E + ⌊ ln(n / E) / ln(D / E) · (B − E) ⌋)  otherwise

    and, when bidirectional, ``B`` is added for keys after the query (``r > 0``): buckets
    ``0 … B−1`` are keys at or before the query, ``B … 2B−1`` keys after it. So the first ``E``
    distances get a bucket each, the next ``B − E`` buckets cover ``E … D`` with widths growing
    geometrically, and every distance ``≥ D`` lands in the last bucket (the clip). The log is
    taken in float32 with the operations in that order, as in the Mesh TensorFlow and Hugging Face
    code, so that ids agree exactly with trained T5 checkpoints (at the few distances where the
    real-number value is an exact integer, float64 could land one bucket away).

    Example, the T5 defaults (``num_buckets=32, max_distance=128``; ``B = 16, E = 8``)::

        key − query r     0   −1 … −7   −8…−11  −12…−15  −16…−22  −23…−31  −32…−45  −46…−63  −64…−90  ≤ −91
        bucket            0    1 … 7      8        9        10       11       12       13       14      15
        key − query r         +1 … +7   +8…+11  +12…+15  +16…+22  +23…+31  +32…+45  +46…+63  +64…+90  ≥ +91
        bucket                17 … 23     24       25       26       27       28       29       30      31

    Bucket 16 (``B + 0``) is never used: ``r > 0`` means ``n >= 1``. The log part alone already
    reaches the last bucket at 91, so the clip at ``D = 128`` changes nothing here.
    Causal (``bidirectional=False``, the T5 decoder) uses all 32 buckets for the past: distances
    ``0 … 15`` exactly, then 16–18 → 16, 19–20 → 17, …, 99–112 → 30, ``≥ 113`` → 31.

    Args:
        relative_position: integer tensor of any shape (key − query, in tokens).
        bidirectional: ``True`` for an encoder (separate buckets for the two directions), ``False``
            for a causal decoder.
        num_buckets: total number of buckets, ``>= 2`` (even and ``>= 4`` when bidirectional).
        max_distance: distance (tokens) from which on everything shares the last bucket;
            must exceed ``E``.

    Returns:
        int64 tensor of the same shape, values in ``[0, num_buckets)``.

    Raises:
        TypeError: if ``relative_position`` is not an integer tensor, or a size is not an int.
        ValueError: for ``num_buckets`` too small (or odd when bidirectional) or
            ``max_distance <= E``.
    """
    if (
        not isinstance(relative_position, torch.Tensor)
        or relative_position.dtype.is_floating_point
        or relative_position.dtype.is_complex
        or relative_position.dtype == torch.bool
    ):
        raise TypeError(
            "relative_position must be an integer torch.Tensor (key position − query position), got "
            f"{getattr(relative_position, 'dtype', type(relative_position).__name__)}"
        )
    per_direction, exact, max_distance = check_bucket_sizes(bool(bidirectional), num_buckets, max_distance)
    r = relative_position.long()
    if bidirectional:
        offset = (r > 0).long() * per_direction
        n = r.abs()
    else:
        offset = torch.zeros_like(r)
        n = (-r).clamp(min=0)
    # Clamp to >= E before the log so that no log(0) is ever evaluated (torch.where keeps both sides).
    log_part = torch.log(n.clamp(min=exact).float() / exact) / math.log(max_distance / exact)
    large = exact + (log_part * (per_direction - exact)).long()
    bucket = torch.where(n < exact, n, large.clamp(max=per_direction - 1))
    return offset + bucket


class T5RelativePositionBias(nn.Module):
    """The T5 bias table: one learned scalar per (bucket, head), looked up by relative position.

    Args:
        num_heads: number of attention heads, ``>= 1``.
        num_buckets, max_distance, bidirectional: as for :func:`t5_relative_position_bucket`.
        init_std: standard deviation of the normal initialisation. The Hugging Face T5 draws this
            table with ``d_model^-1/2`` (times its ``initializer_factor``, 1.0), and the layers here
            pass that value; the default ``0.125`` is it for ``d_model = 64``. ``0.0`` starts from
            no position information.

    Attributes:
        table: ``nn.Parameter`` of shape ``(num_buckets, num_heads)``, float32.

    Shapes:
        ``forward(query_positions, key_positions)``: integer ``(batch, query_len)`` and
        ``(batch, key_len)``; returns the float bias ``(batch, num_heads, query_len, key_len)``,
        entry ``[b, h, i, j] = table[bucket(key_positions[b, j] − query_positions[b, i]), h]``.

    Raises:
        TypeError, ValueError: for bad sizes (see :func:`t5_relative_position_bucket`).
    """

    def __init__(
        self,
        num_heads: int,
        num_buckets: int = T5_NUM_BUCKETS,
        max_distance: int = T5_MAX_DISTANCE,
        *,
        bidirectional: bool = True,
        init_std: float = 0.125,
    ) -> None:
        super().__init__()
        self.num_heads = check_int("num_heads", num_heads, minimum=1)
        self.bidirectional = bool(bidirectional)
        check_bucket_sizes(self.bidirectional, num_buckets, max_distance)
        self.num_buckets, self.max_distance = int(num_buckets), int(max_distance)
        self.table = nn.Parameter(torch.randn(self.num_buckets, self.num_heads) * float(init_std))

    def buckets(self, query_positions: torch.Tensor, key_positions: torch.Tensor) -> torch.Tensor:
        """Bucket ids ``(..., query_len, key_len)`` of ``key − query`` (int64)."""
        relative = key_positions[..., None, :] - query_positions[..., :, None]
        return t5_relative_position_bucket(
            relative, bidirectional=self.bidirectional, num_buckets=self.num_buckets, max_distance=self.max_distance
        )

    def forward(self, query_positions: torch.Tensor, key_positions: torch.Tensor) -> torch.Tensor:
        values = self.table[self.buckets(query_positions, key_positions)]  # (..., Lq, Lk, heads)
        return values.movedim(-1, -3)

    def extra_repr(self) -> str:
        return (
            f"num_heads={self.num_heads}, num_buckets={self.num_buckets}, max_distance={self.max_distance}, "
            f"bidirectional={self.bidirectional}"
        )


class T5MultiheadAttention(MultiheadSelfAttention):
    """Multi-head self-attention with T5's relative position bias (Raffel et al. 2020, §2.1).

    ``softmax(q kᵀ / √head_dim + b_h(j − i)) v`` with ``b_h`` read from a
    :class:`T5RelativePositionBias` table; nothing else carries position, so shifting every
    position by the same amount changes nothing. (T5 itself does not divide by ``√head_dim``; it
    folds that scale into its initialisation. Here the scale stays, as in every other layer of
    :mod:`posviz`, and the bias is added after it.) A causal layer uses causal buckets
    (``bidirectional=False``), as T5's decoder does; a non-causal one bidirectional buckets.

    **Sharing across layers.** T5 computes the bias in the first layer of a stack and reuses it in
    every later layer: one table for the whole encoder (and one for the decoder's
    self-attention). :func:`posviz.t5_method`, and so ``TinyTransformer(position="t5")``, does the same by
    passing one table to every layer; each layer then looks the bias up from that shared table
    (the same numbers T5 passes on). A layer built without ``relative_bias`` owns its table.

    Args:
        d_model, num_heads, causal: as for :class:`~posviz.attention.MultiheadSelfAttention`.
        num_buckets, max_distance: as for :func:`t5_relative_position_bucket`.
        relative_bias: a table to use (e.g. shared with other layers); ``None`` builds one,
            initialised with standard deviation ``d_model^-1/2`` as in the Hugging Face T5.

    Raises:
        ValueError: for bad sizes, or a ``relative_bias`` whose heads or direction do not match.
    """

    def __init__(
        self,
        d_model: int,
        num_heads: int,
        *,
        causal: bool = False,
        num_buckets: int = T5_NUM_BUCKETS,
        max_distance: int = T5_MAX_DISTANCE,
        relative_bias: T5RelativePositionBias | None = None,
    ) -> None:
        super().__init__(d_model, num_heads, causal=causal)
        if relative_bias is None:
            relative_bias = T5RelativePositionBias(
                self.num_heads, num_buckets, max_distance, bidirectional=not self.causal, init_std=d_model**-0.5
            )
        if not isinstance(relative_bias, T5RelativePositionBias):
            raise TypeError(f"relative_bias must be a T5RelativePositionBias, got {type(relative_bias).__name__}")
        if relative_bias.num_heads != self.num_heads or relative_bias.bidirectional == self.causal:
            raise ValueError(
                f"relative_bias has num_heads={relative_bias.num_heads}, bidirectional={relative_bias.bidirectional}; "
                f"this layer needs num_heads={self.num_heads}, bidirectional={not self.causal}"
            )
        self.relative_bias = relative_bias

    def attend(self, q, k, v, *, mask, positions):
        bias = self.relative_bias(positions, positions).to(q.dtype)  # (batch, heads, L, L)
        return scaled_dot_product_attention(q, k, v, mask=mask, bias=bias)

