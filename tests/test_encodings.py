"""The sinusoidal table and the absolute position modules, against Vaswani et al. 2017 §3.5."""

import math

import numpy as np
import pytest
import torch

import posviz
from posviz import LearnedPositionalEmbedding, SinusoidalPositionalEncoding, sinusoidal_encoding


def reference_table(num_positions, d_model, base=10000.0):
    """PE[p, 2i] = sin(p / base^(2i/d)), PE[p, 2i+1] = cos(...), one scalar at a time."""
    out = [[0.0] * d_model for _ in range(num_positions)]
    for p in range(num_positions):
        for c in range(d_model):
            i = c // 2
            angle = p / base ** (2 * i / d_model)
            out[p][c] = math.sin(angle) if c % 2 == 0 else math.cos(angle)
    return np.array(out)


def test_known_values_position_1_d4():
    pe = sinusoidal_encoding(2, 4, dtype=np.float64)
    # p = 0: sin 0, cos 0, sin 0, cos 0
    np.testing.assert_array_equal(pe[0], [0.0, 1.0, 0.0, 1.0])
    # p = 1, d = 4: frequencies 1 and 10000^(-1/2) = 0.01
    np.testing.assert_allclose(pe[1], [math.sin(1), math.cos(1), math.sin(0.01), math.cos(0.01)], rtol=0, atol=1e-15)
    assert pe[1, 0] == pytest.approx(0.8414709848078965)


@pytest.mark.parametrize("d_model", [1, 2, 3, 7, 16, 33])
def test_matches_reference_formula(d_model):
    np.testing.assert_allclose(
        sinusoidal_encoding(50, d_model, dtype=np.float64), reference_table(50, d_model), atol=1e-12
    )


def test_odd_d_model_last_column_is_a_sine():
    pe = sinusoidal_encoding(10, 5, dtype=np.float64)
    freq = 10000.0 ** (-4 / 5)
    np.testing.assert_allclose(pe[:, 4], np.sin(np.arange(10) * freq), atol=1e-15)


def test_base_changes_frequencies():
    pe = sinusoidal_encoding(5, 4, base=100.0, dtype=np.float64)
    np.testing.assert_allclose(pe[3, 2], math.sin(3 / 10.0), atol=1e-15)


def test_concatenated_is_a_column_permutation_with_same_gram():
    inter = sinusoidal_encoding(40, 9, dtype=np.float64)
    concat = sinusoidal_encoding(40, 9, dtype=np.float64, layout="concatenated")
    perm = [0, 2, 4, 6, 8, 1, 3, 5, 7]
    np.testing.assert_array_equal(concat, inter[:, perm])
    np.testing.assert_allclose(concat @ concat.T, inter @ inter.T, atol=1e-12)
    assert not np.allclose(concat, inter)


def test_dtype_and_precision_at_large_positions():
    pe16 = sinusoidal_encoding(60000, 8, dtype=np.float16)
    assert pe16.dtype == np.float16 and pe16.shape == (60000, 8)
    exact = reference_table(1, 8)  # row 0 only is cheap; check a far row directly
    p = 59999
    far = np.array([math.sin(p / 10000 ** (2 * (c // 2) / 8)) if c % 2 == 0 else math.cos(p / 10000 ** (2 * (c // 2) / 8)) for c in range(8)])
    # float16 spacing near 1 is ~1e-3: the angles were computed in float64, so only the final cast errs
    np.testing.assert_allclose(pe16[p].astype(np.float64), far, atol=1e-3)
    np.testing.assert_allclose(pe16[0].astype(np.float64), exact[0], atol=0)
    # a naive float16 computation of the angle itself is far off at this position
    naive = np.sin(np.float16(p) * np.float16(1.0))
    assert abs(float(naive) - far[0]) > 1e-2


@pytest.mark.parametrize(
    "kwargs, error",
    [
        (dict(num_positions=0, d_model=4), ValueError),
        (dict(num_positions=4, d_model=0), ValueError),
        (dict(num_positions=4.0, d_model=4), TypeError),
        (dict(num_positions=4, d_model=True), TypeError),
        (dict(num_positions=4, d_model=4, base=0.0), ValueError),
        (dict(num_positions=4, d_model=4, base=-2.0), ValueError),
        (dict(num_positions=4, d_model=4, layout="half"), ValueError),
        (dict(num_positions=4, d_model=4, dtype=np.int32), TypeError),
    ],
)
def test_bad_input(kwargs, error):
    with pytest.raises(error):
        sinusoidal_encoding(**kwargs)


def test_layout_error_names_the_choices():
    with pytest.raises(ValueError, match="interleaved"):
        sinusoidal_encoding(4, 4, layout="nope")


def test_sinusoidal_module_adds_buffer_not_parameter():
    module = SinusoidalPositionalEncoding(8, max_len=16)
    assert list(module.parameters()) == []
    assert not module.pe.requires_grad
    x = torch.zeros(2, 5, 8)
    out = module(x)
    np.testing.assert_allclose(out[1].numpy(), sinusoidal_encoding(5, 8), atol=1e-7)
    shifted = module(x, positions=torch.arange(3, 8))
    np.testing.assert_allclose(shifted[0].numpy(), sinusoidal_encoding(8, 8)[3:], atol=1e-7)


def test_sinusoidal_module_scale():
    module = SinusoidalPositionalEncoding(4, max_len=4, scale=2.0)
    x = torch.ones(1, 2, 4)
    np.testing.assert_allclose(module(x)[0].numpy(), 2.0 + sinusoidal_encoding(2, 4), atol=1e-7)


@pytest.mark.parametrize("module", [SinusoidalPositionalEncoding(8, max_len=16), LearnedPositionalEmbedding(16, 8)])
def test_too_long_sequence_names_both_lengths(module):
    with pytest.raises(ValueError, match=r"17.*16|16.*17"):
        module(torch.zeros(1, 17, 8))


@pytest.mark.parametrize("module", [SinusoidalPositionalEncoding(8, max_len=16), LearnedPositionalEmbedding(16, 8)])
def test_bad_module_inputs(module):
    with pytest.raises(ValueError, match="d_model"):
        module(torch.zeros(1, 4, 7))
    with pytest.raises(ValueError, match="positions"):
        module(torch.zeros(1, 4, 8), positions=torch.arange(14, 18))
    with pytest.raises(TypeError):
        module(torch.zeros(1, 4, 8), positions=torch.arange(4.0))


def test_learned_embedding_is_trainable_and_changes_after_a_step():
    torch.manual_seed(0)
    module = LearnedPositionalEmbedding(16, 8)
    assert module.weight.requires_grad and module.weight.shape == (16, 8)
    before = module.weight.detach().clone()
    optimiser = torch.optim.SGD(module.parameters(), lr=0.1)
    module(torch.zeros(1, 4, 8)).pow(2).sum().backward()
    optimiser.step()
    changed = (module.weight.detach() != before).any(dim=1)
    assert changed[:4].all() and not changed[4:].any()  # only the rows that were used


def test_public_api_lists_existing_names():
    for name in posviz.__all__:
        assert hasattr(posviz, name), name
