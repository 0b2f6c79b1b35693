"""The notebooks' ipywidgets explorers, driven without a front end (the notebook tests only run them once)."""

import json
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pytest

import posviz

widgets = pytest.importorskip("ipywidgets")
ROOT = Path(__file__).resolve().parent.parent


def _cell_defining(notebook: str, name: str) -> str:
    cells = json.loads((ROOT / "notebooks" / notebook).read_text(encoding="utf-8"))["cells"]
    sources = ["".join(c["source"]) for c in cells if c["cell_type"] == "code"]
    return next(s for s in sources if f"def {name}(" in s and "widgets.interact(" in s)


# ipywidgets 7 uses ipykernel.comm.Comm and ipykernel.pylab, which ipykernel >= 6.29 deprecates (third-party).
@pytest.mark.filterwarnings("ignore:The `ipykernel.comm.Comm` class has been deprecated:DeprecationWarning")
@pytest.mark.filterwarnings("ignore:`ipykernel.pylab.backend_inline` is deprecated:DeprecationWarning")
def test_sinusoidal_explorer_dimension_slider_follows_d_model(capsys):
    namespace = {"posviz": posviz, "plt": plt, "np": np}
    exec(_cell_defining("03_sinusoidal_encoding.ipynb", "explore"), namespace)
    explore = namespace["explore"]
    sliders = {w.description: w for w in explore.widget.children if hasattr(w, "description")}
    dimension, d_model = sliders[posviz.t("차원", "dimension")], sliders["d_model"]  # labels follow the language
    assert (dimension.max, d_model.value) == (31, 32)

    dimension.value = 30
    d_model.value = 16  # fewer columns than the chosen dimension: the slider ends at the last column
    assert (dimension.max, dimension.value) == (15, 15)
    d_model.value = 64
    assert dimension.max == 63 and dimension.value == 15
    dimension.value = 63
    assert dimension.value == 63  # every column of the widest table is reachable

    with pytest.raises(ValueError, match="dimension < d_model"):
        explore(dimension=32, d_model=32)  # no silent clipping when called directly either
    plt.close("all")
    capsys.readouterr()
