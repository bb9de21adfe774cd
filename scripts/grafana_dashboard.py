"""Write deploy/grafana/validator.json: the Grafana dashboard of the daemon's Prometheus metrics.

    python scripts/grafana_dashboard.py            # writes deploy/grafana/validator.json
    python scripts/grafana_dashboard.py --check    # exit 1 when the file differs from what this writes

Rows: rounds, failures by reason, LM budget, weights, ticks and committees, chain health, standing. Every panel's
expression names metrics of ``validator.daemon.prometheus.Metrics`` (tests/test_grafana.py checks them against the
daemon's registry); docs/deploy.md describes each panel. The datasource is the template
variable ``datasource`` (any Prometheus; the default one first), so the file can be imported or provisioned as it is.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

OUT = Path(__file__).resolve().parents[1] / "deploy" / "grafana" / "validator.json"
# the datasource is a template variable (a Prometheus picked in the dashboard, the default one at first): the file
# loads through the UI's import and through file provisioning alike (an import-only ${DS_...} input does not resolve
# when provisioned: "Datasource ${DS_PROMETHEUS} was not found")
DS = {"type": "prometheus", "uid": "${datasource}"}
INACTIVE_ALERT_BLOCKS = 2400  # deploy/prometheus/alerts.yml ValidatorGoingInactive: the panel turns red there too
WIDTH = 24


class Layout:
    """Panels placed left to right, 8 units high, rows across the full width."""

    def __init__(self) -> None:
        self.y = 0
        self.x = 0
        self.next_id = 1
        self.panels: list[dict[str, Any]] = []

    def row(self, title: str) -> None:
        if self.x:
            self.y, self.x = self.y + 8, 0
        self.panels.append(
            {"type": "row", "title": title, "id": self._id(), "collapsed": False, "gridPos": self._pos(WIDTH, 1)}
        )
        self.y += 1

    def panel(self, kind: str, title: str, description: str, targets: list[tuple[str, str]], **extra: Any) -> None:
        width = extra.pop("width", 8)
        if self.x + width > WIDTH:
            self.y, self.x = self.y + 8, 0
        panel = {
            "type": kind,
            "title": title,
            "description": description,
            "id": self._id(),
            "datasource": DS,
            "gridPos": self._pos(width, 8),
            "targets": [
                {"refId": chr(ord("A") + i), "datasource": DS, "expr": expr, "legendFormat": legend}
                for i, (expr, legend) in enumerate(targets)
            ],
            "fieldConfig": {"defaults": {"unit": extra.pop("unit", "short")}, "overrides": []},
            "options": {"legend": {"displayMode": "list", "placement": "bottom"}} if kind == "timeseries" else {},
        }
        panel.update(extra)
        self.panels.append(panel)
        self.x += width

    def _pos(self, w: int, h: int) -> dict[str, int]:
        return {"x": self.x, "y": self.y, "w": w, "h": h}

    def _id(self) -> int:
        self.next_id += 1
        return self.next_id - 1


def dashboard() -> dict[str, Any]:
    d = Layout()
    d.row("Rounds")
    d.panel(
        "timeseries",
        "Rounds per hour, by status",
        "Rounds completed in the last hour: ok, or no_quorum (too few usable answers; nobody paid).",
        [('sum by (status) (increase(validator_rounds_total{job=~"$job"}[1h]))', "{{status}}")],
    )
    d.panel(
        "stat",
        "Last round",
        "Sequence number of the last completed round, and rounds in the last 15 minutes (0: the daemon is stuck).",
        [
            ('max(validator_last_round_sequence{job=~"$job"})', "last round"),
            ('sum(changes(validator_last_round_sequence{job=~"$job"}[15m]))', "rounds in 15 min"),
        ],
    )
    d.panel(
        "timeseries",
        "Consensus",
        "Share of the rounds that reached consensus (since the daemon started), and rounds reached per hour.",
        [
            ('max(validator_consensus_rate{job=~"$job"})', "share reached"),
            ('sum(increase(validator_consensus_reached_total{job=~"$job"}[1h]))', "reached per hour"),
        ],
    )
    d.panel(
        "timeseries",
        "Round stage time (p95)",
        "95th percentile of each stage of a round over 30 minutes: query, embed, consensus, the LM's checks, "
        "narrative, persist, ledger.",
        [
            (
                'histogram_quantile(0.95, sum by (le, stage) (rate(validator_round_stage_seconds_bucket{job=~"$job"}'
                "[30m])))",
                "{{stage}}",
            )
        ],
        unit="s",
    )
    d.panel(
        "timeseries",
        "Miner latency",
        "Median and 95th percentile of the answers' latency (request sent to last byte) over 30 minutes.",
        [
            (
                'histogram_quantile(0.5, sum by (le) (rate(validator_miner_latency_seconds_bucket{job=~"$job"}[30m])))',
                "p50",
            ),
            (
                'histogram_quantile(0.95, sum by (le) (rate(validator_miner_latency_seconds_bucket{job=~"$job"}[30m])))',
                "p95",
            ),
        ],
        unit="s",
    )
    d.panel(
        "stat",
        "Objects spooled",
        "Objects waiting in the local spool because the store (S3) did not take them; they upload when it is back.",
        [('max(validator_store_spooled{job=~"$job"})', "spooled")],
    )
    d.row("Failures by reason")
    d.panel(
        "timeseries",
        "Failed requests per hour, by reason",
        "Miner requests without a usable answer: timeout, connection_refused, http_error, empty, malformed_payload, "
        "oversized, non_text, deadline, refused (docs/miners.md).",
        [('sum by (reason) (increase(validator_miner_failures_total{job=~"$job"}[1h]))', "{{reason}}")],
    )
    d.panel(
        "timeseries",
        "Unpaid answers per hour, by reason",
        "Responses paid nothing, by reason: the failures above, and answers judged out: copy, offtopic, injection, "
        "polarity, factual, other_cluster, too_short, outlier, reference (validator/review/unpaid.py has them in words).",
        [('sum by (reason) (increase(validator_miner_unpaid_total{job=~"$job"}[1h]))', "{{reason}}")],
    )
    d.panel(
        "timeseries",
        "Share of requests answered",
        "Usable answers over all requests in the last hour.",
        [
            (
                'sum(rate(validator_miner_answers_total{job=~"$job"}[1h])) / (sum(rate(validator_miner_answers_total'
                '{job=~"$job"}[1h])) + sum(rate(validator_miner_failures_total{job=~"$job"}[1h])))',
                "answered",
            )
        ],
        unit="percentunit",
    )
    d.row("LM budget")
    d.panel(
        "timeseries",
        "LM time per round against the budget",
        "Time a round spent in LM calls (polarity, factual, arbitration, narrative), median and p95 over an hour, "
        "with the checks' budget (lm.round_budget_s; the narrative has an allowance of its own).",
        [
            ('histogram_quantile(0.5, sum by (le) (rate(validator_lm_round_seconds_bucket{job=~"$job"}[1h])))', "p50"),
            ('histogram_quantile(0.95, sum by (le) (rate(validator_lm_round_seconds_bucket{job=~"$job"}[1h])))', "p95"),
            ('max(validator_lm_budget_seconds{job=~"$job"})', "budget"),
        ],
        unit="s",
    )
    d.panel(
        "timeseries",
        "Rounds that spent the LM budget",
        "Rounds per hour whose LM checks used their whole budget: later checks were skipped, and the record says "
        "which (lm_skipped).",
        [('sum(increase(validator_lm_budget_spent_total{job=~"$job"}[1h]))', "budget spent")],
    )
    d.panel(
        "timeseries",
        "LM stage time (p95)",
        "95th percentile of each LM stage over an hour.",
        [
            (
                "histogram_quantile(0.95, sum by (le, stage) (rate(validator_round_stage_seconds_bucket"
                '{job=~"$job", stage=~"polarity|factual|arbitration|narrative"}[1h])))',
                "{{stage}}",
            )
        ],
        unit="s",
    )
    d.row("Weights")
    d.panel(
        "timeseries",
        "Weights (top 20 miners)",
        "Each miner's ledger weight after the last round (EMA of its paid share x canary accuracy, normalised); "
        "`validator weights show STORE` prints the same with why each 0.",
        [('topk(20, validator_miner_weight{job=~"$job"})', "{{miner}}")],
        width=12,
    )
    d.panel(
        "stat",
        "Miners with weight 0",
        "Miners the ledger holds at weight 0 (failed or judged out in every round they were seen).",
        [('count(validator_miner_weight{job=~"$job"} == 0) or vector(0)', "weight 0")],
        width=6,
    )
    d.panel(
        "timeseries",
        "EMA of the paid share (top 20)",
        "Each miner's exponential moving average of its share of a round's pool.",
        [('topk(20, validator_miner_ema{job=~"$job"})', "{{miner}}")],
        width=6,
    )
    d.row("Ticks and committees")
    d.panel(
        "timeseries",
        "Ticks per hour",
        "Ticks the daemon completed in the last hour (each asks its committees of miners).",
        [('sum(increase(validator_ticks_total{job=~"$job"}[1h]))', "ticks")],
    )
    d.panel(
        "stat",
        "Last tick",
        "The last completed tick.",
        [('max(validator_last_tick{job=~"$job"})', "last tick")],
    )
    d.panel(
        "timeseries",
        "Committees per tick",
        "Committees the last tick asked.",
        [('max(validator_tick_committees{job=~"$job"})', "committees")],
    )
    d.row("Chain health (chain mode)")
    d.panel(
        "stat",
        "Weights last set",
        "Seconds since the weights last landed on chain, and at which block.",
        [
            ('time() - max(validator_chain_weights_set_timestamp_seconds{job=~"$job"})', "seconds ago"),
            ('max(validator_chain_weights_set_block{job=~"$job"})', "block"),
        ],
    )
    d.panel(
        "stat",
        "Blocks until inactive",
        "Blocks left before the subnet counts this validator inactive (activity_cutoff minus blocks since its "
        f"last weights); red under {INACTIVE_ALERT_BLOCKS:,} (about 8 h of 12 s blocks), where the alert "
        "ValidatorGoingInactive fires.",
        [('min(validator_chain_blocks_until_inactive{job=~"$job"})', "blocks")],
        fieldConfig={
            "defaults": {
                "unit": "short",
                "thresholds": {
                    "mode": "absolute",
                    "steps": [{"color": "red", "value": None}, {"color": "green", "value": INACTIVE_ALERT_BLOCKS}],
                },
            },
            "overrides": [],
        },
    )
    d.panel(
        "stat",
        "Permit and stake",
        "Whether the validator holds a validator permit (1) and its stake.",
        [
            ('min(validator_chain_permit{job=~"$job"})', "permit"),
            ('max(validator_chain_stake{job=~"$job"})', "stake"),
        ],
    )
    d.panel(
        "timeseries",
        "Metagraph age",
        "Seconds since the daemon last read the metagraph.",
        [('max(validator_chain_metagraph_age_seconds{job=~"$job"})', "age")],
        unit="s",
    )
    d.panel(
        "timeseries",
        "Weight submissions, by outcome",
        "Weight submissions in the last 6 hours, by outcome (landed, rejected, failed...).",
        [('sum by (outcome) (increase(validator_chain_weight_submissions_total{job=~"$job"}[6h]))', "{{outcome}}")],
        width=16,
    )
    d.row("Standing (chain mode): what the validator earns")
    d.panel(
        "timeseries",
        "Validator trust, dividends, incentive",
        "Our uid after the last epoch: validator trust (how much of its weight survived the consensus clip), its "
        "share of the validators' dividends and of the miners' incentive (0..1). Self-weights are masked in the "
        "epoch: with only keep-alives landing, vtrust and dividends decay to 0.",
        [
            ('min(validator_chain_vtrust{job=~"$job"})', "vtrust"),
            ('max(validator_chain_dividends{job=~"$job"})', "dividends"),
            ('max(validator_chain_incentive{job=~"$job"})', "incentive"),
        ],
        unit="percentunit",
    )
    d.panel(
        "timeseries",
        "Emission per epoch",
        "Alpha emitted to our uid in the last epoch (pruning takes the lowest emission).",
        [('max(validator_chain_emission{job=~"$job"})', "emission")],
    )
    d.panel(
        "stat",
        "Keep-alives in a row",
        "Landed weight submissions in a row that were only the keep-alive self-weight (0: the miners' weights "
        "landed last); red from 1: the alert ValidatorOnlyKeepAlives fires after a tempo of it.",
        [('max(validator_chain_keepalive_streak{job=~"$job"})', "keep-alives")],
        fieldConfig={
            "defaults": {
                "unit": "short",
                "thresholds": {
                    "mode": "absolute",
                    "steps": [{"color": "green", "value": None}, {"color": "red", "value": 1}],
                },
            },
            "overrides": [],
        },
    )
    d.panel(
        "timeseries",
        "Landed submissions, by kind",
        "Weight submissions that landed in the last 6 hours by the vector's kind: ledger or padded (the miners' "
        "weights, what earns dividends) against keep-alive (a lone self-weight that only keeps the validator active).",
        [
            (
                'sum by (kind) (increase(validator_chain_weight_submissions_total{job=~"$job", '
                'outcome=~"set|commit"}[6h]))',
                "{{kind}}",
            )
        ],
        width=24,
    )
    return {
        "title": "Consensus validator",
        "uid": "consensus-validator",
        "description": "The validator daemon's Prometheus metrics (docs/deploy.md, Dashboard)",
        "tags": ["validator", "bittensor"],
        "editable": True,
        "schemaVersion": 39,
        "version": 1,
        "refresh": "1m",
        "time": {"from": "now-24h", "to": "now"},
        "timezone": "utc",
        "templating": {
            "list": [
                {
                    "name": "datasource",
                    "label": "Prometheus",
                    "description": "The Prometheus that scrapes the daemon (docs/deploy.md)",
                    "type": "datasource",
                    "query": "prometheus",
                    "current": {},
                    "hide": 0,
                    "refresh": 1,
                },
                {
                    "name": "job",
                    "label": "job",
                    "type": "query",
                    "datasource": DS,
                    "query": "label_values(validator_last_round_sequence, job)",
                    "includeAll": True,
                    "multi": True,
                    "current": {"text": "All", "value": "$__all"},
                    "refresh": 1,
                },
            ]
        },
        "annotations": {"list": []},
        "panels": d.panels,
    }


def render() -> str:
    return json.dumps(dashboard(), indent=2) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="only compare with the file")
    args = parser.parse_args(argv)
    text = render()
    if args.check:
        same = OUT.is_file() and OUT.read_text() == text
        print(f"{OUT.name}: {'up to date' if same else 'differs: run python scripts/grafana_dashboard.py'}")
        return 0 if same else 1
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(text)
    print(f"wrote {OUT.relative_to(Path.cwd()) if OUT.is_relative_to(Path.cwd()) else OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
