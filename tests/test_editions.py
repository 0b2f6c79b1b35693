"""One name per notebook, and one-language editions that render cleanly under CommonMark.

No kernel: every check reads the notebooks (and their editions, built in memory) only.
"""

import re
from pathlib import Path

import nbformat
import pytest
from markdown_it import MarkdownIt
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from tools import course_table, editions, glossary, languages, nbtemplate, website
from tools.nbrun import notebook_paths

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = notebook_paths()
PRESENT = [entry.file for entry in course_table.existing()]
HANGUL = re.compile(r"[\uac00-\ud7a3\u3131-\u318e]")
# English labels a Korean edition must not show: navigation and title-line words anywhere, a
# "Word:" label, English section headings, and English image text (alt) such as the Colab badge's.
ENGLISH_LABELS = re.compile(
    r"\b(?:Previous|Next|Prerequisites|Back to the start)\b|\b(?:Time|Data|References|Summary|Exercises):"
)
ENGLISH_HEADING = re.compile(r"\b(?:References|Summary|Exercises|Learning goals|Setup)\b")
ENGLISH_ALT = re.compile(r"\b(?:Open|Figure)\b", re.IGNORECASE)
MATH = re.compile(r"\$\$.+?\$\$|\$[^$\n]+\$", re.DOTALL)
PARSER = MarkdownIt("commonmark").enable("table")


# --- one name per notebook ---------------------------------------------------------------------


def test_every_course_notebook_is_in_the_table():
    assert [p.name for p in NOTEBOOKS if p.name not in course_table.BY_FILE] == []
    assert set(PRESENT) >= {p.name for p in NOTEBOOKS}


def test_names_chosen_by_the_editorial_pass():
    assert (
        course_table.BY_FILE["01_why_rnns_struggle.ipynb"].title("both")
        == "01. RNN의 한계 · Why RNNs struggle"
    )
    assert course_table.BY_FILE["06_showdown.ipynb"].title("both") == "06. 종합 비교 · Showdown"
    assert course_table.BY_FILE["05b_context_extension.ipynb"].title("en") == (
        "05b. Context extension (PI, NTK, YaRN, Llama 3)"
    )


def test_readme_table_uses_the_names():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    rows = dict(re.findall(r"^\| \w+ \| \[([^\]]+)\]\(notebooks/([^)]+\.ipynb)\)", readme, re.MULTILINE))
    by_file = {file: text for text, file in rows.items()}
    for entry in course_table.COURSE:
        if entry.file in PRESENT:
            assert by_file.get(entry.file) == entry.title("both"), entry.file
    assert set(by_file) <= set(course_table.BY_FILE), "README lists a notebook the course table lacks"


def test_course_map_in_00_uses_the_names():
    cells = nbformat.read(ROOT / "notebooks" / "00_introduction.ipynb", as_version=4).cells
    seen = {"ko": 0, "en": 0}
    for cell in cells:
        lang = nbtemplate.language(cell)
        for text, file in re.findall(r"^\| \w+ \| \[([^\]]+)\]\(([^)]+\.ipynb)\)", cell.source, re.MULTILINE):
            assert text == course_table.BY_FILE[file].name[lang], (lang, file)
            seen[lang] += 1
    assert seen["ko"] == seen["en"] >= len(PRESENT) - 1  # every notebook but 00 itself is linked


def test_instructor_guide_headings_use_the_names():
    guide = (ROOT / "docs" / "instructor_guide.md").read_text(encoding="utf-8")
    korean, english = guide.split("\n## English", 1)
    for lang, text in (("ko", korean), ("en", english)):
        leads = re.findall(r"^\*\*(\d\d\w?) ([^*]+?)\.\*\* ", text, re.MULTILINE)
        rows = re.findall(r"^\| (\d\d\w?) ([^|]+?) \| ", text, re.MULTILINE)
        assert len(leads) >= 7 and len(rows) >= 7
        names = {entry.number: entry.name[lang] for entry in course_table.COURSE}
        for number, name in leads + rows:
            assert names[number] == name, (lang, number, name)


@pytest.mark.parametrize("lang", languages.EDITIONS)
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_site_index_and_title_cell_name_the_notebook(path, lang):
    nb = nbformat.read(path, as_version=4)
    edition = nb if lang == "both" else editions.make_edition(nb, lang)
    assert website.notebook_title(edition) == course_table.BY_FILE[path.name].title(lang)


# --- title and navigation cells ------------------------------------------------------------------


def _entries(*files):
    return [course_table.BY_FILE[f] for f in files]


def test_navigation_skips_notebooks_that_are_absent():
    rope, showdown = course_table.BY_FILE["05_rope.ipynb"], course_table.BY_FILE["06_showdown.ipynb"]
    without = _entries("04_relative_position_shaw.ipynb", "05_rope.ipynb", "06_showdown.ipynb")
    assert "[06. 종합 비교](06_showdown.ipynb) →" in course_table.nav_markdown(rope, "ko", without)
    with_05b = _entries("05_rope.ipynb", "05b_context_extension.ipynb", "06_showdown.ipynb")
    nav = course_table.nav_markdown(rope, "en", with_05b)
    assert (
        nav == "---\n\nNext: [05b. Context extension (PI, NTK, YaRN, Llama 3)](05b_context_extension.ipynb) →"
    )
    last = course_table.nav_markdown(showdown, "both", with_05b)
    assert last.splitlines()[2] == (
        "← 이전: [05b. 문맥 확장](05b_context_extension.ipynb) · 처음으로: [05. 회전 위치 임베딩(RoPE)](05_rope.ipynb)"
    )
    assert last.splitlines()[4].startswith("← Previous: [05b. Context extension")
    with pytest.raises(ValueError, match="not among"):
        course_table.nav_markdown(rope, "ko", _entries("06_showdown.ipynb"))
    with pytest.raises(ValueError, match="lang must be one of"):
        course_table.nav_markdown(rope, "fr", without)


def test_title_cell_per_language():
    entry = course_table.BY_FILE["01_why_rnns_struggle.ipynb"]
    both, _ = nbtemplate.title_and_nav(entry, "both")
    ko, _ = nbtemplate.title_and_nav(entry, "ko")
    en, _ = nbtemplate.title_and_nav(entry, "en")
    assert both.splitlines()[0] == "# 01. RNN의 한계 · Why RNNs struggle"
    assert (
        "**선수 지식:** 파이썬, numpy, PyTorch 기초 · **시간:** 읽기 약 40분" in both
        and "**Time:** about 40 minutes" in both
    )
    assert ko.splitlines()[0] == "# 01. RNN의 한계" and not ENGLISH_LABELS.search(ko)
    assert 'alt="Colab에서 열기"' in ko and nbtemplate.colab_url(entry.file) in ko
    assert en.splitlines()[0] == "# 01. Why RNNs struggle" and not HANGUL.search(en)


def test_sync_writes_title_and_nav_from_the_table():
    name = "05_rope.ipynb"
    nb = new_notebook(
        cells=[
            new_markdown_cell("# 05. 옛 이름 · Old name\n\n**시간 · Time:** 약 1분 · about 1 minute"),
            new_code_cell('import posviz\n\nposviz.setup(lang="both", seed=0)'),
            new_markdown_cell("← old nav", metadata={"tags": [course_table.NAV_TAG]}),
            new_markdown_cell("## 한눈에 정리 · Summary"),
        ]
    )
    changes = nbtemplate.sync_cells(nb.cells, name)
    assert changes[:3] == ["title", "navigation moved to the end", "navigation"]
    title, nav = nbtemplate.title_and_nav(course_table.BY_FILE[name])
    assert nb.cells[0].source == title and nb.cells[-1].source == nav
    assert nb.cells[-2].source == "## 한눈에 정리 · Summary"
    assert nbtemplate.sync_cells(nb.cells, name) == []
    fresh = new_notebook(cells=[new_markdown_cell("# x"), new_code_cell("y = 1")])
    assert "navigation added" in nbtemplate.sync_cells(fresh.cells, name)
    assert fresh.cells[-1].id == "course-nav" and nbtemplate.notebook_name(fresh.cells) == name


# --- splitting the other untagged lines ----------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "ko", "en"),
    [
        (
            "## 3. 사인파 위치 인코딩 · Sinusoidal positional encoding",
            "## 3. 사인파 위치 인코딩",
            "## 3. Sinusoidal positional encoding",
        ),
        (
            "### 5.1 절대 위치 대 상대 위치 · Absolute vs relative",
            "### 5.1 절대 위치 대 상대 위치",
            "### 5.1 Absolute vs relative",
        ),
        # a " · " inside the Korean part: the English part starts at the first English piece
        (
            "## 7. 실험: 위치 없음 · 고정 · 학습 · An experiment: none, fixed, learned",
            "## 7. 실험: 위치 없음 · 고정 · 학습",
            "## 7. An experiment: none, fixed, learned",
        ),
        # never inside link text, code or math
        ("## 참고 · See [a · b](x.ipynb)", "## 참고", "## See [a · b](x.ipynb)"),
        ("### 6.2 축 순서 · `[가 · b]` vs `[b · a]`", "### 6.2 축 순서", "### 6.2 `[가 · b]` vs `[b · a]`"),
        ("- 각도 $a · b$ 보기 · angle $a · b$", "- 각도 $a · b$ 보기", "- angle $a · b$"),
        ("[01. 가 · One](01_x.ipynb) →", "[01. 가 · One](01_x.ipynb) →", "DROP"),
        # a bilingual label in a list item: the text after it is shared
        (
            "- 데이터 · Data: King James Version; see [data/README.md](../data/README.md).",
            "- 데이터: King James Version; see [data/README.md](../data/README.md).",
            "- Data: King James Version; see [data/README.md](../data/README.md).",
        ),
        ("- References: [arXiv:1706.03762](https://arxiv.org/abs/1706.03762)", None, None),
        ("한국어만 있는 줄", "한국어만 있는 줄", "DROP"),
        ("2π·10000 · 2π·10000", None, None),
    ],
)
def test_one_language_line(line, ko, en):
    assert editions.one_language_line(line, "ko") == (line if ko is None else ko)
    expected_en = line if en is None else (None if en == "DROP" else en)
    assert editions.one_language_line(line, "en") == expected_en


def test_alternating_languages_are_refused_not_guessed():
    with pytest.raises(ValueError, match="cannot tell the Korean from the English"):
        editions.one_language_line("가 · a · 나 · b", "ko")
    nb = new_notebook(cells=[new_markdown_cell("# t"), new_markdown_cell("가 · a · 나 · b")])
    with pytest.raises(ValueError, match="cell 1"):
        editions.make_edition(nb, "en")


def test_code_blocks_and_tables_are_kept_verbatim():
    text = "## 표 · Table\n\n```\n가 · a\n```\n\n| 가 · a | b |\n|---|---|\n| 1 | 2 |"
    ko = editions.one_language_markdown(text, "ko")
    assert ko.splitlines()[0] == "## 표" and "가 · a\n```" in ko and "| 가 · a | b |" in ko


# --- every edition renders cleanly under CommonMark ----------------------------------------------


def _rendered_blocks(markdown: str):
    """(text, alt texts, is heading) of each paragraph, heading and table cell as CommonMark renders it,
    with inline code, code blocks and math left out."""
    tokens = PARSER.parse(MATH.sub(" MATH ", markdown))
    heading = False
    for token in tokens:
        if token.type in ("heading_open", "heading_close"):
            heading = token.type == "heading_open"
        if token.type != "inline":
            continue
        text, alts = [], []
        for child in token.children or []:
            if child.type in ("text", "softbreak", "hardbreak"):
                text.append(child.content if child.type == "text" else "\n")
            elif child.type == "image":
                alts.append(child.content)
                text.append(child.content)
        yield "".join(text), alts, heading


def _balanced(text: str) -> bool:
    depth = {"(": 0, "[": 0}
    closing = {")": "(", "]": "["}
    for char in text:
        if char in depth:
            depth[char] += 1
        elif char in closing:
            depth[closing[char]] -= 1
            if depth[closing[char]] < 0:
                return False
    return not any(depth.values())


def _edition_problems(nb: nbformat.NotebookNode, lang: str) -> list[str]:
    problems = []
    for index, cell in enumerate(nb.cells):
        if cell.cell_type != "markdown":
            continue
        for text, alts, heading in _rendered_blocks(cell.source):
            where = f"cell {index}: {text[:120]!r}"
            if "](" in text:
                problems.append(f"stray '](' in {where}")
            if not _balanced(text):
                problems.append(f"unbalanced bracket in {where}")
            for line in text.splitlines():
                stripped = line.strip()
                if stripped[:1] in "·|—" and stripped or stripped[-1:] in ("·", "|", "—"):
                    problems.append(f"dangling separator in {where}")
            if lang == "en" and HANGUL.search(text):
                problems.append(f"Hangul in {where}")
            if re.search(r"(?:^|\s)[·|—]\s+[·|—](?:\s|$)", text):
                problems.append(f"separators in a row in {where}")
            if lang == "ko" and (
                ENGLISH_LABELS.search(text)
                or (heading and ENGLISH_HEADING.search(text))
                or any(ENGLISH_ALT.search(alt) for alt in alts)
            ):
                problems.append(f"English label in {where}")
        html_alts = re.findall(r'<img [^>]*alt="([^"]*)"', cell.source)
        if lang == "ko" and any(ENGLISH_ALT.search(alt) for alt in html_alts):
            problems.append(f"English image text in cell {index}: {html_alts}")
    return problems


@pytest.mark.parametrize("lang", languages.ONE_LANGUAGE)
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_edition_renders_cleanly(path, lang):
    edition = editions.make_edition(nbformat.read(path, as_version=4), lang, path.name)
    problems = _edition_problems(edition, lang)
    assert not problems, "\n".join(problems[:10])


def test_the_render_check_sees_the_old_failures():
    """The lines the issue found broken in the old editions are all caught."""
    broken = {
        "ko": [
            "⬅️ 이전 · 강좌 소개](00_introduction.html)",
            "**시간:** 약 40분 · about 40 min (실행 1분 미만",
            "- 데이터 ·",
            "← 이전 · Previous: [04](04.ipynb)",
            "## 참고 문헌 · References",
            '<img src="x.svg" alt="Open In Colab"/>',
        ],
        "en": ["Previous: [00. Next: 02", "**Prerequisites:** notebooks 03 and 04 — · **Time:**", "- 데이터"],
    }
    for lang, lines in broken.items():
        for line in lines:
            nb = new_notebook(cells=[new_markdown_cell(line)])
            assert _edition_problems(nb, lang), (lang, line)


# --- the references: a Korean and an English cell, each with notes in its own language --------

REFERENCES = re.compile(r"^#{1,6}\s+(?:참고 문헌|References)\b")
# The parts of a reference that stay as published in both editions: links, bare URLs, code,
# titles (*…*) and quoted section names ("…").
CITATION = re.compile(r"\[[^\]\n]*\]\([^)\n]*\)|https?://\S+|`[^`\n]*`|\*[^*\n]+\*|\"[^\"\n]+\"")
# English locators that a Korean note writes as 표, 그림, 부록, 정리, 식, 행.
ENGLISH_LOCATORS = set("Table Tables Fig Figure App Appendix Theorem Section eq eqs row".split())
# Latin words that the glossary's Korean forms themselves hold ("base(밑)", "RoPE 그대로").
GLOSSARY_LATIN = {
    word for term in glossary.load() for form in term.korean for word in re.findall(r"[A-Za-z]+", form)
}


def _english_notes(markdown: str) -> list[str]:
    """English words outside the citation parts of a reference list: a lower-case word of three
    letters or more ("learned", "fine-tuning"; "et al." and "r/LocalLLaMA" are not such words)
    or a locator ("Table", "eq."). Names (capitalised, with digits or capitals) pass."""
    words = []
    for token in re.findall(r"[A-Za-z0-9@./_'-]+", CITATION.sub(" ", markdown)):
        word = token.strip(".'-/")
        if word not in GLOSSARY_LATIN and (
            re.fullmatch(r"[a-z]{3,}(?:-[a-z]+)*", word) or word in ENGLISH_LOCATORS
        ):
            words.append(word)
    return words


def _reference_problems(nb: nbformat.NotebookNode) -> list[str]:
    """How a bilingual notebook's references break the course's shape: one ``lang-ko`` cell
    "## 참고 문헌" followed by its ``lang-en`` twin "## References", citing the same links in the
    same order, and no English note in the Korean edition's reference cell."""
    found = [
        (i, c) for i, c in enumerate(nb.cells) if c.cell_type == "markdown" and REFERENCES.match(c.source)
    ]
    untagged = [i for i, c in found if not nbtemplate.language(c)]
    problems = [f"cell {i} is untagged (both editions show it)" for i in untagged]
    ko = [(i, c) for i, c in found if nbtemplate.language(c) == "ko"]
    en = [(i, c) for i, c in found if nbtemplate.language(c) == "en"]
    if len(ko) != 1 or len(en) != 1 or en[0][0] != ko[0][0] + 1:
        problems.append(f"not one lang-ko reference cell and its lang-en twin: cells {[i for i, _ in found]}")
    else:
        korean, english = ko[0][1].source, en[0][1].source
        if not (korean.startswith("## 참고 문헌\n") and english.startswith("## References\n")):
            problems.append("the headings must be '## 참고 문헌' and '## References'")
        links = re.compile(r"\]\(([^)\s]+)\)|(https?://[^\s)]+)")
        if links.findall(korean) != links.findall(english):
            problems.append("the two cells cite different links, or in a different order")
    for cell in editions.make_edition(nb, "ko").cells:
        if cell.cell_type == "markdown" and re.match(r"#{1,6}\s+참고 문헌", cell.source):
            for line in cell.source.splitlines():
                if words := _english_notes(line):
                    problems.append(f"English note {words} in the Korean edition: {line[:100]!r}")
    return problems


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_references_come_in_a_korean_and_an_english_cell(path):
    problems = _reference_problems(nbformat.read(path, as_version=4))
    assert not problems, "\n".join(problems)


def test_the_reference_check_sees_an_untagged_cell_and_english_notes():
    badge = nbtemplate.badge_markdown("01_why_rnns_struggle.ipynb")
    start = [new_markdown_cell(f"# 01. x · x\n\n{badge}"), new_code_cell(nbtemplate.setup_code())]
    item = "- Gehring et al. 2017, *Convolutional Sequence to Sequence Learning* ({}). [arXiv](https://x.org)"
    untagged = new_markdown_cell("## 참고 문헌 · References\n\n" + item.format("learned embeddings"))
    problems = _reference_problems(new_notebook(cells=[*start, untagged]))
    assert problems[0] == "cell 2 is untagged (both editions show it)"
    assert problems[-1].startswith("English note ['learned', 'embeddings']")
    for note, words in (
        ("learned position embeddings", ["learned", "position", "embeddings"]),
        ("§3.2, Table 3 row (E), eq. 4", ["Table", "row", "eq"]),
        ("학습된 위치 임베딩; RoPE base 500,000, §3.2 NTK-by-parts(식 17–20), bloc97, r/LocalLLaMA", []),
    ):
        ko = new_markdown_cell("## 참고 문헌\n\n" + item.format(note), metadata={"tags": ["lang-ko"]})
        en = new_markdown_cell("## References\n\n" + item.format("x"), metadata={"tags": ["lang-en"]})
        line = item.format(note)[:100]
        expected = [f"English note {words} in the Korean edition: {line!r}"] if words else []
        assert _reference_problems(new_notebook(cells=[*start, ko, en])) == expected, note


# --- the code of a one-language edition speaks one language ------------------------------------


def _string_literals(code: str):
    """(line, text) of every string literal of ``code``; an f-string's literal parts joined, its
    replacement fields as a space. IPython ``%``/``!`` lines are skipped."""
    import ast

    tree = ast.parse(editions._MAGIC.sub(lambda m: m.group(1) + "#", code))
    parts = {id(v) for node in ast.walk(tree) if isinstance(node, ast.JoinedStr) for v in node.values}
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            yield node.lineno, "".join(v.value if isinstance(v, ast.Constant) else " " for v in node.values)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in parts:
            yield node.lineno, node.value


def _two_language_code(code: str, lang: str) -> list[str]:
    """Lines of a code cell that still speak both languages: a ``posviz.t`` call the edition
    builder should have resolved, or a string "한국어 … · English …" (a bilingual message)."""
    import ast

    lines = code.splitlines()
    problems = []
    tree = ast.parse(editions._MAGIC.sub(lambda m: m.group(1) + "#", code))
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and editions._resolvable(node):
            problems.append(f"posviz.t() left unresolved: {lines[node.lineno - 1].strip()[:100]!r}")
    for number, text in _string_literals(code):
        pieces = text.split(languages.SEP)
        korean = [p for p in pieces if HANGUL.search(p)]
        english = [p for p in pieces if not HANGUL.search(p) and len(re.findall(r"[A-Za-z]{2,}", p)) >= 2]
        if korean and english:
            problems.append(f"a bilingual string: {lines[number - 1].strip()[:100]!r}")
    return problems


@pytest.mark.parametrize("lang", languages.ONE_LANGUAGE)
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_edition_code_speaks_one_language(path, lang):
    source = nbformat.read(path, as_version=4)
    edition = editions.make_edition(source, lang, path.name)
    problems = [
        f"cell {index}: {problem}"
        for index, cell in enumerate(edition.cells)
        if cell.cell_type == "code"
        for problem in _two_language_code(cell.source, lang)
    ]
    assert not problems, "\n".join(problems)
    if lang == "en":  # the English edition's t() calls all chose English
        code = "\n".join(c.source for c in edition.cells if c.cell_type == "code")
        assert "posviz.t(\"" not in code and "posviz.t(f\"" not in code
    # the bilingual source itself still had both languages (the check is not vacuous)
    both = [p for c in source.cells if c.cell_type == "code" for p in _two_language_code(c.source, lang)]
    assert both or "posviz.t(" not in "".join(c.source for c in source.cells if c.cell_type == "code")


def test_one_language_code_resolves_literal_t_calls_and_keeps_the_rest():
    code = (
        'ax.set_title(posviz.t("두 \'bank\' 위치", "two \'bank\'s", sep="\\n"))\n'
        "%matplotlib inline\n"
        "lab = posviz.t(\n"
        '    f"헤드 {h}"\n'
        '    " 평균",\n'
        '    f"head {h}"\n'
        '    " mean",\n'
        ")\n"
        'u = posviz.t("가" if c else "나", "a" if c else "b") + "x"\n'
        'v = posviz.t(f"{step(x)}개", f"{step(x)} items")\n'  # a call that may change state: kept
        'w = t("가", "a")\n'  # a bare t may be anything
        'sentence = "나는 학교에 간다"\n'
    )
    english = editions.one_language_code(code, "en")
    assert english.splitlines()[0] == "ax.set_title(\"two 'bank's\")"
    assert '%matplotlib inline\nlab = (f"head {h}"\n    " mean")\n' in english
    assert 'u = ("a" if c else "b") + "x"' in english
    assert 'v = posviz.t(f"{step(x)}개", f"{step(x)} items")' in english
    assert 'w = t("가", "a")' in english and 'sentence = "나는 학교에 간다"' in english
    korean = editions.one_language_code(code, "ko")
    assert korean.splitlines()[0] == "ax.set_title(\"두 'bank' 위치\")" and 'u = ("가" if c else "나") + "x"' in korean
    assert editions.one_language_code("x = (", "en") == "x = (", "code that does not parse is kept"
    for lang, text in (("ko", korean), ("en", english)):
        namespace = {"c": True, "h": 3}
        exec(compile("\n".join(line for line in text.splitlines()[2:5]), "<cell>", "exec"), namespace)
        assert namespace["lab"] == {"ko": "헤드 3 평균", "en": "head 3 mean"}[lang]
    with pytest.raises(ValueError, match="lang must be one of"):
        editions.one_language_code(code, "both")


def test_a_bare_t_is_resolved_only_where_the_notebook_imports_it_from_posviz():
    setup = new_code_cell(nbtemplate.setup_code())
    cells = [new_markdown_cell("# t"), setup, new_code_cell("from posviz import plots, t"), new_code_cell('x = t("가", "a")')]
    assert editions.make_edition(new_notebook(cells=cells), "en").cells[3].source == 'x = "a"'
    cells[2] = new_code_cell("t = torch.arange(3)")
    assert editions.make_edition(new_notebook(cells=cells), "en").cells[3].source == 'x = t("가", "a")'
