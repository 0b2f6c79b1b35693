"""Hugging Face ``transformers`` as a test oracle, where it can run here."""

import pytest
import torch


def transformers_with_torch(module: str = "transformers"):
    """Import ``module`` from transformers, or skip: it is missing, or (transformers 5) torch is below 2.6."""
    transformers = pytest.importorskip("transformers", reason="pip install '.[test]'")
    if not transformers.is_torch_available():
        pytest.skip(f"transformers {transformers.__version__} disables PyTorch below 2.6 (found {torch.__version__})")
    return pytest.importorskip(module)
