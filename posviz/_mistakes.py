"""Known wrong answers that :mod:`posviz.exercises` recognises, and the references they are told apart from.

Each function builds what a typical mistake computes (or, for :func:`_attention` and
:func:`_dynamic_base`, the reference with a mistake switched on), in float64 numpy, so that a
checker can say which mistake an answer equals. Internal: no public API.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from .rope import rope_frequencies
from .rope_scaling import ntk_scaled_base


def _sinusoidal_variant(num_positions: int, d_model: int, *, exponent: str = "pair", swap: bool = False,
                        start: int = 0, angle_dtype=np.float64) -> np.ndarray:
    p = np.arange(start, start + num_positions, dtype=np.float64)[:, None].astype(angle_dtype)
    col = np.arange(d_model)
    power = {"pair": 2 * (col // 2), "column": 2 * col}[exponent] / d_model
    angles = (p / np.asarray(10000.0 ** power, dtype=angle_dtype)).astype(angle_dtype)
    even = col % 2 == 0
    table = np.where(even ^ swap, np.sin(angles), np.cos(angles))
    return table.astype(np.float64)


def _rope_low_precision(x: np.ndarray, positions: np.ndarray, *, angles_in_float16: bool) -> np.ndarray:
    """Interleaved RoPE with cos and sin rounded to float16 (or the angles themselves computed in float16)."""
    theta = rope_frequencies(x.shape[-1])
    if angles_in_float16:
        angles = (positions[:, None].astype(np.float16) * theta.astype(np.float16)).astype(np.float64)
        cos, sin = np.cos(angles.astype(np.float16)), np.sin(angles.astype(np.float16))
    else:
        angles = positions[:, None].astype(np.float64) * theta
        cos, sin = np.cos(angles).astype(np.float16), np.sin(angles).astype(np.float16)
    cos, sin = cos.astype(np.float64), sin.astype(np.float64)
    out = np.empty_like(x)
    a, b = x[..., 0::2], x[..., 1::2]
    out[..., 0::2], out[..., 1::2] = a * cos - b * sin, b * cos + a * sin
    return out


def _unrotated_pairs(got: np.ndarray, x: np.ndarray, expected: np.ndarray) -> list[int]:
    """Pairs that stay equal to ``x`` wherever they should turn, when every other pair is right."""
    def pairs(a):
        return a.reshape(-1, a.shape[-1] // 2, 2)

    g, xx, e = pairs(got), pairs(x), pairs(expected)
    should_move = np.abs(e - xx).max(-1) > 1e-3  # (rows, pairs)
    stayed = np.abs(g - xx).max(-1) <= 1e-4
    unrotated = should_move.any(0) & ~(should_move & ~stayed).any(0)
    right = np.isclose(g, e, atol=1e-4, rtol=1e-4).all(-1).all(0)
    if unrotated.any() and (right | unrotated).all():
        return [int(i) for i in np.flatnonzero(unrotated)]
    return []


def _alibi_variant(n: int, *, extras: str) -> np.ndarray:
    p = 2 ** int(math.floor(math.log2(n)))
    def geometric(m):
        return [2.0 ** (-8.0 * h / m) for h in range(1, m + 1)]
    extra = geometric(2 * p)[0::2][: n - p] if extras != "even terms" else geometric(2 * p)[1::2][: n - p]
    return np.array(geometric(p) + (extra[::-1] if extras == "reversed" else extra))


def _dynamic_base(base: float, head_dim: int, factor: float, original_context: int, seq_len: int, *,
                  clamp: bool = True, shift: bool = True, exponent: float | None = None) -> float:
    length = max(seq_len, original_context) if clamp else seq_len
    ratio = factor * length / original_context - ((factor - 1) if shift else 0.0)
    if exponent is None:
        return ntk_scaled_base(base, head_dim, ratio) if ratio > 0 else float("nan")
    return base * ratio ** exponent


def _attention(x, w_q, w_k, w_v, *, scale: float | None = None, dim: int = -1, softmax: bool = True) -> np.ndarray:
    q, k, v = x @ w_q, x @ w_k, x @ w_v
    scores = q @ k.T / (math.sqrt(k.shape[-1]) if scale is None else scale)
    return ((torch.softmax(scores, dim=dim) if softmax else scores) @ v).numpy()
