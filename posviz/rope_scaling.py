"""RoPE scaling: the context-extension rules of PI, NTK-aware, dynamic NTK, YaRN and Llama 3.

(``rope_scaling`` is the name Hugging Face and Llama configurations give these settings.)

A RoPE model trained at ``L₀`` tokens is run at ``L = s · L₀`` tokens by changing the per-pair
frequencies ``θ_i`` (and, for YaRN, by scaling cos/sin). Every rule is one branch of
:func:`scaled_rope_frequencies`; :func:`set_rope_frequencies` puts the result into every
:class:`~posviz.rope.RotaryEmbedding` of a model, so notebooks and experiments run each rule
through the same :func:`~posviz.rope.apply_rope` code path.

Sources:

* Su et al. 2021, RoFormer, https://arxiv.org/abs/2104.09864 — ``θ_i = b^(−2i/d)`` (eq. 15).
* Chen et al. 2023, "Extending Context Window of Large Language Models via Positional
  Interpolation", https://arxiv.org/abs/2306.15595 — PI, positions × ``1/s`` (eq. 4), which is
  the same as ``θ_i / s``.
* bloc97 2023 ("NTK-aware scaled RoPE", Reddit r/LocalLLaMA), written down in Peng et al. 2023,
  "YaRN: Efficient Context Window Extension of Large Language Models",
  https://arxiv.org/abs/2309.00071 — NTK-aware base ``b · s^(d/(d−2))`` (§3.1), dynamic scaling
  (§3.3), NTK-by-parts (§3.2, eq. 17–18) and the attention temperature ``√(1/t) = 0.1 ln s + 1``
  (§3.4, eq. 22), with the reference code github.com/jquesnelle/yarn (``find_correction_range``).
* Meta Llama 3.1 (``apply_scaling`` in github.com/meta-llama/llama-models; Llama Team 2024,
  "The Llama 3 Herd of Models", https://arxiv.org/abs/2407.21783).
"""

from __future__ import annotations

import math

import numpy as np
from torch import nn

from ._checks import check_choice, check_head_dim, check_int, check_positive_float
from .rope import RotaryEmbedding, rope_frequencies

__all__ = [
    "CONTEXT_RULES",
    "ntk_scaled_base",
    "scaled_rope_frequencies",
    "set_rope_frequencies",
    "yarn_attention_factor",
    "yarn_correction_range",
]

#: The rules of :func:`scaled_rope_frequencies`, in the order the course introduces them.
CONTEXT_RULES = ("none", "linear", "ntk", "dynamic", "yarn", "llama3")

_NEEDS_CONTEXT = ("dynamic", "yarn", "llama3")


def _check_beta(name: str, value: object) -> float:
    return check_positive_float(name, value)


def _check_base(value: object) -> float:
    base = check_positive_float("base", value)
    if not base > 1:
        raise ValueError(f"base must be > 1 (θ_i = b^(−2i/d) must fall with the pair index i), got {base:g}")
    return base


def ntk_scaled_base(base: float, head_dim: int, factor: float) -> float:
    """The "NTK-aware" base ``b' = b · s^(d / (d − 2))`` for a context ``s`` times longer.

    The fastest pair (``i = 0``) keeps its frequency exactly, while the slowest pair
    (``i = d/2 − 1``) is slowed by exactly ``s`` (as position interpolation would); pairs in
    between are slowed by ``s^(2i/(d−2))``. (bloc97, 2023; written down in the YaRN paper,
    Peng et al. 2023, arXiv:2309.00071.) This is the one implementation of the rule:
    :func:`scaled_rope_frequencies` uses it for ``rule="ntk"`` and ``"dynamic"``.

    Args:
        base: original base ``b > 0``.
        head_dim: even head dimension ``d >= 4``.
        factor: context extension factor ``s > 0`` (e.g. 4 for 2k → 8k tokens).

    Returns:
        The new base as a ``float``.

    Raises:
        ValueError: for ``head_dim < 4`` or odd, or non-positive ``base``/``factor``.
    """
    base = check_positive_float("base", base)
    head_dim = check_head_dim(head_dim)
    if head_dim < 4:
        raise ValueError(f"head_dim must be >= 4 for NTK-aware scaling, got {head_dim}")
    factor = check_positive_float("factor", factor)
    return base * factor ** (head_dim / (head_dim - 2))


def yarn_correction_range(
    head_dim: int,
    *,
    base: float = 10000.0,
    original_context: int,
    beta_fast: float = 32.0,
    beta_slow: float = 1.0,
) -> tuple[int, int]:
    """The pair indices ``(low, high)`` between which YaRN ramps from "keep" to "interpolate".

    Pair ``i`` turns ``r_i = L₀ / λ_i = L₀ θ_i / (2π)`` times in ``L₀`` tokens. The index where
    ``r = β`` solves ``2π b^(2i/d) = L₀ / β``: ``i(β) = d · ln(L₀ / (2π β)) / (2 ln b)``. As in the
    YaRN reference code (``find_correction_range``, also Hugging Face ``_compute_yarn_parameters``
    with ``truncate=True``) ``low = max(floor(i(beta_fast)), 0)`` and
    ``high = min(ceil(i(beta_slow)), d − 1)``.

    Args:
        head_dim: even head dimension ``d >= 2``.
        base: frequency base ``b > 1``.
        original_context: the training context ``L₀`` in tokens, ``>= 1``.
        beta_fast: pairs turning more than this many times in ``L₀`` are kept (YaRN's ``β``, 32).
        beta_slow: pairs turning fewer times than this are interpolated (YaRN's ``α``, 1).

    Returns:
        ``(low, high)`` as ints; pairs ``i <= low`` keep ``θ_i``, pairs ``i >= high`` get ``θ_i / s``.

    Raises:
        ValueError: for a bad ``head_dim``, ``base <= 1``, a bad ``original_context`` or
            ``beta_fast <= beta_slow``.
    """
    head_dim = check_head_dim(head_dim)
    base = _check_base(base)
    context = check_int("original_context", original_context, minimum=1)
    fast, slow = _check_beta("beta_fast", beta_fast), _check_beta("beta_slow", beta_slow)
    if not fast > slow:
        raise ValueError(f"beta_fast must be > beta_slow, got beta_fast={fast:g}, beta_slow={slow:g}")

    def index(turns: float) -> float:
        return head_dim * math.log(context / (turns * 2 * math.pi)) / (2 * math.log(base))

    return max(math.floor(index(fast)), 0), min(math.ceil(index(slow)), head_dim - 1)


def yarn_attention_factor(factor: float) -> float:
    """YaRN's cos/sin multiplier ``√(1/t) = 0.1 · ln s + 1`` for ``s > 1``, else 1 (YaRN eq. 22).

    Multiplying both cos and sin (queries and keys) by it multiplies every attention logit by
    its square, ``1/t``: a slightly sharper softmax for the longer context.

    Raises:
        ValueError / TypeError: if ``factor`` is not a number ``> 0``.
    """
    factor = check_positive_float("factor", factor)
    return 0.1 * math.log(factor) + 1.0 if factor > 1 else 1.0


def scaled_rope_frequencies(
    head_dim: int,
    *,
    base: float = 10000.0,
    rule: str = "none",
    factor: float = 1.0,
    original_context: int | None = None,
    seq_len: int | None = None,
    beta_fast: float = 32.0,
    beta_slow: float = 1.0,
    low_freq_factor: float = 1.0,
    high_freq_factor: float = 4.0,
    attention_factor: float | None = None,
) -> tuple[np.ndarray, float]:
    """Per-pair RoPE frequencies ``θ'_i`` for running a model past its training context.

    With ``θ_i = b^(−2i/d)`` (pair ``i = 0 … d/2 − 1``), wavelength ``λ_i = 2π/θ_i``,
    ``s = factor`` and ``L₀ = original_context``:

    ============ ================================================================= ======================
    ``rule``     rule                                                              Hugging Face
    ============ ================================================================= ======================
    ``"none"``   ``θ_i`` (RoFormer eq. 15)                                          ``"default"``
    ``"linear"`` ``θ_i / s``: position interpolation (Chen et al. 2023, eq. 4)      ``"linear"``
    ``"ntk"``    ``θ_i`` with base ``b' = b · s^(d/(d−2))`` (bloc97; YaRN §3.1):    (none; ``"dynamic"``
                 the fastest pair is kept, the slowest divided by ``s``,            at ``L = s·L₀`` with
                 pair ``i`` by ``s^(2i/(d−2))``                                     ``factor`` 1)
    ``"dynamic"`` NTK base for the current length ``L = max(seq_len, L₀)``:          ``"dynamic"``
                 ``b · (s·L/L₀ − (s − 1))^(d/(d−2))``; at ``L <= L₀`` it is
                 ``θ_i`` itself. With ``factor = 1`` this is YaRN §3.3's
                 ``s = L/L₀``.
    ``"yarn"``   NTK-by-parts (YaRN §3.2, eq. 20): ``θ'_i = (1 − γ_i) θ_i/s +        ``"yarn"``
                 γ_i θ_i``, with ``γ_i = 1`` for ``i <= low``, 0 for ``i >= high``
                 and linear in ``i`` between (:func:`yarn_correction_range`);
                 attention factor ``0.1 ln s + 1`` (eq. 22)
    ``"llama3"`` ``λ_i < L₀/high_freq_factor``: ``θ_i``; ``λ_i > L₀/low_freq_factor``: ``"llama3"``
                 ``θ_i / s``; between, ``(1 − g) θ_i/s + g θ_i`` with
                 ``g = (L₀/λ_i − low_freq_factor)/(high_freq_factor − low_freq_factor)``
    ============ ================================================================= ======================

    YaRN's ramp: the paper writes ``γ`` as linear in the turn count ``r = L₀/λ`` between
    ``α = beta_slow`` and ``β = beta_fast`` (eq. 17–18); its reference code, Hugging Face and this
    function ramp linearly in the pair index between the rounded boundary indices instead (what
    released YaRN models use; github.com/jquesnelle/yarn issue 60). Where no pair turns
    ``beta_fast`` times in ``L₀`` (small ``L₀``), ``low`` is clamped to 0, so pair 0 is still kept.

    Hugging Face names (``config.rope_parameters``): ``rule`` → ``rope_type``, ``base`` →
    ``rope_theta``, ``factor`` → ``factor``, ``original_context`` →
    ``original_max_position_embeddings`` (for ``"dynamic"``: ``max_position_embeddings``),
    ``seq_len`` → the ``seq_len`` argument of ``ROPE_INIT_FUNCTIONS[rope_type]``, and
    ``beta_fast``, ``beta_slow``, ``low_freq_factor``, ``high_freq_factor`` keep their names. Keys
    a rule does not use are ignored, as there.

    Args:
        head_dim: even head (or rotary) dimension ``d``; ``>= 4`` for ``"ntk"`` and ``"dynamic"``.
        base: frequency base ``b > 1`` (10 000 in RoFormer and Llama 2, 500 000 in Llama 3).
        rule: one of :data:`CONTEXT_RULES`.
        factor: extension factor ``s >= 1`` (target length / training length).
        original_context: training context ``L₀`` in tokens; required by ``"dynamic"``,
            ``"yarn"`` and ``"llama3"``.
        seq_len: current sequence length in tokens (``"dynamic"`` only; default ``L₀``).
        beta_fast, beta_slow: YaRN's turn-count boundaries (``β = 32``, ``α = 1``).
        low_freq_factor, high_freq_factor: Llama 3.1's band edges (1 and 4 in Llama 3.1).
        attention_factor: ``"yarn"`` only: the cos/sin multiplier ``> 0`` instead of YaRN eq. 22's
            ``0.1 ln s + 1`` (Hugging Face ``rope_parameters["attention_factor"]``); ``1.0`` gives
            NTK-by-parts without the attention temperature.

    Returns:
        ``(frequencies, attention_factor)``: float64 array of shape ``(head_dim // 2,)`` in radians
        per token, and the float that multiplies cos and sin (1.0 except for ``"yarn"``).

    Raises:
        ValueError: for an unknown ``rule``; an odd or too small ``head_dim``; ``factor < 1``;
            ``base <= 1``; a beta, a band edge or ``attention_factor`` ``<= 0``; ``beta_fast <= beta_slow``;
            ``high_freq_factor <= low_freq_factor``; or a missing ``original_context`` where the
            rule needs it.
        TypeError: for non-numeric arguments.
    """
    check_choice("rule", rule, CONTEXT_RULES)
    head_dim = check_head_dim(head_dim)
    base = _check_base(base)
    s = check_positive_float("factor", factor)
    if s < 1:
        raise ValueError(f"factor must be >= 1 (s = target length / training length), got {s:g}")
    if rule in _NEEDS_CONTEXT and original_context is None:
        raise ValueError(f"rule={rule!r} needs original_context (the training length L0 in tokens)")
    context = None if original_context is None else check_int("original_context", original_context, minimum=1)
    theta = rope_frequencies(head_dim, base)
    if rule == "none":
        return theta, 1.0
    if rule == "linear":
        return theta / s, 1.0
    if rule in ("ntk", "dynamic"):
        if rule == "ntk":
            ratio = s
        else:
            length = context if seq_len is None else max(check_int("seq_len", seq_len, minimum=1), context)
            ratio = s * length / context - (s - 1)
        return rope_frequencies(head_dim, ntk_scaled_base(base, head_dim, ratio)), 1.0
    if rule == "yarn":
        low, high = yarn_correction_range(
            head_dim, base=base, original_context=context, beta_fast=beta_fast, beta_slow=beta_slow
        )
        span = high - low if high > low else 0.001  # the reference code's guard against 0/0
        ramp = np.clip((np.arange(head_dim // 2) - low) / span, 0.0, 1.0)  # 0: keep, 1: interpolate
        att = yarn_attention_factor(s) if attention_factor is None else check_positive_float("attention_factor", attention_factor)
        return theta * (1 - ramp) + theta / s * ramp, att
    # llama3
    low_f = check_positive_float("low_freq_factor", low_freq_factor)
    high_f = check_positive_float("high_freq_factor", high_freq_factor)
    if not high_f > low_f:
        raise ValueError(f"high_freq_factor must be > low_freq_factor, got {high_f:g} <= {low_f:g}")
    wavelength = 2 * np.pi / theta
    keep = np.clip((context / wavelength - low_f) / (high_f - low_f), 0.0, 1.0)  # 1: keep, 0: divide by s
    return theta * keep + theta / s * (1 - keep), 1.0


def set_rope_frequencies(model: nn.Module, frequencies=None, attention_factor: float | None = None, **settings) -> int:
    """Give every :class:`~posviz.rope.RotaryEmbedding` in ``model`` new frequencies, in place.

    Either pass ``frequencies`` (array ``(rotary_dim // 2,)``) and ``attention_factor`` (default
    1), or keyword arguments of :func:`scaled_rope_frequencies` (``rule=``, ``factor=``, …, and
    ``attention_factor=`` for ``"yarn"``), which are evaluated for each module's own
    ``rotary_dim`` and ``base``. ``set_rope_frequencies(model, rule="none")`` restores plain
    RoPE. Weights are not touched.

    Returns:
        The number of rotary modules changed.

    Raises:
        ValueError: if both ``frequencies`` and rule keywords are given, if ``attention_factor``
            is given with neither frequencies nor a rule other than ``"none"``, or as
            :func:`scaled_rope_frequencies` / :meth:`RotaryEmbedding.set_frequencies`.
    """
    if frequencies is not None and settings:
        raise ValueError("pass either frequencies (and attention_factor) or the keywords of a rule, not both")
    plain = frequencies is None and settings.get("rule", "none") == "none"
    if plain and attention_factor is not None:
        raise ValueError("attention_factor needs frequencies or a rule such as rule='yarn'; plain RoPE has none")
    count = 0
    for module in model.modules():
        if isinstance(module, RotaryEmbedding):
            if plain:
                freqs, factor = None, 1.0  # plain RoPE again (base^(-2i/rotary_dim))
            elif frequencies is None:
                extra = {} if attention_factor is None else {"attention_factor": attention_factor}
                freqs, factor = scaled_rope_frequencies(module.rotary_dim, base=module.base, **settings, **extra)
            else:
                freqs, factor = frequencies, 1.0 if attention_factor is None else attention_factor
            module.set_frequencies(freqs, attention_factor=factor)
            count += 1
    return count
