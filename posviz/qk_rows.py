"""The query/key row order of a checkpoint: llama GGUF (Meta) interleaved pairs <-> Hugging Face halves.

Meta's Llama checkpoints, and GGUF files of llama.cpp's ``llama`` architecture made from them,
rotate RoPE pairs ``(2i, 2i+1)`` of each head (the interleaved layout, llama.cpp's
``LLAMA_ROPE_TYPE_NORM``); Hugging Face's Llama code rotates ``(i, i + d/2)`` (the half
layout). Not every GGUF file is interleaved: llama.cpp runs architectures such as Qwen2/3, Gemma
and Phi-2 with NEOX (half) RoPE, and their converter stores the q/k rows unpermuted, so these
functions do not apply to them. Converting a checkpoint permutes the output rows of the query and key projections per
head so that every ``q·k`` score stays the same (:func:`posviz.interleaved_to_half`). Notebook 07
teaches this step; :func:`posviz.pretrained.load_smollm2` applies it.
"""

from __future__ import annotations

import numpy as np
import torch

from ._checks import check_int
from .rope import interleaved_to_half

__all__ = ["permute_qk_rows", "unpermute_qk_rows"]


def _check_qk_weight(weight: object, num_heads: object) -> tuple[torch.Tensor, int, int]:
    if not isinstance(weight, torch.Tensor) or not weight.is_floating_point():
        raise TypeError(f"weight must be a floating torch.Tensor, got {getattr(weight, 'dtype', type(weight).__name__)}")
    num_heads = check_int("num_heads", num_heads, minimum=1)
    if weight.ndim not in (1, 2):
        raise ValueError(f"weight must have shape (num_heads * head_dim, in_features) or (num_heads * head_dim,), got {tuple(weight.shape)}")
    rows = weight.shape[0]
    if rows % num_heads:
        raise ValueError(f"weight has {rows} rows, which do not divide into num_heads={num_heads} heads")
    head_dim = rows // num_heads
    if head_dim % 2:
        raise ValueError(f"head_dim = {rows} / {num_heads} = {head_dim} must be even (RoPE rotates pairs)")
    return weight, num_heads, head_dim


def _permute_rows(weight: torch.Tensor, num_heads: int, head_dim: int, perm: np.ndarray) -> torch.Tensor:
    index = torch.as_tensor(perm, device=weight.device)
    per_head = weight.reshape(num_heads, head_dim, *weight.shape[1:])
    return per_head.index_select(1, index).reshape(weight.shape)


def unpermute_qk_rows(weight: torch.Tensor, num_heads: int) -> torch.Tensor:
    """GGUF/Meta row order of a query or key projection → Hugging Face's order, head by head.

    Meta's Llama code (and llama.cpp's GGUF files of the ``llama`` architecture, which keep it)
    rotates features in interleaved pairs ``(2i, 2i+1)`` of each head; Hugging Face's ``rotate_half`` rotates
    ``(i, i + head_dim/2)``. Converters reorder the output rows of ``W_q`` and ``W_k`` within
    every head by ``perm = interleaved_to_half(head_dim)`` so that the model computes the same
    attention scores with the other layout. With ``W_hf = unpermute_qk_rows(W_gguf, h)`` and
    ``q_gguf = x @ W_gguf.T`` (one head's slice), ``q_hf = q_gguf[..., perm]``, and by
    :func:`~posviz.interleaved_to_half`::

        apply_rope(q_hf, pos, layout="half") == apply_rope(q_gguf, pos, layout="interleaved")[..., perm]

    The same holds for keys; a permutation does not change dot products, so the scores
    ``⟨R_m q, R_n k⟩`` and the attention are identical in both conventions. Forget this step
    and the half-split rotation pairs the wrong features (e.g. ``(2i, 2i+1)`` rows end up
    ``head_dim/2`` apart), which is a different model.

    Args:
        weight: float tensor ``(num_heads · head_dim, in_features)`` (a weight) or
            ``(num_heads · head_dim,)`` (a bias), rows in GGUF/Meta order (a ``llama``-architecture
            GGUF file; NEOX-RoPE architectures such as Qwen2/3 or Gemma are stored unpermuted).
        num_heads: number of heads the rows belong to (query heads for ``W_q``, key/value
            heads for ``W_k`` in grouped-query attention).

    Returns:
        A new tensor of the same shape and dtype, rows in Hugging Face (half-split) order.

    Raises:
        TypeError: if ``weight`` is not a floating tensor or ``num_heads`` not an ``int``.
        ValueError: if ``weight`` is not 1-D/2-D, its rows do not divide into ``num_heads``
            heads, or the head dimension is odd.

    Source: the ``permute`` of Hugging Face's ``convert_llama_weights_to_hf.py`` and its inverse in
    llama.cpp's ``convert_hf_to_gguf.py`` (``LlamaModel.permute``, applied for the llama family
    only; ``llama_model_rope_type`` in ``llama-model.cpp`` picks the RoPE type per architecture); RoFormer eq. 34 (interleaved) vs GPT-NeoX (half).
    """
    weight, num_heads, head_dim = _check_qk_weight(weight, num_heads)
    return _permute_rows(weight, num_heads, head_dim, interleaved_to_half(head_dim))


def permute_qk_rows(weight: torch.Tensor, num_heads: int) -> torch.Tensor:
    """The inverse of :func:`unpermute_qk_rows`: Hugging Face row order → GGUF/Meta order.

    Within each head, rows are reordered by ``half_to_interleaved(head_dim)``, so that
    ``apply_rope(..., layout="interleaved")`` on the result gives the attention scores that
    ``layout="half"`` gives on ``weight``. Arguments, shapes and errors as :func:`unpermute_qk_rows`.
    """
    weight, num_heads, head_dim = _check_qk_weight(weight, num_heads)
    return _permute_rows(weight, num_heads, head_dim, np.argsort(interleaved_to_half(head_dim)))
