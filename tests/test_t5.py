"""T5 relative position bias (Raffel et al. 2020, §2.1): buckets, table, layer, registration."""

import math

import numpy as np
import pytest
import torch
from hf import transformers_with_torch

import posviz
from posviz import (
    OffsetCopyTask,
    T5MultiheadAttention,
    T5RelativePositionBias,
    TinyTransformer,
    t5_method,
    t5_relative_position_bucket,
)

CONFIGS = [(32, 128), (8, 20), (16, 64), (64, 256), (10, 40), (4, 5), (34, 27), (18, 128)]


def transcription(r: int, bidirectional: bool, num_buckets: int, max_distance: int) -> tuple[int, bool]:
    """The bucket of one relative position r = key − query, written out in plain Python (float64).

    Returns ``(bucket, on_boundary)``: ``on_boundary`` says that the real-valued log position
    before the floor is an exact nonzero integer, where float32 (as in T5) and float64 round-off
    may fall on either side of it, one bucket apart (e.g. ``num_buckets=18``, ``r=-64``: 4).
    """
    if bidirectional:
        per_direction = num_buckets // 2
        offset = per_direction if r > 0 else 0
        n = abs(r)
    else:
        per_direction, offset, n = num_buckets, 0, max(-r, 0)
    exact = per_direction // 2
    if n < exact:
        return offset + n, False
    x = math.log(n / exact) / math.log(max_distance / exact) * (per_direction - exact)
    on_boundary = x != 0 and abs(x - round(x)) < 1e-5  # x = 0 (n = E) is exact: ln 1 = 0
    return offset + min(per_direction - 1, exact + math.floor(x)), on_boundary


def test_t5_default_table_by_hand():
    r = torch.tensor([0, -1, -7, -8, -11, -12, -16, -23, -32, -46, -64, -90, -91, -127, -128, -10_000])
    expected = [0, 1, 7, 8, 8, 9, 10, 11, 12, 13, 14, 14, 15, 15, 15, 15]
    assert t5_relative_position_bucket(r).tolist() == expected
    assert t5_relative_position_bucket(-r).tolist() == [0] + [e + 16 for e in expected[1:]]
    causal = t5_relative_position_bucket(torch.tensor([1, 5, 0, -15, -16, -18, -19, -112, -113, -500]), bidirectional=False)
    assert causal.tolist() == [0, 0, 0, 15, 16, 16, 17, 30, 31, 31]


@pytest.mark.parametrize("bidirectional", [True, False])
@pytest.mark.parametrize("num_buckets,max_distance", CONFIGS)
def test_buckets_match_a_transcription_of_the_formula(bidirectional, num_buckets, max_distance):
    r = torch.arange(-3 * max_distance, 3 * max_distance + 1)
    got = t5_relative_position_bucket(r, bidirectional=bidirectional, num_buckets=num_buckets, max_distance=max_distance)
    assert got.shape == r.shape and got.dtype == torch.int64
    assert int(got.min()) >= 0 and int(got.max()) < num_buckets
    for rel, bucket in zip(r.tolist(), got.tolist(), strict=True):
        want, on_boundary = transcription(rel, bidirectional, num_buckets, max_distance)
        if on_boundary:
            assert abs(bucket - want) <= 1, (rel, bucket, want)
        else:
            assert bucket == want, (rel, bucket, want)
    # every distance up to D counts: buckets never decrease with distance, and the last is reached
    n = r.abs() if bidirectional else (-r).clamp(min=0)
    side = (r <= 0) if bidirectional else torch.ones_like(r, dtype=torch.bool)
    order = torch.argsort(n[side], stable=True)
    assert torch.all(torch.diff(got[side][order]) >= 0)
    per_direction = num_buckets // 2 if bidirectional else num_buckets
    assert int(got[n >= max_distance].min()) == int(got[side].max()) == per_direction - 1


def test_buckets_keep_the_input_shape():
    r = torch.arange(-6, 6, dtype=torch.int32).reshape(2, 3, 2)
    out = t5_relative_position_bucket(r, num_buckets=8, max_distance=16)
    assert out.shape == (2, 3, 2) and out.dtype == torch.int64
    np.testing.assert_array_equal(out.flatten(), [transcription(v, True, 8, 16)[0] for v in range(-6, 6)])


@pytest.mark.parametrize("bidirectional", [True, False])
@pytest.mark.parametrize("num_buckets,max_distance", CONFIGS + [(2, 3), (6, 7), (102, 36), (96, 81)])
def test_buckets_match_hugging_face_t5(bidirectional, num_buckets, max_distance):
    if bidirectional and num_buckets < 4:
        pytest.skip("bidirectional needs >= 4 buckets (test_bucket_errors)")
    if max_distance <= (num_buckets // 2 if bidirectional else num_buckets) // 2:
        pytest.skip("max_distance within the exact range raises ValueError here (test_bucket_errors)")
    modeling_t5 = transformers_with_torch("transformers.models.t5.modeling_t5")
    r = torch.arange(-2 * max_distance - 40, 2 * max_distance + 41)[None, :] + torch.arange(3)[:, None]
    oracle = modeling_t5.T5Attention._relative_position_bucket(
        r, bidirectional=bidirectional, num_buckets=num_buckets, max_distance=max_distance
    )
    got = t5_relative_position_bucket(r, bidirectional=bidirectional, num_buckets=num_buckets, max_distance=max_distance)
    assert torch.equal(got, oracle)


@pytest.mark.parametrize("causal", [False, True])
def test_bias_matches_hugging_face_compute_bias(causal):
    """Same table, same (heads, query, key) layout and sign as T5Attention.compute_bias (encoder and decoder)."""
    transformers = transformers_with_torch()
    from transformers.models.t5.modeling_t5 import T5Attention

    config = transformers.T5Config(
        d_model=8, d_kv=4, num_heads=2, relative_attention_num_buckets=8, relative_attention_max_distance=16,
        is_decoder=causal,
    )
    hf = T5Attention(config, has_relative_attention_bias=True, layer_idx=0)
    ours = T5RelativePositionBias(2, 8, 16, bidirectional=not causal)
    with torch.no_grad():
        hf.relative_attention_bias.weight.copy_(ours.table)
        positions = torch.arange(40)[None]
        torch.testing.assert_close(ours(positions, positions), hf.compute_bias(40, 40), rtol=0, atol=0)


def test_bucket_errors():
    r = torch.arange(-3, 4)
    with pytest.raises(TypeError, match="integer"):
        t5_relative_position_bucket(r.float())
    with pytest.raises(TypeError, match="integer"):
        t5_relative_position_bucket(r > 0)
    with pytest.raises(TypeError, match="integer"):
        t5_relative_position_bucket([0, 1, 2])
    with pytest.raises(TypeError, match="num_buckets"):
        t5_relative_position_bucket(r, num_buckets=32.0)
    with pytest.raises(ValueError, match="even"):
        t5_relative_position_bucket(r, num_buckets=31)
    with pytest.raises(ValueError, match="even and >= 4"):
        t5_relative_position_bucket(r, num_buckets=2)
    with pytest.raises(ValueError, match="num_buckets must be >= 2"):
        t5_relative_position_bucket(r, num_buckets=1, bidirectional=False)
    with pytest.raises(ValueError, match="max_distance=8 must exceed"):
        t5_relative_position_bucket(r, num_buckets=32, max_distance=8)
    with pytest.raises(ValueError, match="max_distance=36 must exceed the 51"):
        t5_relative_position_bucket(r, num_buckets=102, max_distance=36, bidirectional=False)
    assert t5_relative_position_bucket(r, num_buckets=31, max_distance=16, bidirectional=False).max() <= 30


def test_bias_table_lookup():
    torch.manual_seed(0)
    table = T5RelativePositionBias(3, 8, 16)
    assert table.table.shape == (8, 3)
    q_pos = torch.tensor([[0, 1, 2, 40]])
    k_pos = torch.tensor([[0, 5, 39]])
    bias = table(q_pos, k_pos)
    assert bias.shape == (1, 3, 4, 3)
    for i in range(4):
        for j in range(3):
            bucket = transcription(int(k_pos[0, j] - q_pos[0, i]), True, 8, 16)[0]
            torch.testing.assert_close(bias[0, :, i, j], table.table[bucket])


def test_layer_adds_the_bias_to_the_scaled_logits():
    torch.manual_seed(0)
    layer = T5MultiheadAttention(8, 2, num_buckets=8, max_distance=16).double()
    q, k, v = (torch.randn(1, 2, 5, 4, dtype=torch.float64) for _ in range(3))
    positions = torch.arange(5)[None]
    out, weights = layer.attend(q, k, v, mask=None, positions=positions)
    buckets = torch.tensor([[transcription(j - i, True, 8, 16)[0] for j in range(5)] for i in range(5)])
    logits = q @ k.transpose(-1, -2) / 2.0 + layer.relative_bias.table[buckets].permute(2, 0, 1)
    expected = torch.softmax(logits, -1)
    torch.testing.assert_close(weights, expected)
    torch.testing.assert_close(out, expected @ v)


@pytest.mark.parametrize("causal", [False, True])
def test_model_is_shift_invariant(causal):
    torch.manual_seed(0)
    model = TinyTransformer(11, d_model=16, num_heads=2, num_layers=2, position="t5", causal=causal).double()
    tokens = torch.randint(0, 11, (3, 20))
    base = torch.arange(20)[None]
    with torch.no_grad():
        out = model(tokens, positions=base)
        for shift in (1, 37, 1000):
            torch.testing.assert_close(model(tokens, positions=base + shift), out, rtol=0, atol=1e-12)
        # and position does matter: reversing the order of positions changes the output
        assert (model(tokens, positions=base.flip(-1)) - out).abs().max() > 1e-3


def test_one_table_shared_by_all_layers_and_gradients_reach_it():
    torch.manual_seed(0)
    model = TinyTransformer(8, d_model=16, num_heads=2, num_layers=3, position="t5", causal=True, max_len=32)
    tables = [block.attn.relative_bias for block in model.blocks]
    assert all(t is tables[0] for t in tables) and tables[0].bidirectional is False
    plain = TinyTransformer(8, d_model=16, num_heads=2, num_layers=3, position="none", causal=True, max_len=32)
    assert model.num_parameters() - plain.num_parameters() == 32 * 2  # one (buckets, heads) table
    per_layer = TinyTransformer(
        8, d_model=16, num_heads=2, num_layers=3, position=t5_method(share_across_layers=False), causal=True
    )
    assert per_layer.num_parameters() - plain.num_parameters() == 3 * 32 * 2
    tokens, targets = OffsetCopyTask(vocab_size=8, offset=2).sample(4, 12, generator=torch.Generator().manual_seed(0))
    loss = torch.nn.functional.cross_entropy(model(tokens).flatten(0, 1), targets.flatten(), ignore_index=posviz.IGNORE)
    loss.backward()
    grad = tables[0].table.grad
    assert grad is not None and grad.shape == (32, 2)
    # causal, length 12: the distances 0 … 11 use buckets 0 … 11, so exactly those rows get a gradient
    assert torch.all(grad[:12].abs().sum(-1) > 0) and torch.all(grad[12:] == 0)


def test_registration_and_errors():
    method = posviz.POSITION_METHODS["t5"]
    assert method.input_layer is None and method.shared is not None
    assert "Raffel" in method.description
    assert t5_method(8, 16).name == "t5_b8_d16" and t5_method(share_across_layers=False).name == "t5_b32_d128_per_layer"
    with pytest.raises(ValueError, match="even"):
        t5_method(7, 16)
    with pytest.raises(ValueError, match="must exceed"):
        t5_method(8, 2)
    with pytest.raises(ValueError, match="needs num_heads=2"):
        T5MultiheadAttention(8, 2, relative_bias=T5RelativePositionBias(4))
    with pytest.raises(ValueError, match="bidirectional=False"):
        T5MultiheadAttention(8, 2, causal=True, relative_bias=T5RelativePositionBias(2))
    with pytest.raises(TypeError, match="T5RelativePositionBias"):
        T5MultiheadAttention(8, 2, relative_bias=torch.nn.Linear(2, 2))
