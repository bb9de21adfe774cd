"""Verifiable tasks: generated from a seed (``source``), read as miners write them (``extract``), checked by their
own verifier (``verify``), and the trust miners earn by solving them (``trust``). Pure: no I/O beyond the
generator library's own packaged data; the validator stores each task with its round (docs/daemon.md, "Tasks")."""

from tasks.extract import Extracted, extract
from tasks.source import DEFAULT_FAMILIES, VERSION, Task, TaskError, TaskSpec, generate
from tasks.trust import Trust
from tasks.verify import RIGHT_AT, Verdict, verify

__all__ = [
    "DEFAULT_FAMILIES",
    "RIGHT_AT",
    "VERSION",
    "Extracted",
    "Task",
    "TaskError",
    "TaskSpec",
    "Trust",
    "Verdict",
    "extract",
    "generate",
    "verify",
]
