"""The offline website: its Korean web font, no dead links, and what a real browser draws.

The site is rendered from notebooks without executing them (a page without outputs has the same
prose, navigation and fonts), so this module needs no kernel. The browser test opens a Korean page
in the system's headless Chromium (tests/browser.py) on a machine without CJK system fonts, as CI
is, and asks the DevTools protocol which font drew the Hangul; another opens notebook 05's page and
asks which font drew its formulas (the bundled math font, whose MATH table stretches brackets).
"""

import re
from pathlib import Path

import nbformat
import pytest
from browser import chromium_page, platform_fonts, screenshot
from fontTools.ttLib import TTFont

from tools import languages, nbtemplate, webfont, website
from tools.nbrun import notebook_paths

HANGUL = re.compile(r"[\uac00-\ud7a3]")
NOTEBOOKS = {path.stem: path for path in notebook_paths()}
FIRST = notebook_paths()[0].stem
DATA_LINKER = next(s for s, p in NOTEBOOKS.items() if "../data/README.md" in p.read_text(encoding="utf-8"))


def _site(tmp_path: Path, plan: dict[str, list[str]]) -> Path:
    """Render ``plan`` (edition → notebook stems) into ``tmp_path/site`` without executing."""
    executed = {}
    for lang, names in plan.items():
        (tmp_path / "nb" / lang).mkdir(parents=True, exist_ok=True)
        executed[lang] = []
        for name in names:
            target = tmp_path / "nb" / lang / f"{name}.ipynb"
            nbformat.write(website.edition_notebook(NOTEBOOKS[name], lang), target)
            executed[lang].append(target)
    out = tmp_path / "site"
    website.render_pages(executed, out)
    return out


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """All three editions of the first notebook and of the notebook that links to data/."""
    names = sorted({FIRST, DATA_LINKER})
    return _site(tmp_path_factory.mktemp("site"), dict.fromkeys(languages.EDITIONS, names))


def test_every_local_link_of_the_site_resolves(site):
    assert website.dead_links(site) == []
    for lang in languages.EDITIONS:
        page = (site / lang / f"{DATA_LINKER}.html").read_text(encoding="utf-8")
        if "../data/README" in nbformat.writes(website.edition_notebook(NOTEBOOKS[DATA_LINKER], lang)):
            assert 'href="../data/README.html"' in page, f"{lang}: the data link points at the data page"
    assert "sentences.json" in (site / "data" / "README.html").read_text(encoding="utf-8")
    index = (site / "index.html").read_text(encoding="utf-8")
    assert index.count('<a href="ko/') == index.count('<a href="en/') == index.count('<a href="both/') == 2
    assert "three editions: bilingual, Korean and English" in index


def test_a_narrowed_build_links_only_to_what_it_built(tmp_path):
    out = _site(tmp_path, {"ko": [FIRST]})
    assert website.dead_links(out) == []
    index = (out / "index.html").read_text(encoding="utf-8")
    assert "The editions in this build: 한국어" in index and "course.py site" in index, "the index says what it holds"
    assert "three editions: bilingual" not in index
    page = (out / "ko" / f"{FIRST}.html").read_text(encoding="utf-8")
    assert "../en/" not in page and "../both/" not in page, "no link to editions that were not built"
    assert 'class="not-built"' in page, "links to notebooks that were not built became plain text"
    assert not re.search(r'href="\d\d[a-z]?_\w+\.html"', page)
    # a second, wider build links the pages of both builds
    out = _site(tmp_path, {"en": [FIRST]})
    page = (out / "ko" / f"{FIRST}.html").read_text(encoding="utf-8")
    english = (out / "en" / f"{FIRST}.html").read_text(encoding="utf-8")
    assert f'href="../ko/{FIRST}.html"' in english and website.dead_links(out) == []


def test_unlink_missing_keeps_anchors_external_and_existing_links(tmp_path):
    (tmp_path / "there.html").write_text("x", encoding="utf-8")
    page = tmp_path / "page.html"
    page.write_text(
        '<a href="there.html#s">ok</a> <a href="gone.html">gone <b>x</b></a> '
        '<a href="#top">top</a> <a href="https://example.org/a.html">web</a>',
        encoding="utf-8",
    )
    assert website.unlink_missing(page) == 1
    assert page.read_text(encoding="utf-8") == (
        '<a href="there.html#s">ok</a> <span class="not-built">gone <b>x</b></span> '
        '<a href="#top">top</a> <a href="https://example.org/a.html">web</a>'
    )
    assert website.dead_links(tmp_path) == []


def test_dead_links_finds_href_src_and_css_urls(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "p.html").write_text(
        '<a href="../nope.html">a</a><img src="x.png"><style>@font-face { src: url("../f.woff2") }</style>'
        '<img src="data:image/png;base64,AAAA"><a href="mailto:a@b.c">m</a>',
        encoding="utf-8",
    )
    assert website.dead_links(tmp_path) == [
        "sub/p.html: ../nope.html",
        "sub/p.html: x.png",
        "sub/p.html: ../f.woff2",
    ]


def test_web_font_covers_the_korean_of_every_page_and_is_small(site):
    text = "".join(p.read_text(encoding="utf-8") for p in site.rglob("*.html"))
    wanted = webfont.korean_characters(text)
    assert len(wanted) > 300, "the pages hold Korean prose"
    for weight in webfont.WEIGHTS:
        path = site / "fonts" / webfont.file_name(weight)
        font = TTFont(path)
        assert font.flavor == "woff2"
        missing = set(wanted) - {chr(code) for code in font.getBestCmap()}
        assert not missing, f"{weight}: no glyph for {''.join(sorted(missing))[:20]}"
        assert path.stat().st_size < 250_000, "subset to the pages' characters, not all 11,172 syllables"
    assert (site / "fonts" / "OFL.txt").is_file(), "the font's licence travels with it"
    for name in (webfont.MATH_FILE, webfont.MATH_LICENSE):
        assert (site / "fonts" / name).is_file(), f"the math font and its licence: {name}"
    for page in site.rglob("*.html"):
        html = page.read_text(encoding="utf-8")
        assert f'font-family: "{webfont.FAMILY}"' in html and "unicode-range: U+1100-11FF" in html, page.name
        assert not re.search(
            r"<(?:img|link|script|iframe)[^>]*(?:src|href)=[\"']?https?://|url\(['\"]?https?://|@import", html
        ), f"{page.name}: nothing is loaded from the network"
        assert not re.search(r"<script[^>]*\bsrc=", html), f"{page.name}: no script is fetched (no MathJax)"


def test_web_font_is_made_again_only_when_the_characters_change(tmp_path):
    first = webfont.build(tmp_path, "위치 인코딩")
    stamp = first[0].stat().st_mtime_ns
    assert webfont.build(tmp_path, "인코딩 위치 abc") == first and first[0].stat().st_mtime_ns == stamp
    webfont.build(tmp_path, "회전 위치 임베딩")
    cmap = {chr(c) for c in TTFont(first[0]).getBestCmap()}
    assert set("회전위치임베딩") <= cmap and "코" not in cmap
    assert webfont.korean_characters("a가·나「」") == "「」가나"
    with pytest.raises(TypeError):
        webfont.korean_characters(b"x")
    with pytest.raises(ValueError, match="weight must be one of"):
        webfont.file_name("light")


def test_a_korean_page_is_drawn_with_the_web_font_in_chromium(site):
    """Headless Chromium on a machine without CJK fonts: the Hangul must come from the web font."""
    page_path = site / "ko" / f"{FIRST}.html"
    with chromium_page() as page:
        page.goto(page_path.as_uri())
        # a paragraph of plain Korean prose (text only, so the fonts reported are this text's)
        text = page.evaluate(
            """() => {
                const p = [...document.querySelectorAll('.jp-RenderedMarkdown p')].find(
                    e => [...e.childNodes].every(n => n.nodeType === 3) && /[\\uac00-\\ud7a3]{10}/.test(
                        e.textContent.replace(/\\s/g, '')));
                p.id = 'korean-probe';
                return p.textContent;
            }"""
        )
        fonts = platform_fonts(page, "#korean-probe")
        # a code line wider than the page scrolls; nothing is cut off by overflow: hidden
        cut = page.evaluate(
            """() => [...document.querySelectorAll('.jp-Cell *')].filter(
                e => e.scrollWidth > e.clientWidth + 1 && getComputedStyle(e).overflowX === 'hidden').length"""
        )
        path = screenshot(page, f"site_ko_{FIRST[:2]}")
        assert page.evaluate("document.fonts.check('16px \"" + webfont.FAMILY + "\"', '가')")
        blocked = page.blocked
    hangul = len(HANGUL.findall(text))
    web = [f for f in fonts if f["isCustomFont"] and f["familyName"] == webfont.SOURCE_FAMILY]
    assert web, f"Hangul not drawn with the web font: {fonts}"
    assert web[0]["glyphCount"] >= hangul, fonts
    assert sum(f["glyphCount"] for f in fonts if f not in web) <= len(text) - hangul, "no Hangul fell back"
    assert blocked == [], f"the page asked the network for {blocked}"
    assert cut == 0, f"{cut} element(s) cut off their content"
    assert path.stat().st_size > 10_000


# --- formulas: the bundled math font ----------------------------------------------------------

MATH_OPEN = '<math xmlns="http://www.w3.org/1998/Math/MathML" display="inline">'
MATH_NOTEBOOK = "05_rope"  # eq. (12): a conjugate bar over (W_k x_n); eq. (15): a 5x5 matrix in ( )


def test_the_bundled_math_font_has_a_math_table_and_the_pages_name_it(tmp_path):
    """Chromium lays MathML out with the OpenType MATH table of the first font of <math>'s
    font-family: the bundled Noto Sans Math must have one, and come first."""
    font = TTFont(webfont.FONTS / webfont.MATH_FILE)
    assert font.flavor == "woff2" and "MATH" in font, "no MATH table: brackets and braces cannot stretch"
    assert font["name"].getDebugName(1) == webfont.MATH_SOURCE_FAMILY
    cmap = font.getBestCmap()
    missing = [c for c in "()[]{}⟨⟩‖∑∫√∂θωΘ−⋱⏟⏞―\U0001d465\U0001d703" if ord(c) not in cmap]
    assert not missing, f"no glyph for {missing}"
    variants = font["MATH"].table.MathVariants
    assert cmap[ord("(")] in variants.VertGlyphCoverage.glyphs, "( has no taller variants"
    assert cmap[ord("⏟")] in variants.HorizGlyphCoverage.glyphs, "the underbrace has no wider variants"
    licence = (webfont.FONTS / webfont.MATH_LICENSE).read_text(encoding="utf-8")
    assert "SIL OPEN FONT LICENSE Version 1.1" in licence and "@fontsource/noto-sans-math 5.3.0" in licence
    # the CSS: a face of that file (no unicode-range: it draws every character it has), first for <math>
    css = webfont.font_face_css("../fonts")
    (rule,) = [r for r in css.splitlines() if f'font-family: "{webfont.MATH_FAMILY}"' in r]
    assert f'src: url("../fonts/{webfont.MATH_FILE}") format("woff2")' in rule and "unicode-range" not in rule
    assert webfont.math_font_stack() == f'"{webfont.MATH_FAMILY}", "{webfont.FAMILY}", math'
    assert f"math {{ font-family: {webfont.math_font_stack()}; }}" in website.page_font_css("../fonts")
    # build() copies it whole, with its licence, next to the Korean font
    paths = webfont.build(tmp_path, "위치")
    assert tmp_path / webfont.MATH_FILE in paths and tmp_path / webfont.MATH_LICENSE in paths
    assert (tmp_path / webfont.MATH_FILE).read_bytes() == (webfont.FONTS / webfont.MATH_FILE).read_bytes()
    (tmp_path / webfont.MATH_FILE).write_bytes(b"stale")
    webfont.build(tmp_path, "위치")
    assert (tmp_path / webfont.MATH_FILE).read_bytes() == (webfont.FONTS / webfont.MATH_FILE).read_bytes()


def test_overline_is_a_rule_over_its_whole_content():
    """latex2mathml's \\overline is a one-character U+2015 over its content, which no font here
    stretches: website.rule_bars draws it as a border of the content instead."""
    pytest.importorskip("latex2mathml", reason="pip install latex2mathml (in the test extras)")
    from latex2mathml.converter import convert

    tex = r"\mathrm{Re}\big[(W_q x_m)\,\overline{(W_k x_n)}\big] + \overline{\overline{b}} + \underline{x} + \hat y"
    plain, ruled = convert(tex), website.rule_bars(convert(tex))
    assert plain.count("&#x02015;") == 4 and "&#x02015;" not in ruled
    assert ruled.count('<mrow style="border-top: 0.07em solid; padding-top: 0.15em">') == 3
    assert ruled.count('<mrow style="border-bottom: 0.07em solid; padding-bottom: 0.15em">') == 1
    assert "<munder" not in ruled and ruled.count("<mover") == ruled.count("</mover>") == 1, "\\hat stays"
    assert ruled.count("<mrow") == ruled.count("</mrow>")
    assert website.rule_bars(convert(r"\frac{a}{b}")) == convert(r"\frac{a}{b}"), "other formulas unchanged"
    assert 'style="border-top' in website.MathMLRenderer()._mathml(r"\overline{x}", "inline")


def test_a_fenced_matrix_is_a_row_of_its_own():
    """latex2mathml puts a pmatrix's parentheses into the surrounding row, where they stretch to
    the tallest neighbour (03, section 7: a vector next to an underbraced matrix)."""
    pytest.importorskip("latex2mathml", reason="pip install latex2mathml (in the test extras)")
    from latex2mathml.converter import convert

    tex = (
        r"\begin{pmatrix}a\\ b\end{pmatrix} = \underbrace{\begin{pmatrix}c & d\end{pmatrix}}_{M}"
        r"\begin{bmatrix}\begin{vmatrix}e\end{vmatrix}\end{bmatrix}"
    )
    plain, grouped = convert(tex), website.group_matrices(convert(tex))
    fenced = r"<mrow><mo>[^<]+</mo><mtable>"
    # latex2mathml groups only the underbraced matrix (the other match is the formula's own row)
    assert len(re.findall(fenced, plain)) == 2 and not plain.startswith(f"{MATH_OPEN}<mrow><mrow>")
    assert len(re.findall(fenced, grouped)) == 4, "every fenced matrix, nested ones too, is grouped"
    assert grouped.startswith(f"{MATH_OPEN}<mrow><mrow><mo>&#x00028;</mo><mtable>"), "the first vector too"
    assert grouped.count("<mrow") == grouped.count("</mrow>") == plain.count("<mrow") + 3
    assert website.group_matrices(grouped) == grouped
    for other in (r"\frac{a}{b}", r"\begin{matrix}a\end{matrix}", r"\begin{cases}a & b\end{cases}",
                  r"A = \begin{matrix}1 & 2\end{matrix} + B"):  # an operator next to a table is no fence
        assert website.group_matrices(convert(other)) == convert(other), other


def test_formulas_are_drawn_with_the_bundled_math_font_in_chromium(tmp_path):
    """A matrix's parentheses, its letters and a conjugate bar in headless Chromium: drawn with
    the bundled Noto Sans Math (whatever math font the machine has, or lacks), the parentheses
    stretched to the matrix's height, the bar as wide as what it covers."""
    pytest.importorskip("latex2mathml", reason="pip install latex2mathml (in the test extras)")
    out = _site(tmp_path, {"ko": [MATH_NOTEBOOK]})
    with chromium_page() as page:
        page.goto((out / "ko" / f"{MATH_NOTEBOOK}.html").as_uri())
        found = page.evaluate(
            """() => {
                const maths = [...document.querySelectorAll('math')];
                const matrix = maths.find((m) => m.querySelector('mtable') && m.textContent.includes('(15)'));
                const conjugate = maths.find((m) => m.textContent.includes('(12)'));
                if (!matrix || !conjugate) return null;
                const paren = [...matrix.querySelectorAll('mo')].find((o) => o.textContent === '(');
                const equals = [...matrix.querySelectorAll('mo')].find((o) => o.textContent === '=');
                paren.id = 'math-paren';
                matrix.querySelector('mi').id = 'math-letter';
                const bar = conjugate.querySelector('mrow[style*="border-top"]');
                return {paren: paren.getBoundingClientRect().height, equals: equals.getBoundingClientRect().height,
                        table: matrix.querySelector('mtable').getBoundingClientRect().height,
                        bar: bar && bar.getBoundingClientRect().width,
                        covered: bar && bar.firstElementChild.getBoundingClientRect().width};
            }"""
        )
        assert found, "notebook 05's eq. (12) and (15) are on the page"
        paren, letter = platform_fonts(page, "#math-paren"), platform_fonts(page, "#math-letter")
        loaded = page.evaluate("document.fonts.check('16px \"" + webfont.MATH_FAMILY + "\"', '(')")
        blocked = page.blocked
    for fonts in (paren, letter):
        drawn = {(f["familyName"], f["isCustomFont"]) for f in fonts}
        assert drawn == {(webfont.MATH_SOURCE_FAMILY, True)}, f"not drawn with the bundled math font: {fonts}"
    assert loaded, "the math font's face is loaded"
    assert found["paren"] > 3 * found["equals"] and found["paren"] >= 0.9 * found["table"], found
    assert found["bar"] and found["bar"] >= found["covered"] > 0, found
    assert blocked == [], f"the page asked the network for {blocked}"


def _tiny_notebook(path: Path, value: int) -> Path:
    from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

    nb = new_notebook(
        cells=[
            new_markdown_cell("# 99. 작은 노트북 · Tiny"),
            new_markdown_cell("한국어 설명입니다.", metadata={"tags": ["lang-ko"]}),
            new_markdown_cell("An English explanation.", metadata={"tags": ["lang-en"]}),
            new_code_cell(f"print({value})"),
        ]
    )
    nbtemplate.sync_cells(nb.cells, path.name)  # badge and the course's setup cell, as in every notebook
    nbformat.write(nb, path)
    return path


def test_editions_run_in_parallel_and_are_reused_until_the_notebook_changes(tmp_path, monkeypatch, capsys):
    source = _tiny_notebook(tmp_path / "99_tiny.ipynb", 1)
    monkeypatch.setattr(website, "notebook_paths", lambda: [source])
    out = tmp_path / "executed"
    executed, failed = website.execute_editions(("ko", "en"), out=out, jobs=2)
    assert failed == [] and executed == {lang: [out / lang / source.name] for lang in ("ko", "en")}
    assert "in 2 process(es)" in capsys.readouterr().out
    for lang in ("ko", "en"):
        nb = nbformat.read(out / lang / source.name, as_version=4)
        assert nb.cells[-1].outputs[0]["text"] == "1\n"
        assert nb.metadata["posviz_build_key"] != "had-problems" and nb.metadata["posviz_build_seconds"] > 0
    stamps = {lang: (out / lang / source.name).stat().st_mtime_ns for lang in ("ko", "en")}
    again, _ = website.execute_editions(("ko", "en"), out=out, jobs=2)
    assert again == executed and "executing" not in capsys.readouterr().out, "unchanged: nothing executed"
    assert {lang: (out / lang / source.name).stat().st_mtime_ns for lang in ("ko", "en")} == stamps
    _tiny_notebook(source, 2)
    website.execute_editions(("en",), out=out, jobs=2)
    assert "executing 1 notebook(s) in 1 process(es)" in capsys.readouterr().out
    assert nbformat.read(out / "en" / source.name, as_version=4).cells[-1].outputs[0]["text"] == "2\n"
    with pytest.raises(ValueError, match="jobs must be >= 1"):
        website.execute_editions(("en",), out=out, jobs=0)


def test_a_first_build_starts_the_slowest_notebooks_first(tmp_path):
    """With nothing executed yet, the running order comes from FIRST_BUILD_SECONDS (06 first,
    not fifth from last); once a notebook has run, its own recorded time counts."""
    names = ("00_introduction.ipynb", "03_sinusoidal_encoding.ipynb", "06_showdown.ipynb")
    paths = [tmp_path / name for name in names]
    out = tmp_path / "executed"
    first = max(paths, key=lambda p: website._expected_seconds(p, "both", out))
    assert first.name == "06_showdown.ipynb"
    assert website._expected_seconds(paths[0], "both", out) == 0.0  # 00 is not listed: a few seconds
    (out / "en").mkdir(parents=True)
    nb = nbformat.v4.new_notebook()
    nb.metadata["posviz_build_seconds"] = 999.5
    nbformat.write(nb, out / "en" / paths[1].name)
    assert website._expected_seconds(paths[1], "both", out) == 999.5  # another edition's time


def test_data_page_tables_start_with_their_first_row(tmp_path):
    """data/README.md writes key-value tables with an empty header (``| | |``): the page drops it."""
    page = website.write_data_page(tmp_path).read_text(encoding="utf-8")
    tables = re.findall(r"<table>(.*?)</table>", page, flags=re.S)
    assert len(tables) >= 3
    for table in tables:
        first = re.search(r"<tr>(.*?)</tr>", table, flags=re.S).group(1)
        assert re.sub(r"<[^>]+>|\s", "", first), "the first row of a table is not empty"
    assert website._without_empty_table_heads(
        "<table>\n<thead>\n<tr>\n  <th>a</th>\n  <th></th>\n</tr>\n</thead>"
    ).count("<thead>") == 1, "a header with text stays"
