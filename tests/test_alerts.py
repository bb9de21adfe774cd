"""deploy/prometheus/alerts.yml: rules promtool accepts, whose unit tests pass, naming only metrics the daemon exports.

The rules fed what the daemon itself exported while every miner failed for three tempos are in
tests/validator/test_chain_weather.py.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.test_grafana import exported

ROOT = Path(__file__).resolve().parents[1]
RULES = ROOT / "deploy" / "prometheus" / "alerts.yml"
NAME = re.compile(r"\b(validator_[a-z0-9_]+)\b")
promtool = pytest.mark.skipif(shutil.which("promtool") is None, reason="promtool (Debian's prometheus package)")


def rules() -> list[dict]:
    return [r for g in yaml.safe_load(RULES.read_text())["groups"] for r in g["rules"]]


@promtool
def test_promtool_accepts_the_rules_and_their_unit_tests_pass():
    for args in (["check", "rules", "alerts.yml"], ["test", "rules", "alerts_test.yml"]):
        run = subprocess.run(["promtool", *args], cwd=RULES.parent, capture_output=True, text=True)
        assert run.returncode == 0, run.stdout + run.stderr


def test_every_rule_names_exported_metrics_and_says_what_it_means():
    names = exported()
    for rule in rules():
        used = set(NAME.findall(rule["expr"]))
        assert used <= set(names), (rule["alert"], used - set(names))
        assert rule["annotations"]["summary"] and "{{" not in rule["annotations"]["summary"]
        assert rule["labels"]["severity"] in ("page", "warn")


def test_an_outage_at_boot_has_rules():
    exprs = " ".join(r["expr"] for r in rules())
    assert 'up{job="validator"} == 0' in exprs and "absent(" in exprs


def test_every_alert_is_explained_in_the_deploy_doc():
    doc = (ROOT / "docs" / "deploy.md").read_text()
    for rule in rules():
        assert f"`{rule['alert']}`" in doc, rule["alert"]
