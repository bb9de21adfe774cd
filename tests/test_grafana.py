"""deploy/grafana/validator.json: a Grafana dashboard that loads and names only metrics the daemon exports."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DASHBOARD = ROOT / "deploy" / "grafana" / "validator.json"

# Metrics the dashboard shows that other branches add to the daemon's registry: the tick and committee
# metrics (issue 37's daemon) and the chain health metrics (issue 35's chain mode). Emptied when they merge:
# from then on every panel's metric must be exported.
PENDING_METRICS: frozenset[str] = frozenset()
SUFFIXES = {"counter": ("_total", "_created"), "histogram": ("_bucket", "_sum", "_count", "_created")}
NAME = re.compile(r"\b(validator_[a-z0-9_]+)\b")
PANEL_TYPES = {"row", "timeseries", "stat"}


def load() -> dict:
    return json.loads(DASHBOARD.read_text())


def exported() -> dict[str, str]:
    """Every series name the daemon's registry exports in chain mode (the chain's gauges join it) -> its family."""
    from validator.daemon.chain.metrics import ChainMetrics
    from validator.daemon.prometheus import Metrics

    registry = Metrics().registry
    ChainMetrics(registry)
    out = {}
    for family in registry.collect():
        out[family.name] = family.name
        for suffix in SUFFIXES.get(family.type, ()):
            out[family.name + suffix] = family.name
    return out


def panels(doc: dict) -> list[dict]:
    return [p for p in doc["panels"] if p["type"] != "row"]


def test_the_dashboard_has_grafanas_schema():
    doc = load()
    assert isinstance(doc["schemaVersion"], int) and doc["uid"] and doc["title"]
    assert "__inputs" not in doc and "${DS_" not in DASHBOARD.read_text()  # an import-only input: provisioning fails
    variables = {v["name"]: v for v in doc["templating"]["list"]}
    assert variables["datasource"]["type"] == "datasource" and variables["datasource"]["query"] == "prometheus"
    assert variables["job"]["datasource"]["uid"] == "${datasource}"
    ids = [p["id"] for p in doc["panels"]]
    assert len(ids) == len(set(ids)) and all(isinstance(i, int) for i in ids)
    for p in doc["panels"]:
        assert p["type"] in PANEL_TYPES and p["title"]
        pos = p["gridPos"]
        assert set(pos) == {"x", "y", "w", "h"} and pos["x"] >= 0 and pos["x"] + pos["w"] <= 24 and pos["h"] > 0
    for p in panels(doc):
        assert p["description"] and p["targets"] and p["datasource"]["uid"] == "${datasource}"
        for t in p["targets"]:
            assert t["refId"] and t["expr"] and t["expr"].count("(") == t["expr"].count(")"), t["expr"]
    # panels do not overlap
    cells = set()
    for p in doc["panels"]:
        pos = p["gridPos"]
        here = {(x, y) for x in range(pos["x"], pos["x"] + pos["w"]) for y in range(pos["y"], pos["y"] + pos["h"])}
        assert not cells & here, p["title"]
        cells |= here


def test_every_panel_names_only_metrics_the_daemon_exports():
    series = exported()
    named = {n for p in panels(load()) for t in p["targets"] for n in NAME.findall(t["expr"])}
    assert named, "no metric named"
    family = {n: series.get(n) for n in named}
    unknown = {n for n, f in family.items() if f is None and not any(n.startswith(m) for m in PENDING_METRICS)}
    assert not unknown, f"panels name metrics the daemon does not export: {sorted(unknown)}"
    # a pending name that is exported by now belongs out of PENDING_METRICS
    assert not {m for m in PENDING_METRICS if m in series}, "exported now: remove from PENDING_METRICS"
    # and every pending metric is shown
    assert all(any(n.startswith(m) for n in named) for m in PENDING_METRICS)


def test_the_dashboard_covers_rounds_failures_lm_budget_weights_ticks_and_chain():
    text = json.dumps(load())
    for metric in (
        "validator_rounds_total",
        "validator_miner_failures_total",
        "validator_miner_unpaid_total",
        "validator_lm_round_seconds_bucket",
        "validator_lm_budget_seconds",
        "validator_miner_weight",
        "validator_ticks",
        "validator_chain_blocks_until_inactive",
    ):
        assert metric in text, metric


def test_the_file_is_what_the_script_writes():
    done = subprocess.run(
        [sys.executable, "scripts/grafana_dashboard.py", "--check"], cwd=ROOT, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_daemon_exports_what_the_panels_read_after_a_round():
    """The panel's series appear once a round is observed (labelled ones only then)."""
    from emissions.ledger import Ledger, MinerEntry
    from validator.daemon.prometheus import Metrics

    metrics = Metrics()
    metrics.observe_round(sequence=1, status="ok", reached=True, latencies=[0.5], failures=["timeout"], stages={})
    metrics.observe_unpaid({"m": "copy"})
    ledger = Ledger().apply(1, "r1", [MinerEntry("a", 1.0, 10, True, False)], no_quorum=False)
    metrics.observe_ledger(ledger)
    text = metrics.render().decode()
    for line in (
        'validator_rounds_total{status="ok"} 1.0',
        'validator_miner_failures_total{reason="timeout"} 1.0',
        'validator_miner_unpaid_total{reason="copy"} 1.0',
        'validator_miner_weight{miner="a"} 1.0',
    ):
        assert line in text, line
    metrics.observe_ledger(Ledger())  # a miner the ledger dropped leaves the metrics
    assert 'validator_miner_weight{miner="a"}' not in metrics.render().decode()


def test_blocks_until_inactive_turns_red_where_the_alert_fires():
    import yaml

    rules = yaml.safe_load((ROOT / "deploy" / "prometheus" / "alerts.yml").read_text())
    [expr] = [r["expr"] for g in rules["groups"] for r in g["rules"] if r["alert"] == "ValidatorGoingInactive"]
    threshold = int(expr.split("<")[1])
    [panel] = [p for p in panels(load()) if p["title"] == "Blocks until inactive"]
    steps = panel["fieldConfig"]["defaults"]["thresholds"]["steps"]
    assert steps == [{"color": "red", "value": None}, {"color": "green", "value": threshold}]
    assert f"red under {threshold:,}" in panel["description"]
