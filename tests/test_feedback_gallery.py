"""A gallery of learners' mistakes and the diagnosis each must get, in Korean and in English.

The cases come from the learner test (44 answers through the checkers) and the technical reviews;
each wrong answer must fail with its own headline, and the feedback must be something a learner
can act on: the gap next to the tolerance, a counter-example they can rebuild, the failing line
of their code, every line in the chosen language, and hints that point to headings that exist.
The notebook tests at the end check that no check cell gives an answer away before its solution.
"""

import json
import math
import re
from pathlib import Path

import numpy as np
import pytest
import torch
from hf import transformers_with_torch

import posviz
from posviz import exercises

ROOT = Path(__file__).resolve().parent.parent
HANGUL = re.compile(r"[\uac00-\ud7a3]")


@pytest.fixture(autouse=True)
def restore_language():
    previous = posviz.get_language()
    yield
    posviz.set_language(previous)


def run(checker, answer, lang, capsys):
    posviz.set_language(lang)
    capsys.readouterr()
    passed = checker(answer)
    return passed, capsys.readouterr().out


# --- the learners' answers ----------------------------------------------------------------------


def rope(x, positions, *, theta=None, angle_positions=None, half_cos_sin=False):
    d = x.shape[-1]
    if theta is None:
        theta = 10000.0 ** (-2 * torch.arange(d // 2, dtype=torch.float64) / d)
    p = positions if angle_positions is None else angle_positions
    angles = p.to(torch.float64)[:, None] * theta
    cos, sin = torch.cos(angles), torch.sin(angles)
    if half_cos_sin:
        cos, sin = cos.half(), sin.half()
    cos, sin = cos.to(x.dtype), sin.to(x.dtype)
    a, b = x[..., 0::2], x[..., 1::2]
    return torch.stack([a * cos - b * sin, b * cos + a * sin], dim=-1).flatten(-2)


def rope_pair_index_from_one(x, positions):  # the paper's i = 1 … d/2 put into 10000^(−2i/d)
    d = x.shape[-1]
    i = torch.arange(1, d // 2 + 1, dtype=torch.float64)
    return rope(x, positions, theta=10000.0 ** (-2 * i / d))


def rope_some_pairs(x, positions):
    out = rope(x, positions)
    out[..., 4:] = x[..., 4:]
    return out


def rope_crashes(x, positions):
    angles = positions[:, None] * torch.ones(x.shape[-1] // 2)
    return x * torch.cos(angles)  # (…, d) times (seq, d/2): the sizes do not match


def sin_table(n, d):
    return posviz.sinusoidal_encoding(n, d, dtype=np.float64)


def sin_into_integer_array(n, d):
    out = np.zeros_like(np.arange(n * d).reshape(n, d))  # an integer array
    out[:] = sin_table(n, d)
    return out


def sin_without_return(n, d):
    sin_table(n, d)


def slopes(n, *, extras="odd", odd_extras_reversed=False):
    p = 2 ** int(math.floor(math.log2(n)))

    def geometric(m):
        return [2.0 ** (-8.0 * h / m) for h in range(1, m + 1)]

    extra = geometric(2 * p)[slice(0, None, 2) if extras == "odd" else slice(1, None, 2)][: n - p]
    if odd_extras_reversed and len(extra) > 1 and len(extra) % 2 == 1:
        extra = extra[::-1]
    return geometric(p) + extra


def index(n, k, *, low=None, high=None):
    offsets = np.arange(n)[None, :] - np.arange(n)[:, None]
    return np.clip(offsets, -k if low is None else low, k if high is None else high) + k


def dynamic(b, d, s, context, ell):
    return b * (s * max(ell, context) / context - (s - 1)) ** (d / (d - 2))


# (case id, checker, wrong answer, words in the English headline, words in the Korean headline)
GALLERY = [
    ("sin exponent i/d", exercises.check_sinusoidal_encoding, lambda n, d: posviz.sinusoidal_encoding(n, d, base=100.0), "i/d instead of 2i/d", "i/d인 것 같습니다"),
    ("sin swapped", exercises.check_sinusoidal_encoding, lambda n, d: sin_table(n, d).reshape(n, d // 2, 2)[..., ::-1].reshape(n, d), "swapped", "뒤바뀐"),
    ("sin positions from 1", exercises.check_sinusoidal_encoding, lambda n, d: sin_table(n + 1, d)[1:], "start at 1", "1부터 시작"),
    ("sin concatenated", exercises.check_sinusoidal_encoding, lambda n, d: posviz.sinusoidal_encoding(n, d, layout="concatenated"), "concatenated layout", "이어 붙인"),
    ("sin base 1000", exercises.check_sinusoidal_encoding, lambda n, d: posviz.sinusoidal_encoding(n, d, base=1000.0), "pair 0 is right", "짝 0은 맞고"),
    ("sin integer array", exercises.check_sinusoidal_encoding, sin_into_integer_array, "integer array", "정수 배열"),
    ("sin transposed", exercises.check_sinusoidal_encoding, lambda n, d: sin_table(n, d).T, "transposed", "전치"),
    ("sin missing return", exercises.check_sinusoidal_encoding, sin_without_return, "returned None", "`return`이 빠졌을 수 있습니다"),
    ("sin float16 output", exercises.check_sinusoidal_encoding, lambda n, d: sin_table(n, d).astype(np.float16), "is float16", "float16(반정밀도)입니다"),
    ("index sign flipped", exercises.check_relative_position_index, lambda n, k: index(n, k).T, "sign is flipped", "부호가 뒤집혔습니다"),
    ("index no +k", exercises.check_relative_position_index, lambda n, k: index(n, k) - k, "k was not added", "+k를 더하지 않아"),
    ("index floats", exercises.check_relative_position_index, lambda n, k: index(n, k).astype(float), "must be integers", "정수여야 합니다"),
    ("index upper clip 2k-1", exercises.check_relative_position_index, lambda n, k: index(n, k, high=k - 1), "only the upper end", "위쪽 끝만"),
    ("index k hard-coded", exercises.check_relative_position_index, lambda n, k: index(n, 2), "max_relative_position seems ignored", "max_relative_position 인자를 쓰지 않은"),
    ("rope ignores positions", exercises.check_apply_rope, lambda x, p: rope(x, p, angle_positions=torch.arange(len(p))), "positions seems ignored", "positions 인자를 쓰지 않고"),
    ("rope half pairing", exercises.check_apply_rope, lambda x, p: posviz.apply_rope(x, p, layout="half"), "half-split", "절반 짝"),
    ("rope clockwise", exercises.check_apply_rope, lambda x, p: rope(x, p, angle_positions=-p), "clockwise", "시계 방향"),
    ("rope pair index from 1", exercises.check_apply_rope, rope_pair_index_from_one, "counted from 1: every pair turns", "1부터 센 것 같습니다"),
    ("rope minus first position", exercises.check_apply_rope, lambda x, p: rope(x, p, angle_positions=p - p[0]), "first position positions[0] seems subtracted", "첫 위치 positions[0]을 뺀"),
    ("rope float16 cos/sin", exercises.check_apply_rope, lambda x, p: rope(x, p, half_cos_sin=True), "float16 (half precision)", "float16(반정밀도)"),
    ("rope some pairs unrotated", exercises.check_apply_rope, rope_some_pairs, "pair(s) 2, 3 were not rotated", "그대로 남은 짝이 있습니다: 짝 2, 3"),
    ("rope returns a tuple", exercises.check_apply_rope, lambda x, p: (rope(x, p), p), "tuple of 2 values", "tuple입니다"),
    ("rope float16 output", exercises.check_apply_rope, lambda x, p: rope(x, p).half(), "is float16", "float16(반정밀도)입니다"),
    ("alibi odd extras reversed", exercises.check_alibi_slopes, lambda n: slopes(n, odd_extras_reversed=True), "reverse order", "순서가 뒤집혔습니다"),
    ("alibi even-numbered extras", exercises.check_alibi_slopes, lambda n: slopes(n, extras="even"), "even-numbered terms", "짝수 번째 항"),
    ("embedding ids minus one", exercises.check_embedding_lookup, lambda ids, table: table[ids - 1], "off by one (−1)", "밀렸습니다(−1)"),
    ("dynamic no clamp", exercises.check_dynamic_ntk_base, lambda b, d, s, c, ell: b * (s * ell / c - (s - 1)) ** (d / (d - 2)), "shrinks for ℓ < L₀", "ℓ < L₀에서 base를 줄였습니다"),
    ("dynamic integer division", exercises.check_dynamic_ntk_base, lambda b, d, s, c, ell: b * (s * max(ell, c) / c - (s - 1)) ** (d // (d - 2)), "integer division (//)", "정수 나눗셈(//)"),
    ("dynamic factor ignored", exercises.check_dynamic_ntk_base, lambda b, d, s, c, ell: dynamic(b, d, 1.0, c, ell), "factor (s) is ignored", "factor(s)를 쓰지 않고"),
    ("dynamic fixed NTK base", exercises.check_dynamic_ntk_base, lambda b, d, s, c, ell: posviz.ntk_scaled_base(b, d, s), "length ℓ is not used", "길이 ℓ을 쓰지 않았습니다"),
    ("crash", exercises.check_apply_rope, rope_crashes, "your function raised an error", "함수 안에서 오류가 났습니다"),
]


@pytest.mark.parametrize("case", GALLERY, ids=[c[0] for c in GALLERY])
def test_each_mistake_gets_its_own_diagnosis_in_both_languages(case, capsys):
    _, checker, answer, en, ko = case
    passed, out = run(checker, answer, "en", capsys)
    assert passed is False
    headline = out.splitlines()[0]
    assert headline.startswith("✗") and en in headline, out
    assert "differ from the reference" not in headline
    passed, out = run(checker, answer, "ko", capsys)
    assert passed is False
    assert ko in out.splitlines()[0], out


@pytest.mark.parametrize("case", GALLERY, ids=[c[0] for c in GALLERY])
def test_every_korean_line_is_korean(case, capsys):
    """In ``ko`` every printed line is Korean, or has no letters at all (a printed matrix)."""
    _, checker, answer, _, _ = case
    _, out = run(checker, answer, "ko", capsys)
    for line in out.splitlines():
        assert HANGUL.search(line) or not re.search(r"[A-Za-z]", line), f"English line in ko feedback: {line!r}"
    for label in ("input:", "expected ", "got ", "Hint:", "shape:", "dtype:", "at index"):
        assert label not in out, label


def test_the_paper_index_mistake_is_not_called_unrotated_pairs(capsys):
    _, out = run(exercises.check_apply_rope, rope_pair_index_from_one, "en", capsys)
    assert "not rotated" not in out
    _, out = run(exercises.check_apply_rope, lambda x, p: rope(x, p, angle_positions=p - p[0]), "en", capsys)
    assert "not rotated" not in out


def test_rope_counter_example_can_be_rebuilt_and_names_m_and_i(capsys):
    _, out = run(exercises.check_apply_rope, rope_pair_index_from_one, "en", capsys)
    assert "x = torch.tensor([[1.0, 2.0, 3.0, 4.0]" in out and "positions = torch.tensor([5, 0, 2])" in out
    assert "position m = 5 (positions[0]), pair i = 0 (columns 0, 1)" in out
    _, out = run(exercises.check_apply_rope, rope_pair_index_from_one, "ko", capsys)
    assert "위치 m = 5(positions[0]), 짝 i = 0(열 0, 1)" in out
    # the larger random input is printed as a recipe that rebuilds it exactly
    _, out = run(exercises.check_apply_rope, rope_some_pairs, "en", capsys)
    recipe = re.search(r"input: (x = torch\.randn\(.*?\)\.float\(\)); positions = (torch\.tensor\(\[.*?\]\))", out)
    x = eval(recipe.group(1)[4:], {"torch": torch})  # noqa: S307 - our own printed recipe
    positions = eval(recipe.group(2), {"torch": torch})  # noqa: S307
    got = re.search(r"pair i = 2 \(columns 4, 5\): expected \(([-\d.e]+), ([-\d.e]+)\)", out)
    m = re.search(r"batch/head \((\d+), (\d+)\), position m = (\d+) \(positions\[(\d+)\]\)", out)
    b, h, t = int(m.group(1)), int(m.group(2)), int(m.group(4))
    ref = posviz.apply_rope(x.double(), positions)[b, h, t, 4:6]
    assert float(got.group(1)) == pytest.approx(float(ref[0]), rel=1e-5)
    assert float(got.group(2)) == pytest.approx(float(ref[1]), rel=1e-5)


def test_the_gap_is_printed_next_to_the_tolerance(capsys):
    _, out = run(exercises.check_apply_rope, lambda x, p: rope(x, p, half_cos_sin=True), "en", capsys)
    gap = float(re.search(r"largest gap ([\d.e+-]+) \(tolerance 1\.0e-04 \+ 1e-04·\|expected\|", out).group(1))
    assert 1e-4 < gap < 1e-2
    _, out = run(exercises.check_apply_rope, lambda x, p: rope(x, p, half_cos_sin=True), "ko", capsys)
    assert "가장 큰 차이" in out and "허용 오차 1.0e-04" in out


def test_an_exception_prints_the_failing_line_of_the_learners_code(capsys):
    _, out = run(exercises.check_apply_rope, rope_crashes, "en", capsys)
    line = next(i for i, text in enumerate(Path(__file__).read_text().splitlines(), start=1) if "the sizes do not match" in text)
    assert f"failing line: test_feedback_gallery.py, line {line} (in rope_crashes): return x * torch.cos(angles)" in out
    assert "RuntimeError" in out
    _, out = run(exercises.check_apply_rope, rope_crashes, "ko", capsys)
    assert f"오류가 난 줄: test_feedback_gallery.py의 {line}번째 줄(rope_crashes 함수)" in out


def test_small_index_mistakes_print_both_matrices(capsys):
    _, out = run(exercises.check_relative_position_index, lambda n, k: index(n, k, high=k - 1), "en", capsys)
    assert "expected, in full:\n   [[2 3 4 4 4 4]" in out and "got, in full:\n   [[2 3 3 3 3 3]" in out


def test_alibi_is_tried_for_every_head_count_1_to_16(capsys):
    asked = []

    def recording(n):
        asked.append(n)
        return posviz.alibi_slopes(n)

    assert exercises.check_alibi_slopes(recording) is True
    assert asked == list(range(1, 17))
    # the technical review's answer, wrong only for n = 7, 11, 13, 15, must fail
    wrong = [n for n in range(1, 17) if not np.allclose(slopes(n, odd_extras_reversed=True), posviz.alibi_slopes(n).numpy())]
    assert wrong == [7, 11, 13, 15]
    assert exercises.check_alibi_slopes(lambda n: slopes(n, odd_extras_reversed=True)) is False


def test_the_notebooks_implementation_is_labelled(capsys):
    posviz.set_language("both")
    with exercises.notebook_implementation():
        assert exercises.check_alibi_slopes(posviz.alibi_slopes) is True
    out = capsys.readouterr().out
    assert "✓ ALiBi 기울기(slope) (노트북의 구현): 모든 검사를 통과했습니다." in out
    assert "✓ ALiBi slopes (the notebook's implementation): all checks passed." in out
    assert exercises.check_alibi_slopes(posviz.alibi_slopes) is True
    assert "implementation" not in capsys.readouterr().out


def test_the_counter_example_is_the_largest_miss_not_the_first():
    from posviz import feedback

    expected = np.zeros(8)
    got = expected.copy()
    got[0], got[5], got[6] = 2e-4, 0.87, np.nan  # a rounding-sized miss first, a real one later, then a NaN
    assert feedback._worst_mismatch(got, expected, 1e-4, 0.0) == (6,)
    got[6] = 0.0
    assert feedback._worst_mismatch(got, expected, 1e-4, 0.0) == (5,)
    assert feedback._worst_mismatch(expected, expected, 1e-4, 0.0) is None
    with pytest.raises(feedback._Failed) as failed:
        feedback._compare(got, expected, "x", atol=1e-4)
    assert "at index 5: expected 0, got 0.87" in str(failed.value.detail.en)


def test_the_harness_names_stay_importable_from_exercises():
    from posviz import feedback

    for name in ("_Text", "_Failed", "_NotAttempted", "_say", "_grade", "_call", "_as_array", "_check_shape",
                 "_worst_mismatch", "_compare"):
        assert getattr(exercises, name) is getattr(feedback, name)
    # a checker written the old way (plain-string detail) still works
    def check_old_style(fn):
        def body():
            raise exercises._Failed(exercises._Text("틀렸습니다.", "wrong."), "input: n=1")
        return exercises._grade(exercises._Text("옛 검사", "old check"), exercises._Text("힌트", "hint"), body)
    assert check_old_style(None) is False


@pytest.mark.parametrize("factor, original_context, seq_len", [(1.0, 64, 256), (4.0, 64, 512), (1.0, 64, 32), (8.0, 8192, 65536), (2.0, 4096, 4096)])
def test_dynamic_base_reference_matches_hugging_face(factor, original_context, seq_len):
    transformers = transformers_with_torch()
    from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS

    d, base = 64, 10000.0
    config = transformers.LlamaConfig(hidden_size=4 * d, num_attention_heads=4, head_dim=d, max_position_embeddings=original_context,
                                      rope_parameters={"rope_type": "dynamic", "rope_theta": base, "factor": factor})
    hf, _ = ROPE_INIT_FUNCTIONS["dynamic"](config, "cpu", seq_len=seq_len)
    ours = dynamic(base, d, factor, original_context, seq_len) ** (-2 * np.arange(d // 2) / d)
    np.testing.assert_allclose(hf.double().numpy(), ours, rtol=1e-6)
    assert exercises.check_dynamic_ntk_base(dynamic) is True


# --- hints point to headings that exist -----------------------------------------------------------------


def _headings(stem):
    path = next((ROOT / "notebooks").glob(f"{stem}_*.ipynb"))
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return [line for c in cells if c["cell_type"] == "markdown" for line in "".join(c["source"]).splitlines() if line.startswith("#")]


def test_hints_point_to_headings_that_exist():
    import posviz.exercises as module

    source = Path(module.__file__).read_text(encoding="utf-8")
    ko = re.findall(r"(\d\db?) 노트북 (\d+(?:\.\d+)?)절\(([^()]*(?:\([^()]*\)[^()]*)?)\)", source)
    en = re.findall(r"notebook (\d\db?), section (\d+(?:\.\d+)?) \(([^()]*(?:\([^()]*\)[^()]*)?)\)", source)
    assert len(ko) >= 10 and len(ko) == len(en)
    for stem, number, title in ko + en:
        title = title.split(",")[0] if not any(h for h in _headings(stem) if title in h) else title
        assert any(re.match(rf"#+ {re.escape(number)}\.? ", h) and title in h for h in _headings(stem)), (stem, number, title)
    assert not re.search(r'"[^"\n]*§[^"\n]*"', source) and not re.search(r"노트북의 \S+ 절", source)  # messages say "2절"


# --- the notebooks: no answer on screen before the learner tries ---------------------------------------


def _cells(path):
    return json.loads(path.read_text(encoding="utf-8"))["cells"]


def _src(cell):
    return "".join(cell["source"])


NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]*_*.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_no_check_cell_reveals_an_answer_above_its_solution(path):
    cells = _cells(path)
    stubs = [i for i, c in enumerate(cells) if c["cell_type"] == "code" and "raise NotImplementedError" in _src(c)
             and "exercises.check_" in _src(c)]
    if path.name.startswith("00_"):
        assert not stubs
        return
    assert len(stubs) == 1, path.name
    stub = stubs[0]
    solution = next(i for i in range(stub + 1, len(cells)) if "<details>" in _src(cells[i]))
    for cell in cells[stub + 1 : solution]:
        if cell["cell_type"] != "code" or cell.get("metadata", {}).get("jupyter", {}).get("source_hidden"):
            continue
        text = _src(cell)
        assert "getsource" not in text, f"{path.name}: a cell above the solution prints a reference's source"
        assert not re.search(r"^def ", text, re.M), f"{path.name}: a check cell above the solution is itself an answer"
    for cell in cells:
        if cell["cell_type"] == "code" and re.search(r"exercises\.check_\w+\(", _src(cell)) and "NotImplementedError" not in _src(cell):
            assert "notebook_implementation()" in _src(cell), f"{path.name}: the notebook's own check is not labelled"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_solution_has_its_own_details(path):
    for cell in _cells(path):
        if cell["cell_type"] != "markdown":
            continue
        for block in re.findall(r"<details>(.*?)</details>", _src(cell), re.S):
            numbers = set(re.findall(r"^(\d+)\. ", block, re.M))
            assert len(numbers) <= 1, f"{path.name} {cell.get('id')}: solutions {sorted(numbers)} share one <details>"


def test_00_runs_no_exercise_code_in_plain_view():
    cells = _cells(next((ROOT / "notebooks").glob("00_*.ipynb")))
    start = next(i for i, c in enumerate(cells) if _src(c).startswith("## 7."))
    end = next(i for i in range(start + 1, len(cells)) if _src(cells[i]).startswith("## "))
    assert not [c for c in cells[start:end] if c["cell_type"] == "code"]
