"""The position-method registry: how each method plugs into :class:`~posviz.models.TinyTransformer`.

A position method is either

* an *input* method: a module added to the token embeddings before the first block
  (``"sinusoidal"``, ``"learned"``), with plain attention in every block; or
* an *attention* method: a :class:`~posviz.attention.MultiheadSelfAttention` subclass used in
  every block, with nothing added to the input. An attention method may also build one
  ``shared`` module per model that every block's attention receives (``"t5"``: one bias table
  for all layers, as in T5).

The built-in methods are registered here in the order the course introduces them, which is
also the order of :data:`BUILTIN_METHODS`, of notebook 06's tables and of its legends; each
carries its figure colour (Okabe–Ito palette, colour-blind safe) and its display name in Korean and
English (:func:`method_label`: figures name a method as the prose does, ``"사인파"`` / ``"sinusoidal"``,
never by its registry key alone). Adding a method is one module (its attention class or input
layer) plus one :func:`register_position_method` call.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass

from torch import nn

from ._checks import check_int
from .alibi import ALiBiMultiheadAttention
from .attention import MultiheadSelfAttention
from .encodings import LearnedPositionalEmbedding, SinusoidalPositionalEncoding
from .relative import DEFAULT_MAX_RELATIVE_POSITION, RelativeMultiheadAttention
from .rope import RotaryMultiheadAttention
from .t5 import (
    T5_MAX_DISTANCE,
    T5_NUM_BUCKETS,
    T5MultiheadAttention,
    T5RelativePositionBias,
    check_bucket_sizes,
)

__all__ = [
    "BUILTIN_METHODS",
    "POSITION_METHODS",
    "PositionMethod",
    "method_color",
    "method_label",
    "register_position_method",
    "shaw_method",
    "t5_method",
]


@dataclass(frozen=True)
class PositionMethod:
    """How a position method plugs into :class:`~posviz.models.TinyTransformer`.

    Attributes:
        name: registry key, e.g. ``"sinusoidal"``.
        input_layer: ``(d_model, max_len) -> nn.Module`` adding positions to the input, or ``None``.
        attention: ``(d_model, num_heads, causal, max_len) -> MultiheadSelfAttention``, called with
            a fifth argument, the shared module, when ``shared`` is set; ``None`` means plain
            :class:`~posviz.attention.MultiheadSelfAttention`.
        description: one line for tables.
        shared: ``(d_model, num_heads, causal, max_len) -> nn.Module`` built once per model and
            passed to every block's ``attention`` (parameters shared across layers), or ``None``.
        color: the method's colour in figures (any matplotlib colour), or ``None`` for the
            axes' next colour.
        label: ``(Korean, English)`` display name in figures (:func:`method_label`), as the
            course's prose names the method; ``None`` shows ``name`` in both languages.
    """

    name: str
    input_layer: Callable[[int, int], nn.Module] | None
    attention: Callable[..., MultiheadSelfAttention] | None
    description: str = ""
    shared: Callable[[int, int, bool, int], nn.Module] | None = None
    color: str | None = None
    label: tuple[str, str] | None = None

    def __post_init__(self) -> None:
        if self.label is not None and (
            not isinstance(self.label, tuple)
            or len(self.label) != 2
            or not all(isinstance(part, str) and part.strip() for part in self.label)
        ):
            raise ValueError(
                f"label must be a (Korean, English) pair of non-empty strings, got {self.label!r}"
            )


#: Every registered method by name, built-in ones first, in course order.
POSITION_METHODS: dict[str, PositionMethod] = {}


def register_position_method(method: PositionMethod) -> PositionMethod:
    """Add ``method`` to :data:`POSITION_METHODS` and return it.

    Raises:
        TypeError: if ``method`` is not a :class:`PositionMethod`.
        ValueError: if its name is already registered.
    """
    if not isinstance(method, PositionMethod):
        raise TypeError(f"method must be a PositionMethod, got {type(method).__name__}")
    if method.name in POSITION_METHODS:
        raise ValueError(f"position method {method.name!r} is already registered")
    POSITION_METHODS[method.name] = method
    return method


def method_color(name: str) -> str | None:
    """The registered colour of position method ``name`` (``None`` if it has none or is not registered)."""
    method = POSITION_METHODS.get(name)
    return None if method is None else method.color


def method_label(name: str, lang: str | None = None) -> str:
    """The display name of position method ``name`` in figures, as the course's prose names it.

    ``"sinusoidal"`` → "사인파" / "sinusoidal", ``"learned"`` → "학습된 위치 임베딩" / "learned",
    ``"none"`` → "없음(NoPE)" / "none (NoPE)"; Shaw, T5, RoPE and ALiBi keep their names in both
    languages. In the figure language of :func:`posviz.t` (a name that is the same in both
    languages is not doubled in ``"both"``), or in ``lang`` (``"ko"`` or ``"en"``) when given. A
    method registered without a ``label`` (or not registered) is shown by its ``name``.

    Raises:
        ValueError: for a ``lang`` other than ``None``, ``"ko"`` and ``"en"``.
    """
    if lang not in (None, "ko", "en"):
        raise ValueError(f"lang must be None, 'ko' or 'en', got {lang!r}")
    method = POSITION_METHODS.get(name)
    if method is None or method.label is None:
        return name
    ko, en = method.label
    if lang is not None:
        return ko if lang == "ko" else en
    if ko == en:
        return en
    from .style import t

    return t(ko, en)


def _shaw_attention(
    d_model: int, num_heads: int, causal: bool, max_len: int, *, k: int, use_keys: bool, use_values: bool
) -> RelativeMultiheadAttention:
    return RelativeMultiheadAttention(d_model, num_heads, k, causal=causal, use_keys=use_keys, use_values=use_values)


def shaw_method(
    max_relative_position: int = DEFAULT_MAX_RELATIVE_POSITION,
    *,
    use_keys: bool = True,
    use_values: bool = True,
    name: str | None = None,
    color: str | None = None,
    label: tuple[str, str] | None = None,
) -> PositionMethod:
    """A :class:`PositionMethod` for Shaw relative attention with clipping distance ``k``.

    Pass the result as ``TinyTransformer(..., position=shaw_method(4))``; it is not registered
    (``POSITION_METHODS["shaw"]`` is ``shaw_method(DEFAULT_MAX_RELATIVE_POSITION)``). The factory
    ignores ``max_len``: the tables have ``2k + 1`` rows whatever the length.

    Args:
        max_relative_position: the clipping distance ``k``, ``>= 0``.
        use_keys, use_values: which terms to learn (Shaw et al. 2018, Table 3 ablation).
        name: registry-style name; default ``"shaw_k{k}"`` plus ``"_keys"`` / ``"_values"`` /
            ``"_off"`` for ablations.
        color: figure colour.
        label: ``(Korean, English)`` figure name (:func:`method_label`); default ``name``.

    Raises:
        TypeError, ValueError: for a ``k`` that is not an integer ``>= 0``.
    """
    k = check_int("max_relative_position", max_relative_position, minimum=0)
    use_keys, use_values = bool(use_keys), bool(use_values)
    suffix = {(True, True): "", (True, False): "_keys", (False, True): "_values", (False, False): "_off"}
    terms = {
        (True, True): "keys and values",
        (True, False): "keys only",
        (False, True): "values only",
        (False, False): "no terms",
    }
    return PositionMethod(
        name if name is not None else f"shaw_k{k}" + suffix[(use_keys, use_values)],
        None,
        functools.partial(_shaw_attention, k=k, use_keys=use_keys, use_values=use_values),
        f"Shaw relative position representations, k={k}, {terms[(use_keys, use_values)]} (Shaw et al. 2018)",
        color=color,
        label=label,
    )


def _t5_shared_table(
    d_model: int, num_heads: int, causal: bool, max_len: int, *, num_buckets: int, max_distance: int
) -> T5RelativePositionBias:
    return T5RelativePositionBias(num_heads, num_buckets, max_distance, bidirectional=not causal, init_std=d_model**-0.5)


def _t5_attention(
    d_model: int,
    num_heads: int,
    causal: bool,
    max_len: int,
    shared: T5RelativePositionBias | None = None,
    *,
    num_buckets: int,
    max_distance: int,
) -> T5MultiheadAttention:
    return T5MultiheadAttention(
        d_model, num_heads, causal=causal, num_buckets=num_buckets, max_distance=max_distance, relative_bias=shared
    )


def t5_method(
    num_buckets: int = T5_NUM_BUCKETS,
    max_distance: int = T5_MAX_DISTANCE,
    *,
    share_across_layers: bool = True,
    name: str | None = None,
    color: str | None = None,
    label: tuple[str, str] | None = None,
) -> PositionMethod:
    """A :class:`PositionMethod` for T5's relative bias.

    ``POSITION_METHODS["t5"]`` is ``t5_method()`` (32 buckets, max distance 128, one table shared
    by all layers, as in T5). Pass another as ``TinyTransformer(..., position=t5_method(8, 16))``.
    The factory ignores ``max_len``: the table has ``num_buckets`` rows whatever the length.

    Args:
        num_buckets, max_distance: as for :func:`posviz.t5_relative_position_bucket` (checked for
            the bidirectional case, which needs an even ``num_buckets >= 4``).
        share_across_layers: ``True`` (T5): one table for the model; ``False``: one per layer.
        name: registry-style name; default ``"t5_b{num_buckets}_d{max_distance}"`` plus
            ``"_per_layer"`` when not shared.
        color: figure colour.
        label: ``(Korean, English)`` figure name (:func:`method_label`); default ``name``.

    Raises:
        TypeError, ValueError: for bad sizes.
    """
    check_bucket_sizes(True, num_buckets, max_distance)
    num_buckets, max_distance = int(num_buckets), int(max_distance)
    if name is None:
        name = f"t5_b{num_buckets}_d{max_distance}" + ("" if share_across_layers else "_per_layer")
    sizes = {"num_buckets": num_buckets, "max_distance": max_distance}
    return PositionMethod(
        name,
        None,
        functools.partial(_t5_attention, **sizes),
        f"T5 relative bias: a learned scalar per (log-spaced distance bucket, head), {num_buckets} buckets "
        f"up to {max_distance}, {'shared by all layers' if share_across_layers else 'one table per layer'} "
        "(Raffel et al. 2020)",
        shared=functools.partial(_t5_shared_table, **sizes) if share_across_layers else None,
        color=color,
        label=label,
    )


def _rope_attention(d_model: int, num_heads: int, causal: bool, max_len: int) -> RotaryMultiheadAttention:
    return RotaryMultiheadAttention(d_model, num_heads, causal=causal, max_len=max_len)


def _alibi_attention(d_model: int, num_heads: int, causal: bool, max_len: int) -> ALiBiMultiheadAttention:
    return ALiBiMultiheadAttention(d_model, num_heads, causal=causal)


for _method in (
    # Display names as notebook 06 names the methods (its summary table, glossary.tsv).
    PositionMethod(
        "none",
        None,
        None,
        "no position information (NoPE)",
        color="#000000",
        label=("없음(NoPE)", "none (NoPE)"),
    ),
    PositionMethod(
        "sinusoidal",
        lambda d_model, max_len: SinusoidalPositionalEncoding(d_model, max_len),
        None,
        "fixed sin/cos table added to the input (Vaswani et al. 2017)",
        color="#E69F00",
        label=("사인파", "sinusoidal"),
    ),
    PositionMethod(
        "learned",
        lambda d_model, max_len: LearnedPositionalEmbedding(max_len, d_model),
        None,
        "trainable table added to the input (BERT, GPT-2)",
        color="#56B4E9",
        label=("학습된 위치 임베딩", "learned"),
    ),
    # Shaw et al. 2018 with k = 16; for another k pass shaw_method(k) as ``position``.
    shaw_method(DEFAULT_MAX_RELATIVE_POSITION, name="shaw", color="#009E73", label=("Shaw", "Shaw")),
    # T5 (Raffel et al. 2020): 32 buckets up to distance 128, one table for all layers.
    t5_method(name="t5", color="#0072B2", label=("T5", "T5")),
    PositionMethod(
        "rope",
        None,
        _rope_attention,
        "queries and keys rotated by position inside attention (RoPE, Su et al. 2021)",
        color="#D55E00",
        label=("RoPE", "RoPE"),
    ),
    PositionMethod(
        "alibi",
        None,
        _alibi_attention,
        "fixed linear distance penalty on the attention logits (Press et al. 2022)",
        color="#CC79A7",
        label=("ALiBi", "ALiBi"),
    ),
):
    register_position_method(_method)
del _method

#: The seven built-in methods, in the order the course introduces them.
BUILTIN_METHODS: tuple[str, ...] = tuple(POSITION_METHODS)
