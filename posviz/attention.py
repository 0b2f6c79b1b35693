"""Scaled dot-product attention that returns its weights, and a multi-head layer with a hook.

Source: Vaswani et al. 2017, "Attention Is All You Need", §3.2.1 eq. 1 and §3.2.2,
https://arxiv.org/abs/1706.03762

Position methods that act inside attention (Shaw relative, RoPE, ALiBi) subclass
:class:`MultiheadSelfAttention` and override :meth:`MultiheadSelfAttention.attend`; the
projections, head splitting and masking stay in one place.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from ._checks import check_int

__all__ = ["MultiheadSelfAttention", "causal_mask", "scaled_dot_product_attention"]


def causal_mask(query_len: int, key_len: int | None = None, *, device=None) -> torch.Tensor:
    """Boolean ``(query_len, key_len)`` mask, ``True`` where query ``i`` may attend to key ``j <= i``.

    When ``key_len > query_len`` the queries are taken to be the last ``query_len`` positions.
    """
    query_len = check_int("query_len", query_len, minimum=1)
    key_len = query_len if key_len is None else check_int("key_len", key_len, minimum=1)
    offset = key_len - query_len
    i = torch.arange(query_len, device=device)[:, None]
    j = torch.arange(key_len, device=device)[None, :]
    return j <= i + offset


def scaled_dot_product_attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    *,
    mask: torch.Tensor | None = None,
    bias: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """``softmax(q kᵀ / √d + bias) v`` (Vaswani et al. 2017, eq. 1), returning the weights too.

    Args:
        q: ``(..., query_len, head_dim)`` float.
        k: ``(..., key_len, head_dim)``, same dtype.
        v: ``(..., key_len, value_dim)``, same dtype.
        mask: optional boolean tensor broadcastable to ``(..., query_len, key_len)``; ``True`` = may
            attend. A query row with no allowed key raises ``ValueError`` (it would give NaN).
        bias: optional float tensor broadcastable to the logits, added before the softmax
            (ALiBi, T5 and Shaw's key term are biases of this kind).

    Returns:
        ``(output, weights)``: ``(..., query_len, value_dim)`` and ``(..., query_len, key_len)``; each
        weight row sums to 1.

    Raises:
        ValueError: on mismatched shapes or a fully masked query row.
    """
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(f"q and k must share head_dim, got {q.shape[-1]} and {k.shape[-1]}")
    if k.shape[-2] != v.shape[-2]:
        raise ValueError(f"k and v must share key_len, got {k.shape[-2]} and {v.shape[-2]}")
    logits = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if bias is not None:
        logits = logits + bias
    if mask is not None:
        if mask.dtype != torch.bool:
            raise ValueError(f"mask must be a boolean tensor (True = may attend), got {mask.dtype}")
        if not bool(mask.any(dim=-1).all()):
            raise ValueError("mask leaves a query row with no key to attend to")
        logits = logits.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(logits, dim=-1)
    return weights @ v, weights


class MultiheadSelfAttention(nn.Module):
    """Multi-head self-attention (Vaswani et al. 2017, §3.2.2) with no position information.

    Subclasses add position information by overriding :meth:`attend`, which receives the
    per-head queries, keys and values and the token positions.

    Args:
        d_model: model width; must be divisible by ``num_heads``.
        num_heads: number of heads; ``head_dim = d_model // num_heads``.
        causal: if ``True``, query ``i`` sees only keys ``j <= i``.

    Shapes:
        ``forward(x, positions=None, key_padding_mask=None)``: ``x`` is ``(batch, seq_len, d_model)``;
        ``positions`` an optional integer tensor broadcastable to ``(batch, seq_len)`` (default
        ``arange(seq_len)``); ``key_padding_mask`` an optional boolean ``(batch, seq_len)``, ``True``
        for real tokens. Returns ``(output, weights)`` of shapes ``(batch, seq_len, d_model)`` and
        ``(batch, num_heads, seq_len, seq_len)``.

    Raises:
        ValueError: if ``d_model`` is not divisible by ``num_heads`` or ``x`` has the wrong shape.
    """

    def __init__(self, d_model: int, num_heads: int, *, causal: bool = False) -> None:
        super().__init__()
        self.d_model = check_int("d_model", d_model, minimum=1)
        self.num_heads = check_int("num_heads", num_heads, minimum=1)
        if d_model % num_heads:
            raise ValueError(f"d_model={d_model} must be divisible by num_heads={num_heads}")
        self.head_dim = d_model // num_heads
        self.causal = bool(causal)
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.out = nn.Linear(d_model, d_model)

    def forward(
        self,
        x: torch.Tensor,
        positions: torch.Tensor | None = None,
        key_padding_mask: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        if x.ndim != 3 or x.shape[-1] != self.d_model:
            raise ValueError(f"x must have shape (batch, seq_len, {self.d_model}), got {tuple(x.shape)}")
        batch, seq_len, _ = x.shape
        q, k, v = self.qkv(x).view(batch, seq_len, 3, self.num_heads, self.head_dim).permute(2, 0, 3, 1, 4)
        if positions is None:
            positions = torch.arange(seq_len, device=x.device)
        positions = torch.broadcast_to(positions, (batch, seq_len))
        mask = None
        if self.causal:
            mask = causal_mask(seq_len, device=x.device)
        if key_padding_mask is not None:
            pad = key_padding_mask[:, None, None, :].to(torch.bool)
            mask = pad if mask is None else mask & pad
        out, weights = self.attend(q, k, v, mask=mask, positions=positions)
        out = out.transpose(1, 2).reshape(batch, seq_len, self.d_model)
        return self.out(out), weights

    def attend(
        self,
        q: torch.Tensor,
        k: torch.Tensor,
        v: torch.Tensor,
        *,
        mask: torch.Tensor | None,
        positions: torch.Tensor,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Attention over ``(batch, heads, seq_len, head_dim)`` tensors; override to add positions.

        ``positions`` is an integer ``(batch, seq_len)`` tensor; ``mask`` is boolean, broadcastable to
        ``(batch, heads, seq_len, seq_len)``, or ``None``. Returns ``(output, weights)``.
        """
        return scaled_dot_product_attention(q, k, v, mask=mask)
