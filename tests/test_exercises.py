"""The exercise checkers: references pass, every classic mistake is rejected, nothing raises."""

import json
import math
import re
from pathlib import Path

import numpy as np
import pytest
import torch

import posviz
from posviz import exercises

HANGUL = re.compile(r"[\uac00-\ud7a3]")
ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True)
def english_feedback():
    previous = posviz.get_language()
    posviz.set_language("en")
    yield
    posviz.set_language(previous)


# --- learners' answers: right ones in several forms, and one function per classic mistake ---------

def sin_table(num_positions, d_model, *, base=10000.0, start=0, exponent=2, swap=False, dtype=np.float64):
    p = np.arange(start, start + num_positions, dtype=np.float64)[:, None].astype(dtype)
    i = np.arange(d_model // 2, dtype=np.float64)[None, :]
    omega = np.asarray(base ** (-exponent * i / d_model), dtype=dtype)
    angles = (p * omega).astype(dtype)
    out = np.zeros((num_positions, d_model))
    first, second = (np.cos, np.sin) if swap else (np.sin, np.cos)
    out[:, 0::2], out[:, 1::2] = first(angles), second(angles)
    return out


def sin_torch_float32(num_positions, d_model):
    p = torch.arange(num_positions, dtype=torch.float32)[:, None]
    omega = 10000.0 ** (-torch.arange(0, d_model, 2, dtype=torch.float32) / d_model)
    out = torch.zeros(num_positions, d_model)
    out[:, 0::2], out[:, 1::2] = torch.sin(p * omega), torch.cos(p * omega)
    return out


SINUSOIDAL_MISTAKES = {
    "exponent i/d": lambda n, d: sin_table(n, d, exponent=1),
    "sin/cos swapped": lambda n, d: sin_table(n, d, swap=True),
    "concatenated": lambda n, d: np.concatenate([sin_table(n, d)[:, 0::2], sin_table(n, d)[:, 1::2]], axis=1),
    "positions from 1": lambda n, d: sin_table(n, d, start=1),
    "base 1000": lambda n, d: sin_table(n, d, base=1000.0),
    "float16 angles": lambda n, d: sin_table(n, d, dtype=np.float16),
    "transposed": lambda n, d: sin_table(n, d).T,
}


def rope_answer(x, positions, *, pairing="interleaved", sign=1.0, exponent=2, shift=0, rotated_pairs=None):
    d = x.shape[-1]
    theta = 10000.0 ** (-exponent * torch.arange(d // 2, dtype=torch.float64) / d)
    angles = (positions.to(torch.float64) + shift)[:, None] * theta  # (seq_len, d/2)
    if rotated_pairs is not None:
        angles[:, rotated_pairs:] = 0.0
    cos, sin = torch.cos(angles).to(x.dtype), sign * torch.sin(angles).to(x.dtype)
    if pairing == "interleaved":
        a, b = x[..., 0::2], x[..., 1::2]
        return torch.stack([a * cos - b * sin, b * cos + a * sin], dim=-1).flatten(-2)
    a, b = x[..., : d // 2], x[..., d // 2 :]
    return torch.cat([a * cos - b * sin, b * cos + a * sin], dim=-1)


ROPE_MISTAKES = {
    "ignores positions": lambda x, pos: rope_answer(x, torch.arange(len(pos))),
    "half pairing": lambda x, pos: rope_answer(x, pos, pairing="half"),
    "clockwise": lambda x, pos: rope_answer(x, pos, sign=-1.0),
    "input unchanged": lambda x, pos: x.clone(),
    "exponent i/d": lambda x, pos: rope_answer(x, pos, exponent=1),
    "off by one": lambda x, pos: rope_answer(x, pos, shift=1),
    "only some pairs": lambda x, pos: rope_answer(x, pos, rotated_pairs=2),
}


def index_answer(seq_len, k, *, sign=1, clip=True, limit=None, shift=True):
    offsets = sign * (np.arange(seq_len)[None, :] - np.arange(seq_len)[:, None])
    limit = k if limit is None else limit
    if clip:
        offsets = np.clip(offsets, -limit, limit)
    return offsets + k if shift else offsets


INDEX_MISTAKES = {
    "sign flipped": lambda n, k: index_answer(n, k, sign=-1),
    "no clipping": lambda n, k: index_answer(n, k, clip=False),
    "clipped at k-1": lambda n, k: index_answer(n, k, limit=max(k - 1, 0)),
    "no +k shift": lambda n, k: index_answer(n, k, shift=False),
    "floats": lambda n, k: index_answer(n, k).astype(np.float64),
}


def slopes_answer(n, *, rule="paper", reverse=False, exponent_shift=0):
    def geometric(m):
        return [2.0 ** (-8.0 * (h + exponent_shift) / m) for h in range(1, m + 1)]

    if rule == "power of two for all":
        slopes = geometric(n)
    else:
        p = 2 ** int(math.floor(math.log2(n)))
        slopes = geometric(p) + geometric(2 * p)[0::2][: n - p]
    return slopes[::-1] if reverse else slopes


SLOPE_MISTAKES = {
    "power-of-two formula for every n": lambda n: slopes_answer(n, rule="power of two for all"),
    "reversed": lambda n: slopes_answer(n, reverse=True),
    "exponent off by one": lambda n: slopes_answer(n, exponent_shift=-1),
}


def attention_answer(x, w_q, w_k, w_v, *, scale=None, dim=-1, values=True, softmax=True):
    q, k, v = x @ w_q, x @ w_k, x @ w_v
    scores = q @ k.T / (k.shape[-1] ** 0.5 if scale is None else scale)
    weights = torch.softmax(scores, dim=dim) if softmax else scores
    return weights @ v if values else weights


ATTENTION_MISTAKES = {
    "no scaling": lambda *a: attention_answer(*a, scale=1.0),
    "scaled by sqrt(d_model)": lambda *a: attention_answer(*a, scale=a[0].shape[-1] ** 0.5),
    "scaled by d_k": lambda *a: attention_answer(*a, scale=a[2].shape[-1]),
    "no softmax": lambda *a: attention_answer(*a, softmax=False),
    "softmax over queries": lambda *a: attention_answer(*a, dim=0),
    "weights only": lambda *a: attention_answer(*a, values=False),
}

LOOKUP_MISTAKES = {
    "off by one": lambda ids, table: table[(ids + 1) % len(table)],
    "one-hot only": lambda ids, table: torch.nn.functional.one_hot(ids, len(table)).float(),
    "summed rows": lambda ids, table: table[ids].sum(0),
    "transposed table": lambda ids, table: torch.nn.functional.one_hot(ids, table.shape[1]).float() @ table.T,
}

def dynamic_answer(b, d, s, context, ell, *, clamp=True, shift=True, exponent=None):
    length = max(ell, context) if clamp else ell
    ratio = s * length / context - ((s - 1) if shift else 0)
    return b * ratio ** (d / (d - 2) if exponent is None else exponent)


DYNAMIC_MISTAKES = {
    "no clamp below L0": lambda *a: dynamic_answer(*a, clamp=False),
    "factor ignored": lambda b, d, s, c, ell: dynamic_answer(b, d, 1.0, c, ell),
    "no -(s-1)": lambda *a: dynamic_answer(*a, shift=False),
    "integer division in the exponent": lambda b, d, s, c, ell: b * (s * max(ell, c) / c - (s - 1)) ** (d // (d - 2)),
    "exponent (d-2)/d": lambda b, d, s, c, ell: dynamic_answer(b, d, s, c, ell, exponent=(d - 2) / d),
    "length ignored (fixed NTK)": lambda b, d, s, c, ell: b * s ** (d / (d - 2)),
}


CASES = [
    (
        exercises.check_sinusoidal_encoding,
        [lambda n, d: posviz.sinusoidal_encoding(n, d), lambda n, d: sin_table(n, d), sin_torch_float32,
         lambda n, d: posviz.sinusoidal_encoding(n, d, dtype=np.float32)],
        SINUSOIDAL_MISTAKES,
    ),
    (
        exercises.check_apply_rope,
        [lambda x, pos: posviz.apply_rope(x, pos), rope_answer, lambda x, pos: rope_answer(x, pos).numpy()],
        ROPE_MISTAKES,
    ),
    (
        exercises.check_relative_position_index,
        [lambda n, k: posviz.relative_position_index(n, n, k), index_answer,
         lambda n, k: torch.from_numpy(index_answer(n, k)).to(torch.int32)],
        INDEX_MISTAKES,
    ),
    (
        exercises.check_alibi_slopes,
        [posviz.alibi_slopes, slopes_answer, lambda n: torch.tensor(slopes_answer(n), dtype=torch.float32)],
        SLOPE_MISTAKES,
    ),
    (exercises.check_self_attention, [attention_answer, lambda *a: attention_answer(*(t.float() for t in a))],
     ATTENTION_MISTAKES),
    (exercises.check_embedding_lookup,
     [lambda ids, table: table[ids], lambda ids, table: torch.nn.functional.one_hot(ids, len(table)).to(table.dtype) @ table],
     LOOKUP_MISTAKES),
    (exercises.check_dynamic_ntk_base,
     [dynamic_answer, lambda *a: np.float32(dynamic_answer(*a)), lambda *a: torch.tensor(dynamic_answer(*a), dtype=torch.float64),
      lambda b, d, s, c, ell: posviz.ntk_scaled_base(b, d, s * max(ell, c) / c - (s - 1))],
     DYNAMIC_MISTAKES),
]
CHECKERS = [case[0] for case in CASES]


def _name(value):
    return getattr(value, "__name__", str(value))


@pytest.mark.parametrize("checker, answers", [(c, a) for c, a, _ in CASES], ids=[_name(c) for c in CHECKERS])
def test_right_answers_pass(checker, answers, capsys):
    for answer in answers:
        assert checker(answer) is True
    assert "all checks passed" in capsys.readouterr().out


@pytest.mark.parametrize(
    "checker, mistake",
    [(checker, fn) for checker, _, mistakes in CASES for fn in mistakes.values()],
    ids=[f"{_name(checker)}-{name}" for checker, _, mistakes in CASES for name in mistakes],
)
def test_every_classic_mistake_is_rejected(checker, mistake, capsys):
    assert checker(mistake) is False
    out = capsys.readouterr().out
    assert "✗" in out and "Hint:" in out


@pytest.mark.parametrize(
    "checker, mistake, words",
    [
        (exercises.check_sinusoidal_encoding, SINUSOIDAL_MISTAKES["sin/cos swapped"], "swapped"),
        (exercises.check_sinusoidal_encoding, SINUSOIDAL_MISTAKES["positions from 1"], "start at 1"),
        (exercises.check_sinusoidal_encoding, SINUSOIDAL_MISTAKES["float16 angles"], "float16"),
        (exercises.check_apply_rope, ROPE_MISTAKES["ignores positions"], "positions seems ignored"),
        (exercises.check_apply_rope, ROPE_MISTAKES["half pairing"], "half-split"),
        (exercises.check_apply_rope, ROPE_MISTAKES["clockwise"], "clockwise"),
        (exercises.check_apply_rope, ROPE_MISTAKES["input unchanged"], "the input came back unchanged"),
        (exercises.check_relative_position_index, INDEX_MISTAKES["sign flipped"], "sign is flipped"),
        (exercises.check_relative_position_index, INDEX_MISTAKES["floats"], "must be integers"),
        (exercises.check_alibi_slopes, SLOPE_MISTAKES["reversed"], "reversed"),
        (exercises.check_self_attention, ATTENTION_MISTAKES["no scaling"], "√d_k"),
        (exercises.check_self_attention, ATTENTION_MISTAKES["scaled by d_k"], "divided by d_k instead of √d_k"),
        (exercises.check_self_attention, ATTENTION_MISTAKES["no softmax"], "the softmax is missing"),
    ],
)
def test_feedback_names_the_mistake_with_a_counter_example(checker, mistake, words, capsys):
    assert checker(mistake) is False
    out = capsys.readouterr().out
    assert words in out
    assert "input:" in out


def _stub(*args):
    raise NotImplementedError


def _crash(*args):
    raise IndexError("index 99 is out of bounds")


@pytest.mark.parametrize("checker", CHECKERS, ids=_name)
def test_stubs_errors_and_junk_return_false_without_raising(checker, capsys):
    assert checker(_stub) is False
    assert "not attempted yet" in capsys.readouterr().out
    assert checker(_crash) is False
    out = capsys.readouterr().out
    assert "IndexError" in out and "index 99" in out
    assert checker(lambda *args: None) is False
    assert checker(lambda *args: "text") is False
    assert checker(42) is False


@pytest.mark.parametrize("lang", ["ko", "en", "both"])
def test_feedback_follows_the_language(lang, capsys):
    posviz.set_language(lang)
    exercises.check_alibi_slopes(SLOPE_MISTAKES["reversed"])
    exercises.check_alibi_slopes(posviz.alibi_slopes)
    exercises.check_alibi_slopes(_stub)
    out = capsys.readouterr().out
    assert bool(HANGUL.search(out)) == (lang != "en")
    assert ("Hint:" in out) == (lang != "ko")
    assert ("all checks passed" in out) == (lang != "ko")


def test_every_notebook_from_01_calls_a_checker():
    paths = sorted((ROOT / "notebooks").glob("[0-9][0-9]*_*.ipynb"))
    assert len(paths) >= 7
    for path in paths:
        if path.name.startswith("00_"):
            continue
        code = "\n".join(
            "".join(cell["source"]) for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]
            if cell["cell_type"] == "code"
        )
        calls = set(re.findall(r"exercises\.(check_\w+)\(", code))
        assert calls, f"{path.name} has no posviz.exercises checker call"
        assert calls <= set(exercises.__all__), f"{path.name} calls unknown checkers {calls - set(exercises.__all__)}"


def test_unpermute_checker_accepts_the_rule_and_rejects_its_mistakes(capsys):
    from posviz import pretrained

    def by_reshape(weight, num_heads):
        head_dim = weight.shape[0] // num_heads
        order = torch.cat([torch.arange(0, head_dim, 2), torch.arange(1, head_dim, 2)])
        return weight.reshape(num_heads, head_dim, -1)[:, order].reshape(weight.shape)

    assert exercises.check_unpermute_qk_rows(pretrained.unpermute_qk_rows) is True
    assert exercises.check_unpermute_qk_rows(lambda w, h: by_reshape(w, h).numpy()) is True
    for mistake in (pretrained.permute_qk_rows, lambda w, h: by_reshape(w, 1), lambda w, h: w, lambda w, h: w.T, _stub, _crash):
        assert exercises.check_unpermute_qk_rows(mistake) is False
    out = capsys.readouterr().out
    assert "inverse permutation" in out and "heads ignored" in out and "not attempted yet" in out
