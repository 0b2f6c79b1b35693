"""Checkers for the course's autograded exercises, with feedback in Korean and/or English.

Each ``check_*`` function takes the learner's function, runs it on chosen inputs, compares the
result with the tested reference in ``posviz`` and returns ``True`` or ``False``. It prints
feedback in the figure language set by :func:`posviz.setup` (``"ko"``, ``"en"`` or ``"both"``):
which mistake the answer equals (or which property failed), a counter-example the learner can
rebuild (the input, the place of the largest mismatch, the largest gap next to the tolerance) and a hint that
names the notebook section that explains it. In ``"ko"`` every line is Korean.

A checker never raises because of the learner's answer: a wrong value, shape or dtype, an
exception inside the learner's code (the feedback shows the failing line), or a stub that still
raises ``NotImplementedError`` ("not attempted yet") all give ``False`` with feedback, so
"Run All" never stops at an exercise. Correct answers pass in float32 or float64, as numpy
arrays, torch tensors or lists; the one exception is :func:`check_relative_position_index`,
whose answer indexes table rows and must be integers (integral floats are rejected).

The harness (running, converting, comparing, printing) is :mod:`posviz.feedback`; its names are
imported here as well, for checkers added to this module. A notebook runs its own
implementation through a checker inside :func:`notebook_implementation`, which labels the
verdict so that it cannot be mistaken for the learner's.

Typical use in a notebook::

    def my_sinusoidal_encoding(num_positions, d_model):
        raise NotImplementedError  # replace with your code

    posviz.exercises.check_sinusoidal_encoding(my_sinusoidal_encoding);
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import torch

from ._mistakes import (
    _alibi_variant,
    _attention,
    _rope_low_precision,
    _sinusoidal_variant,
    _unrotated_pairs,
)
from .alibi import alibi_slopes
from .encodings import sinusoidal_encoding
from .relative import relative_position_index
from .rope import apply_rope, rope_frequencies
from .style import get_language  # noqa: F401 - kept for checkers appended to this module

__all__ = [
    "check_alibi_slopes",
    "check_apply_rope",
    "check_dynamic_ntk_base",
    "check_embedding_lookup",
    "check_mrope_position_ids",
    "check_relative_position_index",
    "check_self_attention",
    "check_sinusoidal_encoding",
    "check_unpermute_qk_rows",
    "notebook_implementation",
]


# The feedback harness lives in posviz.feedback; its names are imported here under the same
# names, so checkers written against this module keep working.
from .feedback import (  # noqa: F401 - re-exported for checkers appended to this module
    _as_array,
    _call,
    _check_shape,
    _compare,
    _Failed,
    _grade,
    _lines,
    _NotAttempted,
    _say,
    _Text,
    _worst_mismatch,
    notebook_implementation,
)

# --- 03: sinusoidal encoding ----------------------------------------------------------------



def check_sinusoidal_encoding(fn: Callable[[int, int], object]) -> bool:
    """Check ``fn(num_positions, d_model) -> (num_positions, d_model)`` against Vaswani et al. 2017, §3.5.

    The contract: ``PE[p, 2i] = sin(p / 10000^(2i/d_model))``, ``PE[p, 2i+1] = cos(…)`` for
    positions ``p = 0 … num_positions−1`` (the interleaved layout of
    :func:`posviz.sinusoidal_encoding`), as a numpy array or torch tensor, float32 or float64.
    Tested at up to 128 positions (absolute tolerance 1e-4). Catches among others: the exponent
    ``i/d`` instead of ``2i/d``, sin and cos swapped, the concatenated layout, positions starting
    at 1, another base, angles computed in float16, a float16 or integer result, a transposed
    table and a missing ``return``.
    Paper: https://arxiv.org/abs/1706.03762

    Returns:
        ``True`` if every check passes, else ``False`` (feedback is printed; never raises).
    """
    title = _Text("사인파 위치 인코딩", "sinusoidal positional encoding")
    section = _Text("03 노트북 2절(공식 세우기)을 다시 보세요: 짝수 열은 sin, 홀수 열은 cos, 지수는 2i/d_model입니다.",
                    "see notebook 03, section 2 (Building the formula): even columns sin, odd columns cos, exponent 2i/d_model.")

    def run() -> None:
        for num_positions, d_model in ((10, 6), (128, 32)):
            label = f"num_positions={num_positions}, d_model={d_model}"
            got = _as_array(_call(fn, num_positions, d_model, label=label), label)
            _check_shape(got, (num_positions, d_model), label)
            expected = sinusoidal_encoding(num_positions, d_model, dtype=np.float64)
            variants = [
                (_sinusoidal_variant(num_positions, d_model, exponent="column"),
                 _Text("지수에 짝 번호 대신 열 번호를 쓴 것 같습니다.", "the exponent seems to use the column index, not the pair index."),
                 _Text("한 짝의 두 열(2i, 2i+1)은 같은 각속도 10000^(−2i/d)를 씁니다.", "both columns of a pair (2i, 2i+1) share the angular speed 10000^(−2i/d).")),
                (sinusoidal_encoding(num_positions, d_model, base=100.0, dtype=np.float64),
                 _Text("지수가 2i/d가 아니라 i/d인 것 같습니다.", "the exponent seems to be i/d instead of 2i/d."),
                 _Text("짝 i의 각속도는 10000^(−2i/d_model)입니다.", "pair i has angular speed 10000^(−2i/d_model).")),
                (_sinusoidal_variant(num_positions, d_model, swap=True),
                 _Text("sin과 cos이 뒤바뀐 것 같습니다.", "sin and cos seem swapped."),
                 _Text("위치 0의 행은 (0, 1, 0, 1, …)이어야 합니다: 짝수 열이 sin입니다.", "row 0 must be (0, 1, 0, 1, …): even columns are sines.")),
                (sinusoidal_encoding(num_positions, d_model, layout="concatenated", dtype=np.float64),
                 _Text("sin을 앞 절반, cos을 뒤 절반에 모아 이어 붙인(concatenated) 열 순서입니다.", "this is the concatenated layout (all sines, then all cosines)."),
                 _Text("이 연습 문제는 논문의 열 순서인 번갈아 놓기(interleaved)를 씁니다: 열 2i는 sin, 2i+1은 cos입니다. 03 노트북 9절(두 가지 열 순서)을 보세요.",
                       "this exercise uses the paper's interleaved layout: column 2i sin, 2i+1 cos; see notebook 03, section 9 (Two column layouts).")),
                (_sinusoidal_variant(num_positions, d_model, start=1),
                 _Text("위치가 1부터 시작하는 것 같습니다.", "positions seem to start at 1."),
                 _Text("첫 행은 위치 0입니다: np.arange(num_positions).", "the first row is position 0: np.arange(num_positions).")),
                (_sinusoidal_variant(num_positions, d_model, angle_dtype=np.float16),
                 _Text("각도를 float16으로 계산한 것 같습니다: 위치 번호가 클수록 값이 어긋납니다.", "the angles seem to be computed in float16: values drift at large positions."),
                 _Text("각도는 float64(적어도 float32)로 계산하고 마지막에만 형 변환하세요. 03 노트북 10절(위치 번호가 클 때의 정밀도)을 보세요.",
                       "compute the angles in float64 (at least float32) and cast only at the end; see notebook 03, section 10 (Precision at large positions).")),
            ]
            if num_positions > 1 and np.allclose(got[:, :2], expected[:, :2], atol=1e-4):
                variants.append((got, _Text("짝 0은 맞고 나머지 짝의 각속도가 다릅니다. base나 지수를 확인하세요.",
                                            "pair 0 is right but the other pairs' angular speeds differ: check the base and the exponent."),
                                 _Text("base는 10000이고, 짝 i의 각속도는 10000^(−2i/d_model)입니다.", "the base is 10000; pair i has angular speed 10000^(−2i/d_model).")))
            _compare(got, expected, label, atol=1e-4, variants=variants, index_names="(position, column)")

    return _grade(title, section, run)


# --- 05: RoPE ------------------------------------------------------------------------------------

_ROPE_SMALL = [[1.0, 2.0, 3.0, 4.0], [0.5, -1.0, 2.0, 0.0], [1.0, 1.0, -1.0, 1.0]]  # printed in full in the feedback




def check_apply_rope(fn: Callable[[torch.Tensor, torch.Tensor], object]) -> bool:
    """Check ``fn(x, positions) -> tensor`` against :func:`posviz.apply_rope` (RoFormer eq. 34).

    The contract: ``x`` is a float tensor ``(..., seq_len, head_dim)``, ``positions`` an int64
    tensor ``(seq_len,)``; pairs are interleaved ``(2i, 2i+1)`` and rotated counter-clockwise by
    ``positions · 10000^(−2i/head_dim)`` radians; the result has the shape of ``x``. Tested first
    on a small input that the feedback prints in full, then in float32 and float64 with random
    inputs (their one-line recipe is printed) and positions that are not ``arange`` (up to 100).
    A counter-example names the position ``m`` and the pair ``i``. Catches among others: ignoring
    ``positions``, the half-split pairing, a clockwise rotation, the exponent ``i/d``, the pair
    index counted from 1, positions off by one or minus the first position, cos and sin in
    float16, and pairs left unrotated (named only when that is the mistake).
    Paper: https://arxiv.org/abs/2104.09864

    Returns:
        ``True`` if every check passes, else ``False`` (feedback is printed; never raises).
    """
    title = _Text("RoPE 적용", "applying RoPE")
    section = _Text("05 노트북 2절(블록 대각 회전 행렬과 효율적인 계산, 식 34)을 다시 보세요: 짝 (2i, 2i+1)을 위치 × θ_i만큼 반시계 방향으로 돌립니다.",
                    "see notebook 05, section 2 (The block-diagonal rotation matrix and the efficient form, eq. 34): rotate each pair (2i, 2i+1) counter-clockwise by position × θ_i.")
    cases = [
        (torch.tensor(_ROPE_SMALL, dtype=torch.float64), [5, 0, 2],
         f"x = torch.tensor({_ROPE_SMALL}, dtype=torch.float64)"),
        (torch.randn(2, 3, 6, 8, dtype=torch.float64, generator=torch.Generator().manual_seed(0)).float(), [5, 0, 3, 17, 100, 2],
         "x = torch.randn(2, 3, 6, 8, dtype=torch.float64, generator=torch.Generator().manual_seed(0)).float()"),
        (torch.randn(6, 4, dtype=torch.float64, generator=torch.Generator().manual_seed(1)), [5, 0, 3, 17, 100, 2],
         "x = torch.randn(6, 4, dtype=torch.float64, generator=torch.Generator().manual_seed(1))"),
    ]

    def run() -> None:
        for x, pos, recipe in cases:
            positions = torch.tensor(pos, dtype=torch.int64)
            label = f"{recipe}; positions = torch.tensor({pos})"
            got = _as_array(_call(fn, x.clone(), positions.clone(), label=label), label)
            _check_shape(got, tuple(x.shape), label)
            x64 = x.double().numpy()
            d = x.shape[-1]

            def ref(p=positions, x=x, **kwargs) -> np.ndarray:
                return apply_rope(x.double(), p, **kwargs).numpy()

            expected = ref()

            def describe(where: tuple[int, ...], expected=expected, got=got, pos=pos) -> _Text:
                t, i = where[-2], where[-1] // 2
                e, g = expected[(*where[:-1], slice(2 * i, 2 * i + 2))], got[(*where[:-1], slice(2 * i, 2 * i + 2))]
                e, g = ", ".join(f"{v:.6g}" for v in e), ", ".join(f"{v:.6g}" for v in g)
                lead = _Text(f"배치·헤드 {where[:-2]}, ", f"batch/head {where[:-2]}, ") if len(where) > 2 else _Text("", "")
                return _Text(f"{lead.ko}위치 m = {pos[t]}(positions[{t}]), 짝 i = {i}(열 {2 * i}, {2 * i + 1}): 기댓값 ({e}), 실제값 ({g})",
                             f"{lead.en}position m = {pos[t]} (positions[{t}]), pair i = {i} (columns {2 * i}, {2 * i + 1}): expected ({e}), got ({g})")

            from_one = rope_frequencies(d) * 10000.0 ** (-2.0 / d)  # θ_(i+1): the paper's 1-based i, used from 0
            variants = [
                (ref(torch.arange(len(positions))),
                 _Text("positions 인자를 쓰지 않고 0, 1, 2, …를 가정한 것 같습니다.", "positions seems ignored (0, 1, 2, … assumed)."),
                 _Text("각도는 주어진 positions로 계산하세요: 왼쪽 패딩이나 KV 캐시에서는 위치가 0부터 차례로 이어지지 않습니다(05 노트북 6.3절(왼쪽 패딩과 위치)).",
                       "compute the angles from the given positions: with left padding or a KV cache they are not 0, 1, 2, … (notebook 05, section 6.3 (Left padding and positions)).")),
                (ref(positions - positions[0]),
                 _Text("위치에서 첫 위치 positions[0]을 뺀 것 같습니다: 모든 짝이 돌지만 각도가 다릅니다.",
                       "the first position positions[0] seems subtracted: every pair turns, by the wrong angle."),
                 _Text("위치 m의 각도는 m·θ_i입니다: 주어진 positions를 그대로 쓰세요.", "position m turns by m·θ_i: use the given positions as they are.")),
                (ref(layout="half"),
                 _Text("(i, i + d/2)를 한 짝으로 묶은 절반 짝(half)입니다.", "this is the half-split pairing (i, i + d/2)."),
                 _Text("이 연습 문제는 논문의 인접 짝 (2i, 2i+1)을 씁니다(05 노트북 6.1절(짝짓기 방식: 인접 짝과 절반 짝)).",
                       "this exercise uses the paper's interleaved pairs (2i, 2i+1) (notebook 05, section 6.1 (Interleaved vs half pairing)).")),
                (ref(-positions),
                 _Text("회전 방향이 반대(시계 방향)입니다.", "the rotation goes the wrong way (clockwise)."),
                 _Text("out[2i] = x[2i]·cos − x[2i+1]·sin, out[2i+1] = x[2i+1]·cos + x[2i]·sin입니다.", "out[2i] = x[2i]·cos − x[2i+1]·sin and out[2i+1] = x[2i+1]·cos + x[2i]·sin.")),
                (ref(base=100.0),
                 _Text("지수가 2i/d가 아니라 i/d인 것 같습니다.", "the exponent seems to be i/d instead of 2i/d."),
                 _Text("θ_i = 10000^(−2i/head_dim)입니다.", "θ_i = 10000^(−2i/head_dim).")),
                (ref(frequencies=from_one),
                 _Text("짝 번호 i를 1부터 센 것 같습니다: 모든 짝이 돌지만, 짝 i가 θ_(i+1)로 한 단계 느리게 돕니다.",
                       "the pair index seems counted from 1: every pair turns, but pair i turns at θ_(i+1), one step too slow."),
                 _Text("논문은 i를 1부터 세어 θ_i = 10000^(−2(i−1)/d)로 씁니다. 0부터 세는 코드에서는 θ_i = 10000^(−2i/d)이고 짝 0은 토큰마다 1 라디안씩 돕니다.",
                       "the paper counts i from 1 and writes θ_i = 10000^(−2(i−1)/d); counting from 0, θ_i = 10000^(−2i/d) and pair 0 turns by 1 radian per token.")),
                (ref(positions + 1),
                 _Text("위치가 하나씩 밀렸습니다(+1).", "the positions are off by one (+1)."),
                 _Text("위치 m의 각도는 m·θ_i입니다: 위치 0은 돌리지 않습니다.", "position m turns by m·θ_i: position 0 is not rotated.")),
                (ref(positions - 1),
                 _Text("위치가 하나씩 밀렸습니다(−1).", "the positions are off by one (−1)."),
                 _Text("위치 m의 각도는 m·θ_i입니다.", "position m turns by m·θ_i.")),
            ]
            for in_float16 in (False, True):
                variants.append((_rope_low_precision(x64, positions.numpy(), angles_in_float16=in_float16),
                                 _Text("cos과 sin(또는 각도)을 float16(반정밀도)으로 계산한 것 같습니다: 유효 숫자가 3자리 남짓입니다.",
                                       "cos and sin (or the angles) seem computed in float16 (half precision): about 3 significant digits."),
                                 _Text("각도와 cos·sin은 float32 이상으로 계산하세요(05 노트북 6.4절(각도는 반정밀도로 계산하지 않는다)).",
                                       "compute the angles, cos and sin in float32 or better (notebook 05, section 6.4 (Never compute the angles in half precision)).")))
            variants.append((x64,
                             _Text("입력이 바뀌지 않고 그대로 돌아왔습니다: 돈 짝이 하나도 없습니다.",
                                   "the input came back unchanged: no pair was rotated."),
                             _Text("짝마다 (x[2i], x[2i+1])를 각도 m·θ_i만큼 돌린 결과를 만들어 돌려주세요(return).",
                                   "turn each pair (x[2i], x[2i+1]) by the angle m·θ_i and return the result.")))
            unrotated = _unrotated_pairs(got, x64, expected)
            if unrotated and len(unrotated) < d // 2:
                names = ", ".join(map(str, unrotated))
                variants.append((got, _Text(f"돌지 않고 그대로 남은 짝이 있습니다: 짝 {names}(나머지 짝은 맞습니다).",
                                            f"pair(s) {names} were not rotated at all (the other pairs are right)."),
                                 _Text(f"head_dim / 2 = {d // 2}개의 짝을 모두 돌려야 합니다: 반복문이나 슬라이스의 끝을 확인하세요.",
                                       f"rotate all head_dim / 2 = {d // 2} pairs: check the end of your loop or slice.")))
            _compare(got, expected, label, atol=1e-4, rtol=1e-4, variants=variants,
                     index_names=_Text("인덱스", "index"), describe=describe)

    return _grade(title, section, run)


# --- 04: Shaw's relative position index --------------------------------------------------------


def check_relative_position_index(fn: Callable[[int, int], object]) -> bool:
    """Check ``fn(seq_len, max_relative_position) -> (seq_len, seq_len)`` integers (Shaw et al. 2018, §3.2).

    The contract: entry ``[i, j] = clip(j − i, −k, k) + k`` for query ``i`` and key ``j``, as
    :func:`posviz.relative_position_index` computes it; an integer numpy array or torch tensor
    (integral values in a float array are rejected: the result indexes table rows). Tested for
    ``(seq_len, k)`` = (6, 2), (9, 3), (4, 10), (5, 0); a counter-example prints both matrices.
    Catches among others: the sign flipped (``i − j``), no clipping, clipping at ``k − 1`` (on
    both sides or only above), no ``+k`` shift, and ``max_relative_position`` ignored (a fixed k).
    Paper: https://arxiv.org/abs/1803.02155

    Returns:
        ``True`` if every check passes, else ``False`` (feedback is printed; never raises).
    """
    title = _Text("상대 위치 인덱스", "relative position index")
    section = _Text("04 노트북 2절(식을 한 항씩 읽기)을 다시 보세요: [i, j] = clip(j − i, −k, k) + k.",
                    "see notebook 04, section 2 (The equations, term by term): [i, j] = clip(j − i, −k, k) + k.")

    def run() -> None:
        for seq_len, k in ((6, 2), (9, 3), (4, 10), (5, 0)):
            label = f"seq_len={seq_len}, max_relative_position={k}"
            got = _as_array(_call(fn, seq_len, k, label=label), label, integer=True)
            _check_shape(got, (seq_len, seq_len), label)
            expected = relative_position_index(seq_len, seq_len, k)
            offsets = np.arange(seq_len)[None, :] - np.arange(seq_len)[:, None]
            variants = [
                (expected.T,
                 _Text("부호가 뒤집혔습니다: j − i가 아니라 i − j를 썼습니다.", "the sign is flipped: i − j instead of j − i."),
                 _Text("오프셋은 쿼리 i에서 본 키 j의 위치 j − i입니다(뒤쪽 키가 양수).", "the offset is key j seen from query i, j − i (later keys positive).")),
                (offsets + k,
                 _Text("클리핑을 하지 않았습니다.", "the offsets are not clipped."),
                 _Text("±k 바깥의 오프셋은 끝 행(0 또는 2k)을 함께 씁니다. np.clip으로 자르세요.", "offsets beyond ±k share the end rows (0 or 2k): clip them with np.clip.")),
                (np.clip(offsets, -(k - 1), k - 1) + k,
                 _Text("k가 아니라 k − 1에서 잘랐습니다.", "the clipping is at k − 1 instead of k."),
                 _Text("표는 2k + 1행이고 −k … k를 모두 씁니다.", "the table has 2k + 1 rows and uses all of −k … k.")),
                (np.clip(offsets, -k, k - 1) + k,
                 _Text("위쪽 끝만 k − 1에서 잘랐습니다: 가장 큰 행 번호가 2k가 아니라 2k − 1입니다.",
                       "only the upper end is clipped at k − 1: the largest row is 2k − 1 instead of 2k."),
                 _Text("표는 2k + 1행(0 … 2k)입니다: 오프셋을 −k와 k 사이로 자르세요.", "the table has 2k + 1 rows (0 … 2k): clip the offsets to −k … k.")),
                (np.clip(offsets, -k, k),
                 _Text("+k를 더하지 않아 음수 인덱스가 남았습니다.", "k was not added, so negative indices remain."),
                 _Text("행 번호는 0 … 2k여야 합니다: 클리핑한 오프셋에 k를 더하세요.", "row numbers must be 0 … 2k: add k to the clipped offset.")),
            ]
            for other in range(0, seq_len + 2):
                if other != k:
                    variants.append((np.clip(offsets, -other, other) + other,
                                     _Text(f"max_relative_position 인자를 쓰지 않은 것 같습니다: 주어진 k = {k} 대신 k = {other}일 때의 값입니다.",
                                           f"max_relative_position seems ignored: these are the values for k = {other}, not k = {k}."),
                                     _Text("함수 안의 k를 고정된 숫자가 아니라 인자 max_relative_position으로 쓰세요.",
                                           "use the argument max_relative_position for k, not a fixed number.")))
            _compare(got, expected, label, atol=0, variants=variants, index_names="(query, key)", show_arrays=True)

    return _grade(title, section, run)


# --- 06: ALiBi slopes ------------------------------------------------------------------------------



def check_alibi_slopes(fn: Callable[[int], object]) -> bool:
    """Check ``fn(num_heads) -> (num_heads,)`` floats against :func:`posviz.alibi_slopes` (Press et al. 2022, §3).

    The contract: for a power of two ``n`` the geometric sequence ``2^(−8/n), 2^(−16/n), …, 2^(−8)``;
    for other ``n`` the slopes of the nearest smaller power of two followed by every second slope
    of twice that many heads. Tested for every ``n`` = 1 … 16 (relative tolerance 1e-5). Catches
    among others: the power-of-two formula used for every ``n``, the order reversed, an exponent
    off by one, and the extra slopes reversed or taken from the even-numbered terms.
    Paper: https://arxiv.org/abs/2108.12409

    Returns:
        ``True`` if every check passes, else ``False`` (feedback is printed; never raises).
    """
    title = _Text("ALiBi 기울기(slope)", "ALiBi slopes")
    section = _Text("06 노트북 2절(새 참가자 ALiBi)을 다시 보세요: n이 2의 거듭제곱이 아니면 규칙이 따로 있습니다.",
                    "see notebook 06, section 2 (The newcomer: ALiBi): a head count that is not a power of two has its own rule.")

    def run() -> None:
        for n in range(1, 17):
            label = f"num_heads={n}"
            got = _as_array(_call(fn, n, label=label), label)
            _check_shape(got, (n,), label)
            expected = alibi_slopes(n).numpy()
            heads = np.arange(1, n + 1)
            variants = [
                (2.0 ** (-8.0 * heads / n),
                 _Text("2의 거듭제곱이 아닌 n에도 2^(−8h/n) 공식을 그대로 썼습니다.", "the power-of-two formula 2^(−8h/n) was used for an n that is not a power of two."),
                 _Text("n보다 작은 가장 가까운 2의 거듭제곱 p의 기울기 p개 뒤에, 2p개짜리 수열의 홀수 번째 항을 앞에서부터 n − p개 이어 붙입니다.", "take the p slopes of the nearest smaller power of two p, then the first n − p odd-numbered terms of the 2p-head sequence.")),
                (expected[::-1].copy(),
                 _Text("순서가 뒤집혔습니다.", "the order is reversed."),
                 _Text("첫 헤드의 기울기가 가장 큽니다(2^(−8/n)).", "the first head has the largest slope (2^(−8/n)).")),
                (expected * 2.0 ** (8.0 / 2 ** int(math.floor(math.log2(n)))),
                 _Text("지수의 h를 1이 아니라 0부터 센 것 같습니다(첫 기울기가 1입니다).", "the exponent seems to count h from 0, not 1 (the first slope is 1)."),
                 _Text("수열은 2^(−8/n)에서 시작합니다: h = 1, 2, …, n.", "the sequence starts at 2^(−8/n): h = 1, 2, …, n.")),
                (_alibi_variant(n, extras="reversed"),
                 _Text("덧붙인 기울기(2의 거듭제곱을 넘는 헤드)의 순서가 뒤집혔습니다.", "the extra slopes (the heads past the power of two) are in reverse order."),
                 _Text("덧붙이는 기울기도 큰 것부터 놓습니다: 2p개짜리 수열의 1, 3, 5, …번째 항 순서입니다.", "the extra slopes also go from large to small: terms 1, 3, 5, … of the 2p-head sequence.")),
                (_alibi_variant(n, extras="even terms"),
                 _Text("덧붙인 기울기를 2p개짜리 수열의 짝수 번째 항에서 가져왔습니다: p개짜리 기울기와 겹칩니다.",
                       "the extra slopes come from the even-numbered terms of the 2p-head sequence: they repeat the first p slopes."),
                 _Text("덧붙이는 기울기는 2p개짜리 수열의 홀수 번째 항(1, 3, 5, …번째)입니다.", "the extra slopes are the odd-numbered terms (1st, 3rd, 5th, …) of the 2p-head sequence.")),
            ]
            _compare(got, expected, label, atol=0, rtol=1e-5, variants=variants, index_names="head")

    return _grade(title, section, run)


# --- 01: one self-attention head ---------------------------------------------------------------



def check_self_attention(fn: Callable[..., object]) -> bool:
    """Check ``fn(X, W_q, W_k, W_v) -> softmax(X W_q (X W_k)ᵀ / √d_k) X W_v`` (Vaswani et al. 2017, eq. 1).

    The contract: ``X`` is a float64 tensor ``(seq_len, d_model)``, each ``W`` ``(d_model, d_k)``;
    one head without a mask; the result is ``(seq_len, d_k)``. Tested with ``d_k ≠ d_model``.
    Catches among others: no scaling, scaling by d_k or by √d_model instead of √d_k, no softmax,
    the softmax over the wrong axis, and returning the attention weights instead of the weighted values.
    Paper: https://arxiv.org/abs/1706.03762

    Returns:
        ``True`` if every check passes, else ``False`` (feedback is printed; never raises).
    """
    title = _Text("셀프 어텐션 헤드", "one self-attention head")
    section = _Text("01 노트북 5절(어텐션이 치른 대가: 어순)의 어텐션 헤드(식 1)를 다시 보세요.",
                    "see the attention head (eq. 1) in notebook 01, section 5 (The price of attention: word order).")

    def run() -> None:
        gen = torch.Generator().manual_seed(1)
        x = torch.randn(5, 8, dtype=torch.float64, generator=gen)
        w_q, w_k, w_v = (torch.randn(8, 4, dtype=torch.float64, generator=gen) for _ in range(3))
        label = "X: (5, 8), W_q/W_k/W_v: (8, 4), float64"
        got = _as_array(_call(fn, x.clone(), w_q.clone(), w_k.clone(), w_v.clone(), label=label), label)
        expected = _attention(x, w_q, w_k, w_v)
        weights = torch.softmax((x @ w_q) @ (x @ w_k).T / 2.0, dim=-1).numpy()
        if got.shape == weights.shape and np.allclose(got, weights, atol=1e-6):
            raise _Failed(_Text("어텐션 가중치만 돌려주었습니다. 값(V)을 곱하지 않았습니다.",
                                "this returns the attention weights, without applying the values V."),
                          _lines(_Text(f"입력: {label}", f"input: {label}"),
                                 _Text(f"기대한 모양: {expected.shape}, 받은 모양: {got.shape}", f"expected shape: {expected.shape}, got shape: {got.shape}")),
                          _Text("가중치 행렬에 V = X W_v를 곱하세요.", "multiply the weights by V = X W_v."))
        _check_shape(got, expected.shape, label)
        variants = [
            (_attention(x, w_q, w_k, w_v, scale=1.0),
             _Text("점수를 √d_k로 나누지 않았습니다.", "the scores are not divided by √d_k."),
             _Text("점수 Q Kᵀ를 √d_k로 나누어야 softmax가 포화되지 않습니다.", "divide Q Kᵀ by √d_k so that the softmax does not saturate.")),
            (_attention(x, w_q, w_k, w_v, scale=math.sqrt(8)),
             _Text("√d_k 대신 √d_model로 나누었습니다.", "the scores are divided by √d_model instead of √d_k."),
             _Text("나누는 값은 키 벡터의 차원 d_k의 제곱근, √d_k입니다.", "the scale is the square root of the key dimension, √d_k.")),
            (_attention(x, w_q, w_k, w_v, scale=4.0),
             _Text("√d_k 대신 d_k로 나누었습니다.", "the scores are divided by d_k instead of √d_k."),
             _Text("나누는 값은 d_k가 아니라 그 제곱근 √d_k입니다.", "the scale is the square root √d_k, not d_k itself.")),
            (_attention(x, w_q, w_k, w_v, softmax=False),
             _Text("softmax를 거치지 않았습니다. 점수를 그대로 값(V)에 곱했습니다.", "the softmax is missing: the scores multiply the values V directly."),
             _Text("점수에 softmax(dim=-1)를 적용해 가중치로 바꾼 뒤 V를 곱하세요.", "turn the scores into weights with softmax(dim=-1), then multiply by V.")),
            (_attention(x, w_q, w_k, w_v, dim=0),
             _Text("softmax를 잘못된 축(쿼리 축)을 따라 계산했습니다.", "the softmax runs over the wrong axis (queries)."),
             _Text("각 쿼리(행)마다 키들에 대한 가중치의 합이 1이어야 합니다: dim=-1.", "each query's weights over the keys must sum to 1: dim=-1.")),
        ]
        _compare(got, expected, label, atol=1e-6, rtol=1e-6, variants=variants, index_names="(query, feature)")

    return _grade(title, section, run)


# --- 02: embedding lookup ----------------------------------------------------------------------


def check_embedding_lookup(fn: Callable[[torch.Tensor, torch.Tensor], object]) -> bool:
    """Check ``fn(token_ids, table) -> (seq_len, d_model)``: the embedding lookup as one-hot × table.

    The contract: ``token_ids`` is an int64 tensor ``(seq_len,)`` with values in
    ``0 … vocab_size−1`` (repeats allowed), ``table`` a float tensor ``(vocab_size, d_model)``;
    the result is row ``token_ids[t]`` of ``table`` for every ``t`` (equal to
    ``one_hot(token_ids) @ table``). Catches among others: ids off by one in either direction (each
    with its own message), and, through the generic wrong-shape message, returning the one-hot
    matrix, multiplying by the transposed table, and summing the rows.

    Returns:
        ``True`` if every check passes, else ``False`` (feedback is printed; never raises).
    """
    title = _Text("임베딩 조회", "embedding lookup")
    section = _Text("02 노트북 1절(토큰, 어휘, 임베딩 테이블)을 다시 보세요: 원-핫 벡터 × 테이블 = 행 하나.",
                    "see notebook 02, section 1 (Tokens, vocabulary, embedding table): one-hot vector × table = one row.")

    def run() -> None:
        gen = torch.Generator().manual_seed(2)
        table = torch.randn(7, 4, dtype=torch.float32, generator=gen)
        ids = torch.tensor([3, 0, 6, 3, 1], dtype=torch.int64)
        label = f"token_ids={ids.tolist()}, table: (7, 4) float32"
        got = _as_array(_call(fn, ids.clone(), table.clone(), label=label), label)
        _check_shape(got, (5, 4), label)
        expected = table.double()[ids].numpy()
        variants = [
            (table.double()[(ids + 1) % 7].numpy(),
             _Text("토큰 id가 하나씩 밀렸습니다(+1).", "the token ids are off by one (+1)."),
             _Text("id가 i인 토큰은 테이블의 i번 행(0부터 셈)을 고릅니다.", "token id i picks row i of the table (counting from 0).")),
            (table.double()[(ids - 1) % 7].numpy(),
             _Text("토큰 id가 하나씩 밀렸습니다(−1).", "the token ids are off by one (−1)."),
             _Text("id가 i인 토큰은 테이블의 i번 행(0부터 셈)을 고릅니다: 1을 빼지 마세요.", "token id i picks row i of the table (counting from 0): do not subtract 1.")),
        ]
        _compare(got, expected, label, atol=1e-6, rtol=1e-6, variants=variants, index_names="(token, feature)")

    return _grade(title, section, run)


# The checkers of notebooks 05b, 07 and 08 live in posviz.exercises_05b_08 (this module's size).
from .exercises_05b_08 import check_dynamic_ntk_base, check_mrope_position_ids, check_unpermute_qk_rows  # noqa: E402
