"""Rotary position embedding (RoPE): rotate queries and keys by an angle proportional to position.

Sources:

* Su et al. 2021, "RoFormer: Enhanced Transformer with Rotary Position Embedding",
  https://arxiv.org/abs/2104.09864 — frequencies §3.2.2 (eq. 15), the relative property
  eq. 16, the efficient element-wise form eq. 34 (§3.4.2), long-term decay §3.4.3.
* Chen et al. 2023, "Extending Context Window of Large Language Models via Positional
  Interpolation", https://arxiv.org/abs/2306.15595 — position interpolation (PI).
* Peng et al. 2023, "YaRN: Efficient Context Window Extension of Large Language Models",
  https://arxiv.org/abs/2309.00071 — the "NTK-aware" base scaling ``b' = b · s^(d/(d-2))``.

Conventions (they differ between sources; every function here states which one it uses):

* Frequencies: ``θ_i = base^(-2i/d)`` for pair ``i = 0 … d/2 - 1`` (the paper counts ``i`` from 1
  and writes ``θ_i = 10000^(-2(i-1)/d)``; the numbers are the same).
* Pairing ("layout"): ``"interleaved"`` rotates dimensions ``(2i, 2i+1)`` together, as in the
  paper's eq. 34 and Meta's Llama code (``torch.view_as_complex``); ``"half"`` rotates
  ``(i, i + d/2)``, as in GPT-NeoX and Hugging Face's ``rotate_half``. The two are the same
  rotation up to a fixed permutation of feature indices (:func:`interleaved_to_half`).
* Direction: positive angles rotate counter-clockwise: ``(x0, x1) → (x0 cos − x1 sin, x0 sin + x1 cos)``.
  Then ``⟨R_m q, R_n k⟩`` depends on ``n − m`` only (eq. 16).
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import numbers

import numpy as np
import torch
from torch import nn

from ._checks import check_choice, check_head_dim, check_int, check_positive_float
from .attention import MultiheadSelfAttention, scaled_dot_product_attention

__all__ = [
    "ROPE_LAYOUTS",
    "RotaryEmbedding",
    "RotaryMultiheadAttention",
    "apply_rope",
    "half_to_interleaved",
    "interleaved_to_half",
    "rope_angles",
    "rope_decay_bound",
    "rope_frequencies",
    "rope_rotation_matrix",
]

#: Allowed values of ``layout``.
ROPE_LAYOUTS = ("interleaved", "half")


def _check_scale(position_scale: object) -> float:
    return check_positive_float("position_scale", position_scale)


def rope_frequencies(head_dim: int, base: float = 10000.0) -> np.ndarray:
    """The rotation frequencies ``θ_i = base^(-2i / head_dim)`` (RoFormer §3.2.2, eq. 15).

    Pair ``i`` turns by ``θ_i`` radians per token, so its wavelength is ``2π / θ_i`` tokens:
    from ``2π ≈ 6.3`` tokens (``i = 0``) up to almost ``2π · base`` tokens (last pair).

    Args:
        head_dim: the head dimension ``d``, even and ``>= 2``.
        base: the frequency base, ``> 0`` (10000 in RoFormer and Llama 2; 500000 in Llama 3).

    Returns:
        float64 array of shape ``(head_dim // 2,)``, in radians per token, decreasing from 1.

    Raises:
        TypeError: if ``head_dim`` is not an ``int`` or ``base`` not a number.
        ValueError: if ``head_dim`` is odd or < 2, or ``base <= 0``.
    """
    head_dim = check_head_dim(head_dim)
    base = check_positive_float("base", base)
    return base ** (-np.arange(0, head_dim, 2, dtype=np.float64) / head_dim)


def rope_angles(
    positions, head_dim: int, *, base: float = 10000.0, position_scale: float = 1.0
) -> np.ndarray:
    """Rotation angles ``m · position_scale · θ_i`` for every position ``m`` and pair ``i``.

    Args:
        positions: array-like of positions in tokens (any shape ``P``; may be fractional).
        head_dim: even head dimension ``d``.
        base: frequency base (see :func:`rope_frequencies`).
        position_scale: multiplies the positions; position interpolation (Chen et al. 2023)
            uses ``train_len / target_len`` (< 1).

    Returns:
        float64 array of shape ``P + (head_dim // 2,)``, in radians.

    Raises:
        ValueError / TypeError: as :func:`rope_frequencies`, or for ``position_scale <= 0``.
    """
    freqs = rope_frequencies(head_dim, base)
    scale = _check_scale(position_scale)
    return np.asarray(positions, dtype=np.float64)[..., None] * scale * freqs


def rope_rotation_matrix(
    position: float, head_dim: int, *, base: float = 10000.0, layout: str = "interleaved"
) -> np.ndarray:
    """The ``(head_dim, head_dim)`` rotation matrix ``R^d_{Θ,m}`` of RoFormer eq. 15, in float64.

    With ``layout="interleaved"`` it is block-diagonal with 2×2 blocks
    ``[[cos mθ_i, −sin mθ_i], [sin mθ_i, cos mθ_i]]`` on dimensions ``(2i, 2i+1)``; with
    ``layout="half"`` the same blocks act on dimensions ``(i, i + d/2)``. ``apply_rope(x, m)``
    equals ``x @ R.T`` (``R @ x`` for a column vector).

    Args:
        position: the position ``m`` in tokens.
        head_dim: even head dimension ``d``.
        base: frequency base.
        layout: ``"interleaved"`` or ``"half"``.

    Returns:
        float64 array ``(head_dim, head_dim)``, orthogonal, determinant 1.

    Raises:
        ValueError: for an odd ``head_dim`` or an unknown layout.
    """
    head_dim = check_head_dim(head_dim)
    check_choice("layout", layout, ROPE_LAYOUTS)
    if isinstance(position, bool) or not isinstance(position, numbers.Real):
        raise TypeError(f"position must be a real number, got {type(position).__name__}")
    angles = float(position) * rope_frequencies(head_dim, base)
    half = head_dim // 2
    first = np.arange(half) * 2 if layout == "interleaved" else np.arange(half)
    second = first + 1 if layout == "interleaved" else first + half
    matrix = np.zeros((head_dim, head_dim))
    matrix[first, first] = np.cos(angles)
    matrix[first, second] = -np.sin(angles)
    matrix[second, first] = np.sin(angles)
    matrix[second, second] = np.cos(angles)
    return matrix


def interleaved_to_half(head_dim: int) -> np.ndarray:
    """Feature permutation ``perm`` with ``apply_rope(x[..., perm], layout="half") ==
    apply_rope(x, layout="interleaved")[..., perm]``.

    ``perm = [0, 2, 4, …, d−2, 1, 3, …, d−1]``: the first element of every interleaved pair goes
    to the first half, the second element to the second half. Checkpoint converters (e.g.
    Meta Llama → Hugging Face) apply this permutation to the output rows of the query and key
    projection weights, so that ``q·k`` scores stay the same under the other layout.

    Returns:
        int64 array ``(head_dim,)``. Its inverse is :func:`half_to_interleaved`.
    """
    head_dim = check_head_dim(head_dim)
    return np.concatenate([np.arange(0, head_dim, 2), np.arange(1, head_dim, 2)])


def half_to_interleaved(head_dim: int) -> np.ndarray:
    """The inverse permutation of :func:`interleaved_to_half`: ``[0, d/2, 1, d/2+1, …]``."""
    return np.argsort(interleaved_to_half(head_dim))


def rope_decay_bound(distances, head_dim: int = 128, *, base: float = 10000.0) -> np.ndarray:
    """The relative upper bound ``(1 / (d/2)) · Σ_{j=1}^{d/2} |S_j|`` of RoFormer §3.4.3 (Fig. 2).

    With ``S_j = Σ_{k=0}^{j−1} e^{i r θ_k}`` for relative distance ``r``, Abel summation gives
    ``|q_mᵀ k_n| ≤ max_i |h_{i+1} − h_i| · Σ_j |S_j|``: the score's envelope shrinks (on average)
    as ``|r|`` grows. At ``r = 0`` every ``|S_j| = j`` and the bound is ``(d/2 + 1) / 2``.

    Args:
        distances: array-like of relative distances ``r`` in tokens (any shape ``R``).
        head_dim: even head dimension ``d`` (128 in the paper's figure).
        base: frequency base.

    Returns:
        float64 array of shape ``R``.

    Raises:
        ValueError / TypeError: as :func:`rope_frequencies`.
    """
    freqs = rope_frequencies(head_dim, base)
    r = np.asarray(distances, dtype=np.float64)
    partial = np.cumsum(np.exp(1j * r[..., None] * freqs), axis=-1)  # S_1 … S_{d/2}
    return np.abs(partial).mean(axis=-1)


# --- torch ---------------------------------------------------------------------------------


def _angle_dtype(dtype: torch.dtype) -> torch.dtype:
    return torch.float64 if dtype == torch.float64 else torch.float32


def _check_positions(positions: object, shape: torch.Size, device) -> torch.Tensor:
    if positions is None:
        if len(shape) < 1:
            raise ValueError("x must have at least the shape (seq_len, head_dim)")
        return torch.arange(shape[-1], device=device)
    if not isinstance(positions, torch.Tensor) or positions.dtype.is_floating_point or positions.dtype in (
        torch.bool,
        torch.complex64,
        torch.complex128,
    ):
        raise TypeError(
            "positions must be an integer torch.Tensor (use position_scale for fractional positions)"
        )
    try:
        torch.broadcast_shapes(positions.shape, shape)
    except RuntimeError:
        raise ValueError(
            f"positions of shape {tuple(positions.shape)} do not broadcast to x.shape[:-1] = {tuple(shape)}; "
            "for (batch, heads, seq_len, head_dim) inputs pass positions of shape (batch, 1, seq_len)"
        ) from None
    return positions.to(device)


def _complex_pairs(t: torch.Tensor) -> torch.Tensor:
    """View ``(..., 2h)`` real features as ``(..., h)`` complex numbers ``t[2i] + i·t[2i+1]``."""
    pairs = t.reshape(*t.shape[:-1], t.shape[-1] // 2, 2)
    if pairs.stride(-1) != 1 or pairs.storage_offset() % 2 or any(st % 2 for st in pairs.stride()[:-1]):
        pairs = pairs.contiguous()
    return torch.view_as_complex(pairs)


#: Elements of one half-layout block (see :func:`_blocks`): large enough that each of the four
#: passes still splits across torch's threads (its grain is 32,768 elements), small enough that
#: the block's six operands (two halves of the input, cos, sin, two halves of the output;
#: 6 × 1 MiB in float32) are reread from cache. Chosen with benchmarks/bench_rope.py on 1 and 2
#: threads (2^15 left the second thread idle: 1.7–2.1× a clone, against 1.3–1.4× here).
_BLOCK_ELEMENTS = 1 << 18


def _blocks(shape: torch.Size, target: int = _BLOCK_ELEMENTS):
    """Index tuples that cut a tensor of ``shape`` into blocks of at most about ``target`` elements.

    The last dimension is never cut; leading dimensions are walked one index at a time and the
    first dimension whose trailing block exceeds ``target`` is cut into slices. A tensor of at
    most ``2 * target`` elements is one block (``Ellipsis``), so small inputs pay no overhead.
    On the CPU the half layout's four passes (two products and two fused multiply-adds) then
    reread their operands from cache instead of memory: the same operations on the same
    numbers, in the same order per element, so the result is bit-for-bit the same.
    """
    if math.prod(shape) <= 2 * target or len(shape) < 2:
        yield Ellipsis
        return
    cut, inner = len(shape) - 1, shape[-1]
    while cut > 0 and inner * shape[cut - 1] <= target:
        cut -= 1
        inner *= shape[cut]
    cut -= 1  # the dimension that is sliced; the ones before it are walked
    step = max(1, target // inner)
    for index in itertools.product(*(range(n) for n in shape[:cut])):
        for start in range(0, shape[cut], step):
            yield index + (slice(start, start + step),)


def _rotate(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, layout: str, rotary_dim: int) -> torch.Tensor:
    """Rotate the first ``rotary_dim`` features of ``x`` by angles with cosines ``cos`` and sines ``sin``.

    ``cos`` and ``sin`` broadcast to ``x.shape[:-1] + (rotary_dim // 2,)`` and have the dtype
    the arithmetic is done in (float32 or float64); the result is cast to ``x.dtype``.

    The interleaved layout is one complex multiplication per pair (RoFormer eq. 34 in complex
    form, as in Meta's Llama code). The half layout writes both halves straight into the output
    when no gradient is needed, and uses out-of-place ops (``addcmul`` + ``cat``) when autograd
    records the call. Both give the same numbers as the four-product formula of eq. 34.
    """
    work = x.to(cos.dtype)
    rot, rest = work[..., :rotary_dim], work[..., rotary_dim:]
    half = rotary_dim // 2
    if layout == "interleaved" and x.device.type != "mps":  # MPS lacks complex support
        out = torch.view_as_real(_complex_pairs(rot) * torch.complex(cos, sin)).flatten(-2)
    elif layout == "interleaved":
        a, b = rot[..., 0::2], rot[..., 1::2]
        out = torch.stack((a * cos - b * sin, b * cos + a * sin), dim=-1).flatten(-2)
    else:
        a, b = rot[..., :half], rot[..., half:]
        shape = torch.broadcast_shapes(rot.shape[:-1] + (half,), cos.shape)
        if torch.is_grad_enabled() and (rot.requires_grad or cos.requires_grad or sin.requires_grad):
            out = torch.cat((torch.addcmul(a * cos, b, sin, value=-1), torch.addcmul(b * cos, a, sin)), dim=-1)
        else:
            out = torch.empty(shape[:-1] + (rotary_dim,), dtype=work.dtype, device=work.device)
            first, second = out[..., :half], out[..., half:]
            views = tuple(t.expand(shape) for t in (a, b, cos, sin)) + (first, second)
            for block in _blocks(shape) if x.device.type == "cpu" else (Ellipsis,):
                a_, b_, cos_, sin_, first_, second_ = (t[block] for t in views)
                torch.mul(a_, cos_, out=first_)
                first_.addcmul_(b_, sin_, value=-1)
                torch.mul(b_, cos_, out=second_)
                second_.addcmul_(a_, sin_)
    if rest.shape[-1]:
        rest = rest.expand(out.shape[:-1] + rest.shape[-1:])
        out = torch.cat((out, rest), dim=-1)
    return out.to(x.dtype)


def _check_frequencies(frequencies: object, rotary_dim: int, base: float) -> np.ndarray:
    """``frequencies`` as a float64 array ``(rotary_dim // 2,)``, or ``base^(−2i/rotary_dim)`` if None."""
    if frequencies is None:
        return rope_frequencies(rotary_dim, base)
    if isinstance(frequencies, torch.Tensor):
        frequencies = frequencies.detach().cpu().double().numpy()
    freqs = np.asarray(frequencies, dtype=np.float64)
    if freqs.shape != (rotary_dim // 2,):
        raise ValueError(
            f"frequencies must have shape ({rotary_dim // 2},) (one per rotated pair), got {freqs.shape}"
        )
    if not np.all(np.isfinite(freqs)):
        raise ValueError("frequencies must be finite")
    return freqs


def _check_attention_factor(attention_factor: object) -> float:
    return check_positive_float("attention_factor", attention_factor)


def _check_rotary_dim(rotary_dim: object, head_dim: int) -> int:
    if rotary_dim is None:
        return head_dim
    rotary_dim = check_head_dim(rotary_dim, "rotary_dim")
    if rotary_dim > head_dim:
        raise ValueError(f"rotary_dim={rotary_dim} must be <= head_dim={head_dim}")
    return rotary_dim


def apply_rope(
    x: torch.Tensor,
    positions: torch.Tensor | None = None,
    *,
    base: float = 10000.0,
    layout: str = "interleaved",
    position_scale: float = 1.0,
    rotary_dim: int | None = None,
    frequencies=None,
    attention_factor: float = 1.0,
) -> torch.Tensor:
    """Rotate the last dimension of ``x`` by ``position · θ_i`` per pair (RoFormer eq. 34).

    Interleaved layout (the paper's eq. 34, Meta's Llama code)::

        out[..., 2i]   = x[..., 2i] cos(mθ_i) − x[..., 2i+1] sin(mθ_i)
        out[..., 2i+1] = x[..., 2i+1] cos(mθ_i) + x[..., 2i] sin(mθ_i)

    Half layout (GPT-NeoX, Hugging Face ``rotate_half``): the same with pair ``(i, i + d/2)``.
    ``apply_rope(x, m)`` equals ``x @ rope_rotation_matrix(m, d).T``.

    Angles (``positions × position_scale × θ_i``) and the rotation are computed in float32
    (float64 for float64 ``x``) whatever the input dtype; only the result is cast back, so
    float16/bfloat16 inputs stay accurate at large positions.

    Args:
        x: floating tensor ``(..., seq_len, head_dim)``; e.g. ``(batch, heads, seq_len, head_dim)``.
        positions: integer tensor broadcastable to ``x.shape[:-1]`` (default ``arange(seq_len)``).
            For ``(batch, heads, seq_len, head_dim)`` inputs with per-row positions (a left-padded
            batch: ``mask.cumsum(-1) − 1``) pass shape ``(batch, 1, seq_len)``. Negative positions
            are allowed (they rotate backwards).
        base: frequency base (see :func:`rope_frequencies`).
        layout: ``"interleaved"`` (pairs ``(2i, 2i+1)``) or ``"half"`` (pairs ``(i, i + d/2)``).
        position_scale: multiplies the positions (position interpolation uses
            ``train_len / target_len``).
        rotary_dim: rotate only the first ``rotary_dim`` features ("partial rotary", GPT-NeoX's
            ``rotary_pct``, GPT-J's ``rotary_dim``) with frequencies ``base^(−2i/rotary_dim)``
            and pass the others through; default: all of ``head_dim``.
        frequencies: per-pair frequencies ``θ_i`` (array-like or tensor of shape
            ``(rotary_dim // 2,)``, radians per token) used instead of ``base^(−2i/rotary_dim)``,
            e.g. from :func:`posviz.scaled_rope_frequencies` (PI, NTK, YaRN, Llama 3).
        attention_factor: multiplies cos and sin (so the rotated features), as YaRN and Hugging
            Face's ``attention_scaling`` do; applied to queries and keys it scales logits by its
            square. Default 1.

    Returns:
        Tensor of the shape and dtype of ``x`` (the broadcast shape if ``positions`` adds
        leading dimensions).

    Raises:
        TypeError: if ``x`` is not a floating tensor or ``positions`` not an integer tensor.
        ValueError: for an odd ``head_dim`` or ``rotary_dim``, an unknown layout, positions
            that do not broadcast, ``frequencies`` of the wrong shape, or ``attention_factor <= 0``.
    """
    if not isinstance(x, torch.Tensor) or not x.is_floating_point():
        raise TypeError(f"x must be a floating torch.Tensor, got {getattr(x, 'dtype', type(x).__name__)}")
    if x.ndim < 1:
        raise ValueError("x must have shape (..., seq_len, head_dim)")
    head_dim = check_head_dim(x.shape[-1])
    check_choice("layout", layout, ROPE_LAYOUTS)
    rotary_dim = _check_rotary_dim(rotary_dim, head_dim)
    scale = _check_scale(position_scale)
    if positions is None and x.ndim < 2:
        raise ValueError("x must have shape (..., seq_len, head_dim) when positions is None")
    freqs = _check_frequencies(frequencies, rotary_dim, base)
    gain = _check_attention_factor(attention_factor)
    pos = _check_positions(positions, x.shape[:-1], x.device)
    dtype = _angle_dtype(x.dtype)
    freqs = torch.as_tensor(freqs, dtype=dtype, device=x.device)
    angles = (pos.to(dtype) * scale)[..., None] * freqs
    cos, sin = torch.cos(angles), torch.sin(angles)
    if gain != 1.0:
        cos, sin = cos * gain, sin * gain
    return _rotate(x, cos, sin, layout, rotary_dim)


@dataclasses.dataclass(frozen=True)
class _RotarySettings:
    """The RoPE keywords of :func:`apply_rope` that a :class:`RotaryEmbedding` keeps (declared once)."""

    base: float = 10000.0
    layout: str = "interleaved"
    position_scale: float = 1.0
    rotary_dim: int | None = None
    frequencies: object = None
    attention_factor: float = 1.0

    def as_keywords(self) -> dict:
        return {field.name: getattr(self, field.name) for field in dataclasses.fields(self)}


class RotaryEmbedding(nn.Module):
    """:func:`apply_rope` with the cos/sin tables cached for positions ``0 … max_len − 1``.

    The tables are non-persistent float32 buffers of shape ``(max_len, rotary_dim // 2)``,
    built from float64 angles (they follow ``.to(device)``; they are not trainable and not
    in the ``state_dict``). Positions outside the cache (``>= max_len`` or negative) are
    computed directly instead, so a model can be evaluated beyond its training length.

    Args:
        head_dim: even head dimension.
        max_len: number of cached positions, ``>= 1``.
        **rotary: ``base``, ``layout``, ``position_scale``, ``rotary_dim``, ``frequencies``,
            ``attention_factor``, as in :func:`apply_rope`. :meth:`set_frequencies` changes the last two later (context
            extension without touching the weights; see :func:`posviz.set_rope_frequencies`).

    Shapes:
        ``forward(x, positions=None)``: ``x`` is ``(..., seq_len, head_dim)`` float; ``positions`` an
        integer tensor broadcastable to ``x.shape[:-1]`` (default ``arange(seq_len)``). Returns a
        tensor of the shape and dtype of ``x``, equal to ``apply_rope(x, positions, ...)``.

    Raises:
        ValueError / TypeError: as :func:`apply_rope`, and if ``x.shape[-1] != head_dim``.
    """

    def __init__(self, head_dim: int, max_len: int = 2048, **rotary) -> None:
        super().__init__()
        settings = _RotarySettings(**rotary)  # TypeError for a keyword apply_rope does not take
        self.head_dim = check_head_dim(head_dim)
        self.max_len = check_int("max_len", max_len, minimum=1)
        self.base = check_positive_float("base", settings.base)
        self.layout = check_choice("layout", settings.layout, ROPE_LAYOUTS)
        self.position_scale = _check_scale(settings.position_scale)
        self.rotary_dim = _check_rotary_dim(settings.rotary_dim, self.head_dim)
        self.register_buffer("cos", torch.empty(0), persistent=False)
        self.register_buffer("sin", torch.empty(0), persistent=False)
        self.set_frequencies(settings.frequencies, attention_factor=settings.attention_factor)

    def set_frequencies(self, frequencies=None, *, attention_factor: float = 1.0) -> None:
        """Use ``frequencies`` (``(rotary_dim // 2,)``, radians per token; ``None``: plain
        ``base^(−2i/rotary_dim)``) and ``attention_factor`` from now on, and rebuild the cache.

        Raises:
            ValueError: for frequencies of the wrong shape or ``attention_factor <= 0``.
        """
        freqs = _check_frequencies(frequencies, self.rotary_dim, self.base)
        gain = _check_attention_factor(attention_factor)
        self.frequencies = None if frequencies is None else freqs
        self.attention_factor = gain
        angles = np.arange(self.max_len, dtype=np.float64)[:, None] * self.position_scale * freqs
        device = self.cos.device
        self.cos = torch.from_numpy(np.cos(angles) * gain).float().to(device)
        self.sin = torch.from_numpy(np.sin(angles) * gain).float().to(device)

    def forward(self, x: torch.Tensor, positions: torch.Tensor | None = None) -> torch.Tensor:
        if not isinstance(x, torch.Tensor) or not x.is_floating_point():
            raise TypeError(f"x must be a floating torch.Tensor, got {getattr(x, 'dtype', type(x).__name__)}")
        if x.ndim < 2 or x.shape[-1] != self.head_dim:
            raise ValueError(f"x must have shape (..., seq_len, {self.head_dim}), got {tuple(x.shape)}")
        if positions is None and x.shape[-2] <= self.max_len and x.dtype != torch.float64:
            seq_len = x.shape[-2]
            return _rotate(x, self.cos[:seq_len], self.sin[:seq_len], self.layout, self.rotary_dim)
        pos = _check_positions(positions, x.shape[:-1], x.device)
        in_cache = pos.numel() == 0 or (int(pos.min()) >= 0 and int(pos.max()) < self.max_len)
        if not in_cache or x.dtype == torch.float64:
            return apply_rope(x, pos, **self.settings().as_keywords())
        return _rotate(x, self.cos[pos], self.sin[pos], self.layout, self.rotary_dim)

    def settings(self) -> _RotarySettings:
        """The current keywords, as :func:`apply_rope` takes them."""
        return _RotarySettings(
            **{field.name: getattr(self, field.name) for field in dataclasses.fields(_RotarySettings)}
        )

    def extra_repr(self) -> str:
        return (
            f"head_dim={self.head_dim}, max_len={self.max_len}, base={self.base:g}, layout={self.layout!r}, "
            f"position_scale={self.position_scale:g}, rotary_dim={self.rotary_dim}"
            + ("" if self.frequencies is None else ", frequencies=custom")
            + ("" if self.attention_factor == 1.0 else f", attention_factor={self.attention_factor:g}")
        )


class RotaryMultiheadAttention(MultiheadSelfAttention):
    """Multi-head self-attention with RoPE on queries and keys (RoFormer §3.4, eq. 16).

    Each head's queries and keys are rotated by their token's position before the dot
    product, so ``q_m · k_n`` depends on the relative offset ``n − m``; values are not rotated.
    No parameters are added. Position methods registry name: ``"rope"``.

    Args:
        d_model, num_heads, causal: as in :class:`~posviz.attention.MultiheadSelfAttention`;
            ``d_model // num_heads`` must be even.
        max_len: cached positions of the :class:`RotaryEmbedding` (longer inputs still work).
        **rotary: ``base``, ``layout``, ``position_scale``, ``rotary_dim``, ``frequencies``,
            ``attention_factor``, as in :func:`apply_rope` (change the last two later with
            ``self.rotary.set_frequencies``).

    Shapes:
        As :class:`~posviz.attention.MultiheadSelfAttention`; ``positions`` (``(batch, seq_len)``) are
        the positions used for the rotation.

    Raises:
        ValueError: if the head dimension is odd, or as the parent class.
    """

    def __init__(
        self,
        d_model: int,
        num_heads: int,
        *,
        causal: bool = False,
        max_len: int = 2048,
        **rotary,
    ) -> None:
        super().__init__(d_model, num_heads, causal=causal)
        self.rotary = RotaryEmbedding(self.head_dim, max_len, **rotary)

    def attend(self, q, k, v, *, mask, positions):
        pos = positions[:, None, :]  # (batch, 1, seq_len): the same positions for every head
        return scaled_dot_product_attention(self.rotary(q, pos), self.rotary(k, pos), v, mask=mask)
