"""Checkers for the course's autograded exercises, with feedback in Korean and/or English.

Each ``check_*`` function takes the learner's function, runs it on chosen inputs, compares the
result with the tested reference in ``posviz`` and returns ``True`` or ``False``. It prints
feedback in the figure language set by :func:`posviz.setup` (``"ko"``, ``"en"`` or ``"both"``):
which property failed, a small counter-example (input, expected, got) and a hint pointing to
the section that explains it.

A checker never raises because of the learner's answer: a wrong value, shape or dtype, an
exception inside the learner's code, or a stub that still raises ``NotImplementedError``
("not attempted yet") all give ``False`` with feedback, so "Run All" never stops at an
exercise. Correct answers pass in float32 or float64, as numpy arrays or torch tensors.

Typical use in a notebook::

    def my_sinusoidal_encoding(num_positions, d_model):
        raise NotImplementedError  # replace with your code

    posviz.exercises.check_sinusoidal_encoding(my_sinusoidal_encoding);
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import torch

from .alibi import alibi_slopes
from .encodings import sinusoidal_encoding
from .relative import relative_position_index
from .rope import apply_rope, ntk_scaled_base
from .style import get_language

__all__ = [
    "check_alibi_slopes",
    "check_apply_rope",
    "check_embedding_lookup",
    "check_mrope_position_ids",
    "check_ntk_scaled_base",
    "check_relative_position_index",
    "check_self_attention",
    "check_sinusoidal_encoding",
    "check_unpermute_qk_rows",
]


# --- feedback --------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Text:
    ko: str
    en: str


class _NotAttempted(Exception):
    pass


class _Failed(Exception):
    def __init__(self, what: _Text, detail: str = "", hint: _Text | None = None):
        super().__init__(what.en)
        self.what, self.detail, self.hint = what, detail, hint


def _say(text: _Text) -> None:
    lang = get_language()
    if lang in ("ko", "both"):
        print(text.ko)
    if lang in ("en", "both"):
        print(text.en)


def _grade(title: _Text, section: _Text, run: Callable[[], None]) -> bool:
    """Run the checks in ``run``; print the verdict; never raise for the learner's answer."""
    try:
        run()
    except _NotAttempted:
        _say(_Text(f"○ {title.ko}: 아직 풀지 않았습니다. `raise NotImplementedError`를 지우고 함수를 완성한 뒤 다시 실행하세요.",
                   f"○ {title.en}: not attempted yet. Replace `raise NotImplementedError` with your code and run the cell again."))
        return False
    except _Failed as failure:
        hint = failure.hint or section
        _say(_Text(f"✗ {title.ko}: {failure.what.ko}", f"✗ {title.en}: {failure.what.en}"))
        if failure.detail:
            print("   " + failure.detail.replace("\n", "\n   "))
        _say(_Text(f"   힌트: {hint.ko}", f"   Hint: {hint.en}"))
        return False
    except Exception as error:  # a bug in the comparison must not break "Run All" either
        _say(_Text(f"✗ {title.ko}: 결과를 검사하지 못했습니다 ({type(error).__name__}: {error}).",
                   f"✗ {title.en}: could not check the result ({type(error).__name__}: {error})."))
        return False
    _say(_Text(f"✓ {title.ko}: 모든 검사를 통과했습니다.", f"✓ {title.en}: all checks passed."))
    return True


def _call(fn: Callable, *args, label: str):
    """Call the learner's function; turn its exceptions into feedback."""
    if not callable(fn):
        raise _Failed(_Text("함수를 넘겨야 합니다.", "pass a function."), f"got {type(fn).__name__}")
    try:
        return fn(*args)
    except NotImplementedError:
        raise _NotAttempted from None
    except Exception as error:
        raise _Failed(
            _Text("함수 안에서 오류가 났습니다.", "your function raised an error."),
            f"input: {label}\n{type(error).__name__}: {error}",
        ) from None


def _as_array(value, label: str, *, integer: bool = False) -> np.ndarray:
    """The learner's result as a numpy array (float64, or int64 with ``integer=True``)."""
    if isinstance(value, torch.Tensor):
        value = value.detach().cpu()
        is_int = not value.is_floating_point() and not value.is_complex() and value.dtype != torch.bool
        value = value.numpy() if is_int else value.double().numpy()
    array = np.asarray(value)
    if integer:
        if not np.issubdtype(array.dtype, np.integer):
            raise _Failed(
                _Text("결과는 정수여야 합니다(테이블의 행 번호로 씁니다).",
                      "the result must be integers (they index table rows)."),
                f"input: {label}\ngot dtype: {array.dtype}",
            )
        return array.astype(np.int64)
    if not (np.issubdtype(array.dtype, np.floating) or np.issubdtype(array.dtype, np.integer)):
        raise _Failed(_Text("결과가 숫자 배열이 아닙니다.", "the result is not a numeric array."),
                      f"input: {label}\ngot: {type(value).__name__} of dtype {array.dtype}")
    return array.astype(np.float64)


def _check_shape(got: np.ndarray, shape: tuple[int, ...], label: str) -> None:
    if got.shape != shape:
        raise _Failed(_Text("결과의 모양(shape)이 다릅니다.", "the result has the wrong shape."),
                      f"input: {label}\nexpected shape: {shape}\ngot shape: {got.shape}")


def _first_mismatch(got: np.ndarray, expected: np.ndarray, atol: float, rtol: float) -> tuple[int, ...] | None:
    bad = ~np.isclose(got, expected, atol=atol, rtol=rtol)
    if not bad.any():
        return None
    return tuple(int(i) for i in np.argwhere(bad)[0])


def _compare(
    got: np.ndarray,
    expected: np.ndarray,
    label: str,
    *,
    atol: float,
    rtol: float = 0.0,
    variants: Sequence[tuple[np.ndarray, _Text, _Text]] = (),
    index_names: str = "index",
) -> None:
    """Raise ``_Failed`` with a counter-example (and a diagnosis, if a known mistake matches)."""
    where = _first_mismatch(got, expected, atol, rtol)
    if where is None:
        return
    detail = (f"input: {label}\nat {index_names} {where if len(where) > 1 else where[0]}: "
              f"expected {expected[where]:.6g}, got {got[where]:.6g}")
    for variant, what, hint in variants:
        if variant.shape == got.shape and np.allclose(got, variant, atol=atol, rtol=rtol):
            raise _Failed(what, detail, hint)
    raise _Failed(_Text("값이 참조 구현과 다릅니다.", "the values differ from the reference."), detail)


# --- 03: sinusoidal encoding ----------------------------------------------------------------


def _sinusoidal_variant(num_positions: int, d_model: int, *, exponent: str = "pair", swap: bool = False,
                        start: int = 0, angle_dtype=np.float64) -> np.ndarray:
    p = np.arange(start, start + num_positions, dtype=np.float64)[:, None].astype(angle_dtype)
    col = np.arange(d_model)
    power = {"pair": 2 * (col // 2), "column": 2 * col}[exponent] / d_model
    angles = (p / np.asarray(10000.0 ** power, dtype=angle_dtype)).astype(angle_dtype)
    even = col % 2 == 0
    table = np.where(even ^ swap, np.sin(angles), np.cos(angles))
    return table.astype(np.float64)


def check_sinusoidal_encoding(fn: Callable[[int, int], object]) -> bool:
    """Check ``fn(num_positions, d_model) -> (num_positions, d_model)`` against Vaswani et al. 2017, §3.5.

    The contract: ``PE[p, 2i] = sin(p / 10000^(2i/d_model))``, ``PE[p, 2i+1] = cos(…)`` for
    positions ``p = 0 … num_positions−1`` (the interleaved layout of
    :func:`posviz.sinusoidal_encoding`), as a numpy array or torch tensor, float32 or float64.
    Tested at up to 128 positions (absolute tolerance 1e-4). Catches among others: the exponent
    ``i/d`` instead of ``2i/d``, sin and cos swapped, the concatenated layout, positions starting
    at 1, another base, and angles computed in float16.

    Returns:
        ``True`` if every check passes, else ``False`` (feedback is printed; never raises).
    """
    title = _Text("사인파 위치 인코딩", "sinusoidal positional encoding")
    section = _Text("03 노트북 §2의 식을 다시 보세요: 짝수 열은 sin, 홀수 열은 cos, 지수는 2i/d_model입니다.",
                    "see notebook 03 §2: even columns sin, odd columns cos, exponent 2i/d_model.")

    def run() -> None:
        for num_positions, d_model in ((10, 6), (128, 32)):
            label = f"num_positions={num_positions}, d_model={d_model}"
            got = _as_array(_call(fn, num_positions, d_model, label=label), label)
            _check_shape(got, (num_positions, d_model), label)
            expected = sinusoidal_encoding(num_positions, d_model, dtype=np.float64)
            variants = [
                (_sinusoidal_variant(num_positions, d_model, exponent="column"),
                 _Text("지수에 쌍 번호 대신 열 번호를 쓴 것 같습니다.", "the exponent seems to use the column index, not the pair index."),
                 _Text("sin과 cos 한 쌍(2i, 2i+1)은 같은 주파수 10000^(−2i/d)를 씁니다.", "both columns of a pair (2i, 2i+1) share the frequency 10000^(−2i/d).")),
                (sinusoidal_encoding(num_positions, d_model, base=100.0, dtype=np.float64),
                 _Text("지수가 2i/d가 아니라 i/d인 것 같습니다.", "the exponent seems to be i/d instead of 2i/d."),
                 _Text("쌍 i의 주파수는 10000^(−2i/d_model)입니다.", "pair i has frequency 10000^(−2i/d_model).")),
                (_sinusoidal_variant(num_positions, d_model, swap=True),
                 _Text("sin과 cos가 뒤바뀐 것 같습니다.", "sin and cos seem swapped."),
                 _Text("위치 0의 행은 (0, 1, 0, 1, …)이어야 합니다: 짝수 열이 sin입니다.", "row 0 must be (0, 1, 0, 1, …): even columns are sines.")),
                (sinusoidal_encoding(num_positions, d_model, layout="concatenated", dtype=np.float64),
                 _Text("sin을 앞 절반, cos를 뒤 절반에 모은(concatenated) 배치입니다.", "this is the concatenated layout (all sines, then all cosines)."),
                 _Text("이 연습은 논문의 교차(interleaved) 배치를 씁니다: 열 2i는 sin, 2i+1은 cos.", "this exercise uses the paper's interleaved layout: column 2i sin, 2i+1 cos.")),
                (_sinusoidal_variant(num_positions, d_model, start=1),
                 _Text("위치가 1부터 시작하는 것 같습니다.", "positions seem to start at 1."),
                 _Text("첫 행은 위치 0입니다: np.arange(num_positions).", "the first row is position 0: np.arange(num_positions).")),
                (_sinusoidal_variant(num_positions, d_model, angle_dtype=np.float16),
                 _Text("각도를 float16으로 계산한 것 같습니다: 큰 위치에서 값이 틀어집니다.", "the angles seem computed in float16: values drift at large positions."),
                 _Text("각도는 float64(적어도 float32)로 계산하고 마지막에만 형 변환하세요.", "compute the angles in float64 (at least float32) and cast only at the end.")),
            ]
            if num_positions > 1 and np.allclose(got[:, :2], expected[:, :2], atol=1e-4):
                variants.append((got, _Text("쌍 0은 맞고 나머지 쌍의 주파수가 다릅니다. 밑(base)이나 지수를 확인하세요.",
                                            "pair 0 is right but the other pairs' frequencies differ: check the base and the exponent."),
                                 _Text("밑은 10000, 쌍 i의 주파수는 10000^(−2i/d_model)입니다.", "the base is 10000; pair i has frequency 10000^(−2i/d_model).")))
            _compare(got, expected, label, atol=1e-4, variants=variants, index_names="(position, column)")

    return _grade(title, section, run)


# --- 05: RoPE ------------------------------------------------------------------------------------


def check_apply_rope(fn: Callable[[torch.Tensor, torch.Tensor], object]) -> bool:
    """Check ``fn(x, positions) -> tensor`` against :func:`posviz.apply_rope` (RoFormer eq. 34).

    The contract: ``x`` is a float tensor ``(..., seq_len, head_dim)``, ``positions`` an int64
    tensor ``(seq_len,)``; pairs are interleaved ``(2i, 2i+1)`` and rotated counter-clockwise by
    ``positions · 10000^(−2i/head_dim)`` radians; the result has the shape of ``x``. Tested in
    float32 and float64 with positions that are not ``arange`` (up to 100). Catches among others:
    ignoring ``positions``, the half-split pairing, a clockwise rotation, the exponent ``i/d``,
    positions off by one, and rotating only some pairs.

    Returns:
        ``True`` if every check passes, else ``False`` (feedback is printed; never raises).
    """
    title = _Text("RoPE 적용", "applying RoPE")
    section = _Text("05 노트북 §2(식 34)를 다시 보세요: 쌍 (2i, 2i+1)을 위치 × θ_i만큼 반시계 방향으로 돌립니다.",
                    "see notebook 05 §2 (eq. 34): rotate each pair (2i, 2i+1) counter-clockwise by position × θ_i.")

    def run() -> None:
        gen = torch.Generator().manual_seed(0)
        positions = torch.tensor([5, 0, 3, 17, 100, 2], dtype=torch.int64)
        for dtype, shape in ((torch.float32, (2, 3, 6, 8)), (torch.float64, (6, 4))):
            x = torch.randn(shape, generator=gen, dtype=torch.float64).to(dtype)
            label = f"x: {dtype} tensor of shape {tuple(shape)}, positions={positions.tolist()}"
            got = _as_array(_call(fn, x.clone(), positions.clone(), label=label), label)
            _check_shape(got, tuple(shape), label)

            def ref(pos=positions, x=x, **kwargs) -> np.ndarray:
                return apply_rope(x.double(), pos, **kwargs).numpy()

            expected = ref()
            rest = np.isclose(got, x.double().numpy(), atol=1e-4) & ~np.isclose(expected, x.double().numpy(), atol=1e-4)
            variants = [
                (ref(torch.arange(len(positions))),
                 _Text("positions 인자를 쓰지 않고 0, 1, 2, …를 가정한 것 같습니다.", "positions seems ignored (0, 1, 2, … assumed)."),
                 _Text("각도는 주어진 positions로 계산하세요: 왼쪽 패딩이나 KV 캐시에서는 0부터 차례대로가 아닙니다.", "compute the angles from the given positions: with left padding or a KV cache they are not 0, 1, 2, ….")),
                (ref(layout="half"),
                 _Text("쌍을 (i, i + d/2)로 묶은 half 배치입니다.", "this is the half-split pairing (i, i + d/2)."),
                 _Text("이 연습은 논문의 교차 배치 (2i, 2i+1)을 씁니다(05 노트북 §6.1).", "this exercise uses the paper's interleaved pairs (2i, 2i+1) (notebook 05 §6.1).")),
                (ref(-positions),
                 _Text("회전 방향이 반대(시계 방향)입니다.", "the rotation goes the wrong way (clockwise)."),
                 _Text("out[2i] = x[2i]·cos − x[2i+1]·sin, out[2i+1] = x[2i+1]·cos + x[2i]·sin 입니다.", "out[2i] = x[2i]·cos − x[2i+1]·sin and out[2i+1] = x[2i+1]·cos + x[2i]·sin.")),
                (ref(base=100.0),
                 _Text("지수가 2i/d가 아니라 i/d인 것 같습니다.", "the exponent seems to be i/d instead of 2i/d."),
                 _Text("θ_i = 10000^(−2i/head_dim)입니다.", "θ_i = 10000^(−2i/head_dim).")),
                (ref(positions + 1),
                 _Text("위치가 하나씩 밀렸습니다(+1).", "the positions are off by one (+1)."),
                 _Text("위치 m의 각도는 m·θ_i입니다: 위치 0은 돌리지 않습니다.", "position m turns by m·θ_i: position 0 is not rotated.")),
                (ref(positions - 1),
                 _Text("위치가 하나씩 밀렸습니다(−1).", "the positions are off by one (−1)."),
                 _Text("위치 m의 각도는 m·θ_i입니다.", "position m turns by m·θ_i.")),
            ]
            if rest.any():
                variants.append((got, _Text("일부 쌍이 회전하지 않고 그대로 남았습니다.", "some pairs were not rotated at all."),
                                 _Text("head_dim / 2개의 쌍을 모두 돌려야 합니다.", "rotate all head_dim / 2 pairs.")))
            _compare(got, expected, label, atol=1e-4, rtol=1e-4, variants=variants)

    return _grade(title, section, run)


# --- 04: Shaw's relative position index --------------------------------------------------------


def check_relative_position_index(fn: Callable[[int, int], object]) -> bool:
    """Check ``fn(seq_len, max_relative_position) -> (seq_len, seq_len)`` integers (Shaw et al. 2018, §3.2).

    The contract: entry ``[i, j] = clip(j − i, −k, k) + k`` for query ``i`` and key ``j``, as
    :func:`posviz.relative_position_index` computes it; an integer numpy array or torch tensor.
    Catches among others: the sign flipped (``i − j``), no clipping, clipping at ``k − 1``, and
    no ``+k`` shift.

    Returns:
        ``True`` if every check passes, else ``False`` (feedback is printed; never raises).
    """
    title = _Text("상대 위치 인덱스", "relative position index")
    section = _Text("04 노트북 §2를 다시 보세요: [i, j] = clip(j − i, −k, k) + k.",
                    "see notebook 04 §2: [i, j] = clip(j − i, −k, k) + k.")

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
                 _Text("k보다 먼 오프셋은 끝 행(0 또는 2k)을 함께 씁니다: np.clip.", "offsets beyond ±k share the end rows (0 or 2k): np.clip.")),
                (np.clip(offsets, -(k - 1), k - 1) + k,
                 _Text("k가 아니라 k − 1에서 잘랐습니다.", "the clipping is at k − 1 instead of k."),
                 _Text("테이블은 2k + 1행이고 −k … k를 모두 씁니다.", "the table has 2k + 1 rows and uses all of −k … k.")),
                (np.clip(offsets, -k, k),
                 _Text("+k를 더하지 않아 음수 인덱스가 남았습니다.", "k was not added, so negative indices remain."),
                 _Text("행 번호는 0 … 2k여야 합니다: 클리핑한 오프셋에 k를 더하세요.", "row numbers must be 0 … 2k: add k to the clipped offset.")),
            ]
            _compare(got, expected, label, atol=0, variants=variants, index_names="(query, key)")

    return _grade(title, section, run)


# --- 06: ALiBi slopes ------------------------------------------------------------------------------


def check_alibi_slopes(fn: Callable[[int], object]) -> bool:
    """Check ``fn(num_heads) -> (num_heads,)`` floats against :func:`posviz.alibi_slopes` (Press et al. 2022, §3).

    The contract: for a power of two ``n`` the geometric sequence ``2^(−8/n), 2^(−16/n), …, 2^(−8)``;
    for other ``n`` the slopes of the nearest smaller power of two followed by every second slope
    of twice that many heads. Tested for ``n`` = 1, 2, 3, 4, 6, 8, 12, 16. Catches among others:
    the power-of-two formula used for every ``n``, the order reversed, and an exponent off by one.

    Returns:
        ``True`` if every check passes, else ``False`` (feedback is printed; never raises).
    """
    title = _Text("ALiBi 기울기(slope)", "ALiBi slopes")
    section = _Text("06 노트북의 ALiBi 절을 다시 보세요: n이 2의 거듭제곱이 아니면 규칙이 따로 있습니다.",
                    "see notebook 06's ALiBi section: heads that are not a power of two have their own rule.")

    def run() -> None:
        for n in (1, 2, 3, 4, 6, 8, 12, 16):
            label = f"num_heads={n}"
            got = _as_array(_call(fn, n, label=label), label)
            _check_shape(got, (n,), label)
            expected = alibi_slopes(n).numpy()
            heads = np.arange(1, n + 1)
            variants = [
                (2.0 ** (-8.0 * heads / n),
                 _Text("2의 거듭제곱이 아닌 n에도 2^(−8h/n) 공식을 그대로 썼습니다.", "the power-of-two formula 2^(−8h/n) was used for an n that is not a power of two."),
                 _Text("가장 가까운 작은 2의 거듭제곱 p의 기울기 p개에, 2p개짜리 수열의 홀수 번째 항을 더합니다.", "take the p slopes of the nearest smaller power of two p, then the odd-numbered terms of the 2p-head sequence.")),
                (expected[::-1].copy(),
                 _Text("순서가 뒤집혔습니다.", "the order is reversed."),
                 _Text("첫 헤드의 기울기가 가장 큽니다(2^(−8/n)).", "the first head has the largest slope (2^(−8/n)).")),
                (expected * 2.0 ** (8.0 / 2 ** int(math.floor(math.log2(n)))),
                 _Text("지수가 하나 밀렸습니다(첫 기울기가 1).", "the exponent is off by one (the first slope is 1)."),
                 _Text("수열은 2^(−8/n)에서 시작합니다: h = 1, 2, …, n.", "the sequence starts at 2^(−8/n): h = 1, 2, …, n.")),
            ]
            _compare(got, expected, label, atol=0, rtol=1e-5, variants=variants, index_names="head")

    return _grade(title, section, run)


# --- 01: one self-attention head ---------------------------------------------------------------


def _attention(x, w_q, w_k, w_v, *, scale: float | None = None, dim: int = -1) -> np.ndarray:
    q, k, v = x @ w_q, x @ w_k, x @ w_v
    scores = q @ k.T / (math.sqrt(k.shape[-1]) if scale is None else scale)
    return (torch.softmax(scores, dim=dim) @ v).numpy()


def check_self_attention(fn: Callable[..., object]) -> bool:
    """Check ``fn(X, W_q, W_k, W_v) -> softmax(X W_q (X W_k)ᵀ / √d_k) X W_v`` (Vaswani et al. 2017, eq. 1).

    The contract: ``X`` is a float64 tensor ``(seq_len, d_model)``, each ``W`` ``(d_model, d_k)``;
    one head without a mask; the result is ``(seq_len, d_k)``. Tested with ``d_k ≠ d_model``.
    Catches among others: no scaling, scaling by √d_model, the softmax over the wrong axis, and
    returning the attention weights instead of the weighted values.

    Returns:
        ``True`` if every check passes, else ``False`` (feedback is printed; never raises).
    """
    title = _Text("셀프 어텐션 헤드", "one self-attention head")
    section = _Text("01 노트북의 셀프 어텐션 절(식 1)을 다시 보세요.", "see notebook 01's self-attention section (eq. 1).")

    def run() -> None:
        gen = torch.Generator().manual_seed(1)
        x = torch.randn(5, 8, dtype=torch.float64, generator=gen)
        w_q, w_k, w_v = (torch.randn(8, 4, dtype=torch.float64, generator=gen) for _ in range(3))
        label = "X: (5, 8), W_q/W_k/W_v: (8, 4), float64"
        got = _as_array(_call(fn, x.clone(), w_q.clone(), w_k.clone(), w_v.clone(), label=label), label)
        expected = _attention(x, w_q, w_k, w_v)
        weights = torch.softmax((x @ w_q) @ (x @ w_k).T / 2.0, dim=-1).numpy()
        if got.shape == weights.shape and np.allclose(got, weights, atol=1e-6):
            raise _Failed(_Text("어텐션 가중치만 돌려주었습니다: 값(V)을 곱하지 않았습니다.",
                                "this returns the attention weights: the values V are not applied."),
                          f"input: {label}\nexpected shape {expected.shape}, got {got.shape}",
                          _Text("가중치 행렬에 V = X W_v를 곱하세요.", "multiply the weights by V = X W_v."))
        _check_shape(got, expected.shape, label)
        variants = [
            (_attention(x, w_q, w_k, w_v, scale=1.0),
             _Text("점수를 √d_k로 나누지 않았습니다.", "the scores are not divided by √d_k."),
             _Text("점수 Q Kᵀ를 √d_k로 나누어야 softmax가 포화되지 않습니다.", "divide Q Kᵀ by √d_k so that the softmax does not saturate.")),
            (_attention(x, w_q, w_k, w_v, scale=math.sqrt(8)),
             _Text("√d_k 대신 √d_model로 나누었습니다.", "the scores are divided by √d_model instead of √d_k."),
             _Text("나누는 값은 키 벡터의 차원 d_k입니다.", "the scale uses the key dimension d_k.")),
            (_attention(x, w_q, w_k, w_v, dim=0),
             _Text("softmax를 잘못된 축(쿼리 축)으로 했습니다.", "the softmax runs over the wrong axis (queries)."),
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
    ``one_hot(token_ids) @ table``). Catches among others: ids off by one, returning the one-hot
    matrix, multiplying by the transposed table, and summing the rows.

    Returns:
        ``True`` if every check passes, else ``False`` (feedback is printed; never raises).
    """
    title = _Text("임베딩 조회", "embedding lookup")
    section = _Text("02 노트북의 임베딩 테이블 절을 다시 보세요: 원-핫 벡터 × 테이블 = 행 하나.",
                    "see notebook 02's embedding-table section: one-hot vector × table = one row.")

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
             _Text("토큰 번호가 하나씩 밀렸습니다.", "the token ids are off by one."),
             _Text("토큰 번호 i는 테이블의 i번 행(0부터 셈)을 고릅니다.", "token id i picks row i of the table (counting from 0).")),
        ]
        _compare(got, expected, label, atol=1e-6, rtol=1e-6, variants=variants, index_names="(token, feature)")

    return _grade(title, section, run)


# --- 05b: NTK-aware base ---------------------------------------------------------------------------


def check_ntk_scaled_base(fn: Callable[[float, int, float], object]) -> bool:
    """Check ``fn(base, head_dim, factor) -> float``: the NTK-aware base ``b · s^(d/(d−2))``.

    The contract is :func:`posviz.ntk_scaled_base` (bloc97 2023; YaRN paper, Peng et al. 2023,
    §3): with it the fastest pair keeps its frequency and the slowest is slowed by exactly ``s``.
    Catches among others: ``b · s`` (the exponent forgotten), the exponent ``(d−2)/d``, and
    ``b · s^(d/2)``.

    Returns:
        ``True`` if every check passes, else ``False`` (feedback is printed; never raises).
    """
    title = _Text("NTK 방식 밑(base)", "NTK-aware base")
    section = _Text("05b 노트북의 NTK 절을 다시 보세요: 가장 느린 쌍이 정확히 s배 느려지도록 밑을 고릅니다.",
                    "see notebook 05b's NTK section: the base is chosen so that the slowest pair is slowed by exactly s.")

    def run() -> None:
        for base, head_dim, factor in ((10000.0, 64, 4.0), (500000.0, 128, 8.0), (10000.0, 16, 2.0)):
            label = f"base={base:g}, head_dim={head_dim}, factor={factor:g}"
            value = _call(fn, base, head_dim, factor, label=label)
            got = _as_array(value, label).reshape(-1)
            _check_shape(got, (1,), label)
            d = head_dim
            expected = np.array([ntk_scaled_base(base, head_dim, factor)])
            variants = [
                (np.array([base * factor]), _Text("지수 d/(d−2)를 빠뜨렸습니다.", "the exponent d/(d−2) is missing."),
                 _Text("b·s는 가장 느린 쌍을 s배보다 덜 늦춥니다. 식을 다시 세워 보세요.", "b·s slows the slowest pair by less than s: derive the exponent again.")),
                (np.array([base * factor ** ((d - 2) / d)]), _Text("지수가 뒤집혔습니다: (d−2)/d.", "the exponent is inverted: (d−2)/d."),
                 _Text("가장 느린 쌍의 주파수 b^(−(d−2)/d)가 정확히 1/s배가 되도록 푸세요.", "solve for the slowest pair's frequency b^(−(d−2)/d) to shrink by exactly 1/s.")),
                (np.array([base * factor ** (d / 2)]), _Text("지수가 d/2입니다.", "the exponent is d/2."),
                 _Text("지수는 d/(d−2)입니다.", "the exponent is d/(d−2).")),
            ]
            _compare(got, expected, label, atol=0, rtol=1e-6, variants=variants, index_names="item")

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
    from .pretrained import permute_qk_rows, unpermute_qk_rows

    title = _Text("q/k 행 순서 바꾸기", "un-permuting q/k rows")
    section = _Text("07 노트북의 행 순서 절을 다시 보세요: 헤드마다 interleaved_to_half(head_dim) 순서로 행을 고릅니다.",
                    "see notebook 07's row-order section: within each head, rows are taken in interleaved_to_half(head_dim) order.")

    def run() -> None:
        gen = torch.Generator().manual_seed(3)
        for num_heads, head_dim, in_features in ((3, 8, 5), (2, 4, 3)):
            weight = torch.randn(num_heads * head_dim, in_features, generator=gen)
            label = f"weight: ({num_heads * head_dim}, {in_features}) float32, num_heads={num_heads} (head_dim={head_dim})"
            got = _as_array(_call(fn, weight.clone(), num_heads, label=label), label)
            _check_shape(got, tuple(weight.shape), label)
            expected = unpermute_qk_rows(weight, num_heads).double().numpy()
            variants = [
                (permute_qk_rows(weight, num_heads).double().numpy(),
                 _Text("반대 방향(Hugging Face → GGUF) 순열을 적용했습니다.", "this is the inverse permutation (Hugging Face → GGUF)."),
                 _Text("GGUF 행 2i와 2i+1이 Hugging Face의 i와 i + head_dim/2로 가야 합니다.", "GGUF rows 2i and 2i+1 must go to Hugging Face rows i and i + head_dim/2.")),
                (unpermute_qk_rows(weight, 1).double().numpy(),
                 _Text("헤드를 나누지 않고 전체 행에 한 번에 순열을 적용했습니다.", "the permutation was applied across all rows at once (heads ignored)."),
                 _Text("행을 (num_heads, head_dim, in_features)로 나눈 뒤 헤드마다 순서를 바꾸세요.", "split the rows into (num_heads, head_dim, in_features) and reorder within each head.")),
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
        if column_major:  # frame by frame, but column by column inside a frame
            tt, hh, ww = (a.transpose(0, 2, 1) for a in (tt, hh, ww))
        ids = np.stack([tt.ravel(), hh.ravel(), ww.ravel()])
        if swap:
            ids = ids[[0, 2, 1]]
        parts.append(ids + start)
        start += {"max": max(t, h, w), "count": t * h * w, "hw": max(h, w)}[advance]
    return np.concatenate(parts, axis=1).astype(np.int64)


def check_mrope_position_ids(fn: Callable[[list], object]) -> bool:
    """Check ``fn(segments) -> (3, total)`` integer M-RoPE position ids (Qwen2-VL, Wang et al. 2024, §2.1).

    The contract is :func:`posviz.mrope_position_ids`: ``segments`` is a list of text-run lengths
    (``int``) and vision grids ``(t, h, w)``; text advances all three rows together; a grid gets
    ``(s + τ, s + i, s + j)`` listed frame by frame and row by row; what follows starts at one past
    the largest id so far. Tried on prompts with text first and last, an image first, non-square
    grids, a video, two grids in a row, and a video with more frames than rows and columns.
    Catches among others: text that continues by the number of vision tokens instead of
    max + 1, rows and columns swapped, a grid flattened column by column, and continuing after
    a video at ``s + max(h, w)`` (ignoring the frames).

    Returns:
        ``True`` if every check passes, else ``False`` (feedback is printed; never raises).
    """
    from .rope2d import mrope_position_ids

    title = _Text("M-RoPE 위치 번호", "M-RoPE position ids")
    section = _Text(
        "08 노트북 4절을 다시 보세요: 텍스트는 세 행이 함께 1씩, 격자는 (s + τ, s + i, s + j), 그다음은 지금까지의 최댓값 + 1에서 시작합니다.",
        "see notebook 08 §4: text moves all three rows by 1, a grid gets (s + τ, s + i, s + j), and what follows starts at the largest id so far + 1.",
    )
    prompts = (
        [3, (1, 2, 3), 2],
        [(1, 3, 2), 4],
        [2, (2, 2, 3), (1, 2, 2), 1],
        [1, (3, 2, 2), 2],
    )
    mistakes = (
        (dict(advance="count"),
         _Text("격자 다음 텍스트가 시각 토큰 수만큼 건너뛰었습니다(s + t·h·w). 지금까지의 최댓값 + 1에서 이어 가야 합니다.",
               "the text after a grid skips the number of vision tokens (s + t·h·w) instead of continuing at the largest id so far + 1."),
         _Text("격자가 쓴 가장 큰 번호는 s + max(t, h, w) − 1이므로, 다음 토큰은 s + max(t, h, w)입니다.",
               "the largest id a grid uses is s + max(t, h, w) − 1, so the next token gets s + max(t, h, w).")),
        (dict(swap=True),
         _Text("높이(행)와 너비(열) 번호가 뒤바뀌었습니다.", "the height (row) and width (column) ids are swapped."),
         _Text("둘째 행은 패치의 행 번호 i, 셋째 행은 열 번호 j입니다.", "the second row holds the patch's row i, the third its column j.")),
        (dict(column_major=True),
         _Text("격자를 열 순서로 펼쳤습니다. 패치는 행 순서(한 행의 열을 먼저)로 나옵니다.",
               "the grid is flattened column by column; patches come row by row (the columns of one row first)."),
         _Text("torch.meshgrid(..., indexing=\"ij\")로 (t, h, w) 격자를 만들고 flatten하면 행 순서가 됩니다.",
               "build the (t, h, w) grid with torch.meshgrid(..., indexing=\"ij\") and flatten it: that is row order.")),
        (dict(advance="hw"),
         _Text("영상 다음 텍스트를 s + max(h, w)에서 시작했습니다. 프레임 번호가 더 크면 그 뒤에서 이어 가야 합니다.",
               "the text after a video starts at s + max(h, w); when the frame ids go higher, it must start past them."),
         _Text("세 행 전체의 최댓값 + 1, 즉 s + max(t, h, w)입니다.", "it is the largest id in all three rows + 1: s + max(t, h, w).")),
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
