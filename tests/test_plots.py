"""Plot helpers: they draw, return axes, use the fixed colour limits, and compute right numbers."""

import matplotlib.pyplot as plt
import numpy as np
import pytest

import posviz


def teardown_function():
    plt.close("all")


def test_heatmap_uses_fixed_diverging_limits_and_true_tick_indices():
    ax = posviz.plot_encoding_heatmap(posviz.sinusoidal_encoding(100, 64))
    image = ax.get_images()[0]
    assert image.get_clim() == (-1.0, 1.0) and image.get_cmap().name == posviz.plots.DIVERGING_CMAP
    ticks = ax.get_yticks()
    assert ticks[0] == 0 and len(ticks) <= 12 and np.all(np.diff(ticks) == np.diff(ticks)[0])
    assert ax.figure.axes[-1].get_ylabel()  # labelled colorbar
    with pytest.raises(ValueError, match="row_labels"):
        posviz.plot_encoding_heatmap(np.zeros((3, 4)), row_labels=["a"])
    with pytest.raises(ValueError, match="2-D"):
        posviz.plot_encoding_heatmap(np.zeros(3))


def test_tick_stride():
    assert posviz.tick_stride(10) == 1
    assert posviz.tick_stride(512) == 50
    assert posviz.tick_stride(100) == 10


def test_waves_plot_integer_points_match_table():
    ax = posviz.plot_dimension_waves(16, [0, 3], 6)
    table = posviz.sinusoidal_encoding(6, 16, dtype=np.float64)
    dots = [line for line in ax.get_lines() if line.get_linestyle() == "None"]
    np.testing.assert_allclose(dots[0].get_ydata(), table[:, 0], atol=1e-12)
    np.testing.assert_allclose(dots[1].get_ydata(), table[:, 3], atol=1e-12)
    with pytest.raises(ValueError, match="outside"):
        posviz.plot_dimension_waves(16, [16], 6)


@pytest.mark.parametrize(
    ("lang", "expected"),
    [
        ("ko", ["열 0 (sin)", "열 3 (cos)"]),
        ("en", ["column 0 (sin)", "column 3 (cos)"]),
        ("both", ["열 0 (sin) · column 0 (sin)", "열 3 (cos) · column 3 (cos)"]),
    ],
)
def test_waves_legend_names_each_column_whole_in_each_language(lang, expected):
    """Each language's half of a legend entry carries the column number and the wave."""
    posviz.set_language(lang)
    try:
        ax = posviz.plot_dimension_waves(16, [0, 3], 6)
        assert [text.get_text() for text in ax.get_legend().get_texts()] == expected
    finally:
        posviz.set_language("both")


def test_offset_similarity_values():
    pe = posviz.sinusoidal_encoding(64, 16, dtype=np.float64)
    offsets, dots = posviz.offset_similarity(pe, 10, metric="dot", reference=5)
    np.testing.assert_allclose(dots, pe[5:16] @ pe[5], atol=1e-12)
    # dot product depends only on the offset: sum_i cos(k w_i)
    freqs = 10000.0 ** (-np.arange(0, 16, 2) / 16)
    np.testing.assert_allclose(dots, np.cos(np.outer(offsets, freqs)).sum(1), atol=1e-12)
    _, cos = posviz.offset_similarity(pe, 10)
    assert cos[0] == pytest.approx(1.0)
    with pytest.raises(ValueError, match="metric"):
        posviz.offset_similarity(pe, 3, metric="l2")
    with pytest.raises(ValueError, match="runs past"):
        posviz.offset_similarity(pe, 10, reference=60)
    ax = posviz.plot_similarity_vs_offset(pe, 10, references=(0, None), label="PE")
    assert len(ax.get_lines()) == 2
