"""Checkers of the autograded exercises of notebooks 05b, 07 and 08 (see :mod:`posviz.exercises`).

They follow :mod:`posviz.exercises`' contract: run the learner's function on chosen inputs, compare
with the tested reference, print feedback in the figure language, never raise for the learner's
answer. Import them from :mod:`posviz.exercises` (``posviz.exercises.check_mrope_position_ids``).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch

from ._mistakes import _dynamic_base
from .feedback import _as_array, _call, _check_shape, _compare, _grade, _Text
from .qk_rows import permute_qk_rows, unpermute_qk_rows
from .rope2d import mrope_position_ids
from .rope_scaling import ntk_scaled_base

__all__ = ["check_dynamic_ntk_base", "check_mrope_position_ids", "check_unpermute_qk_rows"]


# --- 05b: dynamic NTK base -------------------------------------------------------------------------



def check_dynamic_ntk_base(fn: Callable[[float, int, float, int, int], object]) -> bool:
    """Check ``fn(base, head_dim, factor, original_context, seq_len) -> float``: dynamic NTK's base at length ``ℓ``.

    The contract is Hugging Face's ``rope_type="dynamic"`` (``_compute_dynamic_ntk_parameters``),
    YaRN §3.3 (Peng et al. 2023, https://arxiv.org/abs/2309.00071): with ``L = max(ℓ, L₀)``,
    ``b' = b · (s·L/L₀ − (s − 1))^(d/(d−2))``, so ``b' = b`` up to the training length and
    ``b' = b · (ℓ/L₀)^(d/(d−2))`` for ``s = 1``; :func:`posviz.scaled_rope_frequencies` with
    ``rule="dynamic"`` uses the same base. Tested at lengths below, at and beyond ``L₀`` with
    ``s`` = 1, 2, 4 and 8 (relative tolerance 1e-6). Catches among others: no clamp at ``ℓ < L₀``,
    ``factor`` ignored, the ``−(s − 1)`` left out, the exponent missing (or turned into 1 by
    integer division ``//``) or inverted, and the length ignored (the fixed NTK base).

    Returns:
        ``True`` if every check passes, else ``False`` (feedback is printed; never raises).
    """
    title = _Text("동적 NTK의 base", "dynamic NTK base")
    section = _Text("05b 노트북 2절(여섯 규칙을 한 그림에) 표의 동적 NTK 행을 다시 보세요: b·(sℓ/L₀ − (s − 1))^(d/(d−2)), ℓ ≤ L₀이면 b 그대로입니다.",
                    "see the dynamic NTK row of the table in notebook 05b, section 2 (Six rules in one figure): b·(sℓ/L₀ − (s − 1))^(d/(d−2)), and b itself for ℓ ≤ L₀.")
    cases = ((10000.0, 16, 1.0, 64, 256), (10000.0, 16, 4.0, 64, 512), (10000.0, 16, 1.0, 64, 32),
             (500000.0, 128, 8.0, 8192, 65536), (10000.0, 64, 2.0, 4096, 4096), (10000.0, 16, 4.0, 64, 100))

    def run() -> None:
        for base, d, s, context, ell in cases:
            label = f"base={base:g}, head_dim={d}, factor={s:g}, original_context={context}, seq_len={ell}"
            got = _as_array(_call(fn, base, d, s, context, ell, label=label), label).reshape(-1)
            _check_shape(got, (1,), label)
            expected = np.array([_dynamic_base(base, d, s, context, ell)])
            variants = [
                (np.array([_dynamic_base(base, d, s, context, ell, clamp=False)]),
                 _Text("ℓ < L₀에서 base를 줄였습니다: 학습 길이보다 짧으면 base를 바꾸지 않습니다.", "the base shrinks for ℓ < L₀: below the training length it must stay b."),
                 _Text("길이를 L = max(ℓ, L₀)로 두세요.", "use the length L = max(ℓ, L₀).")),
                (np.array([_dynamic_base(base, d, 1.0, context, ell)]),
                 _Text("factor(s)를 쓰지 않고 ℓ/L₀만 썼습니다.", "factor (s) is ignored: only ℓ/L₀ is used."),
                 _Text("Hugging Face 식의 비율은 s·L/L₀ − (s − 1)입니다. s = 1일 때만 L/L₀입니다.", "Hugging Face's ratio is s·L/L₀ − (s − 1); it is L/L₀ only for s = 1.")),
                (np.array([_dynamic_base(base, d, s, context, ell, shift=False)]),
                 _Text("−(s − 1)을 빠뜨렸습니다: ℓ = L₀에서 비율이 1이 아니라 s가 됩니다.", "the −(s − 1) is missing: at ℓ = L₀ the ratio becomes s instead of 1."),
                 _Text("비율 s·L/L₀ − (s − 1)은 L = L₀에서 정확히 1입니다.", "the ratio s·L/L₀ − (s − 1) is exactly 1 at L = L₀.")),
                (np.array([_dynamic_base(base, d, s, context, ell, exponent=1.0)]),
                 _Text("결과가 b·비율과 같습니다: 지수 d/(d−2)가 빠졌거나, 정수 나눗셈(//) 때문에 지수가 1이 되었습니다.",
                       "the result equals b·ratio: the exponent d/(d−2) is missing, or integer division (//) made it 1."),
                 _Text("지수는 d / (d − 2)입니다(나눗셈은 /).", "the exponent is d / (d − 2) (divide with /).")),
                (np.array([_dynamic_base(base, d, s, context, ell, exponent=(d - 2) / d)]),
                 _Text("지수가 뒤집혔습니다: (d−2)/d.", "the exponent is inverted: (d−2)/d."),
                 _Text("가장 느린 짝의 주파수 b^(−(d−2)/d)가 원래 값의 정확히 1/비율이 되도록 지수를 정하세요.",
                       "choose the exponent so that the slowest pair's frequency b^(−(d−2)/d) becomes exactly 1/ratio of what it was.")),
                (np.array([ntk_scaled_base(base, d, s)]),
                 _Text("길이 ℓ을 쓰지 않았습니다: 고정 배율 s의 NTK-aware base입니다.", "the length ℓ is not used: this is the NTK-aware base for the fixed factor s."),
                 _Text("동적 NTK는 현재 길이 ℓ에 맞춰 base를 다시 계산합니다.", "dynamic NTK recomputes the base for the current length ℓ.")),
            ]
            _compare(got, expected, label, atol=0, rtol=1e-6, variants=variants,
                     index_names=_Text("결과", "the result"))

    return _grade(title, section, run)


# --- 07: the q/k row permutation ---------------------------------------------------------------


def check_unpermute_qk_rows(fn: Callable[[torch.Tensor, int], object]) -> bool:
    """Check ``fn(weight, num_heads)``: GGUF/Meta row order of ``W_q``/``W_k`` → Hugging Face order.

    The contract is :func:`posviz.pretrained.unpermute_qk_rows`: ``weight`` is a float tensor
    ``(num_heads · head_dim, in_features)``; within every head, the rows of each interleaved
    pair ``(2i, 2i+1)`` move to ``i`` and ``i + head_dim/2``; the result has the same shape.
    Catches among others: the inverse permutation, one permutation over all rows (heads
    ignored), and rows left in place.

    Returns:
        ``True`` if every check passes, else ``False`` (feedback is printed; never raises).
    """

    title = _Text("q/k 행 재배열", "un-permuting q/k rows")
    section = _Text("07 노트북 3절(실제 가중치로 보는 행 순서의 교훈)을 다시 보세요: 헤드마다 interleaved_to_half(head_dim) 순서로 행을 고릅니다.",
                    "see notebook 07, section 3 (The row-order lesson, with real weights): within each head, rows are taken in interleaved_to_half(head_dim) order.")

    def run() -> None:
        for seed, (num_heads, head_dim, in_features) in enumerate(((3, 8, 5), (2, 4, 3)), start=3):
            weight = torch.randn(num_heads * head_dim, in_features, generator=torch.Generator().manual_seed(seed))
            label = (f"weight = torch.randn({num_heads * head_dim}, {in_features}, generator=torch.Generator().manual_seed({seed})), "
                     f"num_heads={num_heads} (head_dim={head_dim})")
            got = _as_array(_call(fn, weight.clone(), num_heads, label=label), label)
            _check_shape(got, tuple(weight.shape), label)
            expected = unpermute_qk_rows(weight, num_heads).double().numpy()
            variants = [
                (permute_qk_rows(weight, num_heads).double().numpy(),
                 _Text("반대 방향(Hugging Face → GGUF) 순열을 적용했습니다.", "this is the inverse permutation (Hugging Face → GGUF)."),
                 _Text("GGUF 행 2i와 2i+1이 Hugging Face의 행 i와 i + head_dim/2로 가야 합니다.", "GGUF rows 2i and 2i+1 must go to Hugging Face rows i and i + head_dim/2.")),
                (unpermute_qk_rows(weight, 1).double().numpy(),
                 _Text("헤드를 나누지 않고 전체 행에 한 번에 순열을 적용했습니다.", "the permutation was applied across all rows at once (heads ignored)."),
                 _Text("행을 (num_heads, head_dim, in_features) 모양으로 나눈 뒤 헤드마다 순서를 바꾸세요.", "split the rows into (num_heads, head_dim, in_features) and reorder within each head.")),
                (weight.double().numpy(),
                 _Text("행 순서가 그대로입니다.", "the rows are unchanged."),
                 _Text("헤드마다 짝수 행을 앞 절반, 홀수 행을 뒤 절반으로 모으세요.", "within each head, gather the even rows first, then the odd rows.")),
            ]
            _compare(got, expected, label, atol=0, variants=variants, index_names="(row, column)")

    return _grade(title, section, run)


# --- 08: M-RoPE position ids ---------------------------------------------------------------------


def _mrope_variant(segments, *, advance: str = "max", swap: bool = False, column_major: bool = False) -> np.ndarray:
    """Position ids with one of the classic mistakes (for the checker's diagnoses)."""
    parts, start = [], 0
    for segment in segments:
        if isinstance(segment, int):
            parts.append(np.broadcast_to(np.arange(start, start + segment), (3, segment)))
            start += segment
            continue
        t, h, w = segment
        tt, hh, ww = np.meshgrid(np.arange(t), np.arange(h), np.arange(w), indexing="ij")
        if column_major:  # temporal patch by temporal patch, but column by column inside each
            tt, hh, ww = (a.transpose(0, 2, 1) for a in (tt, hh, ww))
        ids = np.stack([tt.ravel(), hh.ravel(), ww.ravel()])
        if swap:
            ids = ids[[0, 2, 1]]
        parts.append(ids + start)
        start += {"max": max(t, h, w), "count": t * h * w, "hw": max(h, w), "added": start + max(t, h, w)}[advance]
    return np.concatenate(parts, axis=1).astype(np.int64)


def check_mrope_position_ids(fn: Callable[[list], object]) -> bool:
    """Check ``fn(segments) -> (3, total)`` integer M-RoPE position ids (Qwen2-VL, Wang et al. 2024, §2.1).

    The contract is :func:`posviz.mrope_position_ids`: ``segments`` is a list of text-run lengths
    (``int``) and vision grids ``(t, h, w)``; text advances all three rows together; a grid gets
    ``(s + τ, s + i, s + j)`` listed temporal patch by temporal patch and row by row; what follows
    starts at one past the largest id so far. Tried on prompts with text first and last, an image
    first, non-square grids, a video, two grids in a row, a video with more temporal patches (t)
    than rows and columns, and text alone (where the three rows are all ``0 … n − 1``: still three
    rows, not one).
    Catches among others: text that continues by the number of vision tokens instead of
    max + 1, the largest id + 1 added to the current position (``start += ids.max() + 1``) instead
    of becoming it, rows and columns swapped, a grid flattened column by column, and continuing
    after a video at ``s + max(h, w)`` (ignoring the temporal ids).

    Returns:
        ``True`` if every check passes, else ``False`` (feedback is printed; never raises).
    """

    title = _Text("M-RoPE 위치 번호", "M-RoPE position ids")
    section = _Text(
        "08 노트북 4절(M-RoPE)을 다시 보세요. 텍스트는 세 번호(t, h, w)가 함께 1씩 늘고, 격자는 (s + τ, s + i, s + j)를 받으며, 그다음은 지금까지의 최댓값 + 1에서 시작합니다.",
        "see notebook 08, section 4 (M-RoPE): text moves all three ids up by 1 together, a grid gets (s + τ, s + i, s + j), and what follows starts at the largest id so far + 1.",
    )
    prompts = (
        [3, (1, 2, 4), 2],  # s + max(t, h, w) = 7, the token count 8 and the slip `start += max + 1` (10) all differ
        [(1, 3, 2), 4],
        [2, (2, 2, 3), (1, 2, 2), 1],
        [1, (3, 2, 2), 2],
        [5],
    )
    mistakes = (
        (dict(advance="count"),
         _Text("격자 다음 텍스트가 이미지·동영상 토큰 수만큼 건너뛰었습니다(s + t·h·w). 지금까지의 최댓값 + 1에서 이어 가야 합니다.",
               "the text after a grid jumps ahead by the number of vision tokens (s + t·h·w) instead of continuing at the largest id so far + 1."),
         _Text("격자가 쓴 가장 큰 번호는 s + max(t, h, w) − 1이므로, 다음 토큰은 s + max(t, h, w)입니다.",
               "the largest id a grid uses is s + max(t, h, w) − 1, so the next token gets s + max(t, h, w).")),
        (dict(advance="added"),
         _Text("격자 다음 위치를 정할 때 최댓값 + 1을 지금 위치에 더했습니다(start += max + 1). 최댓값 + 1이 그대로 다음 위치가 되어야 합니다.",
               "after a grid, the largest id + 1 is added to the current position (start += max + 1) instead of becoming the next position (start = max + 1)."),
         _Text("격자의 번호에는 이미 s가 더해져 있으므로, 다음 위치는 s + max(t, h, w) = (격자 번호의 최댓값) + 1입니다.",
               "the grid's ids already include s, so the next position is s + max(t, h, w) = (the grid's largest id) + 1.")),
        (dict(swap=True),
         _Text("높이(행)와 너비(열) 번호가 뒤바뀌었습니다.", "the height (row) and width (column) ids are swapped."),
         _Text("결과의 둘째 행(h)에는 패치의 행 번호 i가, 셋째 행(w)에는 열 번호 j가 들어갑니다.",
               "in the result, the second row (h) holds the patch's row i and the third row (w) its column j.")),
        (dict(column_major=True),
         _Text("격자를 열 순서로 펼쳤습니다. 토큰은 행 순서로 놓입니다(한 행의 열을 모두 나열한 뒤 다음 행으로).",
               "the grid is flattened column by column; tokens are listed row by row (all columns of one row, then the next row)."),
         _Text("torch.meshgrid(..., indexing=\"ij\")로 (t, h, w) 격자를 만들고 flatten하면 행 순서가 됩니다.",
               "build the (t, h, w) grid with torch.meshgrid(..., indexing=\"ij\") and flatten it: that is row order.")),
        (dict(advance="hw"),
         _Text("동영상 다음 텍스트를 s + max(h, w)에서 시작했습니다. 시간 번호가 더 크면 그 뒤에서 이어 가야 합니다.",
               "the text after a video starts at s + max(h, w); when the time ids go higher, it must start past them."),
         _Text("다음 번호는 세 행 전체의 최댓값 + 1, 즉 s + max(t, h, w)입니다.", "the next id is the largest id in all three rows + 1: s + max(t, h, w).")),
    )

    def run() -> None:
        for segments in prompts:
            label = f"segments={segments}"
            expected = mrope_position_ids(segments).numpy()
            got = _as_array(_call(fn, list(segments), label=label), label, integer=True)
            _check_shape(got, expected.shape, label)
            variants = [(_mrope_variant(segments, **kwargs), what, hint) for kwargs, what, hint in mistakes]
            _compare(got, expected, label, atol=0, variants=variants, index_names="(row, token)")

    return _grade(title, section, run)
