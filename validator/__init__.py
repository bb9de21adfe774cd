"""The validator: edges (files, stores, models, CLI) around the pure consensus core."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("consensus-validator")
except PackageNotFoundError:  # running from a source tree without install
    __version__ = "0+unknown"
