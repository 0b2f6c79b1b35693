#!/usr/bin/env python3
"""Run the test suite against the oldest versions that pyproject.toml allows.

    python3.10 tools/test_oldest.py                 # the whole suite (unit tests and notebooks)
    python3.10 tools/test_oldest.py -k "not notebook"   # any pytest arguments, e.g. unit tests only
    python3.10 tools/test_oldest.py --venv DIR ...  # use (or make) that virtual environment

Makes a virtual environment (default ``build/venv-oldest/``) with the Python that runs this
script (use the oldest one supported, 3.10), installs the course there with every package
pinned to its lower bound by ``tools/oldest-constraints.txt``, prints the versions it got, and
runs pytest. Only the standard library is needed to start it.

PyPI's Linux torch wheel is a CUDA build of several GB; to use the small CPU build of the
pinned version instead, install it into the environment first (``DIR/bin/pip install
torch==2.4.0 --index-url https://download.pytorch.org/whl/cpu``), then run this script.
"""

from __future__ import annotations

import os
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CONSTRAINTS = ROOT / "tools" / "oldest-constraints.txt"
SHOWN = ("numpy", "matplotlib", "seaborn", "pandas", "torch", "ipywidgets", "ipykernel", "nbclient", "pyparsing")


def _python(env: Path) -> Path:
    return env / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def _run(*args: object) -> None:
    cmd = [str(a) for a in args]
    print("+", " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True, cwd=ROOT)


def main(argv: list[str]) -> int:
    env = ROOT / "build" / "venv-oldest"
    if argv[:1] == ["--venv"]:
        if len(argv) < 2:
            sys.exit("--venv needs a folder")
        env, argv = Path(argv[1]).resolve(), argv[2:]
    python = _python(env)
    if not python.exists():
        print(f"creating {env} with Python {sys.version.split()[0]} ...", flush=True)
        venv.EnvBuilder(with_pip=True).create(env)
    pip = (python, "-m", "pip", "--disable-pip-version-check", "install", "-c", CONSTRAINTS)
    _run(*pip, "torch")  # before the project, so that an already installed build is kept
    _run(*pip, "-e", ".[test]")
    _run(
        python,
        "-c",
        "import sys, importlib.metadata as m; print('Python', sys.version.split()[0]); "
        f"[print(name, m.version(name)) for name in {SHOWN!r}]",
    )
    return subprocess.run([str(python), "-m", "pytest", *argv], cwd=ROOT).returncode


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except subprocess.CalledProcessError as error:
        sys.exit(error.returncode)
