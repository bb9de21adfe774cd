"""How a settings field is declared: ``setting`` (``param`` plus aliases and the secret flag), ``like`` (a
field of an edge's value declared again), and the lookups the loader makes of them (``aliases_of``,
``secret_fields``). The sections themselves are ``validator.settings.sections`` and
``validator.settings.edges``. ``retired`` declares a key whose behaviour left the product (the sections'
``DEPRECATED`` tables, read as ``consensus.config.ConsensusConfig.DEPRECATED`` is).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from consensus.params import Deprecated, param

RETIRED_IN = "commit 663e260 (2026-11-26)"  # when the rules of the settings sections' DEPRECATED tables left the product (issue 34)


def setting(default: Any, *, aliases: tuple[str, ...] = (), secret: bool = False, **limits: Any) -> Any:
    """``param`` plus aliases (other variable names, in priority order) and the secret flag; the doc is the
    docstring under the field. docs/configuration.md lists the aliases and the flag with the doc
    (scripts/gen_config_docs.py)."""
    metadata = dict(param(default, **limits).metadata, aliases=aliases, secret=secret)
    return dataclasses.field(default=default, repr=not secret, metadata=metadata)


def like(cls: type, name: str, *, aliases: tuple[str, ...] = (), secret: bool = False) -> Any:
    """The field ``name`` of ``cls`` declared again, as it is there: its default, its doc and its limits.

    An edge value built from a section (``lm.config.LMConfig``, ``storage.s3.S3Settings``,
    ``validator.miners.QueryLimits``) and the section share one declaration this way: the one
    declares it with ``param``, the other takes it over (adding aliases and the secret flag).
    """
    f = next(x for x in dataclasses.fields(cls) if x.name == name)
    metadata = dict(f.metadata, aliases=aliases, secret=secret, like=cls)
    return dataclasses.field(default=f.default, repr=not secret, metadata=metadata)


def aliases_of(cls: type) -> dict[str, tuple[str, ...]]:
    """Field name -> its aliases, for every field of ``cls`` that has some."""
    return {f.name: f.metadata["aliases"] for f in dataclasses.fields(cls) if f.metadata.get("aliases")}


def secret_fields(cls: type) -> frozenset[str]:
    return frozenset(f.name for f in dataclasses.fields(cls) if f.metadata.get("secret"))


def retired(where: str, value: Any, *, aliases: tuple[str, ...] = ()) -> Deprecated:
    """A settings key whose behaviour left the product (a section's ``DEPRECATED`` table): ``value`` (the old
    default, what the product does) is accepted with a warning, anything else refused with ``where`` (where the
    behaviour went, what to do); ``aliases``: the other variable names it was read from."""
    return Deprecated(None, where, value, retired=RETIRED_IN, aliases=aliases)
