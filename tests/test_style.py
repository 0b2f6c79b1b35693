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


# --- figures that fit their text ----------------------------------------------------------------


def test_wrap_text_breaks_at_the_separator_then_between_words():
    measure = len  # one unit per character
    assert posviz.wrap_text("short", 10, measure) == "short"
    assert posviz.wrap_text("위치 (토큰) · position (tokens)", 20, measure) == "위치 (토큰)\nposition (tokens)"
    assert posviz.wrap_text("one two three four five", 9, measure) == "one two\nthree\nfour five"
    assert posviz.wrap_text("angle $\\theta_i m$ grows fast", 12, measure) == "angle\n$\\theta_i m$\ngrows fast"
    assert posviz.wrap_text("first\nsecond line here", 11, measure) == "first\nsecond\nline here"
    assert posviz.wrap_text("unbreakable", 4, measure) == "unbreakable"
    with pytest.raises(ValueError, match="width must be positive"):
        posviz.wrap_text("x", 0, measure)


def test_wrap_text_balances_its_lines_and_leaves_no_word_alone_on_the_last():
    measure = len
    # filling word by word would give "Scores are constant along" + "diagonals:" (a word alone)
    balanced = posviz.wrap_text("Scores are constant along diagonals:", 26, measure)
    assert balanced == "Scores are constant\nalong diagonals:"
    # ... and "the same angle between q and k" + "in both"
    balanced = posviz.wrap_text("the same angle between q and k in both", 32, measure)
    assert balanced == "the same angle between\nq and k in both"
    # as few lines as filling needs, each no wider than the width, and none a single short word
    text = "At initialisation the gradients of all three recurrent layers vanish exponentially with distance"
    for width in (30, 45, 60, 80):
        greedy = posviz.style._fill(text.split(), width, measure)
        lines = posviz.wrap_text(text, width, measure).split("\n")
        assert len(lines) == len(greedy) and max(map(len, lines)) <= width, (width, lines)
        assert max(map(len, lines)) - min(map(len, lines)) <= max(map(len, text.split())) + 1, (width, lines)
    # each language of a bilingual line is balanced on its own
    both = "점수는 대각선을 따라 일정하다 · Scores are constant along diagonals"
    expected = "점수는 대각선을 따라 일정하다\nScores are constant\nalong diagonals"
    assert posviz.wrap_text(both, 26, measure) == expected


def test_a_title_over_an_equal_aspect_panel_wraps_to_its_place_not_to_the_shrunk_box():
    """A fixed-aspect axes is drawn smaller than its place; wrapping its title to the drawn width fed
    back (more lines, a smaller panel, a narrower title: 8-9 lines). Centred in its place, the title
    gets the place's width; pushed against a colorbar, the drawn width (never over the colorbar)."""
    ko = "(m, n) = (2, 5)와 (12, 15):\n두 경우 모두 q와 k 사이 각도가 같다"  # notebook 05's first figure
    en = "(m, n) = (2, 5) and (12, 15):\nthe same angle between q and k in both"

    def build(fig):
        square, image = fig.subplots(1, 2, gridspec_kw={"width_ratios": [1, 1.25]})
        square.set(xlim=(-1, 1), ylim=(-1, 1), aspect="equal")
        square.set_title(posviz.t(ko, en, sep="\n"))
        shown = image.imshow(np.zeros((32, 32)))
        fig.colorbar(shown, ax=image, label="score")
        image.set_title(posviz.t(ko, en, sep="\n"))
        fig.suptitle(posviz.t("2차원 회전", "2-D rotation"))

    fig = _drawn_figure(build)
    square, image = fig.axes[:2]
    renderer = fig.canvas.get_renderer()
    # 9 lines when the title was wrapped to the drawn box
    assert square.get_title().count("\n") + 1 <= 5, square.get_title()
    place = square.get_position(original=True).transformed(fig.transSubfigure)
    assert square.title.get_window_extent(renderer).width <= place.width + 1
    colorbar = fig.axes[2].get_window_extent(renderer)
    assert image.title.get_window_extent(renderer).x1 <= colorbar.x0, "the title stays clear of the colorbar"
    plt.close(fig)


def _drawn_figure(build):
    """A figure built by ``build(fig)``, drawn once (Agg); the figure."""
    posviz.setup(lang="both", quiet=True)
    fig = plt.figure(figsize=(10, 5.6))
    build(fig)
    fig.canvas.draw()
    return fig


def test_long_titles_and_labels_wrap_to_their_axes_and_stay_on_the_figure():
    long_ko, long_en = "아주 긴 한국어 제목은 축의 너비에 맞춰 줄이 바뀝니다", "a long English title wraps to the width of its axes"

    def build(fig):
        for ax in fig.subplots(1, 2):
            ax.set_title(posviz.t(long_ko, long_en))
            ax.set_ylabel(posviz.t("어텐션 가중치 (헤드 평균, 학습 뒤)", "attention weight (mean over heads, after training)"))
        fig.suptitle(posviz.t(long_ko + " 그리고 더 길게", long_en + " and longer still"))

    fig = _drawn_figure(build)
    renderer = fig.canvas.get_renderer()
    canvas = fig.bbox
    texts = [*(ax.title for ax in fig.axes), *(ax.yaxis.label for ax in fig.axes), fig._suptitle]
    for text in texts:
        assert "\n" in text.get_text(), text.get_text()
        box = text.get_window_extent(renderer)
        assert box.x0 >= -1 and box.y0 >= -1 and box.x1 <= canvas.x1 + 1 and box.y1 <= canvas.y1 + 1, text.get_text()
    left, right = (ax.title.get_window_extent(renderer) for ax in fig.axes)
    assert left.x1 <= right.x0, "neighbouring titles do not overlap"
    assert fig.axes[0].get_title().split("\n")[0] == long_ko.split(" 줄이")[0] or fig.axes[0].get_title().startswith("아주")
    # changing the text later is honoured: the new text is wrapped from scratch
    fig.axes[0].set_title("short")
    fig.canvas.draw()
    assert fig.axes[0].get_title() == "short"
    plt.close(fig)


def test_a_draw_lays_the_figure_out_twice_not_three_times_and_keeps_its_engine(monkeypatch):
    """The fit's passes (two when nothing needs wrapping) are the draw's layout: the draw itself
    adds none, and the figure keeps its constrained layout engine for the next draw."""
    from matplotlib.layout_engine import ConstrainedLayoutEngine

    calls = []
    original = ConstrainedLayoutEngine.execute
    monkeypatch.setattr(ConstrainedLayoutEngine, "execute", lambda self, fig: (calls.append(1), original(self, fig))[1])

    def build(fig):
        ax = fig.subplots()
        ax.plot([0, 1], [0, 1])
        ax.set_title("short")

    fig = _drawn_figure(build)
    assert len(calls) == 2
    assert isinstance(fig.get_layout_engine(), ConstrainedLayoutEngine)
    fig.axes[0].set_title(posviz.t("아주 긴 한국어 제목은 축의 너비에 맞춰 줄이 바뀝니다 " * 3, "a long title " * 12))
    calls.clear()
    fig.canvas.draw()
    assert "\n" in fig.axes[0].get_title() and 2 <= len(calls) <= 4  # wrapped, then laid out with the new lines
    assert isinstance(fig.get_layout_engine(), ConstrainedLayoutEngine)
    plt.close(fig)


def test_log_axes_read_plain_numbers():
    def build(fig):
        a, b, c = fig.subplots(1, 3)
        a.set_xscale("log")
        a.plot([20, 30, 50], [1, 2, 3])  # less than a decade: matplotlib labels minor ticks 2×10¹
        b.set_yscale("log", base=2)
        b.plot([1, 2], [2, 64])
        c.set_xscale("log")
        c.plot([1e-6, 1e-3], [0, 1])
        c.xaxis.set_major_formatter(matplotlib.ticker.LogFormatterMathtext())  # set by hand: kept

    fig = _drawn_figure(build)
    a, b, c = fig.axes
    labels = [t.get_text() for t in (*a.get_xticklabels(), *a.get_xticklabels(minor=True)) if t.get_text()]
    assert labels and all("\\times" not in label and "$" not in label for label in labels), labels
    assert {"20", "30"} <= set(labels), labels
    assert [t.get_text() for t in b.get_yticklabels() if t.get_text()][:3] == ["2", "4", "8"] or all(
        t.get_text().isdigit() for t in b.get_yticklabels() if t.get_text()
    )
    assert any("$" in t.get_text() for t in c.get_xticklabels() if t.get_text()), "a formatter set by hand stays"
    plt.close(fig)
    with pytest.raises(ValueError, match="axis must be one of"):
        posviz.plain_log_ticks(a, axis="z")


def test_a_log_axis_never_mixes_plain_numbers_and_powers_of_ten():
    """An axis from 10⁻²⁵ to 10 once read 10⁻²⁴ … 10⁻⁶, 0.001, 1: one style per axis."""

    def build(fig):
        wide, narrow, colour = fig.subplots(1, 3)
        wide.semilogy(np.arange(100), np.logspace(0.5, -25, 100))  # notebook 01: vanishing gradients
        narrow.semilogy([0, 1], [0.002, 3000])  # 0.002 … 3000: every label has a plain form
        shown = colour.imshow(np.logspace(-8, 2, 16).reshape(4, 4), norm=matplotlib.colors.LogNorm())
        fig.colorbar(shown, ax=colour)

    fig = _drawn_figure(build)
    wide, narrow, colour, bar = fig.axes
    for ax, plain in ((wide, False), (narrow, True), (bar, False)):
        low, high = ax.yaxis.get_view_interval()
        ticks = (*ax.yaxis.get_major_ticks(), *ax.yaxis.get_minor_ticks())
        drawn = [t for t in ticks if low <= t.get_loc() <= high]  # the ticks drawn
        labels = [t.label1.get_text() for t in drawn if t.label1.get_text()]
        assert labels, ax
        powers = ["$" in label for label in labels]
        assert all(powers) if not plain else not any(powers), labels
    # 1 reads 10⁰ among powers
    assert "$\\mathdefault{10^{0}}$" in [t.get_text() for t in wide.get_yticklabels()]
    plt.close(fig)


def test_a_symlog_axis_reads_plain_numbers_and_zero():
    """Notebook 05's symlog distance axis read 0, 10⁰, 10¹, 10²: plain numbers where all fit, with a
    true minus sign on the negative side; beyond 10⁵ the power form stays."""

    def build(fig):
        one_sided, two_sided, wide = fig.subplots(1, 3)
        one_sided.plot([0, 1000], [0, 1])
        one_sided.set_xscale("symlog")
        two_sided.plot([-1000, 1000], [0, 1])
        two_sided.set_xscale("symlog", linthresh=1)
        wide.plot([0, 1e7], [0, 1])
        wide.set_xscale("symlog")

    fig = _drawn_figure(build)
    one_sided, two_sided, wide = fig.axes
    assert [t.get_text() for t in one_sided.get_xticklabels()] == ["0", "1", "10", "100", "1000"]
    negative = [t.get_text() for t in two_sided.get_xticklabels()][:4]
    assert negative == ["\N{MINUS SIGN}" + v for v in ("1000", "100", "10", "1")], negative
    assert all("$" in t.get_text() for t in wide.get_xticklabels()[1:]), "10⁷ keeps the power form on its axis"
    plt.close(fig)


def test_figure_fit_check_finds_text_off_the_figure_and_text_over_text():
    from tools import textcheck

    canvas = [0, 0, 600, 350]

    def text(content, extent, draw="1", role="text"):
        return {"kind": "text", "text": content, "where": "fig", "draw": draw, "extent": extent, "figure": canvas, "role": role}

    records = [
        text("cut y label", [-3, -20, 12, 370], role="ylabel"),
        text("10", [100, 5, 115, 18], role="xtick"),
        text("20", [113, 5, 128, 18], role="xtick"),  # touches "10"
        text("30", [150, 5, 165, 18], role="xtick"),
        text("title", [200, 320, 400, 345], role="title"),
        text("legend entry", [380, 300, 450, 330], role="legend"),  # under the title
        text("title", [200, 320, 400, 345], role="title"),  # drawn twice: one text
        text("10", [100, 5, 115, 18], draw="2", role="xtick"),  # another draw: compared only with its own
        text("edge", [590, 10, 601, 20]),  # within the tolerance
        {"kind": "text", "text": "old record", "where": "fig"},
    ]
    problems = textcheck.figure_fit_problems(records)
    assert problems == [
        "fig: legend 'legend entry' overlaps title 'title'",
        "fig: xtick '10' overlaps xtick '20'",
        "fig: ylabel 'cut y label' runs off the figure (left, bottom, top)",
    ], problems


def test_image_axes_and_tight_saving_keep_every_text_on_the_figure(tmp_path):
    """Square images shrink their axes when drawn, and ``bbox_inches="tight"`` (Jupyter's inline
    figures) draws twice, the second time without layout: both draws must wrap the same way."""
    from posviz import _textlog
    from tools import textcheck

    log = tmp_path / "log.jsonl"
    posviz.setup(lang="both", quiet=True)
    _textlog.enable_figure_text_log(log)
    try:
        fig, axes = plt.subplots(1, 3, figsize=(14, 4.6))
        for ax in axes:
            image = ax.imshow(np.zeros((20, 20)), vmin=0, vmax=1)
            ax.set_title(posviz.t("모델 자신", "the model itself"))
            ax.set_xlabel(posviz.t("키 위치 (토큰)", "key position (token)"))
        axes[0].set_ylabel(posviz.t("쿼리 위치 (토큰)", "query position (token)"))
        fig.colorbar(image, ax=axes, label=posviz.t("어텐션 가중치", "attention weight"), shrink=0.85)
        fig.suptitle(posviz.t("0층 0번 헤드: 반쪽 배치는 모델과 같고, 교차 배치는 다릅니다", "Layer 0, head 0: the half layout matches the model"))
        fig.savefig(tmp_path / "figure.png", bbox_inches="tight")
        plt.close(fig)
    finally:
        _textlog.enable_figure_text_log(None)
    records = textcheck.read_figure_text_log(log)
    assert len({r["draw"] for r in records if r["kind"] == "text"}) >= 2, "saved with a tight box: drawn twice"
    assert textcheck.figure_fit_problems(records) == []
    draws = {}
    for record in records:
        if record["kind"] == "text":
            draws.setdefault(record["draw"], []).append(record["shown"])
    assert len({tuple(sorted(texts)) for texts in draws.values()}) == 1, "both draws show the same wrapped text"
