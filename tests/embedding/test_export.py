"""Where the ONNX export is cached: keyed by ONNX Runtime's own version, read without importing it."""

import subprocess
import sys
from pathlib import Path

from embedding.export import EXPORT_RECIPE, onnx_cache_path

ROOT = Path(__file__).resolve().parents[2]


def test_the_cache_path_names_the_installed_onnxruntime_version(tmp_path):
    import onnxruntime as ort

    path = onnx_cache_path("ab" * 32, tmp_path)
    assert path == tmp_path / f"minilm-{'ab' * 8}-ort{ort.__version__}-r{EXPORT_RECIPE}" / "model.onnx"


def test_the_cache_path_does_not_import_onnxruntime(tmp_path):
    """The OpenVINO runtime reads the same export; it does not pay ONNX Runtime's import for a file name."""
    code = (
        "import sys; from embedding.export import onnx_cache_path; "
        f"onnx_cache_path('0' * 64, __import__('pathlib').Path({str(tmp_path)!r})); "
        "print('onnxruntime' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
