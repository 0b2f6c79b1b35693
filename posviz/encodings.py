"""Absolute positional information: Vaswani's sinusoidal table and a learned table.

Source: Vaswani et al. 2017, "Attention Is All You Need", §3.5,
https://arxiv.org/abs/1706.03762
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from ._checks import check_choice, check_int, check_positive_float

__all__ = [
    "LearnedPositionalEmbedding",
    "SinusoidalPositionalEncoding",
    "sinusoidal_encoding",
]

SINUSOIDAL_LAYOUTS = ("interleaved", "concatenated")


def sinusoidal_encoding(
    num_positions: int,
    d_model: int,
    *,
    base: float = 10000.0,
    dtype: np.dtype | type = np.float32,
    layout: str = "interleaved",
) -> np.ndarray:
    """The sinusoidal positional-encoding table of Vaswani et al. 2017, §3.5.

    ``PE[p, 2i] = sin(p / base^(2i / d_model))`` and ``PE[p, 2i+1] = cos(p / base^(2i / d_model))``
    for positions ``p = 0 … num_positions-1`` (in tokens) and pair index ``i``. Angles are in
    radians; pair ``i`` has wavelength ``2π · base^(2i / d_model)`` tokens, from ``2π`` (``i = 0``)
    towards ``2π · base``.

    Layouts (the same numbers, different column order):

    * ``"interleaved"`` (the paper, and PyTorch tutorials): columns ``sin_0, cos_0, sin_1, cos_1, …``.
    * ``"concatenated"`` (tensor2tensor's ``get_timing_signal_1d`` style): ``[sin_0 … sin_{h-1} |
      cos_0 … cos_{h'-1}]``. It equals ``interleaved[:, perm]`` with
      ``perm = [0, 2, 4, …, 1, 3, 5, …]``, so both give the same Gram matrix ``PE @ PE.T``.

    An odd ``d_model`` works: the last column is a sine of the last pair's frequency.
    Angles are computed in float64 and the table is cast to ``dtype`` at the end, so float16
    and float32 tables stay accurate at large positions.

    Args:
        num_positions: number of rows (positions), ``>= 1``.
        d_model: number of columns (model width), ``>= 1``.
        base: the wavelength base, ``> 0`` (10000 in the paper).
        dtype: a numpy floating dtype for the result.
        layout: ``"interleaved"`` or ``"concatenated"``.

    Returns:
        ``np.ndarray`` of shape ``(num_positions, d_model)`` and dtype ``dtype``, values in [-1, 1].

    Raises:
        TypeError: if a size is not an ``int``, ``base`` is not a number, or ``dtype`` is not floating.
        ValueError: if a size is < 1, ``base`` <= 0, or ``layout`` is unknown.
    """
    num_positions = check_int("num_positions", num_positions, minimum=1)
    d_model = check_int("d_model", d_model, minimum=1)
    base = check_positive_float("base", base)
    check_choice("layout", layout, SINUSOIDAL_LAYOUTS)
    out_dtype = np.dtype(dtype)
    if not np.issubdtype(out_dtype, np.floating):
        raise TypeError(f"dtype must be a numpy floating dtype, got {out_dtype}")

    positions = np.arange(num_positions, dtype=np.float64)[:, None]  # (P, 1)
    pair = np.arange(d_model, dtype=np.float64) // 2  # i for every column
    angles = positions / base ** (2.0 * pair / d_model)  # (P, d_model), radians
    table = np.where(np.arange(d_model) % 2 == 0, np.sin(angles), np.cos(angles))
    if layout == "concatenated":
        table = np.concatenate([table[:, 0::2], table[:, 1::2]], axis=1)
    return table.astype(out_dtype)


def _check_sequence_input(x: torch.Tensor, d_model: int) -> None:
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"x must be a torch.Tensor, got {type(x).__name__}")
    if x.ndim != 3 or x.shape[-1] != d_model:
        raise ValueError(f"x must have shape (batch, seq_len, d_model={d_model}), got {tuple(x.shape)}")
    if not x.is_floating_point():
        raise TypeError(f"x must be a floating tensor, got {x.dtype}")


def _resolve_positions(positions: torch.Tensor | None, seq_len: int, max_len: int, device) -> torch.Tensor:
    """Default ``arange(seq_len)``; check integer dtype and range ``[0, max_len)``."""
    if positions is None:
        if seq_len > max_len:
            raise ValueError(
                f"sequence length {seq_len} exceeds max_len={max_len} of the position table; "
                f"build the module with max_len >= {seq_len}"
            )
        return torch.arange(seq_len, device=device)
    if not isinstance(positions, torch.Tensor) or positions.dtype.is_floating_point or positions.dtype == torch.bool:
        raise TypeError("positions must be an integer torch.Tensor")
    if positions.numel() and (int(positions.min()) < 0 or int(positions.max()) >= max_len):
        raise ValueError(
            f"positions must lie in [0, max_len={max_len}), got min {int(positions.min())} "
            f"and max {int(positions.max())}; build the module with max_len > {int(positions.max())}"
        )
    return positions.to(device)


class SinusoidalPositionalEncoding(nn.Module):
    """Adds the fixed sinusoidal table (Vaswani et al. 2017, §3.5) to a sequence of vectors.

    The table is a non-trainable buffer (``requires_grad=False``, not a parameter, not saved in
    the ``state_dict`` since it is recomputable), built once in float64 and stored in float32.

    Args:
        d_model: model width, ``>= 1``.
        max_len: number of positions in the table, ``>= 1``.
        base: wavelength base (10000 in the paper).
        scale: multiply the input by ``scale`` before adding (the paper multiplies token
            embeddings by ``sqrt(d_model)``, §3.4); default 1.0.

    Shapes:
        ``forward(x, positions=None)``: ``x`` is ``(batch, seq_len, d_model)`` float; ``positions`` is an
        optional integer tensor broadcastable to ``(batch, seq_len)`` (default ``arange(seq_len)``);
        returns ``x * scale + PE[positions]`` with the shape and dtype of ``x``.

    Raises:
        ValueError: if ``seq_len > max_len`` (the message names both) or a position is out of range.
        TypeError / ValueError: for a wrongly shaped or typed ``x``.
    """

    def __init__(self, d_model: int, max_len: int = 2048, *, base: float = 10000.0, scale: float = 1.0) -> None:
        super().__init__()
        self.d_model = check_int("d_model", d_model, minimum=1)
        self.max_len = check_int("max_len", max_len, minimum=1)
        self.base = check_positive_float("base", base)
        self.scale = float(scale)
        table = sinusoidal_encoding(self.max_len, self.d_model, base=self.base, dtype=np.float32)
        self.register_buffer("pe", torch.from_numpy(table), persistent=False)

    def forward(self, x: torch.Tensor, positions: torch.Tensor | None = None) -> torch.Tensor:
        _check_sequence_input(x, self.d_model)
        pos = _resolve_positions(positions, x.shape[1], self.max_len, x.device)
        return x * self.scale + self.pe[pos].to(x.dtype)

    def extra_repr(self) -> str:
        return f"d_model={self.d_model}, max_len={self.max_len}, base={self.base:g}, scale={self.scale:g}"


class LearnedPositionalEmbedding(nn.Module):
    """Adds a trainable position table (BERT / GPT-2 style) to a sequence of vectors.

    The table is an ``nn.Parameter`` of shape ``(max_len, d_model)``, initialised from
    ``N(0, init_std²)`` and updated by the optimiser. Unlike the sinusoidal table it has no
    rows for positions ``>= max_len``: such inputs raise ``ValueError``.

    Args:
        max_len: number of learnable positions, ``>= 1``.
        d_model: model width, ``>= 1``.
        init_std: standard deviation of the initial values. 0.02 is BERT's (a truncated normal,
            https://github.com/google-research/bert ``modeling.py``) and Hugging Face's GPT-2
            ``initializer_range``; OpenAI's released GPT-2 code (``model.py``) used 0.01 for the
            position table ``wpe``.

    Shapes:
        ``forward(x, positions=None)``: ``x`` is ``(batch, seq_len, d_model)`` float; returns
        ``x + table[positions]``, same shape and dtype.

    Raises:
        ValueError: if ``seq_len > max_len`` (the message names both) or a position is out of range.
    """

    def __init__(self, max_len: int, d_model: int, *, init_std: float = 0.02) -> None:
        super().__init__()
        self.max_len = check_int("max_len", max_len, minimum=1)
        self.d_model = check_int("d_model", d_model, minimum=1)
        self.weight = nn.Parameter(torch.randn(self.max_len, self.d_model) * float(init_std))

    def forward(self, x: torch.Tensor, positions: torch.Tensor | None = None) -> torch.Tensor:
        _check_sequence_input(x, self.d_model)
        pos = _resolve_positions(positions, x.shape[1], self.max_len, x.device)
        return x + self.weight[pos].to(x.dtype)

    def extra_repr(self) -> str:
        return f"max_len={self.max_len}, d_model={self.d_model}"
