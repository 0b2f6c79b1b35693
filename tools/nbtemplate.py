"""The cells every course notebook shares: the Colab badge and the setup cell.

The repository address lives in one place, ``pyproject.toml`` ([project.urls] Repository);
``repo_url()`` reads it. Notebook authors build these cells with the functions below (or
copy their output), and ``tests/test_project.py`` checks every notebook against them.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BRANCH = "main"


def repo_url() -> str:
    """``https://github.com/OWNER/NAME`` from pyproject.toml."""
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    match = re.search(r'^Repository\s*=\s*"(https://github\.com/[^"]+)"', text, re.MULTILINE)
    if not match:
        raise RuntimeError("pyproject.toml has no [project.urls] Repository = \"https://github.com/...\"")
    return match.group(1).rstrip("/")


def colab_url(notebook_name: str) -> str:
    """The "Open in Colab" address of ``notebooks/<notebook_name>``."""
    owner_repo = repo_url().removeprefix("https://github.com/")
    return f"https://colab.research.google.com/github/{owner_repo}/blob/{BRANCH}/notebooks/{notebook_name}"


def badge_markdown(notebook_name: str) -> str:
    """Markdown for the badge that opens ``notebooks/<notebook_name>`` in Colab."""
    return (
        f'<a href="{colab_url(notebook_name)}" target="_parent">'
        '<img src="https://colab.research.google.com/assets/colab-badge.svg" alt="Open In Colab"/></a>'
    )


def setup_code(lang: str = "both") -> str:
    """Source of the setup cell: on Colab only, fetch the course; then import and set up."""
    url = repo_url()
    folder = "/content/" + url.rsplit("/", 1)[-1]
    return f'''# Setup · 설정 (on Colab this first fetches the course code and data; elsewhere it only imports)
import sys

if "google.colab" in sys.modules:
    import os
    import subprocess

    if not os.path.isdir("{folder}"):
        subprocess.run(["git", "clone", "--depth", "1", "{url}", "{folder}"], check=True)
    sys.path.insert(0, "{folder}")  # Colab's own torch, numpy and matplotlib are used as they are

import matplotlib.pyplot as plt
import numpy as np
import torch

import posviz

posviz.setup(lang="{lang}", seed=0)  # lang: "ko", "en" or "both" (language of figure text)'''
