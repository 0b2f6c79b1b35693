"""2-D RoPE and M-RoPE (posviz.rope2d), with Hugging Face's Qwen2-VL code as the oracle."""

import re

import numpy as np
import pytest
import torch

import posviz
from posviz import rope2d
from tests.hf import transformers_with_torch


def _qwen2_vl():
    return transformers_with_torch("transformers.models.qwen2_vl.modeling_qwen2_vl")


def _qwen2_vl_get_rope_index():
    """Skip unless posviz.qwen2_vl_rope_index can run: transformers 5.3 or newer (mm_token_type_ids)."""
    modeling = _qwen2_vl()
    import transformers

    if rope2d._transformers_major_minor(transformers.__version__) < (5, 3):
        pytest.skip(f"get_rope_index takes mm_token_type_ids from transformers 5.3 on, found {transformers.__version__}")
    return modeling


def _tiny_qwen2_vl(mrope_section=(2, 3, 3)):
    """A randomly initialised Qwen2-VL small enough to build in a fraction of a second."""
    modeling = _qwen2_vl()
    from transformers.models.qwen2_vl.configuration_qwen2_vl import Qwen2VLConfig

    text = dict(hidden_size=64, num_attention_heads=4, num_key_value_heads=2, num_hidden_layers=1,
                intermediate_size=64, vocab_size=200, bos_token_id=1, eos_token_id=2,
                rope_parameters={"rope_type": "default", "rope_theta": 10000.0, "mrope_section": list(mrope_section)})
    vision = dict(depth=1, embed_dim=32, hidden_size=64, num_heads=2, spatial_merge_size=2)
    config = Qwen2VLConfig(text_config=text, vision_config=vision, image_token_id=151, video_token_id=152,
                           vision_start_token_id=153, vision_end_token_id=154)
    torch.manual_seed(0)
    return modeling, modeling.Qwen2VLModel(config).eval()


# --- axial RoPE ------------------------------------------------------------------------------


def test_axial_half_layout_equals_qwen2_vl_vision_rope():
    modeling = _qwen2_vl()
    from transformers.models.qwen2_vl.configuration_qwen2_vl import Qwen2VLVisionConfig

    head_dim, heads, h, w = 16, 2, 3, 5
    config = Qwen2VLVisionConfig(embed_dim=head_dim * heads, num_heads=heads, depth=1)
    rotary = modeling.Qwen2VLVisionRotaryEmbedding(config)
    rows, cols = posviz.grid_positions(h, w)
    cos, sin = rotary(torch.zeros(1), torch.stack([rows, cols], dim=1))  # (seq, head_dim)
    gen = torch.Generator().manual_seed(0)
    q, k = torch.randn(2, h * w, heads, head_dim, generator=gen)  # Qwen2-VL's (seq, heads, head_dim)
    q_hf, k_hf = modeling.apply_rotary_pos_emb_vision(q, k, cos, sin)
    ours = posviz.axial_rope_2d(q.transpose(0, 1), rows, cols, layout="half").transpose(0, 1)
    torch.testing.assert_close(ours, q_hf, atol=1e-6, rtol=1e-6)
    assert not torch.allclose(posviz.axial_rope_2d(q.transpose(0, 1), cols, rows, layout="half").transpose(0, 1),
                              q_hf, atol=1e-3)  # rows and columns are not interchangeable


def test_axial_is_1d_rope_on_each_half_and_a_special_case_of_mixed():
    gen = torch.Generator().manual_seed(1)
    x = torch.randn(2, 12, 16, generator=gen, dtype=torch.float64)
    rows, cols = posviz.grid_positions(3, 4)
    got = posviz.axial_rope_2d(x, rows, cols, base=100.0)
    torch.testing.assert_close(got[..., :8], posviz.apply_rope(x[..., :8], rows, base=100.0))
    torch.testing.assert_close(got[..., 8:], posviz.apply_rope(x[..., 8:], cols, base=100.0))
    f_row, f_col = posviz.axial_frequencies_2d(16, 100.0)
    np.testing.assert_allclose(f_row[:4], 100.0 ** (-np.arange(0, 16, 4) / 16))
    assert (f_row[4:] == 0).all() and (f_col[:4] == 0).all()
    torch.testing.assert_close(posviz.mixed_rope_2d(x, rows, cols, f_row, f_col), got)


@pytest.mark.parametrize("layout", ["interleaved", "half"])
@pytest.mark.parametrize("mixed", [False, True])
def test_scores_depend_only_on_the_2d_offset(layout, mixed):
    gen = torch.Generator().manual_seed(2)
    q, k = torch.randn(2, 16, generator=gen, dtype=torch.float64)
    f_row, f_col = (torch.randn(2, 8, generator=gen, dtype=torch.float64) if mixed
                    else map(torch.from_numpy, posviz.axial_frequencies_2d(16)))

    def score(p, p2):
        rot = lambda v, pos: posviz.mixed_rope_2d(v[None], torch.tensor([pos[0]]), torch.tensor([pos[1]]),  # noqa: E731
                                                  f_row, f_col, layout=layout)[0]
        return float(rot(q, p) @ rot(k, p2))

    for offset in [(0, 0), (1, -2), (-3, 4)]:
        values = [score((r, c), (r + offset[0], c + offset[1])) for r, c in [(0, 0), (5, 2), (-7, 11)]]
        np.testing.assert_allclose(values, values[0], rtol=1e-10)
    assert abs(score((0, 0), (1, 2)) - score((0, 0), (2, 1))) > 1e-3  # but it depends on the offset


def test_axial_scores_are_a_row_part_plus_a_column_part_and_mixed_ones_are_not():
    """Axial RoPE: s(Δr, Δc) − s(Δr, 0) − s(0, Δc) + s(0, 0) = 0 for every offset; a mixed pair breaks it."""
    gen = torch.Generator().manual_seed(3)
    q, k = torch.randn(2, 8, generator=gen, dtype=torch.float64)

    def table(f_row, f_col):
        offsets = torch.arange(-4, 5)
        dr, dc = torch.meshgrid(offsets, offsets, indexing="ij")
        zero = torch.zeros_like(dr.flatten())
        qs = posviz.mixed_rope_2d(q.expand(len(zero), 8), zero, zero, f_row, f_col)
        ks = posviz.mixed_rope_2d(k.expand(len(zero), 8), dr.flatten(), dc.flatten(), f_row, f_col)
        return (qs * ks).sum(-1).reshape(9, 9)

    s = table(*posviz.axial_frequencies_2d(8))
    interaction = s - s[:, 4:5] - s[4:5, :] + s[4, 4]
    assert float(interaction.abs().max()) < 1e-12
    diagonal = table(np.array([0.7, 0.0, 0.0, 0.0]), np.array([0.7, 0.0, 0.0, 0.0]))
    mixed_interaction = diagonal - diagonal[:, 4:5] - diagonal[4:5, :] + diagonal[4, 4]
    assert float(mixed_interaction.abs().max()) > 0.1


def test_mixed_frequencies_get_gradients():
    f_row = torch.zeros(4, requires_grad=True)
    f_col = torch.full((4,), 0.5, requires_grad=True)
    x = torch.randn(6, 8, generator=torch.Generator().manual_seed(4))
    rows, cols = posviz.grid_positions(2, 3)
    posviz.mixed_rope_2d(x, rows, cols, f_row, f_col).pow(2).sum().backward()  # norm is kept: gradient ~0
    (posviz.mixed_rope_2d(x, rows, cols, f_row, f_col)[1:] * x[:1]).sum().backward()
    assert f_row.grad is not None and float(f_row.grad.abs().sum()) > 0 and float(f_col.grad.abs().sum()) > 0


def test_per_head_frequencies_broadcast():
    gen = torch.Generator().manual_seed(5)
    x = torch.randn(2, 3, 6, 8, generator=gen)
    rows, cols = posviz.grid_positions(2, 3)
    f_row, f_col = torch.randn(2, 3, 1, 4, generator=gen)
    got = posviz.mixed_rope_2d(x, rows, cols, f_row, f_col)
    for head in range(3):
        torch.testing.assert_close(got[:, head], posviz.mixed_rope_2d(x[:, head], rows, cols, f_row[head], f_col[head]))


def test_2d_bad_input_is_refused_with_a_clear_message():
    x = torch.randn(4, 6)
    rows, cols = torch.arange(4), torch.arange(4)
    with pytest.raises(ValueError, match="divisible by 4"):
        posviz.axial_rope_2d(x, rows, cols)
    with pytest.raises(ValueError, match="broadcast"):
        posviz.axial_rope_2d(torch.randn(4, 8), torch.arange(5), torch.arange(5))
    with pytest.raises(TypeError, match="integer"):
        posviz.axial_rope_2d(torch.randn(4, 8), rows.float(), cols)
    with pytest.raises(TypeError, match="floating"):
        posviz.axial_rope_2d(torch.ones(4, 8, dtype=torch.long), rows, cols)
    with pytest.raises(ValueError, match=r"shape \(\.\.\., 4\)"):
        posviz.mixed_rope_2d(torch.randn(4, 8), rows, cols, np.ones(3), np.ones(4))
    with pytest.raises(ValueError, match="layout"):
        posviz.axial_rope_2d(torch.randn(4, 8), rows, cols, layout="neox")
    with pytest.raises(ValueError, match=">= 1"):
        posviz.grid_positions(0, 3)


# --- M-RoPE position ids ----------------------------------------------------------------------


def test_mrope_ids_of_a_small_prompt_by_hand():
    ids = posviz.mrope_position_ids([2, (1, 2, 3), 1])
    expected = [
        [0, 1, 2, 2, 2, 2, 2, 2, 5],
        [0, 1, 2, 2, 2, 3, 3, 3, 5],
        [0, 1, 2, 3, 4, 2, 3, 4, 5],
    ]
    assert ids.dtype == torch.int64 and ids.tolist() == expected


@pytest.mark.parametrize(
    "segments",
    [
        [3, (1, 2, 3), 4],
        [5, (1, 4, 4), 2, (2, 3, 5), 3],
        [(1, 3, 2), 1],
        [1, (2, 2, 3), (1, 1, 1), 6],
    ],
)
def test_mrope_ids_equal_hugging_face_get_rope_index(segments):
    """posviz.qwen2_vl_rope_index only lays the prompt out; the ids are Hugging Face's get_rope_index."""
    _qwen2_vl_get_rope_index()  # skips without transformers 5.3 or newer
    torch.testing.assert_close(posviz.mrope_position_ids(segments), posviz.qwen2_vl_rope_index(segments))


def test_the_hugging_face_layout_refuses_two_grids_of_one_kind_in_a_row():
    """No vision_start/end tokens are laid out, so HF would read two adjacent images as one grid."""
    for segments in ([2, (1, 2, 2), (1, 2, 3), 1], [(2, 2, 2), (3, 1, 2)]):
        assert posviz.mrope_position_ids(segments).shape[0] == 3  # the paper's rule itself has no such limit
        with pytest.raises(ValueError, match="no text between them"):
            posviz.qwen2_vl_rope_index(segments)


def test_a_video_with_more_temporal_patches_than_rows_continues_past_them():
    """The paper's max + 1 rule; transformers 5.24 continues at start + max(h, w) here, 4.x at
    max() + 1 (the ids printed in HF issue #45381 show the change after 5.2.0); other versions were
    not checked, so either is accepted."""
    _qwen2_vl_get_rope_index()  # skips without transformers 5.3 or newer
    segments = [2, (4, 2, 2), 3]
    ours = posviz.mrope_position_ids(segments)
    assert ours[:, 18:].tolist() == [[6, 7, 8]] * 3  # 2 + max(4, 2, 2)
    assert ours[0, 2:18].max() == 5
    hf = posviz.qwen2_vl_rope_index(segments)
    torch.testing.assert_close(ours[:, :18], hf[:, :18])
    assert hf[:, 18:].tolist() in ([[4, 5, 6]] * 3, [[6, 7, 8]] * 3)  # 2 + max(h, w) (5.3 on), or 2 + max(t, h, w) if a release fixes it


@pytest.mark.parametrize("version", ["4.57.1", "5.0.0", "5.2.0", "5.2.1.dev0"])
def test_the_hugging_face_oracle_refuses_transformers_before_5_3(version, monkeypatch):
    """Before 5.3, get_rope_index has no mm_token_type_ids: a clear ImportError, not a TypeError inside it."""
    transformers = pytest.importorskip("transformers")
    monkeypatch.setattr(transformers, "__version__", version)
    with pytest.raises(ImportError, match=rf"transformers >= 5\.3.*found transformers {re.escape(version)}"):
        posviz.qwen2_vl_rope_index([2, (1, 2, 2), 1])


def test_the_hugging_face_oracle_needs_transformers_to_use_torch(monkeypatch):
    transformers = pytest.importorskip("transformers")
    monkeypatch.setattr(transformers, "__version__", "5.3.0")
    monkeypatch.setattr(transformers, "is_torch_available", lambda: False)
    with pytest.raises(ImportError, match=r"cannot use torch .* needs torch >= 2\.6"):
        posviz.qwen2_vl_rope_index([2, (1, 2, 2), 1])


@pytest.mark.parametrize("version, expected", [("5.3.0", (5, 3)), ("5.24.0", (5, 24)), ("5.10.0.dev0", (5, 10)),
                                               ("6.0.0rc1", (6, 0)), ("unknown", (0, 0))])
def test_transformers_major_minor(version, expected):
    assert rope2d._transformers_major_minor(version) == expected


def test_mrope_ids_bad_segments():
    with pytest.raises(ValueError, match="empty"):
        posviz.mrope_position_ids([])
    with pytest.raises(ValueError, match="empty vision grid"):
        posviz.mrope_position_ids([2, (1, 0, 3)])
    with pytest.raises(ValueError, match=">= 1 token"):
        posviz.mrope_position_ids([0])
    with pytest.raises(TypeError, match=r"\(t, h, w\)"):
        posviz.mrope_position_ids([2, (2, 3)])
    with pytest.raises(TypeError, match="sequence"):
        posviz.mrope_position_ids(5)


# --- apply_mrope ----------------------------------------------------------------------------


def test_apply_mrope_equals_hugging_face_qwen2_vl_rotary():
    modeling, model = _tiny_qwen2_vl(mrope_section=(2, 3, 3))
    rotary = model.language_model.rotary_emb
    segments = [3, (1, 2, 3), 2, (2, 2, 2), 1]
    ids = posviz.mrope_position_ids(segments)
    cos, sin = rotary(torch.zeros(1, dtype=torch.float32), ids[:, None, :])  # (batch, seq, head_dim)
    gen = torch.Generator().manual_seed(6)
    q, k = torch.randn(2, 1, 4, ids.shape[1], 16, generator=gen)  # (batch, heads, seq, head_dim)
    q_hf, k_hf = modeling.apply_rotary_pos_emb(q, k, cos, sin)
    ours = posviz.apply_mrope(q, ids[:, None, None, :], [2, 3, 3])
    torch.testing.assert_close(ours, q_hf, atol=1e-6, rtol=1e-6)
    torch.testing.assert_close(posviz.apply_mrope(k, ids[:, None, None, :], [2, 3, 3]), k_hf, atol=1e-6, rtol=1e-6)


def test_apply_mrope_on_text_is_1d_rope_in_the_half_layout():
    x = torch.randn(3, 7, 16, generator=torch.Generator().manual_seed(7), dtype=torch.float64)
    ids = posviz.mrope_position_ids([7])
    torch.testing.assert_close(posviz.apply_mrope(x, ids, [2, 3, 3]), posviz.apply_rope(x, ids[0], layout="half"))
    # each section follows its own row: move only the width row and only the last three pairs change
    moved = ids.clone()
    moved[2] += 4
    diff = (posviz.apply_mrope(x, moved, [2, 3, 3]) - posviz.apply_mrope(x, ids, [2, 3, 3])).abs().amax((0, 1))
    changed = diff > 1e-12
    assert changed.tolist() == [False] * 5 + [True] * 3 + [False] * 5 + [True] * 3


def test_apply_mrope_bad_input():
    x = torch.randn(5, 16)
    ids = posviz.mrope_position_ids([5])
    with pytest.raises(ValueError, match="sum to head_dim / 2 = 8"):
        posviz.apply_mrope(x, ids, [2, 3, 2])
    with pytest.raises(ValueError, match="three ints"):
        posviz.apply_mrope(x, ids, [4, 4])
    with pytest.raises(ValueError, match=r"\(3, \.\.\., seq_len\)"):
        posviz.apply_mrope(x, ids[:2], [2, 3, 3])
    with pytest.raises(ValueError, match="broadcast"):
        posviz.apply_mrope(x, posviz.mrope_position_ids([6]), [2, 3, 3])
    with pytest.raises(TypeError, match="integer"):
        posviz.apply_mrope(x, ids.float(), [2, 3, 3])


def test_rope2d_exports():
    for name in rope2d.__all__:
        assert getattr(posviz, name) is getattr(rope2d, name)
