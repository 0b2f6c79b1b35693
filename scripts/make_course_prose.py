"""Write data/course_prose_en.txt: the English prose of notebooks 01-04, for notebook 07's long-text runs.

The text was written for this course (CC BY 4.0) after SmolLM2 was trained, so the model cannot
have memorised it. Only markdown cells tagged ``lang-en`` are kept, in notebook order, separated
by blank lines; formulas and inline code stay as written. Run from the repository root:

    python scripts/make_course_prose.py
"""

import json
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = [
    "01_why_rnns_struggle.ipynb",
    "02_encoding_vs_embedding.ipynb",
    "03_sinusoidal_encoding.ipynb",
    "04_relative_position_shaw.ipynb",
]


def main() -> None:
    parts = []
    for name in NOTEBOOKS:
        cells = json.loads((ROOT / "notebooks" / name).read_text(encoding="utf-8"))["cells"]
        for cell in cells:
            if cell["cell_type"] == "markdown" and "lang-en" in cell.get("metadata", {}).get("tags", []):
                src = cell["source"]
                parts.append(("".join(src) if isinstance(src, list) else src).strip())
    out = ROOT / "data" / "course_prose_en.txt"
    out.write_text("\n\n".join(parts) + "\n", encoding="utf-8")
    print(f"wrote {out.relative_to(ROOT)}: {out.stat().st_size} bytes, {len(parts)} cells")


if __name__ == "__main__":
    main()
