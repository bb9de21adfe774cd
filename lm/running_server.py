"""The embedded LM that ``validator lm serve`` keeps running, found by the commands that would start their own.

Starting the embedded LM takes 20-25 s on two cores (the model is read and its first prompt
evaluated), so ``validator lm score`` called ten times spent four minutes starting servers
(issue 27). ``lm serve`` therefore advertises its server in the cache directory
(``<cache>/models/serving-<model>.json``: URL, model and its sha256, the serving process),
and ``validator.lm_session.open_endpoint`` uses it instead of starting one when

- the file names the model the command would start (name and sha256),
- the process that wrote it is alive (so a killed ``lm serve`` leaves no false advert), and
- the server answers ``/health`` on 127.0.0.1 within a second.

The advert is written atomically when the server is ready and removed when ``lm serve`` stops.
"""

from __future__ import annotations

import json
import logging
import os
import urllib.error
import urllib.request
from pathlib import Path

from lm.config import Endpoint
from lm.embedded import DEFAULT, LocalModel, LocalServer, models_dir
from storage.files import write_text_atomic

log = logging.getLogger(__name__)

SCHEMA = "consensus-validator/lm-serving/1"


def advert_path(cache_dir: str | os.PathLike[str], model: LocalModel = DEFAULT) -> Path:
    return models_dir(cache_dir) / f"serving-{model.name}.json"


def advertise(server: LocalServer) -> Path:
    """Say that ``server`` (started, owned by this process) serves its model; returns the advert's path."""
    path = advert_path(server.cache_dir, server.model)
    doc = {
        "schema": SCHEMA,
        "url": server.endpoint.url,
        "model": server.model.name,
        "sha256": server.model.sha256,
        "pid": os.getpid(),
    }
    write_text_atomic(path, json.dumps(doc) + "\n")
    return path


def withdraw(path: Path) -> None:
    """Remove this process's advert (no error when it is gone)."""
    try:
        doc = json.loads(path.read_text())
        if doc.get("pid") == os.getpid():
            path.unlink()
    except (OSError, ValueError, AttributeError):
        pass


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def running(cache_dir: str | os.PathLike[str] | None, model: LocalModel = DEFAULT) -> Endpoint | None:
    """The endpoint of a running ``validator lm serve`` of ``model`` (module docstring), else None."""
    if cache_dir is None:
        return None
    try:
        doc = json.loads(advert_path(cache_dir, model).read_text())
        url, pid = str(doc["url"]), int(doc["pid"])
        same = doc.get("schema") == SCHEMA and doc.get("model") == model.name and doc.get("sha256") == model.sha256
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if not same or not url.startswith("http://127.0.0.1:") or not _alive(pid):
        return None
    try:
        with urllib.request.urlopen(url.removesuffix("/v1") + "/health", timeout=1.0) as resp:
            if resp.status != 200:
                return None
    except (urllib.error.URLError, OSError, ValueError):
        return None
    return Endpoint(url=url, token=None, model=model.name, label=f"local {model.name} {model.sha256[:12]}")
