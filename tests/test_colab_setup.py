"""The setup cell's Colab branch (tools/nbtemplate.py), run here with a stand-in ``google.colab``
module and a local bare clone of this repository in place of GitHub."""

import shutil
import subprocess
import sys
import types

import pytest

from tools import nbtemplate

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


def _colab_setup(url: str, folder: str) -> str:
    """The setup cell's Colab part (up to its imports, so this test leaves posviz.setup alone)."""
    code = nbtemplate.setup_code("en").split("\nimport matplotlib.pyplot")[0]
    default_folder = "/content/" + nbtemplate.repo_url().rsplit("/", 1)[-1]
    assert nbtemplate.repo_url() in code and default_folder in code
    return code.replace(nbtemplate.repo_url(), url).replace(default_folder, folder)


@pytest.fixture
def on_colab(monkeypatch):
    monkeypatch.setitem(sys.modules, "google.colab", types.ModuleType("google.colab"))
    monkeypatch.setattr(sys, "path", list(sys.path))  # the cell prepends the clone to sys.path


def test_clone_is_quiet_when_it_works(on_colab, tmp_path, capfd):
    bare = tmp_path / "course.git"
    subprocess.run(["git", "clone", "--quiet", "--bare", str(nbtemplate.ROOT), str(bare)], check=True)
    capfd.readouterr()
    folder = tmp_path / "content" / "course"
    exec(_colab_setup(bare.as_uri(), str(folder)), {})
    out, err = capfd.readouterr()
    assert (folder / "posviz" / "__init__.py").is_file() and (folder / "data").is_dir()
    assert sys.path[0] == str(folder)
    assert err == ""  # git's "Cloning into ..." (stderr) no longer reaches the notebook
    assert out == ""


def test_a_failed_clone_shows_what_git_said_and_stops(on_colab, tmp_path, capfd):
    missing = tmp_path / "no-such-repository"
    with pytest.raises(RuntimeError, match=r"git clone of .*no-such-repository failed \(exit status 128\)"):
        exec(_colab_setup(missing.as_uri(), str(tmp_path / "course")), {})
    out, err = capfd.readouterr()
    assert "does not appear to be a git repository" in out or "not found" in out.lower()
    assert err == ""
