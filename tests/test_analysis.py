"""PCA of position tables: agrees with an eigen-decomposition, fixed signs, known cases, errors."""

import matplotlib.pyplot as plt
import numpy as np
import pytest
import torch

import posviz


def teardown_function():
    plt.close("all")


def test_pca_matches_covariance_eigendecomposition():
    rng = np.random.default_rng(0)
    table = rng.normal(size=(60, 7)) @ rng.normal(size=(7, 7)) + 3.0
    result = posviz.pca(table.astype(np.float32), n_components=3)
    # independent computation: eigenvectors of the covariance matrix
    centred = table - table.mean(0)
    evals, evecs = np.linalg.eigh(centred.T @ centred / (len(table) - 1))
    order = np.argsort(evals)[::-1]
    evals, evecs = evals[order], evecs[:, order]
    np.testing.assert_allclose(result.explained_variance_ratio, evals[:3] / evals.sum(), rtol=1e-5)
    for k in range(3):
        # same direction up to sign; the sign convention makes the largest-|.| entry positive
        assert abs(result.components[k] @ evecs[:, k]) == pytest.approx(1.0, abs=1e-5)
        assert result.components[k][np.argmax(np.abs(result.components[k]))] > 0
    np.testing.assert_allclose(result.components @ result.components.T, np.eye(3), atol=1e-10)
    np.testing.assert_allclose(result.scores, (table.astype(np.float32).astype(np.float64) - result.mean) @ result.components.T, atol=1e-9)
    assert result.scores.dtype == np.float64 and result.scores.shape == (60, 3)


def test_full_rank_reconstructs_and_ratios_sum_to_one():
    table = posviz.sinusoidal_encoding(20, 6, dtype=np.float64)
    result = posviz.pca(torch.from_numpy(table), n_components=6)
    np.testing.assert_allclose(result.scores @ result.components + result.mean, table, atol=1e-12)
    assert result.explained_variance_ratio.sum() == pytest.approx(1.0)
    assert np.all(np.diff(result.explained_variance_ratio) <= 1e-15)


def test_points_on_a_line_and_on_a_circle():
    p = np.arange(10.0)
    line = np.outer(p, [3.0, 4.0])  # one direction, no noise
    result = posviz.pca(line, n_components=2)
    np.testing.assert_allclose(result.explained_variance_ratio, [1.0, 0.0], atol=1e-12)
    np.testing.assert_allclose(result.components[0], [0.6, 0.8], atol=1e-12)
    np.testing.assert_allclose(result.scores[:, 0], 5.0 * (p - p.mean()), atol=1e-12)
    # a full sin/cos circle (one pair of the sinusoidal table) splits variance evenly
    angle = 2 * np.pi * np.arange(8) / 8
    circle = np.stack([np.sin(angle), np.cos(angle)], axis=1)
    np.testing.assert_allclose(posviz.pca(circle).explained_variance_ratio, [0.5, 0.5], atol=1e-12)


def test_pca_errors():
    with pytest.raises(ValueError, match="n_components"):
        posviz.pca(np.ones((5, 3)) * np.arange(3), n_components=4)
    with pytest.raises(ValueError, match="zero variance"):
        posviz.pca(np.ones((5, 3)))
    with pytest.raises(ValueError, match="at least 2 rows"):
        posviz.pca(np.ones((1, 3)))
    with pytest.raises(ValueError, match="NaN"):
        posviz.pca(np.array([[0.0, np.nan], [1.0, 2.0]]))
    with pytest.raises(ValueError, match="2-D"):
        posviz.pca(np.arange(4.0))
    with pytest.raises(TypeError):
        posviz.pca(np.eye(3), n_components=1.5)


def test_plot_position_pca_draws_the_scores():
    table = posviz.sinusoidal_encoding(32, 16)
    ax = posviz.plot_position_pca(table, components=(0, 2), title="x")
    result = posviz.pca(table, n_components=3)
    offsets = ax.collections[0].get_offsets()
    np.testing.assert_allclose(offsets[:, 0], result.scores[:, 0], atol=1e-6)
    np.testing.assert_allclose(offsets[:, 1], result.scores[:, 2], atol=1e-6)
    np.testing.assert_array_equal(ax.collections[0].get_array(), np.arange(32))
    assert ax.get_xlabel().startswith("PC1") and ax.get_ylabel().startswith("PC3")
    assert ax.figure.axes[-1].get_ylabel()  # labelled colorbar
    with pytest.raises(ValueError, match="distinct"):
        posviz.plot_position_pca(table, components=(1, 1))
    with pytest.raises(ValueError, match="n_components"):
        posviz.plot_position_pca(table, components=(0, 40))
