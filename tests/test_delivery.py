"""Course delivery: badges and setup cells in step, slide metadata, one-language editions,
the offline website and slides, the glossary, and the pre-commit hooks.

One small edition notebook is executed (module fixture); everything else runs without a kernel.
"""

import json
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
import yaml
from fontTools.ttLib import TTFont
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from tools import editions, glossary, languages, nbtemplate, slides, textcheck, webfont, website
from tools.nbrun import execute, notebook_paths

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = notebook_paths()
HANGUL = re.compile(r"[\uac00-\ud7a3]")


def _ko(text):
    return new_markdown_cell(text, metadata={"tags": ["lang-ko"]})


def _en(text):
    return new_markdown_cell(text, metadata={"tags": ["lang-en"]})


def _toy_notebook(name="07_toy.ipynb"):
    """A small bilingual notebook in the course's shape (badge of another repo, old setup line)."""
    old_badge = '<a href="https://colab.research.google.com/github/someone/old/blob/main/notebooks/x.ipynb" target="_parent"><img src="https://colab.research.google.com/assets/colab-badge.svg" alt="Open In Colab"/></a>'
    return new_notebook(
        cells=[
            new_markdown_cell(
                f"# 07. 장난감 · Toy\n\n{old_badge}\n\n**시간 · Time:** 약 5분 · about 5 minutes."
            ),
            _ko("### 학습 목표\n\n- 위치 인코딩(positional encoding)을 계산합니다."),
            _en("### Learning goals\n\n- Compute a positional encoding."),
            new_code_cell('import posviz\n\nposviz.setup(lang="both", seed=0)\nx = 1'),
            new_markdown_cell("## 1. 공식 · The formula"),
            _ko("식은 $PE(p) = \\sin(p)$입니다."),
            _en("The formula is $PE(p) = \\sin(p)$."),
            new_code_cell("print(x)"),
            new_markdown_cell("← [06. 비교 · Showdown](06_showdown.ipynb)"),
        ]
    )


# --- badges, setup cells and slide metadata ----------------------------------------------------


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_is_in_step_with_the_template(path):
    nb = nbformat.read(path, as_version=4)
    assert nbtemplate.badge_markdown(path.name) in nbtemplate.source(nb.cells[0])
    changes = nbtemplate.sync_cells(nb.cells, path.name)
    assert not changes, f"out of step ({', '.join(changes)}): run python tools/sync_notebooks.py"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_cell_has_slide_metadata(path):
    cells = nbformat.read(path, as_version=4).cells
    types = [c.metadata.get("slideshow", {}).get("slide_type") for c in cells]
    assert None not in types
    assert types[0] == "slide" and types.count("slide") >= 3, "title and sections start slides"


def test_sync_rewrites_badge_and_setup_and_is_idempotent():
    nb = _toy_notebook()
    changes = nbtemplate.sync_cells(nb.cells, "07_toy.ipynb")
    assert changes == ["badge", "setup cell", "slide metadata"]
    assert nbtemplate.badge_markdown("07_toy.ipynb") in nb.cells[0].source
    assert "someone/old" not in nb.cells[0].source
    assert nb.cells[3].source == nbtemplate.setup_code() + "\nx = 1"  # lines after the setup block kept
    assert nbtemplate.sync_cells(nb.cells, "07_toy.ipynb") == []


def test_sync_adds_a_missing_badge_and_setup_cell():
    nb = new_notebook(cells=[new_markdown_cell("# 08. 제목 · Title"), new_code_cell("y = 2")])
    assert nbtemplate.sync_cells(nb.cells, "08_t.ipynb") == ["badge", "setup cell added", "slide metadata"]
    assert nb.cells[0].source.splitlines()[0] == "# 08. 제목 · Title"
    assert nbtemplate.colab_url("08_t.ipynb") in nb.cells[0].source
    assert [c.source for c in nb.cells[1:]] == [nbtemplate.setup_code(), "y = 2"]


def test_slide_types_follow_the_structure():
    nb = _toy_notebook()
    assert nbtemplate.slide_types(nb.cells) == [
        "slide",  # title
        "subslide",  # goals (ko)
        "fragment",  # goals (en) under the Korean
        "skip",  # setup cell
        "slide",  # ## section
        "-",  # prose right under its heading
        "fragment",
        "subslide",  # code and its output
        "subslide",
    ]
    english = editions.make_edition(nb, "en")
    assert [c.metadata.slideshow.slide_type for c in english.cells][:3] == ["slide", "subslide", "skip"]


def test_check_mode_reports_without_writing(tmp_path):
    from tools import sync_notebooks

    path = tmp_path / "07_toy.ipynb"
    nbformat.write(_toy_notebook(), path)
    before = path.read_bytes()
    assert sync_notebooks.main(["--check", str(path)]) == 1
    assert path.read_bytes() == before
    assert sync_notebooks.main([str(path)]) == 0
    assert sync_notebooks.main(["--check", str(path)]) == 0


def test_setup_code_per_language():
    assert 'posviz.setup(lang="ko", seed=0)' in nbtemplate.setup_code("ko")
    assert not HANGUL.search(nbtemplate.setup_code("en"))
    with pytest.raises(ValueError, match="lang must be one of"):
        nbtemplate.setup_code("fr")


# --- one-language editions ---------------------------------------------------------------------


# Splitting untagged lines, and the CommonMark check of every edition: tests/test_editions.py


@pytest.mark.parametrize("lang", languages.ONE_LANGUAGE)
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_edition_holds_only_its_language(path, lang):
    source = nbformat.read(path, as_version=4)
    edition = editions.make_edition(source, lang)
    other = {"ko": "en", "en": "ko"}[lang]
    assert not [c for c in edition.cells if nbtemplate.language(c) == other]
    own = [c.source for c in source.cells if nbtemplate.language(c) == lang]
    assert [c.source for c in edition.cells if nbtemplate.language(c) == lang] == own, (
        "every own-language cell kept"
    )
    code = [c.source for c in source.cells if c.cell_type == "code"]
    assert len([c for c in edition.cells if c.cell_type == "code"]) == len(code)
    setup = edition.cells[nbtemplate.setup_cell_index(edition.cells)].source
    assert setup.startswith(nbtemplate.setup_code(lang)), "figure language follows the edition"
    markdown = [c.source for c in edition.cells if c.cell_type == "markdown"]
    if lang == "en":  # Korean examples in code spans are fine, Korean prose is not
        leftovers = [
            line for text in markdown for line in glossary.prose(text).splitlines() if HANGUL.search(line)
        ]
        assert not leftovers, f"Korean left in the English edition: {leftovers[:3]}"
    else:
        for text in markdown:
            for line in text.splitlines():
                if HANGUL.search(line):  # no English half of a "KO · EN" pair is left over
                    halves = [
                        h
                        for h in line.split(" · ")
                        if not HANGUL.search(h) and len(re.findall(r"[A-Za-z]{2,}", h)) >= 2
                    ]
                    assert not halves, f"English left in the Korean edition: {line!r}"


# --- one edition executed; the website and slides built from it --------------------------------


@pytest.fixture(scope="module")
def executed_edition(tmp_path_factory):
    """The English edition of the first (smallest) notebook, executed in a fresh kernel."""
    path = NOTEBOOKS[0]
    run = execute(path, notebook=editions.make_edition(nbformat.read(path, as_version=4), "en"))
    target = tmp_path_factory.mktemp("executed") / "en" / path.name
    target.parent.mkdir()
    nbformat.write(run.notebook, target)
    return target, run


def _pngs(nb):
    return sum("image/png" in o.get("data", {}) for c in nb.cells for o in c.get("outputs", []))


def test_edition_runs_clean_in_its_language(executed_edition):
    _, run = executed_edition
    assert not run.problems, "\n".join(run.problems)
    setup = run.notebook.cells[nbtemplate.setup_cell_index(run.notebook.cells)]
    printed = "".join(o.get("text", "") for o in setup.outputs)
    assert "lang en" in printed


def test_website_pages_are_offline_and_hold_the_figures(executed_edition, tmp_path):
    path, run = executed_edition
    pages = website.render_pages({"en": [path], "both": [NOTEBOOKS[0]]}, tmp_path)
    index, en_page, both_page = (
        tmp_path / "index.html",
        tmp_path / "en" / path.name.replace(".ipynb", ".html"),
        tmp_path / "both" / path.name.replace(".ipynb", ".html"),
    )
    assert set(pages) == {index, en_page, both_page}
    html = en_page.read_text(encoding="utf-8")
    assert '<html lang="en">' in html
    both = both_page.read_text(encoding="utf-8")
    assert '<html lang="ko">' in both, "the bilingual page is Korean first"
    english_cells = re.findall(r'<div class="[^"]*\bcelltag_lang-en\b[^"]*"[^>]*>', both)
    assert english_cells and all('lang="en"' in div for div in english_cells), "its English cells say so"
    assert not re.findall(r'<div class="[^"]*\bcelltag_lang-ko\b[^"]*" lang=', both)
    figures = _pngs(run.notebook)
    assert figures >= 1, "the executed notebook draws at least one figure"
    assert len(re.findall(r'<img [^>]*src="data:image/png;base64,', html)) == figures
    assert not re.search(r"<script[^>]*\bsrc=", html), "no script is fetched"
    assert not re.search(r'<(?:img|link|iframe)[^>]*(?:src|href)="https?://', html), (
        "nothing is loaded from the network"
    )
    assert "@import" not in html and not re.search(r"url\(['\"]?https?://", html), "no stylesheet fetches"
    assert 'href="../index.html"' in html and f'href="../both/{en_page.name}"' in html
    assert "../ko/" not in html, "no link to the Korean edition, which was not built"
    assert website.dead_links(tmp_path) == []
    assert f'href="en/{en_page.name}"' in index.read_text(encoding="utf-8")
    prose = re.findall(r'data-mime-type="text/markdown">(.*?)</div>', html, flags=re.S)
    assert prose and not [p for p in prose if HANGUL.search(p)], "the English page has no Korean prose"


def test_website_turns_math_into_mathml_and_links_into_pages(tmp_path):
    pytest.importorskip("latex2mathml", reason="pip install latex2mathml (in the test extras)")
    nb = _toy_notebook()
    nb.cells.append(_en("Display: $$\\lambda_i = \\frac{2\\pi}{\\omega_i}$$ and code `$HOME` stays code."))
    page = website.for_static_page(nb, "en")
    body, _ = website.CourseHTMLExporter().from_notebook_node(page, resources={"metadata": {"name": "toy"}})
    assert body.count("<math") == 3 and "$$" not in body and "\\frac" not in body
    assert "<code>$HOME</code>" in body
    assert 'href="06_showdown.html"' in body and "06_showdown.ipynb" not in body
    assert "colab-badge.svg" not in body and "Open In Colab" in body
    assert not website.MathMLRenderer.problems


def test_slides_are_cut_into_a_lecture_deck_and_load_reveal_locally(executed_edition, tmp_path):
    path, run = executed_edition
    target = slides.export(path, "en", tmp_path / "en" / "deck.slides.html", reveal_prefix="../reveal.js")
    html = target.read_text(encoding="utf-8")
    assert '<html lang="en">' in html
    korean = slides.export(path, "ko", tmp_path / "ko" / "deck.slides.html", reveal_prefix="../reveal.js")
    assert '<html lang="ko">' in korean.read_text(encoding="utf-8")
    deck = slides.lecture_cells(website.for_static_page(run.notebook, "en").cells)
    kinds = [c.metadata.slideshow.slide_type for c in deck]
    # every slide is an outer <section> holding its sub-slides, the first of which starts with it
    assert html.count("<section") == 2 * kinds.count("slide") + kinds.count("subslide")
    assert html.count('<aside class="notes">') == kinds.count("notes") > 0, "prose goes to the speaker notes"
    assert '<script src="../reveal.js/dist/reveal.js">' in html and "/dist/theme/" not in html
    assert not re.search(r'<(?:img|link|iframe|script)[^>]*(?:src|href)="https?://', html), (
        "nothing is loaded from the network"
    )
    setup = nbtemplate.setup_cell_index(run.notebook.cells)
    figures = _pngs(run.notebook) - _pngs(nbformat.v4.new_notebook(cells=[run.notebook.cells[setup]]))
    assert len(re.findall(r'<img [^>]*src="data:image/png;base64,', html)) == figures


# --- glossary ----------------------------------------------------------------------------------


def test_glossary_file_is_well_formed():
    terms = glossary.load()
    english = [form.lower() for term in terms for form in term.english]
    assert len(english) == len(set(english)), "an English term appears twice"
    style_guide = {
        "positional encoding": "위치 인코딩",
        "self-attention": "셀프 어텐션",
        "vanishing gradient": "기울기 소실",
    }
    for en, ko in style_guide.items():
        assert any(en in term.english and term.korean[0] == ko for term in terms)


def test_glossary_check_finds_a_drifting_translation():
    terms = glossary.load()
    good = [
        _ko("셀프어텐션은 위치 인코딩이 없으면 순서를 모릅니다. `query`"),
        _en("Self-attentions without positional encodings do not see order."),
    ]
    assert glossary.check_cells(good, terms) == []
    drifting = [
        _ko("자기 주의는 위치 부호화가 없으면 순서를 모릅니다."),
        _en("Self-attention without a positional encoding does not see order."),
    ]
    problems = glossary.check_cells(drifting, terms)
    assert sorted(problems) == sorted(
        [
            "cell 0: says '자기 주의'; the glossary term is '셀프 어텐션'",
            "cell 0: says '위치 부호화'; the glossary term is '위치 인코딩'",
            "cells 0/1: English says 'Self-attention', Korean has none of 셀프 어텐션",
            "cells 0/1: English says 'attention', Korean has none of 어텐션",
            "cells 0/1: English says 'positional encoding', Korean has none of 위치 인코딩",
        ]
    )
    heading = [new_markdown_cell("## 2. 위치 부호화 · Positional encoding")]
    assert glossary.check_cells(heading, terms) == [
        "cell 0: says '위치 부호화'; the glossary term is '위치 인코딩'"
    ]
    everyday = [
        _ko("세 칸 전을 한 번에 집어야 합니다."),
        _en("It must pick the token three steps back in one hop."),
    ]
    assert glossary.check_cells(everyday, terms) == [], "everyday words are not pair-checked"
    not_prose = [
        _ko("코드입니다."),
        _en("Code: `attention(q, k)` and $\\text{attention}$ and [x](attention.html)."),
    ]
    assert glossary.check_cells(not_prose, terms) == []
    title = "*RoFormer: Enhanced Transformer with Rotary Position Embedding.*"
    cited = [_ko(f"- Su et al. (2021). {title} (식 11)"), _en(f"- Su et al. (2021). {title} (eq. 11)")]
    assert glossary.check_cells(cited, terms) == [], "a title both cells cite as published is not translated"
    cited[0] = _ko("- Su et al. (2021). *RoFormer* (식 11)")
    assert (
        "cells 0/1: English says 'Rotary Position Embedding', Korean has none of 회전 위치 임베딩"
        in glossary.check_cells(cited, terms)
    ), "a title only the English cell holds is still read"


def test_glossary_avoid_patterns_find_drifting_words_but_not_good_ones():
    terms = glossary.load()
    drifting = [_ko("폭 32인 모델을 200걸음 학습하고, 옮긴 입력과 순진한 구현을 봅니다. 절대값, 시계 바늘, 순열 등변적.")]
    found = " ".join(glossary.check_cells(drifting, terms))
    for form in ("폭", "걸음", "옮긴 입력", "순진", "절대값", "시계바늘", "순열 등변적"):
        assert f"says '{form}" in found, form
    good = [_ko("너비 32인 모델을 200스텝 학습하면 기울기 폭발이 일어나고 증폭됩니다. 위치를 100칸 옮겨도 됩니다.")]
    assert glossary.check_cells(good, terms) == []


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_uses_the_glossary(path):
    problems = glossary.check_notebook(path)
    assert not problems, "\n".join(problems)


def test_readme_guide_and_posviz_messages_use_the_glossary():
    files = [path for path in glossary.course_files() if path.suffix != ".ipynb"]
    names = {path.name for path in files}
    assert {"README.md", "instructor_guide.md", "feedback.py", "exercises.py", "plots.py"} <= names
    problems = [problem for path in files for problem in glossary.check_file(path)]
    assert not problems, "\n".join(problems)


def test_glossary_check_finds_a_planted_term_in_readme_figure_string_and_checker_message(tmp_path):
    terms = glossary.load()
    readme = tmp_path / "README.md"
    readme.write_text(
        "# 강좌\n\n위치 인코딩을 배웁니다. `위치 부호화`는 코드라 읽지 않습니다.\n\n"
        "```\n위치 부호화 (code block)\n```\n셋째 노트북은 위치 부호화를 다룹니다. · English line.\n",
        encoding="utf-8",
    )
    assert glossary.check_file(readme, terms) == [
        "README.md line 8: says '위치 부호화'; the glossary term is '위치 인코딩'"
    ]
    figure = new_code_cell('%matplotlib inline\nax.set_title(posviz.t("위치 부호화의 파장", "wavelengths"))')
    assert glossary.check_cells([figure], terms) == [
        "cell 0 line 2: says '위치 부호화'; the glossary term is '위치 인코딩'"
    ]
    message = tmp_path / "checker.py"
    message.write_text(
        'def feedback(n):\n    return t(f"{n}번째 행의 위치 부호화가 다릅니다", f"row {n} differs")\n', encoding="utf-8"
    )
    assert glossary.check_file(message, terms) == [
        "checker.py line 2: says '위치 부호화'; the glossary term is '위치 인코딩'"
    ]
    with pytest.raises(ValueError, match="expected a .ipynb, .md or .py"):
        glossary.check_file(tmp_path / "notes.txt", terms)


# --- pre-commit hooks --------------------------------------------------------------------------


def test_pre_commit_strips_outputs_but_keeps_tags_and_slides(tmp_path):
    config = yaml.safe_load((ROOT / ".pre-commit-config.yaml").read_text(encoding="utf-8"))
    hooks = {hook["id"]: hook for repo in config["repos"] for hook in repo["hooks"]}
    assert {"nbstripout", "ruff", "sync-notebooks", "glossary"} <= set(hooks)
    assert "jupyter" in hooks["ruff"]["types_or"]
    nb = _toy_notebook()
    nbtemplate.sync_cells(nb.cells, "07_toy.ipynb")
    nb.cells[7].outputs = [nbformat.v4.new_output("stream", text="1\n")]
    nb.cells[7].execution_count = 1
    path = tmp_path / "07_toy.ipynb"
    nbformat.write(nb, path)
    subprocess.run(
        [sys.executable, "-m", "nbstripout", *hooks["nbstripout"].get("args", []), str(path)], check=True
    )
    stripped = json.loads(path.read_text(encoding="utf-8"))
    assert not stripped["cells"][7]["outputs"] and stripped["cells"][7]["execution_count"] is None
    assert stripped["cells"][1]["metadata"]["tags"] == ["lang-ko"]
    assert [c["metadata"]["slideshow"] for c in stripped["cells"]] == [c.metadata.slideshow for c in nb.cells]


# --- text a reader sees: emphasis under CommonMark, figure language ------------------------------


def test_emphasis_check_finds_bold_that_does_not_close():
    assert textcheck.unrendered_emphasis("**사인파(sine)**는 빠르게 돕니다.") == ["**사인파(sine)**는 빠르게 돕니다."]
    assert textcheck.unrendered_emphasis('대신 **"멀수록 벌점"**을 줍니다.')
    assert textcheck.unrendered_emphasis("a __dunder__ word") == []  # renders as emphasis
    fine = [
        "**사인파**는 빠르게 돕니다.",
        "**눈여겨볼 점.** 아래",
        "**위치**(1~15번)에 있는 경우",
        "**평면마다 다른 속도 $\\theta_i$로** 돌립니다.",
        "code `a**b` and $x^{**}$",
        "```python\nx = 2 ** 3\n```",
    ]
    assert [textcheck.unrendered_emphasis(text) for text in fine] == [[]] * len(fine)


def test_notice_label_check_wants_the_one_form():
    one_form = "**눈여겨볼 점.** 아래\n\n**What to notice.** Below\n\n**눈여겨볼 점(큰 설정).** 위"
    assert textcheck.notice_label_problems(one_form + '\n\n"**눈여겨볼 점**" 한두 문장') == []
    other = "**눈여겨볼 점:** 아래\n\n**What to notice (full configuration):** all runs\n\n**What to notice**"
    assert textcheck.notice_label_problems(other) == [
        "**눈여겨볼 점:**",
        "**What to notice (full configuration):**",
        "**What to notice**",
    ]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_markdown_emphasis_renders_under_commonmark(path):
    problems = textcheck.check_notebook(path)
    assert not problems, "\n".join(problems)


def test_figure_language_check_reads_both_halves_of_each_t_call():
    records = [
        {"kind": "t", "ko": "위치 (토큰)", "en": "position (tokens)", "sep": " · "},
        {"kind": "t", "ko": "keys only", "en": "keys only", "sep": " · "},
        {"kind": "t", "ko": "값만", "en": "값만", "sep": " · "},
        {"kind": "text", "text": "위치 (토큰) · position (tokens)", "where": "fig"},
        {"kind": "text", "text": "keys only · keys only", "where": "fig"},
        {"kind": "text", "text": "값만 · 값만", "where": "fig"},
        {"kind": "text", "text": "shift +100", "where": "fig"},
        {"kind": "text", "text": "그림", "where": "fig"},
        {"kind": "text", "text": "RoPE, ALiBi, NTK-aware, rope, 10 ms, W_hh, $\\theta_i$", "where": "fig"},
        {"kind": "text", "text": "3: dog", "where": "fig"},  # a token of the course's example sentences
    ]
    problems = textcheck.figure_language_problems(records)
    assert len(problems) == 4, problems
    assert any("Korean figure text 'keys only' has English ['keys', 'only']" in p for p in problems)
    assert any("English figure text '값만' has Hangul" in p for p in problems)
    assert any("outside posviz.t() has English ['shift']" in p for p in problems)
    assert any("outside posviz.t() has Hangul" in p and "'그림'" in p for p in problems)


def test_a_narrowed_deck_build_links_only_to_decks_that_exist(executed_edition, tmp_path):
    """``tools/slides.py --lang en 00`` writes one deck: its link to deck 01 becomes plain text."""
    path, _ = executed_edition
    (deck,) = slides.write_decks({"en": [path]}, tmp_path, reveal_prefix=slides.CDN_PREFIX)
    html = deck.read_text(encoding="utf-8")
    assert 'class="not-built"' in html, "the link to the next deck, which was not built, is plain text"
    assert not re.search(r'href="\d\d[a-z]?_\w+\.slides\.html"', html)
    index = (tmp_path / "index.html").read_text(encoding="utf-8")
    assert f'href="en/{deck.name}"' in index and "/ko/" not in index and 'href="both/' not in index, "the deck index"
    font = TTFont(tmp_path / "fonts" / webfont.file_name("normal"))
    missing = set(webfont.korean_characters(index)) - {chr(code) for code in font.getBestCmap()}
    assert not missing, f"the deck index's Korean has no glyph for {''.join(sorted(missing))}"
    assert website.dead_links(tmp_path) == []
    # once the next deck exists, a later build links to it
    following = tmp_path / "en" / f"{NOTEBOOKS[1].stem}.slides.html"
    following.write_text("<html></html>", encoding="utf-8")
    (deck,) = slides.write_decks({"en": [path]}, tmp_path, reveal_prefix=slides.CDN_PREFIX)
    assert f'href="{following.name}"' in deck.read_text(encoding="utf-8")
