"""Korean font, minus sign, language and seeding."""

import logging
import random
import warnings

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pytest
import torch

import posviz


@pytest.fixture(autouse=True)
def _restore_language():
    yield
    posviz.set_language("both")


def test_setup_prints_versions_and_sets_a_korean_font(capsys):
    assert posviz.setup(lang="ko", seed=3) is None
    printed = capsys.readouterr().out
    assert printed.count("\n") == 1 and "torch 2." in printed and "lang ko" in printed and "seed 3" in printed
    font = posviz.use_korean_font()
    assert f"font {font}" in printed
    assert posviz.get_language() == "ko"
    assert matplotlib.rcParams["font.family"] == ["DejaVu Sans", font]
    assert matplotlib.rcParams["axes.unicode_minus"] is True


def test_korean_text_draws_without_missing_glyphs_or_font_warnings(caplog):
    posviz.setup(quiet=True)
    caplog.set_level(logging.WARNING, logger="matplotlib")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        # the one third-party deprecation that pyproject.toml's filterwarnings ignores (old matplotlib, new pyparsing)
        warnings.filterwarnings("ignore", r"'\w+'.* deprecated.* use '\w+'", DeprecationWarning, r"matplotlib\.")
        fig, ax = plt.subplots()
        ax.plot([-3, 2], [-1, 1])
        ax.set_title("위치 인코딩 · positional encoding", fontweight="bold")
        ax.set_xlabel("위치 (토큰) −5")
        ax.text(0, 0, "한글 가나다 ㄱㄴㄷ 회전 행렬")
        fig.canvas.draw()
        fig2, ax2 = plt.subplots()
        ax2.semilogy([1e-5, 1e-2], [1e-4, 1])  # mathtext tick labels with negative exponents
        ax2.set_title("로그 눈금 · log scale")
        fig2.canvas.draw()
        plt.close(fig2)
        labels = [tick.get_text() for tick in ax.get_xticklabels()]
        plt.close(fig)
    assert not [r for r in caplog.records if "findfont" in r.getMessage() or "glyph" in r.getMessage().lower()]
    assert any(label.startswith("\u2212") for label in labels), labels  # a real minus sign


def test_chosen_font_has_hangul_glyphs():
    from matplotlib import font_manager
    from matplotlib.ft2font import FT2Font

    name = posviz.use_korean_font()
    path = font_manager.findfont(font_manager.FontProperties(family=name), fallback_to_default=False)
    font = FT2Font(path)
    assert all(font.get_char_index(ord(ch)) for ch in "위치인코딩한글")


def test_language_switch():
    posviz.set_language("ko")
    assert posviz.t("위치", "position") == "위치"
    posviz.set_language("en")
    assert posviz.t("위치", "position") == "position"
    posviz.set_language("both")
    assert posviz.t("위치", "position") == "위치 · position"
    with pytest.raises(ValueError, match="lang"):
        posviz.set_language("kr")
    with pytest.raises(ValueError):
        posviz.setup(lang="fr")


def test_seed_everything_repeats_draws():
    posviz.seed_everything(7)
    first = (random.random(), np.random.rand(), torch.rand(1).item())
    posviz.seed_everything(7)
    assert (random.random(), np.random.rand(), torch.rand(1).item()) == first
    with pytest.raises(TypeError):
        posviz.seed_everything(1.5)
    with pytest.raises(ValueError):
        posviz.seed_everything(-1)


def test_setup_sets_torch_threads(capsys):
    before = torch.get_num_threads()
    try:
        posviz.setup(torch_threads=1)
        assert torch.get_num_threads() == 1 and "torch threads 1" in capsys.readouterr().out
        with pytest.raises(ValueError, match="torch_threads"):
            posviz.setup(torch_threads=0)
    finally:
        torch.set_num_threads(before)


def test_figure_text_log_records_t_calls_and_drawn_text(tmp_path):
    import json

    import matplotlib.pyplot as plt

    from posviz import _textlog, style

    log = tmp_path / "figure_text.jsonl"
    style.set_language("both")
    _textlog.enable_figure_text_log(log)
    try:
        fig, ax = plt.subplots()
        ax.set_title(style.t("제목", "title", sep="\n"))
        ax.plot([0, 1], label="rope")
        ax.legend()
        fig.canvas.draw()
        plt.close(fig)
    finally:
        _textlog.enable_figure_text_log(None)
    records = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    assert {"kind": "t", "ko": "제목", "en": "title", "sep": "\n"} in records
    drawn = {r["text"] for r in records if r["kind"] == "text"}
    assert {"제목\ntitle", "rope"} <= drawn and any(r.get("where") == "제목 title" for r in records)
    style.t("x", "y")  # logging is off again
    assert len(log.read_text(encoding="utf-8").splitlines()) == len(records)
    with pytest.raises(TypeError):
        _textlog.enable_figure_text_log(3)
