"""Input validation shared by the public functions (internal)."""

from __future__ import annotations

import numbers


def check_int(name: str, value: object, *, minimum: int | None = None) -> int:
    """Return ``value`` as ``int``; ``TypeError`` if it is not an integer, ``ValueError`` if too small."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an int, got {type(value).__name__} ({value!r})")
    if minimum is not None and value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    return int(value)


def check_positive_float(name: str, value: object) -> float:
    """Return ``value`` as ``float``; ``TypeError`` if not a real number, ``ValueError`` unless > 0."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__} ({value!r})")
    value = float(value)
    if not value > 0 or value == float("inf"):
        raise ValueError(f"{name} must be a finite number > 0, got {value}")
    return value


def check_choice(name: str, value: object, choices: tuple[str, ...]) -> str:
    """Return ``value`` if it is one of ``choices``, else raise ``ValueError`` listing them."""
    if value not in choices:
        raise ValueError(f"{name} must be one of {choices}, got {value!r}")
    return value  # type: ignore[return-value]


def check_head_dim(head_dim: object, name: str = "head_dim") -> int:
    """Return an even ``head_dim >= 2`` as ``int`` (RoPE rotates pairs of dimensions)."""
    head_dim = check_int(name, head_dim, minimum=2)
    if head_dim % 2:
        raise ValueError(f"{name} must be even (RoPE rotates pairs of dimensions), got {head_dim}")
    return head_dim
