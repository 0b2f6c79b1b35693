"""Context-extension rules: each against a transcription of its source, known values, errors, HF oracle."""

import math

import numpy as np
import pytest
import torch
from hf import transformers_with_torch

import posviz
from posviz import (
    CONTEXT_RULES,
    RotaryEmbedding,
    apply_rope,
    ntk_scaled_base,
    rope_frequencies,
    scaled_rope_frequencies,
    set_rope_frequencies,
    yarn_attention_factor,
    yarn_correction_range,
)

# --- independent transcriptions (plain Python loops, written from the papers / reference code) ---


def _theta(d, base):
    return [base ** (-2.0 * i / d) for i in range(d // 2)]


def _yarn_reference(d, base, s, L0, beta_fast=32.0, beta_slow=1.0):
    """YaRN §3.2 (NTK-by-parts) as in its reference code: ramp in pair index between rounded bounds."""

    def dim_for_turns(turns):  # pair index whose wavelength fits `turns` times into L0
        return d * math.log(L0 / (turns * 2 * math.pi)) / (2 * math.log(base))

    low = max(math.floor(dim_for_turns(beta_fast)), 0)
    high = min(math.ceil(dim_for_turns(beta_slow)), d - 1)
    if low == high:
        high += 0.001
    out = []
    for i, th in enumerate(_theta(d, base)):
        interp_weight = min(max((i - low) / (high - low), 0.0), 1.0)
        out.append(th / s * interp_weight + th * (1 - interp_weight))
    mscale = 0.1 * math.log(s) + 1 if s > 1 else 1.0
    return out, mscale


def _llama3_reference(d, base, s, L0, low_freq_factor=1.0, high_freq_factor=4.0):
    """Meta Llama 3.1 ``apply_scaling``, pair by pair."""
    low_freq_wavelen = L0 / low_freq_factor
    high_freq_wavelen = L0 / high_freq_factor
    out = []
    for th in _theta(d, base):
        wavelen = 2 * math.pi / th
        if wavelen < high_freq_wavelen:
            out.append(th)
        elif wavelen > low_freq_wavelen:
            out.append(th / s)
        else:
            smooth = (L0 / wavelen - low_freq_factor) / (high_freq_factor - low_freq_factor)
            out.append((1 - smooth) * th / s + smooth * th)
    return out


def test_none_and_linear_rules():
    theta = np.array(_theta(64, 10000.0))
    freqs, att = scaled_rope_frequencies(64)
    np.testing.assert_allclose(freqs, theta, rtol=1e-14)
    assert freqs.dtype == np.float64 and freqs.shape == (32,) and att == 1.0
    freqs, att = scaled_rope_frequencies(64, rule="linear", factor=4.0)
    np.testing.assert_allclose(freqs, theta / 4, rtol=1e-14)
    assert att == 1.0
    # PI = positions × 1/s (Chen et al. eq. 4): same angles as position_scale
    np.testing.assert_allclose(
        np.outer([0, 7, 100], freqs), posviz.rope_angles([0, 7, 100], 64, position_scale=0.25), rtol=1e-13
    )


def test_ntk_rule_and_consistency_with_ntk_scaled_base():
    d, base, s = 128, 10000.0, 4.0
    freqs, att = scaled_rope_frequencies(d, base=base, rule="ntk", factor=s)
    new_base = base * s ** (d / (d - 2))
    np.testing.assert_allclose(freqs, _theta(d, new_base), rtol=1e-13)
    np.testing.assert_allclose(freqs, rope_frequencies(d, ntk_scaled_base(base, d, s)), rtol=0)
    assert att == 1.0
    ratio = freqs / rope_frequencies(d, base)
    assert ratio[0] == 1.0 and ratio[-1] == pytest.approx(1 / s, rel=1e-12)
    # pair i is slowed by s^(2i/(d-2)), so only the slowest pair gets the full 1/s
    np.testing.assert_allclose(ratio, s ** (-2 * np.arange(d // 2) / (d - 2)), rtol=1e-12)


def test_ntk_known_numbers_for_the_notebook_05_figure():
    """d = 128, L0 = 2048, s = 4: pairs with wavelength > L0 and how much NTK slows them."""
    d, base, L0, s = 128, 10000.0, 2048, 4.0
    theta = rope_frequencies(d, base)
    slow = 2 * np.pi / theta > L0
    assert slow.sum() == 23
    ntk, _ = scaled_rope_frequencies(d, base=base, rule="ntk", factor=s)
    slowdown = theta[slow] / ntk[slow]  # 1 = untouched, s = fully interpolated
    assert slowdown.min() == pytest.approx(2.465, abs=1e-3) and slowdown.max() == pytest.approx(s, rel=1e-12)
    # their largest angle at the target length s·L0, in units of the largest angle seen in training
    stretch = (s * L0 * ntk[slow]) / (L0 * theta[slow])
    assert stretch.min() == pytest.approx(1.0, rel=1e-12) and stretch.max() == pytest.approx(1.62, abs=0.005)


def test_dynamic_rule():
    d, base, s, L0 = 64, 10000.0, 2.0, 1024
    for seq_len, expect_base in [
        (None, base),
        (512, base),  # shorter than L0: plain RoPE
        (1024, base),
        (4096, base * (s * 4096 / L0 - (s - 1)) ** (d / (d - 2))),
    ]:
        freqs, att = scaled_rope_frequencies(d, base=base, rule="dynamic", factor=s, original_context=L0, seq_len=seq_len)
        np.testing.assert_allclose(freqs, _theta(d, expect_base), rtol=1e-13)
        assert att == 1.0
    # factor 1 at L = 4 L0 equals static NTK with s = 4 (YaRN §3.3's dynamic s = L/L0)
    dyn, _ = scaled_rope_frequencies(d, rule="dynamic", factor=1.0, original_context=L0, seq_len=4 * L0)
    np.testing.assert_allclose(dyn, scaled_rope_frequencies(d, rule="ntk", factor=4.0)[0], rtol=1e-13)


@pytest.mark.parametrize(
    "d, base, s, L0", [(128, 10000.0, 16.0, 4096), (128, 1_000_000.0, 4.0, 32768), (16, 10000.0, 8.0, 64), (64, 500.0, 2.0, 16)]
)
def test_yarn_rule_matches_reference_transcription(d, base, s, L0):
    freqs, att = scaled_rope_frequencies(d, base=base, rule="yarn", factor=s, original_context=L0)
    expect, mscale = _yarn_reference(d, base, s, L0)
    np.testing.assert_allclose(freqs, expect, rtol=1e-13)
    assert att == pytest.approx(mscale, rel=1e-15)


def test_yarn_known_values_llama2_64k():
    """YaRN's released Llama 2 models: d = 128, base 10 000, L0 = 4096, s = 16."""
    assert yarn_correction_range(128, base=10000.0, original_context=4096) == (20, 46)
    assert yarn_attention_factor(16.0) == pytest.approx(1.2772588722239782, rel=1e-15)
    assert yarn_attention_factor(1.0) == 1.0 and yarn_attention_factor(0.5) == 1.0
    freqs, _ = scaled_rope_frequencies(128, rule="yarn", factor=16.0, original_context=4096)
    ratio = freqs / rope_frequencies(128)
    np.testing.assert_array_equal(ratio[:21], 1.0)  # pairs 0..20 kept
    np.testing.assert_allclose(ratio[46:], 1 / 16, rtol=1e-12)  # pairs 46..63 interpolated
    assert np.all(np.diff(ratio[20:47]) < 0)  # a strictly falling ramp between
    # turns in L0 at the boundaries: pair 20 turns > 32 times, pair 46 fewer than once
    turns = 4096 * rope_frequencies(128) / (2 * np.pi)
    assert turns[20] > 32 > turns[21] and turns[45] > 1 > turns[46]


def test_llama3_rule_and_known_band_counts():
    d, base, s, L0 = 128, 500000.0, 8.0, 8192
    freqs, att = scaled_rope_frequencies(d, base=base, rule="llama3", factor=s, original_context=L0)
    np.testing.assert_allclose(freqs, _llama3_reference(d, base, s, L0), rtol=1e-13)
    assert att == 1.0
    ratio = freqs / rope_frequencies(d, base)
    kept, divided = ratio == 1.0, np.isclose(ratio, 1 / s, rtol=1e-12)
    assert kept.sum() == 29 and divided.sum() == 29  # Llama 3.1 8B: pairs 0-28 kept, 35-63 divided by 8
    assert np.flatnonzero(~kept & ~divided).tolist() == [29, 30, 31, 32, 33, 34]
    other, _ = scaled_rope_frequencies(
        32, base=10000.0, rule="llama3", factor=4.0, original_context=256, low_freq_factor=2.0, high_freq_factor=8.0
    )
    np.testing.assert_allclose(other, _llama3_reference(32, 10000.0, 4.0, 256, 2.0, 8.0), rtol=1e-13)


def test_every_rule_is_identity_at_factor_one_except_where_stated():
    for rule in CONTEXT_RULES:
        freqs, att = scaled_rope_frequencies(32, rule=rule, factor=1.0, original_context=128, seq_len=64)
        np.testing.assert_allclose(freqs, rope_frequencies(32), rtol=1e-13, err_msg=rule)
        assert att == 1.0


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(rule="ntk-aware"), "rule must be one of"),
        (dict(rule="linear", factor=0.0), "factor must be"),
        (dict(rule="linear", factor=-2.0), "factor must be"),
        (dict(rule="yarn", factor=4.0), "needs original_context"),
        (dict(rule="llama3", factor=4.0), "needs original_context"),
        (dict(rule="dynamic", factor=4.0), "needs original_context"),
        (dict(rule="yarn", factor=4.0, original_context=0), "original_context must be >= 1"),
        (dict(rule="yarn", factor=4.0, original_context=64, beta_fast=1.0, beta_slow=1.0), "beta_fast must be > beta_slow"),
        (dict(rule="yarn", factor=4.0, original_context=64, beta_slow=0.0), "beta_slow must be"),
        (
            dict(rule="llama3", factor=4.0, original_context=64, low_freq_factor=4.0, high_freq_factor=4.0),
            "high_freq_factor must be > low_freq_factor",
        ),
        (dict(rule="dynamic", original_context=64, seq_len=0), "seq_len must be >= 1"),
        (dict(rule="linear", factor=0.5), "factor must be >= 1"),
        (dict(rule="ntk", factor=0.999), "factor must be >= 1"),
        (dict(rule="yarn", factor=0.5, original_context=64), "factor must be >= 1"),
        (dict(rule="none", base=1.0), "base must be > 1"),
        (dict(rule="ntk", factor=2.0, base=0.5), "base must be > 1"),
        (dict(rule="yarn", factor=4.0, original_context=64, base=0.5), "base must be > 1"),
        (dict(rule="llama3", factor=4.0, original_context=64, base=1.0), "base must be > 1"),
        (dict(rule="yarn", factor=4.0, original_context=64, attention_factor=0.0), "attention_factor must be"),
    ],
)
def test_errors_name_what_is_wrong(kwargs, match):
    with pytest.raises(ValueError, match=match):
        scaled_rope_frequencies(16, **kwargs)


def test_yarn_correction_range_rejects_a_base_that_does_not_fall():
    # ln b <= 0 would flip the range (frequencies rising with the pair index)
    for base in (1.0, 0.5):
        with pytest.raises(ValueError, match="base must be > 1"):
            yarn_correction_range(16, base=base, original_context=64)


def test_toy_model_yarn_keeps_pair_0_only_by_the_clamp():
    # notebook 05b: d = 16, b = 10 000, L0 = 64. No pair turns beta_fast = 32 times in 64 tokens
    # (pair 0 turns 64 / 2π ≈ 10.2 times), so i(32) < 0 and the clamp keeps pair 0.
    raw_low = 16 * math.log(64 / (32 * 2 * math.pi)) / (2 * math.log(10000.0))
    assert raw_low == pytest.approx(-0.9943, abs=1e-4)
    assert 64 / (2 * math.pi) == pytest.approx(10.19, abs=0.01)
    assert yarn_correction_range(16, base=10000.0, original_context=64) == (0, 3)
    freqs, att = scaled_rope_frequencies(16, rule="yarn", factor=8.0, original_context=64)
    np.testing.assert_allclose(freqs / rope_frequencies(16), [1, 17 / 24, 5 / 12, 1 / 8, 1 / 8, 1 / 8, 1 / 8, 1 / 8], rtol=1e-12)
    assert att == pytest.approx(0.1 * math.log(8) + 1)


def test_yarn_attention_factor_can_be_set_as_in_hugging_face():
    default, att = scaled_rope_frequencies(16, rule="yarn", factor=8.0, original_context=64)
    plain_parts, one = scaled_rope_frequencies(16, rule="yarn", factor=8.0, original_context=64, attention_factor=1.0)
    np.testing.assert_array_equal(plain_parts, default)  # the same frequencies, only cos/sin unscaled
    assert att == pytest.approx(1.2079442) and one == 1.0
    _, other = scaled_rope_frequencies(16, rule="yarn", factor=8.0, original_context=64, attention_factor=1.5)
    assert other == 1.5
    # keys a rule does not use are ignored, as in Hugging Face
    assert scaled_rope_frequencies(16, rule="linear", factor=8.0, attention_factor=2.0)[1] == 1.0


def test_set_rope_frequencies_passes_attention_factor_to_the_rule():
    torch.manual_seed(0)
    model = posviz.TinyTransformer(10, d_model=32, num_heads=2, num_layers=1, position="rope", causal=True, max_len=64)
    rotary = model.blocks[0].attn.rotary
    set_rope_frequencies(model, rule="yarn", factor=4.0, original_context=16)
    assert rotary.attention_factor == pytest.approx(0.1 * math.log(4) + 1)
    yarn_freqs = np.array(rotary.frequencies)
    set_rope_frequencies(model, rule="yarn", factor=4.0, original_context=16, attention_factor=1.0)
    assert rotary.attention_factor == 1.0
    np.testing.assert_array_equal(np.array(rotary.frequencies), yarn_freqs)
    set_rope_frequencies(model, rope_frequencies(16) / 2)
    assert rotary.attention_factor == 1.0
    with pytest.raises(ValueError, match="plain RoPE has none"):
        set_rope_frequencies(model, attention_factor=1.2)
    set_rope_frequencies(model, rule="none")
    assert rotary.frequencies is None and rotary.attention_factor == 1.0


def test_head_dim_errors():
    with pytest.raises(ValueError, match="even"):
        scaled_rope_frequencies(15)
    with pytest.raises(ValueError, match=">= 2"):
        scaled_rope_frequencies(0)
    with pytest.raises(ValueError, match=">= 4 for NTK"):
        scaled_rope_frequencies(2, rule="ntk", factor=2.0)
    with pytest.raises(TypeError):
        scaled_rope_frequencies(16.0)
    with pytest.raises(TypeError):
        scaled_rope_frequencies(16, factor="4")


# --- apply_rope / RotaryEmbedding use the frequencies through one code path -----------------


def test_apply_rope_with_frequencies_and_attention_factor():
    gen = torch.Generator().manual_seed(3)
    x = torch.randn(2, 3, 20, 16, dtype=torch.float64, generator=gen)
    pi, _ = scaled_rope_frequencies(16, rule="linear", factor=4.0)
    np.testing.assert_allclose(apply_rope(x, frequencies=pi), apply_rope(x, position_scale=0.25), atol=1e-12)
    ntk, _ = scaled_rope_frequencies(16, rule="ntk", factor=4.0)
    np.testing.assert_allclose(
        apply_rope(x, frequencies=torch.tensor(ntk)), apply_rope(x, base=ntk_scaled_base(10000.0, 16, 4.0)), atol=1e-12
    )
    yarn, att = scaled_rope_frequencies(16, rule="yarn", factor=4.0, original_context=20)
    scaled = apply_rope(x, frequencies=yarn, attention_factor=att)
    np.testing.assert_allclose(scaled, att * apply_rope(x, frequencies=yarn), atol=1e-12)
    # the logits of rotated queries and keys grow by att²
    q, k = scaled[..., 3, :], scaled[..., 11, :]
    q1, k1 = apply_rope(x, frequencies=yarn)[..., 3, :], apply_rope(x, frequencies=yarn)[..., 11, :]
    np.testing.assert_allclose((q * k).sum(-1), att**2 * (q1 * k1).sum(-1), rtol=1e-12)
    with pytest.raises(ValueError, match=r"shape \(8,\)"):
        apply_rope(x, frequencies=np.ones(7))
    with pytest.raises(ValueError, match="attention_factor must be"):
        apply_rope(x, attention_factor=0.0)
    with pytest.raises(ValueError, match="finite"):
        apply_rope(x, frequencies=np.full(8, np.nan))


def test_rotary_embedding_set_frequencies_matches_apply_rope_inside_and_outside_cache():
    gen = torch.Generator().manual_seed(4)
    x = torch.randn(2, 40, 16, generator=gen)
    rope = RotaryEmbedding(16, max_len=32)
    plain = rope(x[:, :32])
    freqs, att = scaled_rope_frequencies(16, rule="yarn", factor=4.0, original_context=32)
    rope.set_frequencies(freqs, attention_factor=att)
    expect = apply_rope(x, frequencies=freqs, attention_factor=att)
    torch.testing.assert_close(rope(x[:, :32]), expect[:, :32], atol=1e-6, rtol=1e-6)  # cached
    torch.testing.assert_close(rope(x, torch.arange(40)), expect, atol=1e-6, rtol=1e-6)  # beyond the cache
    assert "attention_factor=" in repr(rope)
    rope.set_frequencies(None)
    torch.testing.assert_close(rope(x[:, :32]), plain, atol=0, rtol=0)
    same = RotaryEmbedding(16, max_len=32, frequencies=freqs, attention_factor=att)
    torch.testing.assert_close(same(x[:, :32]), expect[:, :32], atol=1e-6, rtol=1e-6)


def test_set_rope_frequencies_on_a_model():
    torch.manual_seed(0)
    model = posviz.TinyTransformer(10, d_model=32, num_heads=2, num_layers=2, position="rope", causal=True, max_len=64)
    tokens = torch.randint(0, 10, (2, 48))
    with torch.no_grad():
        before = model(tokens)
        assert set_rope_frequencies(model, rule="linear", factor=2.0) == 2
        rotary = model.blocks[0].attn.rotary
        np.testing.assert_allclose(rotary.frequencies, rope_frequencies(16) / 2, rtol=1e-15)
        changed = model(tokens)
        assert not torch.allclose(changed, before)
        set_rope_frequencies(model, rule="none")
        torch.testing.assert_close(model(tokens), before, atol=1e-6, rtol=1e-6)
        set_rope_frequencies(model, rope_frequencies(16) / 2)
        torch.testing.assert_close(model(tokens), changed, atol=1e-6, rtol=1e-6)
    with pytest.raises(ValueError, match="not both"):
        set_rope_frequencies(model, rope_frequencies(16), rule="linear")
    assert set_rope_frequencies(posviz.TinyTransformer(10, position="alibi"), rule="none") == 0


# --- Hugging Face as an oracle (float32 there) ------------------------------------------------


def _hf(rope_type, d, base, L0, *, factor=None, max_pos=None, seq_len=None, **extra):
    transformers = transformers_with_torch()
    from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS

    params = {"rope_type": rope_type, "rope_theta": base, **extra}
    if factor is not None:
        params["factor"] = factor
    if rope_type in ("yarn", "llama3"):
        params["original_max_position_embeddings"] = L0
    config = transformers.LlamaConfig(
        hidden_size=d * 4,
        num_attention_heads=4,
        head_dim=d,
        max_position_embeddings=max_pos or L0,
        rope_parameters=params,
    )
    freqs, att = ROPE_INIT_FUNCTIONS[rope_type](config, "cpu", seq_len=seq_len)
    return freqs.double().numpy(), float(att)


HF_CASES = [
    # (rope_type, our rule, d, base, L0, factor, extra HF keys / our keys)
    ("linear", "linear", 128, 10000.0, 4096, 4.0, {}),
    ("yarn", "yarn", 128, 10000.0, 4096, 16.0, {}),
    ("yarn", "yarn", 128, 1_000_000.0, 32768, 4.0, {}),
    ("yarn", "yarn", 64, 10000.0, 2048, 8.0, {"beta_fast": 16.0, "beta_slow": 2.0}),
    ("yarn", "yarn", 16, 10000.0, 64, 8.0, {}),
    ("llama3", "llama3", 128, 500000.0, 8192, 8.0, {"low_freq_factor": 1.0, "high_freq_factor": 4.0}),
    ("llama3", "llama3", 64, 500000.0, 8192, 32.0, {"low_freq_factor": 1.0, "high_freq_factor": 4.0}),
]


@pytest.mark.parametrize("rope_type, rule, d, base, L0, factor, extra", HF_CASES)
def test_matches_hugging_face(rope_type, rule, d, base, L0, factor, extra):
    hf_freqs, hf_att = _hf(rope_type, d, base, L0, factor=factor, max_pos=int(L0 * factor), **extra)
    ours, att = scaled_rope_frequencies(d, base=base, rule=rule, factor=factor, original_context=L0, **extra)
    np.testing.assert_allclose(ours, hf_freqs, rtol=2e-6, atol=0)  # HF works in float32
    assert att == pytest.approx(hf_att, rel=1e-12)


def test_yarn_attention_factor_matches_hugging_face():
    hf_freqs, hf_att = _hf("yarn", 16, 10000.0, 64, factor=8.0, max_pos=512, attention_factor=1.0)
    ours, att = scaled_rope_frequencies(16, rule="yarn", factor=8.0, original_context=64, attention_factor=1.0)
    np.testing.assert_allclose(ours, hf_freqs, rtol=2e-6, atol=0)
    assert att == hf_att == 1.0


@pytest.mark.parametrize("factor, seq_len", [(2.0, 8192), (4.0, 16384), (1.0, 8192), (2.0, 2048)])
def test_dynamic_and_ntk_match_hugging_face(factor, seq_len):
    hf_freqs, hf_att = _hf("dynamic", 128, 10000.0, 4096, factor=factor, seq_len=seq_len)
    ours, att = scaled_rope_frequencies(128, rule="dynamic", factor=factor, original_context=4096, seq_len=seq_len)
    np.testing.assert_allclose(ours, hf_freqs, rtol=2e-6)
    assert att == hf_att == 1.0
    # static NTK-aware at s = L/L0 is HF's dynamic rule with factor 1 at length L
    hf_ntk, _ = _hf("dynamic", 128, 10000.0, 4096, factor=1.0, seq_len=seq_len)
    ntk, _ = scaled_rope_frequencies(128, rule="ntk", factor=max(seq_len / 4096, 1.0))
    np.testing.assert_allclose(ntk, hf_ntk, rtol=2e-6)
