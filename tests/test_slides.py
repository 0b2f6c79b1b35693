"""Lecture decks: what a slide shows, what goes to the speaker notes, and (in headless
Chromium) that every slide fits a 16:9 screen and draws Hangul with the course's web font.

The decks are built from a small fixture notebook in the course's shape, with the hard cases
(long prose with a formula, long code with a long line, long printed output, a tall figure with
a Korean title, a "what to notice" line), executed once in a Korean and a bilingual edition.
"""

import gc
import json
import re
import shutil
import warnings
from pathlib import Path

import nbformat
import pytest
from decks import assert_math_font, check_course_deck, check_deck_html, oversized, reveal, walk_deck
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from tools import editions, languages, nbtemplate, slides, webfont, website
from tools.nbrun import MEMO, execute, notebook_paths

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK_PATHS = notebook_paths()


def _ko(text):
    return new_markdown_cell(text, metadata={"tags": ["lang-ko"]})


def _en(text):
    return new_markdown_cell(text, metadata={"tags": ["lang-en"]})


FORMULA = r"$$PE_{(p,\,2i)} = \sin\!\left(\frac{p}{10000^{2i/d_\text{model}}}\right)$$"
KO_PROSE = " ".join(["사인파 위치 인코딩은 위치마다 서로 다른 주기의 사인과 코사인 값을 붙입니다."] * 14)
EN_PROSE = " ".join(["The sinusoidal encoding gives each position sines and cosines of many periods."] * 14)
LONG_CODE = "\n".join(
    [f"row_{i} = [round(float(np.sin(p / 10000 ** ({i} / 64))), 3) for p in range(6)]" for i in range(30)]
    + ["print('a very long line ' + 'x' * 190)", "for i in range(40):", "    print(i, '위치', i * 0.5)"]
)
FIGURE = """fig, ax = plt.subplots(figsize=(7, 11))
ax.plot(np.sin(np.arange(50) / 5))
ax.set_title(posviz.t("세로로 아주 긴 그림", "A very tall figure"));"""


def deck_fixture() -> nbformat.NotebookNode:
    """A bilingual notebook with the cases that can run off a slide (long code, long output, wide tables)."""
    return new_notebook(
        cells=[
            new_markdown_cell("# 99. 슬라이드 점검 · Deck check"),
            _ko(
                "### 학습 목표\n\n1. 긴 설명은 발표자 노트로 보낼 수 있다.\n2. 그림이 화면에 맞는지 확인할 수 있다."
            ),
            _en(
                "### Learning goals\n\n1. Send long prose to the speaker notes.\n2. Check that a figure fits."
            ),
            new_code_cell('import posviz\n\nposviz.setup(lang="both", seed=0)'),
            new_markdown_cell("## 1. 긴 설명과 공식 · Long prose and a formula"),
            _ko(f"{KO_PROSE}\n\n{FORMULA}\n\n{KO_PROSE}"),
            _en(f"{EN_PROSE}\n\n{FORMULA}\n\n{EN_PROSE}"),
            new_code_cell(LONG_CODE),
            new_markdown_cell("## 2. 큰 그림 · A big figure"),
            new_code_cell(FIGURE),
            _ko("**눈여겨볼 점.** 그림 전체와 이 줄이 한 화면에 함께 보여야 합니다. " * 2),
            _en("**What to notice.** The whole figure and this line must fit on one screen. " * 2),
            new_markdown_cell("## 한눈에 정리 · Summary"),
            _ko("- 설명은 노트에, 공식과 그림은 화면에.\n- 긴 코드는 여러 화면으로 나눕니다."),
            _en("- Prose in the notes, formulas and figures on the slide.\n- Long code is split."),
        ]
    )


def test_lecture_cells_show_formula_figure_and_notice_and_keep_prose_in_the_notes():
    nb = deck_fixture()
    nbtemplate.apply_slide_types(nb.cells)
    nb.cells[9].outputs = [
        nbformat.v4.new_output("display_data", data={"image/png": "iVBOR", "text/plain": "x"})
    ]
    deck = slides.lecture_cells(nb.cells)
    parts = [(c.metadata.deck_part, c.metadata.slideshow.slide_type) for c in deck]
    notes = [c.source for c in deck if c.metadata.deck_part == "notes"]
    assert notes == [nb.cells[5].source, nb.cells[6].source], "the full prose goes to the notes, once"
    formulas = [c.source for c in deck if c.metadata.deck_part == "formula"]
    assert formulas == [FORMULA], "the key formula is shown once, though both languages hold it"
    assert ("heading", "slide") in parts and parts.count(("notice", "-")) == 2
    figure = next(i for i, c in enumerate(deck) if c.metadata.deck_part == "output")
    assert [p for p, _ in parts[figure - 1 : figure + 3]] == ["head", "output", "notice", "notice"]
    assert deck[figure - 1].source == "#### 2. 큰 그림 · A big figure", "the sub-slide repeats its section"
    code = [c.source for c in deck if c.metadata.deck_part == "code"]
    assert "\n".join(code) == LONG_CODE + "\n" + FIGURE, "code is split at line ends, nothing lost"
    assert len(code) >= 3 and all(slides._screen_lines(piece) <= slides.CODE_LINES for piece in code)
    assert not [c for c in deck if "posviz.setup" in c.source], "no setup cell in a lecture"


def test_twin_headings_of_prose_share_one_slide_in_the_bilingual_deck():
    """A lang-en prose cell whose heading matches its lang-ko twin's adds its title to that slide
    (as "참고 문헌 · References"), not an empty slide of its own; each one-language deck keeps its own."""
    ko = _ko("## 참고 문헌\n\n" + "- Vaswani et al. (2017). *Attention Is All You Need.* [arXiv](https://x.org)\n" * 9)
    en = _en("## References\n\n" + "- Vaswani et al. (2017). *Attention Is All You Need.* [arXiv](https://x.org)\n" * 9)
    cells = [new_markdown_cell("# 99. x · x"), new_code_cell("x = 1"), ko, en]
    deck = slides.lecture_cells(cells)
    assert [(c.metadata.deck_part, c.source.partition("\n")[0]) for c in deck[1:]] == [
        ("heading", "## 참고 문헌 · References"),
        ("notes", "## 참고 문헌"),
        ("notes", "## References"),
    ]
    for cell, title in ((ko, "## 참고 문헌"), (en, "## References")):
        one = slides.lecture_cells([*cells[:2], cell])
        assert [c.source for c in one if c.metadata.deck_part == "heading"] == [title]
    goals = [*cells[:2], _ko("### 학습 목표\n\n- 가"), _en("### Learning goals\n\n- a")]
    assert len([c for c in slides.lecture_cells(goals) if c.metadata.deck_part == "list"]) == 2, "lists stay"


def _slides(deck: list) -> list[list]:
    """The cells of a deck (or of a notebook, by its slide metadata) grouped into the screens
    reveal.js shows: a "slide" or "subslide" starts one; "-" and "fragment" cells join it; speaker
    notes and skipped cells are not on any screen."""
    screens: list[list] = []
    for cell in deck:
        kind = cell.metadata.get("slideshow", {}).get("slide_type", "-")
        if kind in ("slide", "subslide") or not screens:
            screens.append([])
        if kind not in ("notes", "skip"):
            screens[-1].append(cell)
    return screens


def _png(name: str):
    return nbformat.v4.new_output("display_data", data={"image/png": name, "text/plain": name})


def _printed(text: str):
    return nbformat.v4.new_output("stream", name="stdout", text=text)


def test_a_notice_is_on_one_slide_with_every_output_it_is_about():
    """The "what to notice" line under the figure and the numbers printed above it, and under
    the outputs of every code cell right above it; a few printed lines stay with their code."""
    printed_then_drawn = new_code_cell("print(error)\nplt.plot(x)")
    printed_then_drawn.outputs = [_printed("max error = 4.7e-15\n"), _png("FIG-A")]
    prints = new_code_cell("print(tokens)")
    prints.outputs = [_printed("['the', 'cat']\n")]
    draws = new_code_cell("plt.plot(y)")
    draws.outputs = [_png("FIG-B"), _printed("shape (6, 16)\n")]
    short = new_code_cell("print(1 + 1)")
    short.outputs = [_printed("2\n")]
    nb = new_notebook(
        cells=[
            new_markdown_cell("# 99. 점검 · Check"),
            new_code_cell('import posviz\n\nposviz.setup(lang="both", seed=0)'),
            new_markdown_cell("## 1. 출력 뒤에 그림 · Printed, then drawn"),
            printed_then_drawn,
            _ko("**눈여겨볼 점.** 오차가 10⁻¹⁵ 수준이고 그림의 두 곡선이 겹칩니다."),
            _en("**What to notice.** The error is about 10⁻¹⁵ and the curves overlap."),
            new_markdown_cell("## 2. 코드 셀 두 개 · Two code cells"),
            prints,
            draws,
            _ko("**눈여겨볼 점.** 출력한 토큰이 그림의 가로축에 있습니다."),
            new_markdown_cell("## 3. 짧은 출력 · A short output"),
            short,
            _ko("**눈여겨볼 점.** 2입니다."),
        ]
    )
    nbtemplate.apply_slide_types(nb.cells)
    screens = _slides(slides.lecture_cells(nb.cells))

    def screen_of(text):
        return next(
            screen for screen in screens if any(text in c.source for c in screen if c.cell_type == "markdown")
        )

    def shown(screen):
        return [slides._text_of(c.outputs) for c in screen if c.cell_type == "code"]

    first = screen_of("오차가")
    assert shown(first) == ["max error = 4.7e-15\n", "FIG-A"], "the error and the figure, with the notice"
    assert any("curves overlap" in c.source for c in first), "the English twin on the same screen"
    assert [c.metadata.deck_part for c in first][:3] == ["head", "output", "output"], "after the code"
    assert shown(screen_of("출력한 토큰")) == ["['the', 'cat']\n", "FIG-B", "shape (6, 16)\n"]
    third = screen_of("2입니다")
    assert [c.source for c in third if c.cell_type == "code"] == ["print(1 + 1)"] and shown(third) == ["2\n"]
    for screen in screens:  # every output is shown once
        assert all(c.outputs for c in screen if c.metadata.get("deck_part") == "output")
    outputs = [o for screen in screens for c in screen if c.cell_type == "code" for o in c.outputs]
    assert len(outputs) == 6
    # the notebook's own slide metadata (tools/sync_notebooks.py): the notice stays on its code's sub-slide
    assert [nbtemplate.slide_types(nb.cells)[i] for i in (4, 5, 9, 12)] == ["-", "fragment", "-", "-"]


def test_a_shown_line_that_introduces_something_is_shown_with_it():
    notice = (
        "**눈여겨볼 점.** 점수가 p에 따라 달라집니다. 정리하면 한계는 다음과 같습니다.\n\n"
        "- 절대 위치만 담습니다.\n- 내적은 대칭입니다.\n\n다음 노트북은 이 문제에 답합니다."
    )
    assert slides._shown_notice(notice) == notice.rsplit("\n\n", 1)[0]
    plain = "**What to notice.** The curves overlap everywhere."
    assert slides._shown_notice(plain + "\n\nMore for the notes.") == plain
    bare = "**What to notice.**\n\n- **Plain RoPE.** Three things:\n- first\n- second\n\nNotes."
    assert slides._shown_notice(bare) == bare.rsplit("\n\n", 1)[0].replace("things:\n", "things:\n\n")
    introducing = ("한계는 다음과 같습니다.", "the limits are:", "as follows.")
    assert all(nbtemplate.introduces(line) for line in introducing)
    assert not any(nbtemplate.introduces(line) for line in ("끝났습니다.", "**What to notice.**", "a: b c."))


def _introductions_left_alone(cells: list) -> list[str]:
    """Shown markdown that ends by introducing something (":", "다음과 같습니다.", "as follows")
    with no code or output after it on its screen: the thing it introduces is not there."""
    problems = []
    for number, screen in enumerate(_slides(cells), 1):
        for place, cell in enumerate(screen):
            if cell.cell_type != "markdown" or not nbtemplate.introduces(cell.source):
                continue
            if not any(c.cell_type == "code" for c in screen[place + 1 :]):
                last = [line for line in cell.source.splitlines() if line.strip()][-1]
                problems.append(f"screen {number} ends with {last[-80:]!r}")
    return problems


@pytest.mark.parametrize("lang", languages.EDITIONS)
@pytest.mark.parametrize("path", NOTEBOOK_PATHS, ids=lambda p: p.stem)
def test_no_slide_ends_on_a_line_that_introduces_what_is_not_on_it(path, lang):
    """Every notebook's slide cut, in every edition: the lecture deck's (tools/slides.py, whose
    shown markdown is headings, lists and "what to notice" lines) and the notebook's own slide
    metadata (tools/sync_notebooks.py)."""
    nb = nbformat.read(path, as_version=4)
    edition = nb if lang == "both" else editions.make_edition(nb, lang, path.name)
    deck = slides.lecture_cells(website.for_static_page(edition, lang, link_suffix=".slides.html").cells)
    problems = _introductions_left_alone(deck)
    assert not problems, f"lecture deck of {path.name} ({lang}): " + "; ".join(problems)
    own = [c for c in edition.cells if c.metadata.get("slideshow", {}).get("slide_type") != "skip"]
    types = [c.metadata["slideshow"]["slide_type"] for c in own]
    introducing = [
        i for i, c in enumerate(own) if c.cell_type == "markdown" and nbtemplate.introduces(c.source)
    ]
    cut = [i for i in introducing if i + 1 < len(own) and types[i + 1] in ("slide", "subslide")]
    assert not cut, f"{path.name} ({lang}): cells {cut} introduce the next cell, which starts another slide"


def test_a_narrowed_build_keeps_the_hangul_of_decks_built_before(tmp_path, monkeypatch):
    """The decks share one web font: a build of only 03 must subset it to the characters of the
    decks already in the folder too, or their Hangul would turn into boxes (05 showing "☒율적인")."""
    earlier = tmp_path / "ko" / "05_rope.slides.html"
    earlier.parent.mkdir(parents=True)
    earlier.write_text("<h2>효율적인 계산</h2>", encoding="utf-8")
    executed = tmp_path / "03_sinusoidal_encoding.ipynb"
    executed.write_text('{"cells": [{"source": "사인파"}]}', encoding="utf-8")
    seen = []
    monkeypatch.setattr(slides.webfont, "build", lambda out, text: seen.append(text))
    monkeypatch.setattr(slides, "export", lambda path, lang, target, prefix: target)
    monkeypatch.setattr(slides.website, "write_data_page", lambda out, index_link: None)
    monkeypatch.setattr(slides.website, "unlink_missing", lambda deck: None)
    slides.write_decks({"ko": [executed]}, out=tmp_path)
    assert len(seen) == 1 and {"사", "효", "율"} <= set(seen[0])


def test_the_learning_goals_are_shown_in_the_english_deck_too():
    """English goals run longer than Korean (06: 1066 characters against 609); under the short-list
    limit alone the English decks showed only the goals' heading, with the goals in the notes."""
    goals = "### Learning goals\n\nBy the end of this notebook you will be able to:\n\n" + "".join(
        f"- **measure** claim number {n} about position methods on small trained models, seed by seed;\n" for n in range(12)
    )
    assert slides.SHORT_LIST < len(goals) <= slides.GOALS_LIST
    cells = [new_markdown_cell("# 99. x · x"), new_code_cell("x = 1"), _en(goals), _en("- " + "a" * 800 + "\n- b")]
    kinds = [c.metadata.deck_part for c in slides.lecture_cells(cells)[1:]]
    assert kinds[0] == "list" and "notes" in kinds[1:], kinds


def test_long_lines_count_as_several_screen_lines():
    assert slides._screen_lines("a" * (slides.WRAP * 2 + 1)) == 3
    assert slides._chunks("\n".join(["x"] * 50), limit=20) == ["\n".join(["x"] * 20)] * 2 + [
        "\n".join(["x"] * 10)
    ]


def test_missing_npm_says_what_to_do(monkeypatch, tmp_path):
    monkeypatch.setattr(shutil, "which", lambda name: None)
    with pytest.raises(SystemExit, match="(?s)Install Node.js.*--reveal-dir.*--reveal-cdn"):
        slides.fetch_reveal(tmp_path / "reveal")


# --- built and opened in a browser ---------------------------------------------------------------


def build_decks(out: Path) -> dict[str, Path]:
    """The fixture notebook's Korean and bilingual decks in ``out``, with reveal.js and the web
    font next to them (reveal.js fetched once with npm, as ``python tools/slides.py`` does)."""
    source = out / "99_deck_check.ipynb"
    nb = deck_fixture()
    nbtemplate.sync_cells(nb.cells, source.name)
    nbformat.write(nb, source)
    prefix = slides.copy_reveal(reveal(), out)
    built = {}
    for lang in ("ko", "both"):
        edition = nb if lang == "both" else editions.make_edition(nb, lang, source.name)
        run = execute(source, notebook=edition)
        assert not run.problems, run.problems
        executed = out / "executed" / lang / source.name
        executed.parent.mkdir(parents=True)
        nbformat.write(run.notebook, executed)
        built[lang] = [executed]
    with warnings.catch_warnings():  # fontTools leaves the .ttf files to the garbage collector
        warnings.simplefilter("ignore", ResourceWarning)
        decks = slides.write_decks(built, out, prefix)  # the decks and their web font, as tools/slides.py writes them
        gc.collect()
    return dict(zip(built, decks))


def test_decks_fit_a_16_9_screen_offline_and_draw_hangul_with_the_web_font(tmp_path):
    """One test for both decks, so that the fixture is executed once however pytest-xdist splits tests."""
    from browser import chromium_page, platform_fonts

    decks = build_decks(tmp_path)
    ko = decks["ko"].read_text(encoding="utf-8")
    for path in decks.values():
        check_deck_html(path.read_text(encoding="utf-8"))
    assert ko.count('<aside class="notes">') == 1 and KO_PROSE[:40] in ko.split('<aside class="notes">')[1]
    assert "Open In Colab" not in ko and "What to notice" not in ko
    # no on-screen arrows over the text: the title slide says which keys move the deck on
    assert "controls: false" in ko and 'navigationMode: "linear"' in ko and f'<p class="deck-keys">{website.LABELS["ko"]["deck_keys"]}</p>' in ko
    with chromium_page(width=slides.WIDTH, height=slides.HEIGHT) as page:
        for lang, deck in decks.items():
            result = walk_deck(page, deck, f"slides_{lang}")
            assert result["total"] == len(result["slides"]) >= 8
            too_big = oversized(result)
            assert not too_big, json.dumps(too_big, ensure_ascii=False, indent=1)
            page.evaluate("Reveal.slide(0, 0)")
            fonts = platform_fonts(page, ".reveal .slides h1")
            assert any(f["familyName"] == webfont.SOURCE_FAMILY and f["isCustomFont"] for f in fonts), fonts
            # a label of the deck, not of the notebook: every one of its Hangul glyphs from the web font
            keys = platform_fonts(page, ".reveal .deck-keys")
            hangul = len(re.findall(r"[\uac00-\ud7a3]", website.LABELS[lang]["deck_keys"]))
            assert sum(f["glyphCount"] for f in keys if f["isCustomFont"]) == hangul > 0, keys
            # the key formula (\left( ... \right) around a fraction): drawn with the bundled math font
            assert_math_font(page, ".reveal .deck-formula math")
            if lang == "ko":
                check_speaker_view(page)
        assert page.blocked == [], "a deck asked the network for something"


def check_speaker_view(page) -> None:
    """Press s on the prose's slide: the speaker view shows the full prose, drawn with the web
    font, and its formula, drawn with the math font."""
    from browser import screenshot

    page.evaluate("Reveal.slide(1, 0)")  # section 1, whose notes hold the long prose
    with page.expect_popup() as opened:
        page.keyboard.press("s")
    speaker = opened.value
    speaker.wait_for_function("() => document.getElementById('course-font') !== null", timeout=60_000)
    speaker.wait_for_function(f"() => document.body.innerText.includes({KO_PROSE[:30]!r})", timeout=60_000)
    family = json.dumps(webfont.FAMILY)  # document.fonts may report the family name quoted
    speaker.wait_for_function(
        f"() => [...document.fonts].some((f) => f.status === 'loaded' && f.family.replaceAll('\"', '') === {family})",
        timeout=60_000,
    )
    # the notes' formula, in a window that does not see the deck's style sheet: the math font too
    math_family = json.dumps(webfont.MATH_FAMILY)
    speaker.wait_for_function(
        f"() => [...document.fonts].some((f) => f.status === 'loaded' && f.family.replaceAll('\"', '') === {math_family})",
        timeout=60_000,
    )
    assert_math_font(speaker, ".speaker-controls-notes math")
    speaker.set_viewport_size({"width": slides.WIDTH, "height": slides.HEIGHT})
    screenshot(speaker, "slides_ko_speaker_view")


# --- every deck of every edition of the course -----------------------------------------------------


@pytest.mark.parametrize("lang", languages.ONE_LANGUAGE)
@pytest.mark.parametrize("path", NOTEBOOK_PATHS, ids=lambda p: p.stem)
def test_course_deck_fits_a_16_9_screen_and_draws_hangul_with_the_web_font(path, lang, tmp_path, monkeypatch):
    """Each course deck of each one-language edition, from the executed editions the site and
    ``course.py`` share (build/executed-editions/, executed here when missing or out of date); see
    :func:`decks.check_course_deck`. The bilingual deck is walked by tests/test_notebooks.py, on
    the execution that test makes anyway."""
    if path.name.startswith("07_"):
        from hf import transformers_with_torch

        transformers_with_torch()
    # The training runs of the bilingual execution (tests/test_notebooks.py) are loaded, not
    # repeated (posviz/_memo.py); such an execution is stored under a key no build reuses.
    monkeypatch.setenv("POSVIZ_MEMO", str(MEMO))
    executed, failed = website.execute_editions((lang,), path.name, jobs=1)
    assert not failed, failed
    (source,) = executed[lang]
    check_course_deck(source, lang, tmp_path)
