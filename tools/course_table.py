"""The course table: one name, prerequisite line and time line per notebook, in both languages.

Everything that names a notebook is made from (or checked against) this table: the title cell
and the last navigation cell of every notebook (``tools/sync_notebooks.py`` writes them, in
the bilingual form; ``tools/editions.py`` writes the Korean-only and English-only forms from
the same entries instead of splitting the bilingual text), and ``tests/test_editions.py``
checks the README's notebook table, notebook 00's course map, the instructor guide and the
website index against it.

A notebook listed here but not (yet) in ``notebooks/`` is simply left out of the navigation:
links go to the previous and next notebooks that exist, in the table's order.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

if __package__:  # python -m tools.NAME, or imported as tools.NAME
    from .languages import ONE_LANGUAGE as LANGS
else:  # python tools/NAME.py: tools/ itself is on sys.path
    from languages import ONE_LANGUAGE as LANGS

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"


@dataclass(frozen=True)
class Entry:
    """One notebook of the course; every text field is a ``{"ko": ..., "en": ...}`` pair."""

    file: str
    number: str
    name: dict
    prerequisites: dict
    time: dict

    def title(self, lang: str) -> str:
        """``"01. RNN의 한계"`` (``lang="ko"``), ``"01. Why RNNs struggle"`` (``"en"``), or both
        joined by " · " (``"both"``), as the notebook's ``#`` heading shows it."""
        if lang == "both":
            return f"{self.number}. {self.name['ko']} · {self.name['en']}"
        return f"{self.number}. {self.name[lang]}"


def _entry(file: str, ko: str, en: str, prerequisites: tuple[str, str], time: tuple[str, str]) -> Entry:
    return Entry(
        file=file,
        number=file.split("_", 1)[0],
        name={"ko": ko, "en": en},
        prerequisites=dict(zip(LANGS, prerequisites, strict=True)),
        time=dict(zip(LANGS, time, strict=True)),
    )


COURSE: tuple[Entry, ...] = (
    _entry(
        "00_introduction.ipynb",
        "강좌 소개",
        "Introduction",
        ("파이썬 기초", "basic Python"),
        ("약 15분", "about 15 minutes"),
    ),
    _entry(
        "01_why_rnns_struggle.ipynb",
        "RNN의 한계",
        "Why RNNs struggle",
        ("파이썬, numpy, PyTorch 기초", "Python, numpy and PyTorch basics"),
        ("읽기 약 40분, 실행 1분 미만(노트북 컴퓨터 CPU)", "about 40 minutes to read, under a minute to run (laptop CPU)"),
    ),
    _entry(
        "02_encoding_vs_embedding.ipynb",
        "인코딩과 임베딩",
        "Encoding vs embedding",
        (
            "파이썬, numpy, PyTorch 기초(`nn.Module`, 옵티마이저)",
            "Python, numpy and PyTorch basics (`nn.Module`, optimisers)",
        ),
        ("읽기 약 40분, 실행 1분 미만(노트북 컴퓨터 CPU)", "about 40 minutes to read, under a minute to run (laptop CPU)"),
    ),
    _entry(
        "03_sinusoidal_encoding.ipynb",
        "사인파 위치 인코딩",
        "Sinusoidal positional encoding",
        ("02 노트북(인코딩과 임베딩), numpy 기초", "notebook 02 (encoding vs embedding), basic numpy"),
        ("읽기 약 45분, 실행 1분 미만(CPU)", "about 45 minutes to read, under a minute to run (CPU)"),
    ),
    _entry(
        "04_relative_position_shaw.ipynb",
        "상대 위치 표현(Shaw)",
        "Relative position representations (Shaw)",
        (
            "03 노트북(사인파 위치 인코딩), 셀프 어텐션의 쿼리·키·값",
            "notebook 03 (sinusoidal encoding), the queries, keys and values of self-attention",
        ),
        ("읽기 약 50분, 실행 1분 미만(CPU)", "about 50 minutes to read, under a minute to run (CPU)"),
    ),
    _entry(
        "05_rope.ipynb",
        "회전 위치 임베딩(RoPE)",
        "Rotary position embedding (RoPE)",
        ("03 노트북(사인파 위치 인코딩), 04 노트북(상대 위치 표현)", "notebooks 03 (sinusoidal) and 04 (relative positions)"),
        ("읽기 약 60분, 실행 1분 미만(CPU)", "about 60 minutes to read, under a minute to run (CPU)"),
    ),
    _entry(
        "05b_context_extension.ipynb",
        "문맥 확장",
        "Context extension (PI, NTK, YaRN, Llama 3)",
        ("05 노트북(회전 위치 임베딩)", "notebook 05 (rotary position embedding)"),
        ("읽기 약 40분, 실행 1분 안팎(2코어 CPU)", "about 40 minutes to read, about a minute to run (2-core CPU)"),
    ),
    _entry(
        "06_showdown.ipynb",
        "종합 비교",
        "Showdown",
        (
            "03–05, 05b 노트북(사인파, Shaw 상대 위치, RoPE, 문맥 확장), PyTorch 기초",
            "notebooks 03–05 and 05b (sinusoidal, Shaw's relative positions, RoPE, context extension), basic PyTorch",
        ),
        (
            "읽기 약 60분, 실행 약 2–3분(2코어 CPU, 작은 설정을 직접 학습시키는 시간 포함)",
            "about 60 minutes to read; about 2–3 minutes to run on a 2-core CPU, including the live training of the small configuration",
        ),
    ),
    _entry(
        "07_rope_in_a_real_model.ipynb",
        "실제 모델 속 RoPE",
        "RoPE in a real pretrained model",
        ("05 노트북(회전 위치 임베딩), 05b 노트북(문맥 확장)", "notebooks 05 (rotary position embedding) and 05b (context extension)"),
        ("읽기 약 60분, 실행 약 1–3분(2코어 CPU, 모델 불러오기 포함)", "about 60 minutes to read, 1–3 minutes to run (2-core CPU, model loading included)"),
    ),
    _entry(
        "08_positions_in_2d_and_3d.ipynb",
        "2-D·3-D 위치",
        "Positions in 2-D and 3-D",
        ("05 노트북(회전 위치 임베딩), 05b 노트북(문맥 확장), 06 노트북(종합 비교)", "notebooks 05 (rotary position embedding), 05b (context extension) and 06 (showdown)"),
        ("읽기 약 50분, 실행 1분 안팎(2코어 CPU)", "about 50 minutes to read, about a minute to run (2-core CPU)"),
    ),
)

BY_FILE = {entry.file: entry for entry in COURSE}
LABELS = {
    "ko": {"prerequisites": "선수 지식", "time": "시간", "previous": "이전", "next": "다음", "start": "처음으로"},
    "en": {
        "prerequisites": "Prerequisites",
        "time": "Time",
        "previous": "Previous",
        "next": "Next",
        "start": "Back to the start",
    },
}
NAV_TAG = "course-nav"  # the tag of every notebook's last cell, the navigation line(s)


def existing(folder: Path = NOTEBOOKS) -> list[Entry]:
    """The table's entries whose notebook file is in ``folder``, in course order."""
    return [entry for entry in COURSE if (folder / entry.file).is_file()]


def _check_lang(lang: str, allowed: tuple[str, ...]) -> None:
    if lang not in allowed:
        raise ValueError(f"lang must be one of {allowed}, got {lang!r}")


def _sides(lang: str) -> tuple[str, ...]:
    return LANGS if lang == "both" else (lang,)


def title_markdown(entry: Entry, badge: str, lang: str = "both") -> str:
    """The title cell: ``# NN. name``, the Colab ``badge`` (HTML), and one line per language
    with prerequisites and time. ``lang`` is "both" (the notebooks), "ko" or "en" (editions)."""
    _check_lang(lang, ("both", *LANGS))
    lines = [f"# {entry.title(lang)}", "", badge]
    for side in _sides(lang):
        label = LABELS[side]
        lines += [
            "",
            f"**{label['prerequisites']}:** {entry.prerequisites[side]} · "
            f"**{label['time']}:** {entry.time[side]}",
        ]
    return "\n".join(lines)


def nav_markdown(entry: Entry, lang: str = "both", entries: list[Entry] | None = None) -> str:
    """The last cell: a rule, then "← previous · next →" links (one line per language) over
    ``entries`` (default: the notebooks that exist). The last notebook links back to the first.
    Raises ValueError if ``entry`` is not among ``entries``."""
    _check_lang(lang, ("both", *LANGS))
    entries = existing() if entries is None else entries
    files = [e.file for e in entries]
    if entry.file not in files:
        raise ValueError(f"{entry.file} is not among the notebooks to link ({[e.file for e in entries]})")
    index = files.index(entry.file)
    before = entries[index - 1] if index > 0 else None
    after = entries[index + 1] if index + 1 < len(entries) else None
    lines = ["---"]
    for side in _sides(lang):
        label = LABELS[side]
        parts = []
        if before is not None:
            parts.append(f"← {label['previous']}: [{before.title(side)}]({before.file})")
        if after is not None:
            parts.append(f"{label['next']}: [{after.title(side)}]({after.file}) →")
        elif index > 0:
            parts.append(f"{label['start']}: [{entries[0].title(side)}]({entries[0].file})")
        lines += ["", " · ".join(parts)]
    return "\n".join(lines)
