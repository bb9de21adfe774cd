"""QueryLimits: one checked value for a query's timeouts and caps."""

from __future__ import annotations

import dataclasses
from types import SimpleNamespace

import pytest

from validator.miners import QueryLimits, default_max_body_bytes

GOOD = dict(request_timeout_s=2.0, deadline_s=4.0, max_answer_chars=1000, max_tokens=64)


@pytest.mark.parametrize(
    "overrides, name",
    [
        (dict(request_timeout_s=0), "request_timeout_s"),
        (dict(deadline_s=-1.0), "deadline_s"),
        (dict(deadline_s=float("nan")), "deadline_s"),
        (dict(deadline_s=float("inf")), "deadline_s"),
        (dict(request_timeout_s=True), "request_timeout_s"),
        (dict(max_answer_chars=0), "max_answer_chars"),
        (dict(max_tokens=1.5), "max_tokens"),
        (dict(max_connections=-1), "max_connections"),
        (dict(max_body_bytes=-5), "max_body_bytes"),
        (dict(max_tokens=None), "max_tokens"),
        (dict(logprobs="yes"), "logprobs"),
    ],
)
def test_bad_limits_are_refused_naming_the_field(overrides, name):
    with pytest.raises(ValueError, match=name):
        QueryLimits(**{**GOOD, **overrides})


def test_defaults_and_the_body_cap():
    limits = QueryLimits(**GOOD)
    assert limits.logprobs is True and limits.max_connections == 0  # 0: one connection per miner
    assert limits.body_cap == default_max_body_bytes(1000) == 65_536 + 48_000
    assert dataclasses.replace(limits, max_body_bytes=100).body_cap == 100


def test_limits_are_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        QueryLimits(**GOOD).deadline_s = 1.0  # type: ignore[misc]


def test_from_the_daemon_settings():
    section = SimpleNamespace(request_timeout_s=30.0, round_deadline_s=60.0, max_answer_chars=20_000, max_tokens=200)
    assert QueryLimits.from_settings(section) == QueryLimits(30.0, 60.0, 20_000, 200)


def test_the_defaults_are_the_daemons():
    from validator.settings import DaemonSettings

    d = DaemonSettings()
    assert QueryLimits() == QueryLimits.from_settings(d)
    assert (QueryLimits().request_timeout_s, QueryLimits().deadline_s) == (d.request_timeout_s, d.round_deadline_s)
