"""The feedback harness behind :mod:`posviz.exercises`: run a learner's function, diagnose, explain.

A checker in :mod:`posviz.exercises` is a function ``run()`` of checks wrapped by :func:`_grade`.
The checks raise :class:`_Failed` (what went wrong, the detail lines, a hint) or
:class:`_NotAttempted`; :func:`_grade` prints the verdict in the language set by
:func:`posviz.setup` and returns ``True`` or ``False``. The helpers here turn the usual ways an
answer goes wrong into their own messages, so that a checker only lists the mistakes that belong
to its exercise:

* :func:`_call` runs the learner's function; an exception prints the failing line of the
  learner's code (file, line number, source line, from the traceback) next to the error;
* :func:`_as_array` accepts numpy arrays, torch tensors, lists and scalars; it names a missing
  ``return`` (``None``), a tuple of results, and remembers the result's own dtype;
* :func:`_check_shape` names a transposed result;
* :func:`_compare` prints the place of the largest mismatch, the largest gap next to the tolerance, and the
  diagnosis of the first known mistake (a *variant*) that the answer equals; before the
  variants it names a float16/bfloat16 result and an integer result, after them a near miss.

Every detail line exists in Korean and English (``입력``/``input``, ``기댓값``/``expected``,
``실제값``/``got``, ``모양``/``shape``, ``자료형``/``dtype``). Nothing here is public API: the names
keep their leading underscore, and :mod:`posviz.exercises` imports them under the same names.
"""

from __future__ import annotations

import contextlib
import os
import sys
import sysconfig
import traceback
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from .style import get_language

__all__ = ["notebook_implementation"]


@dataclass(frozen=True)
class _Text:
    """One message in both languages."""

    ko: str
    en: str


def _lines(*texts: _Text) -> _Text:
    """Several messages as one, a line each."""
    return _Text("\n".join(t.ko for t in texts), "\n".join(t.en for t in texts))


# Korean names of the index axes that checkers pass to _compare as English strings.
_INDEX_KO = {
    "index": "인덱스",
    "item": "항목",
    "head": "헤드",
    "(position, column)": "(위치, 열)",
    "(query, key)": "(쿼리, 키)",
    "(query, feature)": "(쿼리, 성분)",
    "(token, feature)": "(토큰, 성분)",
    "(row, column)": "(행, 열)",
    "(position, dimension)": "(위치, 차원)",
    "position": "위치",
    "token": "토큰",
    "(axis, token)": "(축, 토큰)",
    "(row, token)": "(행, 토큰)",
    "(axis, position)": "(축, 위치)",
    "(token, axis)": "(토큰, 축)",
    "(position, axis)": "(위치, 축)",
}  # a checker may also pass a _Text


class _NotAttempted(Exception):
    """The learner's function still raises ``NotImplementedError``."""


class _Failed(Exception):
    """A failed check: ``what`` went wrong, the ``detail`` lines (a ``_Text`` or one plain string) and a ``hint``."""

    def __init__(self, what: _Text, detail: _Text | str = "", hint: _Text | None = None):
        super().__init__(what.en)
        self.what, self.detail, self.hint = what, detail, hint


_own_implementation = False


@contextlib.contextmanager
def notebook_implementation() -> Iterator[None]:
    """Label the verdicts of the checkers run inside this block as the notebook's own implementation.

    A notebook's check cell runs its own code through the checker that grades the learner's
    answer just above; without the label, a learner's ✗ is followed by a ✓ with the same title::

        with posviz.exercises.notebook_implementation():
            assert posviz.exercises.check_apply_rope(rope_from_scratch)
    """
    global _own_implementation
    previous, _own_implementation = _own_implementation, True
    try:
        yield
    finally:
        _own_implementation = previous


def _say(text: _Text) -> None:
    lang = get_language()
    if lang in ("ko", "both"):
        print(text.ko)
    if lang in ("en", "both"):
        print(text.en)


def _indent(text: str) -> str:
    return "   " + text.replace("\n", "\n   ")


def _say_detail(detail: _Text | str) -> None:
    if isinstance(detail, _Text):
        _say(_Text(_indent(detail.ko), _indent(detail.en)))
    elif detail:
        print(_indent(detail))


def _grade(title: _Text, section: _Text, run: Callable[[], None]) -> bool:
    """Run the checks in ``run``; print the verdict; never raise for the learner's answer."""
    if _own_implementation:
        title = _Text(f"{title.ko} (노트북의 구현)", f"{title.en} (the notebook's implementation)")
    try:
        run()
    except _NotAttempted:
        _say(_Text(f"○ {title.ko}: 아직 풀지 않았습니다. `raise NotImplementedError`를 지우고 함수를 완성한 뒤 셀을 다시 실행하세요.",
                   f"○ {title.en}: not attempted yet. Replace `raise NotImplementedError` with your code and run the cell again."))
        return False
    except _Failed as failure:
        hint = failure.hint or section
        _say(_Text(f"✗ {title.ko}: {failure.what.ko}", f"✗ {title.en}: {failure.what.en}"))
        _say_detail(failure.detail)
        _say(_Text(f"   힌트: {hint.ko}", f"   Hint: {hint.en}"))
        return False
    except Exception as error:  # a bug in the comparison must not break "Run All" either
        _say(_Text(f"✗ {title.ko}: 결과를 검사하지 못했습니다({type(error).__name__}: {error}).",
                   f"✗ {title.en}: could not check the result ({type(error).__name__}: {error})."))
        return False
    _say(_Text(f"✓ {title.ko}: 모든 검사를 통과했습니다.", f"✓ {title.en}: all checks passed."))
    return True


def _input(label: str) -> _Text:
    return _Text(f"입력: {label}", f"input: {label}")


# --- calling the learner's function ----------------------------------------------------------

_PACKAGE = Path(__file__).resolve().parent
_LIBRARY_DIRS = tuple({str(Path(p).resolve()) for key in ("stdlib", "platstdlib", "purelib", "platlib")
                       if (p := sysconfig.get_paths().get(key))})


def _is_library(filename: str) -> bool:
    try:
        path = str(Path(filename).resolve())
    except (OSError, ValueError):
        return False
    return path.startswith(str(_PACKAGE)) or path.startswith(_LIBRARY_DIRS) or path.startswith(sys.prefix + os.sep + "lib")


def _failing_line(error: BaseException) -> _Text | None:
    """The last line of the learner's own code in ``error``'s traceback (not numpy's, torch's or ours)."""
    frames = traceback.extract_tb(error.__traceback__)[1:]  # the first frame is _call itself
    own = [f for f in frames if not _is_library(f.filename)]
    if not (own or frames):
        return None
    frame = (own or frames)[-1]
    line = (frame.line or "").strip()
    if "ipykernel_" in frame.filename or frame.filename.startswith("<"):
        place = _Text("노트북 셀", "a notebook cell")
    else:
        place = _Text(Path(frame.filename).name, Path(frame.filename).name)
    return _Text(f"오류가 난 줄: {place.ko}의 {frame.lineno}번째 줄({frame.name} 함수): {line}",
                 f"failing line: {place.en}, line {frame.lineno} (in {frame.name}): {line}")


def _call(fn: Callable, *args, label: str):
    """Call the learner's function; turn its exceptions into feedback with the failing line."""
    if not callable(fn):
        raise _Failed(_Text("함수를 넘겨야 합니다.", "pass a function."),
                      _Text(f"받은 것: {type(fn).__name__}", f"got: {type(fn).__name__}"),
                      _Text("괄호 없이 함수 이름만 넘기세요: check_…(my_function).",
                            "pass the function itself, without calling it: check_…(my_function)."))
    try:
        return fn(*args)
    except NotImplementedError:
        raise _NotAttempted from None
    except Exception as error:
        lines = [_input(label), _Text(f"오류: {type(error).__name__}: {error}", f"{type(error).__name__}: {error}")]
        where = _failing_line(error)
        if where is not None:
            lines.append(where)
        raise _Failed(
            _Text("함수 안에서 오류가 났습니다.", "your function raised an error."),
            _lines(*lines),
            _Text("위에 적힌 줄을 고친 뒤 셀을 다시 실행하세요. 모양이 맞지 않는다는 오류라면 각 배열이나 텐서의 .shape를 출력해 보세요.",
                  "fix the line shown above and run the cell again; for a size mismatch, print the .shape of each array or tensor."),
        ) from None


# --- the learner's result as an array --------------------------------------------------------


class _Array(np.ndarray):
    """A float64 (or int64) array that remembers the dtype the learner returned (``origin``)."""

    origin: str = ""

    def __array_finalize__(self, obj) -> None:
        self.origin = getattr(obj, "origin", "")


def _tagged(array: np.ndarray, origin: str) -> np.ndarray:
    out = np.asarray(array).view(_Array)
    out.origin = origin
    return out


def _as_array(value, label: str, *, integer: bool = False) -> np.ndarray:
    """The learner's result as a numpy array (float64, or int64 with ``integer=True``)."""
    if value is None:
        raise _Failed(_Text("함수가 None을 돌려주었습니다. `return`이 빠졌을 수 있습니다.",
                            "your function returned None: is a `return` missing?"),
                      _input(label),
                      _Text("결과를 계산한 뒤 함수의 마지막 줄에서 `return`으로 돌려주세요.",
                            "compute the result and hand it back with `return` at the end of the function."))
    if isinstance(value, tuple) and any(isinstance(v, (torch.Tensor, np.ndarray)) for v in value):
        raise _Failed(_Text(f"결과가 배열 하나가 아니라 값 {len(value)}개짜리 tuple입니다.",
                            f"the result is a tuple of {len(value)} values, not one array."),
                      _input(label),
                      _Text("`return a, b`는 tuple을 돌려줍니다: 결과 배열 하나만 돌려주세요.",
                            "`return a, b` returns a tuple: return the result array alone."))
    if isinstance(value, torch.Tensor):
        value = value.detach().cpu()
        origin = str(value.dtype).replace("torch.", "")
        is_int = not value.is_floating_point() and not value.is_complex() and value.dtype != torch.bool
        value = value.numpy() if is_int else value.double().numpy()
    else:
        origin = ""
    try:
        array = np.asarray(value)
    except (ValueError, TypeError) as error:
        raise _Failed(_Text("결과를 배열 하나로 만들 수 없습니다(길이가 다른 목록이 섞여 있습니다).",
                            "the result cannot be made into one array (it mixes lists of different lengths)."),
                      _lines(_input(label), _Text(f"오류: {error}", f"error: {error}"))) from None
    origin = origin or str(array.dtype)
    if integer:
        if not np.issubdtype(array.dtype, np.integer):
            raise _Failed(
                _Text("결과는 정수여야 합니다(위치 번호와 행 번호는 정수입니다).", "the result must be integers (position ids and row indices are whole numbers)."),
                _lines(_input(label), _Text(f"받은 자료형: {array.dtype}", f"got dtype: {array.dtype}")),
                _Text("정수 배열로 돌려주세요: np.arange처럼 정수로 계산하거나 마지막에 .astype(np.int64)를 붙이세요.",
                      "return integers: compute with integers (as np.arange does) or end with .astype(np.int64)."),
            )
        return _tagged(array.astype(np.int64), origin)
    if not (np.issubdtype(array.dtype, np.floating) or np.issubdtype(array.dtype, np.integer)):
        raise _Failed(_Text("결과가 숫자 배열이 아닙니다.", "the result is not a numeric array."),
                      _lines(_input(label), _Text(f"받은 것: 자료형이 {array.dtype}인 {type(value).__name__}",
                                                  f"got: {type(value).__name__} of dtype {array.dtype}")))
    return _tagged(array.astype(np.float64), origin)


def _check_shape(got: np.ndarray, shape: tuple[int, ...], label: str) -> None:
    if got.shape == tuple(shape):
        return
    detail = _lines(_input(label), _Text(f"기대한 모양: {tuple(shape)}, 받은 모양: {got.shape}",
                                         f"expected shape: {tuple(shape)}, got shape: {got.shape}"))
    if len(shape) >= 2 and shape[-1] != shape[-2] and got.shape == (*shape[:-2], shape[-1], shape[-2]):
        raise _Failed(_Text("결과가 전치되어 있습니다: 마지막 두 축(행과 열)이 바뀌었습니다.",
                            "the result is transposed: its last two axes (rows and columns) are swapped."),
                      detail,
                      _Text("행과 열을 맞바꾸세요(결과에 .T를 붙이거나, 배열을 만들 때 축의 순서를 바꾸면 됩니다).",
                            "swap rows and columns (e.g. add .T to the result, or build the array with its axes in the other order)."))
    raise _Failed(_Text("결과의 모양(shape)이 다릅니다.", "the result has the wrong shape."), detail,
                  _Text("문제에 적힌 모양을 따르세요: 축의 개수와 순서를 확인하세요.",
                        "follow the shape the exercise asks for: check the number and order of the axes."))


# --- comparing with the reference ------------------------------------------------------------


def _worst_mismatch(got: np.ndarray, expected: np.ndarray, atol: float, rtol: float) -> tuple[int, ...] | None:
    """The index where ``got`` misses ``expected`` by the most (beyond the tolerance), or None if
    it never does; a NaN or infinite value counts as the worst. Showing the worst place, not the
    first, keeps a real mistake from looking like a rounding slip."""
    bad = ~np.isclose(got, expected, atol=atol, rtol=rtol)
    if not bad.any():
        return None
    with np.errstate(invalid="ignore", over="ignore"):
        excess = np.abs(np.asarray(got, dtype=np.float64) - expected) - (atol + rtol * np.abs(expected))
    excess = np.where(np.isfinite(excess), excess, np.inf)
    return tuple(int(i) for i in np.unravel_index(int(np.argmax(np.where(bad, excess, -np.inf))), bad.shape))


def _tolerance(atol: float, rtol: float) -> str:
    parts = [f"{atol:.1e}"] if atol else []
    if rtol:
        parts.append(f"{rtol:.0e}·|기댓값|")
    return " + ".join(parts) or "0"


def _compare(
    got: np.ndarray,
    expected: np.ndarray,
    label: str,
    *,
    atol: float,
    rtol: float = 0.0,
    variants: Sequence[tuple[np.ndarray, _Text, _Text]] = (),
    index_names: str | _Text = "index",
    describe: Callable[[tuple[int, ...]], _Text] | None = None,
    show_arrays: bool = False,
) -> None:
    """Raise ``_Failed`` with a counter-example (the place of the largest miss), the gap and a
    diagnosis, if ``got`` differs from ``expected``.

    ``variants`` are known mistakes ``(values, what, hint)``, tried in order; ``describe`` names
    the mismatch in the exercise's own terms (e.g. position m and pair i); ``show_arrays`` prints
    both arrays when they are small.
    """
    got = np.asarray(got) if not isinstance(got, np.ndarray) else got
    where = _worst_mismatch(got, expected, atol, rtol)
    if where is None:
        return
    if isinstance(index_names, str):
        index_names = _Text(_INDEX_KO.get(index_names, index_names), index_names)
    at = where if len(where) > 1 else where[0]
    gap = float(np.max(np.abs(np.asarray(got, dtype=np.float64) - expected)))
    limit = atol + rtol * abs(float(expected[where]))
    lines = [
        _input(label),
        _Text(f"{index_names.ko} {at}에서: 기댓값 {expected[where]:.6g}, 실제값 {got[where]:.6g}",
              f"at {index_names.en} {at}: expected {expected[where]:.6g}, got {got[where]:.6g}")
        if expected.size > 1 else
        _Text(f"기댓값 {expected[where]:.6g}, 실제값 {got[where]:.6g}", f"expected {expected[where]:.6g}, got {got[where]:.6g}"),
    ]
    if describe is not None:
        lines.append(describe(where))
    if rtol:  # the tolerance depends on the expected value: say what it is at the mismatch above
        lines.append(_Text(f"가장 큰 차이 {gap:.2g} (허용 오차 {_tolerance(atol, rtol)}, 위에 적은 기댓값에서는 {limit:.2g})",
                           f"largest gap {gap:.2g} (tolerance {_tolerance(atol, rtol).replace('기댓값', 'expected')}, "
                           f"{limit:.2g} for the expected value above)"))
    else:
        lines.append(_Text(f"가장 큰 차이 {gap:.2g} (허용 오차 {_tolerance(atol, rtol)})",
                           f"largest gap {gap:.2g} (tolerance {_tolerance(atol, rtol)})"))
    if show_arrays and expected.size <= 100:
        fmt = (lambda a: np.array2string(np.asarray(a, dtype=np.int64))) if np.issubdtype(expected.dtype, np.integer) \
            else (lambda a: np.array2string(np.asarray(a, dtype=np.float64), precision=4, suppress_small=True))
        lines.append(_Text(f"기댓값 전체:\n{fmt(expected)}\n실제값 전체:\n{fmt(got)}",
                           f"expected, in full:\n{fmt(expected)}\ngot, in full:\n{fmt(got)}"))
    detail = _lines(*lines)
    scale = float(np.max(np.abs(expected))) if expected.size else 1.0
    near = bool(np.allclose(np.asarray(got, dtype=np.float64), expected, rtol=5e-3, atol=1e-3 * max(scale, 1e-12)))
    origin = getattr(got, "origin", "")
    if origin in ("float16", "bfloat16") and near:
        raise _Failed(_Text(f"결과의 자료형이 {origin}(반정밀도)입니다: 유효 숫자가 3자리 남짓이라 허용 오차를 넘습니다.",
                            f"the result is {origin} (half precision): with about 3 significant digits it misses the tolerance."),
                      detail,
                      _Text("계산은 float64(적어도 float32)로 하고, 결과도 float32나 float64로 돌려주세요.",
                            "compute in float64 (at least float32) and return float32 or float64."))
    if origin and np.issubdtype(np.dtype(origin), np.integer) and not np.issubdtype(expected.dtype, np.integer):
        raise _Failed(_Text(f"결과가 정수 배열({origin})입니다: 소수 부분이 모두 버려졌습니다.",
                            f"the result is an integer array ({origin}): every fractional part was dropped."),
                      detail,
                      _Text("결과를 담을 배열을 실수(float) 배열로 만드세요: np.zeros((n, d))는 float64이지만 정수 배열의 np.zeros_like는 정수입니다.",
                            "make the output array a float one: np.zeros((n, d)) is float64, np.zeros_like of an integer array is not."))
    for variant, what, hint in variants:
        if variant.shape == got.shape and np.allclose(got, variant, atol=atol, rtol=rtol):
            raise _Failed(what, detail, hint)
    if near:
        raise _Failed(_Text("거의 맞지만 허용 오차를 넘습니다: 중간 계산의 정밀도(float16)나 반올림을 확인하세요.",
                            "nearly right, but past the tolerance: check the precision of intermediate steps (float16) or rounding."),
                      detail,
                      _Text("중간 계산도 float64(적어도 float32)로 하고 마지막에만 형 변환하세요.",
                            "keep the intermediate steps in float64 (at least float32) and cast only at the end."))
    raise _Failed(_Text("값이 참조 구현과 다릅니다.", "the values differ from the reference."), detail)
