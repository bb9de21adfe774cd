"""The chain's weather as states, not exits: a permit lost and regained, a chain silent at start-up; who is asked;
and the chain metrics as the metrics endpoint serves them (the in-memory chain, the pool's miners on loopback)."""

from __future__ import annotations

import math
import shutil
import socket
import subprocess
import threading
import time
import urllib.request
from pathlib import Path

import pytest
import yaml
from prometheus_client.parser import text_string_to_metric_families

pytest.importorskip("bittensor")

from chain.errors import TransientChainError
from chain.testing import InMemorySubstrate
from chain.types import Hyperparameters, MetagraphSnapshot, Neuron
from storage import keys as store_keys
from storage.memory import MemoryStore
from tests.validator.test_chain_daemon import (  # noqa: F401  (fixtures)
    PROMPTS,
    TEMPO,
    Clock,
    advance,
    keys,
    on_chain,
    one_round,
    pool,
    settings,
    subnet,
)
from validator.daemon import chain as chain_mode
from validator.daemon.chain.attempts import load_attempts
from validator.daemon.chain.edge import checked_snapshot
from validator.daemon.chain.metagraph_miners import specs_from
from validator.daemon.daemon import Daemon
from validator.daemon.prometheus import Metrics


def scrape(port: int) -> dict[str, float]:
    """GET the metrics endpoint, as curl would: the chain's samples by name (labels kept)."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as reply:
        text = reply.read().decode()
    return {
        name: float(value)
        for name, _, value in (line.rpartition(" ") for line in text.splitlines())
        if name.startswith("validator_chain_")
    }


def test_a_permit_lost_and_regained_across_three_refreshes(keys, pool, on_chain, embedder):  # noqa: F811
    sub = subnet(keys, pool)
    sub.subnets[1].owner_hotkey = keys["owner"]  # the owner may set weights without a permit: not us here
    me = sub.subnets[1].neurons[0]  # what the last epoch made of our uid (this chain runs no Yuma Consensus)
    me.validator_trust, me.dividends, me.incentive, me.emission = 0.93, 0.4, 0.0, 12.5
    on_chain(sub)
    store, clock, metrics = MemoryStore(), Clock(), Metrics()
    s = settings(set_weights="true", refresh_blocks=TEMPO)
    lines: list[str] = []
    _, port = metrics.serve(0)
    try:
        with chain_mode.session(s) as session:
            daemon = Daemon(
                store=store, embedder=embedder, settings=s, prompts=PROMPTS, query=session.miners, clock=clock,
                metrics=metrics,
            )  # fmt: skip
            session.start(daemon, store, background=False, on_line=lines.append)
            one_round(daemon, session)
            landed = len(sub.extrinsics)
            assert landed == 1 and sub.extrinsics[-1]["success"]
            seen = scrape(port)
            assert seen["validator_chain_permit"] == 1.0 and seen["validator_chain_stake"] == 1000.0
            assert seen["validator_chain_weights_set_block"] == sub.extrinsics[-1]["block"]
            assert seen["validator_chain_weights_set_timestamp_seconds"] == clock.t
            assert seen['validator_chain_weight_submissions_total{kind="ledger",outcome="set"}'] == 1.0
            assert seen['validator_chain_weight_submissions_total{kind="keep-alive",outcome="set"}'] == 0.0
            assert seen["validator_chain_keepalive_streak"] == 0.0
            assert seen["validator_chain_vtrust"] == pytest.approx(0.93, abs=1 / 65535)
            assert seen["validator_chain_dividends"] == pytest.approx(0.4, abs=1 / 65535)
            assert seen["validator_chain_incentive"] == 0.0 and seen["validator_chain_emission"] == 12.5
            last_update = sub.subnets[1].neurons[0].last_update
            left = last_update + 5000 - session.mode.estimated_block()
            assert seen["validator_chain_blocks_until_inactive"] == left and 4990 < left <= 5001
            assert seen["validator_chain_metagraph_age_seconds"] == pytest.approx(0.0)

            sub.subnets[1].neurons[0].validator_permit = False  # the next epoch gave it to someone else
            for _ in range(
                2
            ):  # two refreshes without a permit: rounds go on, only the self-weight that keeps it active
                advance(sub, clock, TEMPO + 1)
                one_round(daemon, session)
                one_round(daemon, session)
                assert session.fatal is None and session.mode.standing == "no validator permit"
                assert sub.extrinsics[-1]["params"]["dests"] == [0] and sub.extrinsics[-1]["success"]
            assert len(sub.extrinsics) == landed + 2
            assert sum("has no validator permit" in line for line in lines) == 1  # said once
            assert sum("keep-alive self-weight: no validator permit" in line for line in lines) == 1
            seen = scrape(port)
            assert seen["validator_chain_permit"] == 0.0
            assert seen['validator_chain_weight_submissions_total{kind="keep-alive",outcome="set"}'] == 2.0
            assert seen["validator_chain_keepalive_streak"] == 2.0  # two landed, neither weighs a miner
            # the self-weights kept it active: counted from the last one
            assert seen["validator_chain_blocks_until_inactive"] == (
                sub.subnets[1].neurons[0].last_update + 5000 - session.mode.estimated_block()
            )

            sub.subnets[1].neurons[0].validator_permit = True  # and back
            advance(sub, clock, TEMPO + 1)
            one_round(daemon, session)
            assert session.mode.standing == "ok" and any("weights resume" in line for line in lines)
            assert len(sub.extrinsics) == landed + 3 and sub.extrinsics[-1]["success"]
            assert len(sub.extrinsics[-1]["params"]["dests"]) > 1  # the ledger's miners again
            seen = scrape(port)
            assert seen["validator_chain_weights_set_block"] == sub.extrinsics[-1]["block"]
            assert seen["validator_chain_keepalive_streak"] == 0.0  # the miners' weights landed again
        assert daemon.ledger.last_sequence == 6
        assert all(store.exists(store_keys.evaluation(daemon.round_id(n))) for n in range(1, 7))
        assert [(a.outcome, a.kind) for a in load_attempts(store, 1)][1:] == [
            ("set", "keep-alive"), ("set", "keep-alive"), ("set", "ledger")
        ]  # fmt: skip
    finally:
        metrics.close()


class Silent:
    """A chain edge that never answers, and a clock that the waits move (no real sleeping)."""

    hotkey = "5Validator"

    def __init__(self) -> None:
        self.now = 0.0

    def signer(self):
        return object()

    def snapshot(self):
        raise TransientChainError("the chain did not answer")

    def clock(self) -> float:
        return self.now

    def wait(self, seconds: float) -> bool:
        self.now += seconds
        return False


def test_a_chain_silent_at_start_up_says_so_every_10_s_and_gives_up_at_the_deadline():
    edge, lines = Silent(), []
    stop = type("Stop", (), {"wait": lambda self, s: edge.wait(s)})()
    with pytest.raises(TransientChainError, match="did not answer within 35 s of start-up"):
        checked_snapshot(edge, settings(startup_wait_s=35).chain, stop=stop, on_line=lines.append, clock=edge.clock)  # type: ignore[arg-type]
    assert [line.split("(")[1].split(",")[0] for line in lines] == ["0 s", "10 s", "20 s", "30 s"]
    assert edge.now == 35.0


def neuron(uid: int, hotkey: str, axon: str | None, *, permit: bool = False, stake: float = 0.0) -> Neuron:
    return Neuron(uid, hotkey, f"cold-{hotkey}", axon, permit, stake, 0)


def test_only_miners_are_asked():
    snap = MetagraphSnapshot(
        1,
        100,
        360,
        (
            neuron(0, "me", "8.8.8.8:8091", permit=True, stake=100.0),  # the validator serves an axon too
            neuron(1, "miner", "8.8.4.4:8091"),
            neuron(2, "validator", "1.1.1.1:8091", permit=True, stake=50_000.0),
            neuron(3, "small-permit", "1.0.0.1:8091", permit=True, stake=10.0),  # a permit, little stake: a miner
            neuron(4, "loopback", "127.0.0.1:8091"),
            neuron(5, "private", "10.1.2.3:8091"),
            neuron(6, "v6-private", "[fd00::1]:8091"),
            neuron(7, "unspecified", "0.0.0.0:8091"),
            neuron(8, "v6-public", "[2001:4860:4860::8888]:8091"),
            neuron(9, "nothing", None),
        ),
        Hyperparameters(100, 1, 65535, 0, False),
    )

    def asked(**kw):
        return [spec.hotkey for spec in specs_from(snap, "me", model="m", base_path="/v1", **kw)]

    public = asked(validator_stake=4096.0, skip_private=True)
    assert public == ["miner", "small-permit", "v6-public"]  # not itself, not a validator, not a private address
    assert asked(validator_stake=4096.0, skip_private=False) == [
        "miner", "small-permit", "loopback", "private", "v6-private", "unspecified", "v6-public",
    ]  # fmt: skip
    assert "me" not in asked()  # whatever the settings, the validator never asks itself


FINNEY = "0x2f0555cc76fc2840a25a6ea3b9637146806f1f44b090c175ffde2a7e5ab36c03"
DEV = "0x" + "00" * 32  # a development chain's own genesis


@pytest.mark.parametrize(
    "network, genesis, private_axons, skips",
    [("finney", FINNEY, "auto", True), ("test", None, "auto", True), ("local", DEV, "auto", False),
     ("local", DEV, "skip", True), ("finney", FINNEY, "ask", False),
     # a finney validator with its own lite node: the node's address says nothing about the chain it follows
     ("local", FINNEY, "auto", True), ("ws://127.0.0.1:9944", FINNEY, "auto", True),
     ("ws://10.0.0.5:9944", FINNEY.upper().replace("0X", "0x"), "auto", True), ("ws://localhost:9944", DEV, "auto", False),
     ("ws://127.0.0.1:9944", DEV, "auto", False), ("wss://entrypoint-finney.opentensor.ai:443", None, "auto", True),
     ("ws://1.2.3.4:9944", None, "auto", True)],
)  # fmt: skip
def test_private_axons_are_skipped_on_public_chains_whatever_the_nodes_address(network, genesis, private_axons, skips):
    chain = settings(network=network, private_axons=private_axons, hotkey_uri="").chain
    assert chain.skips_private_axons(genesis) is skips


def test_a_finney_node_on_loopback_never_makes_the_daemon_ask_private_axons(keys, pool, on_chain):  # noqa: F811
    sub = subnet(keys, pool)  # every miner's axon is on 127.0.0.1
    on_chain(sub)
    with chain_mode.session(settings()) as session:
        assert len(session.miners.specs) == 8  # a development chain: its miners live on loopback
    sub.genesis = FINNEY  # the same node address, following finney (with a wallet's hotkey: the edge is //Alice's)
    with chain_mode.session(settings(hotkey_uri="")) as session:
        assert session.miners.specs == ()
        session.miners.update(sub_snapshot := session.edge.snapshot(), session.edge.hotkey)
        assert session.miners.specs == () and len(sub_snapshot.served()) == 8  # served, never asked


def test_nan_until_known():
    from prometheus_client import CollectorRegistry

    from validator.daemon.chain.metrics import ChainMetrics

    m = ChainMetrics(CollectorRegistry())
    assert math.isnan(m.permit._value.get()) and math.isnan(m.weights_set_block._value.get())
    assert math.isnan(m.vtrust._value.get()) and math.isnan(m.dividends._value.get())
    m.standing(permit=None, stake=None, neuron=None)  # not registered: its standing is unknown, not 0
    assert math.isnan(m.vtrust._value.get()) and math.isnan(m.emission._value.get())


def test_the_chain_health_of_weights_show():
    from validator.daemon.chain.show import chain_health

    snap = MetagraphSnapshot(
        1, 1200, 360, (Neuron(0, "me", "c", None, True, 500.0, 1000),), Hyperparameters(100, 1, 65535, 0, False, 5000)
    )
    health = chain_health(snap, "me", [])
    assert (health.permit, health.stake, health.blocks_until_inactive, health.last_weights_block) == (
        True, 500.0, 4800, None,
    )  # fmt: skip
    assert health.line() == (
        "chain at block 1200: permit yes, stake 500, inactive in 4800 blocks, last weights landed: none from this store"
    )
    gone = chain_health(snap, "someone-else", [])
    assert not gone.registered and gone.blocks_until_inactive is None and "not registered" in gone.line()


# ---- the alert rules fed what the daemon exported ---------------------------------------------------------------

RULES = Path(__file__).resolve().parents[2] / "deploy" / "prometheus" / "alerts.yml"
FINNEY_TEMPO = 360  # blocks (about 72 min at 12 s)
ROUND_BLOCKS = 60  # one round every 12 minutes of 12 s blocks: six a tempo
SCRAPE = {"job": "validator", "instance": "127.0.0.1:9478"}


def dead_port() -> int:
    """A loopback port nothing listens on: every request to it is refused."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def promtool_series(scrapes: list[bytes], per_scrape: int) -> list[dict[str, str]]:
    """The daemon's exposition texts, one per scrape, as promtool's input series at a 1-minute interval: each
    sample held for ``per_scrape`` minutes (as Prometheus would see it scraping every minute), absent (``_``) before
    it first appears."""
    values: dict[str, list[str]] = {}
    for at, text in enumerate(scrapes):
        for family in text_string_to_metric_families(text.decode()):
            for sample in family.samples:
                if sample.name.endswith("_created"):
                    continue
                labels = {**sample.labels, **SCRAPE}
                key = sample.name + "{" + ", ".join(f'{k}="{v}"' for k, v in sorted(labels.items())) + "}"
                value = "NaN" if math.isnan(sample.value) else repr(float(sample.value))
                values.setdefault(key, ["_"] * (at * per_scrape)).extend([value] * per_scrape)
    return [{"series": key, "values": " ".join(v)} for key, v in values.items()]


def alerts_firing(rules: dict, name: str) -> list[dict]:
    rule = next(r for g in rules["groups"] for r in g["rules"] if r["alert"] == name)
    return [
        {
            "exp_labels": {**rule.get("labels", {}), "alertname": name, **SCRAPE},
            "exp_annotations": rule["annotations"],
        }
    ]


@pytest.mark.skipif(shutil.which("promtool") is None, reason="promtool (Debian's prometheus package; .ci/run)")
def test_every_miner_failing_for_three_tempos_shows_keep_alives_only_and_the_alerts_fire(
    keys,  # noqa: F811
    on_chain,  # noqa: F811
    embedder,
    tmp_path,
):
    sub = InMemorySubstrate(block=1000)
    sub.add_subnet(
        1, owner_hotkey=keys["alice"], owner_coldkey=keys["alice"], tempo=FINNEY_TEMPO, weights_rate_limit=100
    )
    sub.register(1, keys["alice"], keys["alice"], stake=1000.0, validator_permit=True)
    me = sub.subnets[1].neurons[0]
    me.validator_trust, me.dividends, me.emission = 0.9, 0.5, 40.0  # what it earned before its miners went away
    port = dead_port()
    for name in ("bob", "charlie", "dave", "eve"):  # they serve /v1 nowhere: every request refused
        sub.register(1, keys[name], keys[name], axon=f"127.0.0.1:{port}")
    on_chain(sub)
    store, clock, metrics = MemoryStore(), Clock(), Metrics()
    s = settings(set_weights="true", refresh_blocks=ROUND_BLOCKS)
    scrapes = [metrics.render()]
    with chain_mode.session(s) as session:
        daemon = Daemon(
            store=store, embedder=embedder, settings=s, prompts=PROMPTS, query=session.miners, clock=clock,
            metrics=metrics,
        )  # fmt: skip
        session.start(daemon, store, background=False)
        epoch = sub.subnets[1].last_epoch_block
        for _ in range(3 * FINNEY_TEMPO // ROUND_BLOCKS):
            one_round(daemon, session)
            scrapes.append(metrics.render())
            read = me.validator_trust  # what the last metagraph read saw
            advance(sub, clock, ROUND_BLOCKS)
            if sub.subnets[1].last_epoch_block != epoch:  # an epoch: self-weights are masked, the standing decays
                epoch = sub.subnets[1].last_epoch_block
                me.validator_trust, me.dividends, me.emission = me.validator_trust / 2, me.dividends / 2, 0.0
    landed = [a for a in load_attempts(store, 1) if a.landed]
    assert len(landed) == 3 and {a.kind for a in landed} == {"keep-alive"}  # one a tempo, each a self-weight
    samples = {
        (s.name, s.labels.get("kind"), s.labels.get("outcome")): s.value
        for family in text_string_to_metric_families(scrapes[-1].decode())
        for s in family.samples
    }
    assert samples[("validator_chain_weight_submissions_total", "keep-alive", "set")] == 3
    assert sum(v for (n, kind, _), v in samples.items() if n == "validator_chain_weight_submissions_total" and kind in (
        "ledger", "padded")) == 0  # fmt: skip
    assert samples[("validator_chain_keepalive_streak", None, None)] == 3
    assert samples[("validator_miner_answers_total", None, None)] == 0
    assert samples[("validator_chain_vtrust", None, None)] == pytest.approx(read, abs=1 / 65535)
    assert samples[("validator_chain_vtrust", None, None)] < 0.9 / 2

    rules = yaml.safe_load(RULES.read_text())
    minutes = ROUND_BLOCKS * 12 // 60  # each scrape holds for one round's 12 minutes
    end = f"{(len(scrapes) - 1) * minutes}m"
    (tmp_path / "alerts.yml").write_text(RULES.read_text())
    test = {
        "rule_files": ["alerts.yml"],
        "evaluation_interval": "1m",
        "tests": [
            {
                "interval": "1m",
                "input_series": promtool_series(scrapes, minutes),
                "alert_rule_test": [
                    {"eval_time": "10m", "alertname": "ValidatorOnlyKeepAlives", "exp_alerts": []},
                    {"eval_time": "10m", "alertname": "ValidatorAllMinersFailing", "exp_alerts": []},
                    {
                        "eval_time": end,
                        "alertname": "ValidatorOnlyKeepAlives",
                        "exp_alerts": alerts_firing(rules, "ValidatorOnlyKeepAlives"),
                    },
                    {
                        "eval_time": end,
                        "alertname": "ValidatorAllMinersFailing",
                        "exp_alerts": alerts_firing(rules, "ValidatorAllMinersFailing"),
                    },
                    {"eval_time": end, "alertname": "ValidatorVtrustLow", "exp_alerts": []},  # not 3 h under yet
                    {"eval_time": end, "alertname": "ValidatorWeightsNotLanding", "exp_alerts": []},
                ],  # fmt: skip
            }
        ],
    }
    (tmp_path / "test.yml").write_text(yaml.safe_dump(test, sort_keys=False))
    run = subprocess.run(["promtool", "test", "rules", "test.yml"], cwd=tmp_path, capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr


def test_metrics_are_served_while_the_chain_is_silent_at_boot(keys, on_chain, monkeypatch, tmp_path):  # noqa: F811
    """``validator daemon --netuid`` against a chain that never answers: /metrics answers within the wait, and the
    metagraph's age counts from the start (ValidatorChainSilent can fire), before the daemon gives up (exit 2)."""
    from validator.cli.main import main

    sub = InMemorySubstrate(block=1000)
    sub.add_subnet(1, owner_hotkey=keys["alice"], owner_coldkey=keys["alice"])
    sub.register(1, keys["alice"], keys["alice"], stake=1000.0, validator_permit=True)
    sub.outage = True
    on_chain(sub)
    monkeypatch.setenv("VALIDATOR_CHAIN__HOTKEY_URI", "//Alice")
    monkeypatch.setenv("VALIDATOR_CHAIN__STARTUP_WAIT_S", "4")
    port = dead_port()
    seen: list[dict[str, float]] = []

    def watch() -> None:
        deadline = time.monotonic() + 4
        while time.monotonic() < deadline and not seen:
            try:
                seen.append(scrape(port))
            except OSError:
                time.sleep(0.05)

    watcher = threading.Thread(target=watch)
    watcher.start()
    args = ["daemon", "--netuid", "1", "--network", "local", "--no-lm", "--metrics-port", str(port)]
    code = main([*args, "--store", str(tmp_path / "rounds")])
    watcher.join()
    assert code == 2  # the chain never answered within [chain] startup_wait_s
    assert seen, "no /metrics while the chain was silent at boot"
    assert 0 <= seen[0]["validator_chain_metagraph_age_seconds"] < 4  # counted from the start, not NaN
    assert math.isnan(seen[0]["validator_chain_permit"])


# ---- versions and mechanisms ----------------------------------------------------------------------------------


def test_the_version_key_is_the_operators_not_the_chains(keys, pool, on_chain, embedder):  # noqa: F811
    from chain.weights import spec_version
    from validator import __version__

    assert spec_version("0.1.0") == 10 and spec_version("2.3.4") == 2034 and spec_version("0+unknown") == 0
    assert settings().chain.version_key == spec_version(__version__)  # the default: this package's version
    sub = subnet(keys, pool)
    on_chain(sub)
    s = settings(set_weights="true", weights_version="42")
    with chain_mode.session(s) as session:
        daemon = Daemon(store=MemoryStore(), embedder=embedder, settings=s, prompts=PROMPTS, query=session.miners,
                        clock=Clock())  # fmt: skip
        session.start(daemon, daemon.store, background=False)
        one_round(daemon, session)
    assert sub.extrinsics[-1]["success"] and sub.extrinsics[-1]["params"]["version_key"] == 42  # not the chain's 2


def test_a_subnet_owners_version_bump_stops_an_outdated_validator_visibly(keys, pool, on_chain, embedder):  # noqa: F811
    sub = subnet(keys, pool)
    sub.subnets[1].weights_version = 11  # the owner bumped it past this validator's 10
    on_chain(sub)
    s = settings(set_weights="true", weights_version="10")
    lines: list[str] = []
    with chain_mode.session(s) as session:
        daemon = Daemon(store=MemoryStore(), embedder=embedder, settings=s, prompts=PROMPTS, query=session.miners,
                        clock=Clock())  # fmt: skip
        session.start(daemon, daemon.store, background=False, on_line=lines.append)
        one_round(daemon, session)
    assert sub.extrinsics == []  # not sent: the chain would refuse it
    [attempt] = load_attempts(daemon.store, 1)
    assert attempt.outcome == "not sent" and "older than the subnet's weights_version 11" in attempt.problems[0]
    assert any("older than the subnet's weights_version 11" in line for line in lines)


def test_the_mechanism_is_a_setting(keys, pool, on_chain, embedder):  # noqa: F811
    sub = subnet(keys, pool)
    on_chain(sub)
    s = settings(set_weights="true", mechid="1")
    with chain_mode.session(s) as session:
        daemon = Daemon(store=MemoryStore(), embedder=embedder, settings=s, prompts=PROMPTS, query=session.miners,
                        clock=Clock())  # fmt: skip
        session.start(daemon, daemon.store, background=False)
        one_round(daemon, session)
    assert sub.extrinsics[-1]["params"]["mecid"] == 1
    assert sub.extrinsics[-1]["error"] == "MechanismDoesNotExist"  # this in-memory chain has mechanism 0 only


def test_a_commit_is_checked_on_chain_after_its_reveal_window(keys, pool, on_chain, embedder):  # noqa: F811
    sub = subnet(keys, pool, commit_reveal=True)
    on_chain(sub)
    store, clock, metrics = MemoryStore(), Clock(), Metrics()
    s = settings(set_weights="true", refresh_blocks=TEMPO)
    lines: list[str] = []
    with chain_mode.session(s) as session:
        daemon = Daemon(store=store, embedder=embedder, settings=s, prompts=PROMPTS, query=session.miners,
                        clock=clock, metrics=metrics)  # fmt: skip
        session.start(daemon, store, background=False, on_line=lines.append)
        one_round(daemon, session)
        [first] = load_attempts(store, 1)
        assert first.submission is not None and first.submission.method == "commit" and first.reveal == ""
        # the chain reveals it at the drand round (this chain cannot decrypt: the test plays the reveal)
        sub.subnets[1].weights[0] = list(zip(first.submission.uids, first.submission.weights_u16))
        for _ in range(3):  # past its window: two epochs
            advance(sub, clock, TEMPO + 1)
            one_round(daemon, session)
        checked = {a.attempt_id: a for a in load_attempts(store, 1)}
        assert checked[first.attempt_id].reveal == "revealed"
        second = [a for a in checked.values() if a.landed and a.reveal == ""][0]  # a commit still in its window
        sub.subnets[1].weights[0] = [(1, 65535)]  # what the epochs see is not what was committed since
        for _ in range(3):
            advance(sub, clock, TEMPO + 1)
            one_round(daemon, session)
    after = {a.attempt_id: a for a in load_attempts(store, 1)}
    assert after[second.attempt_id].reveal == "missing"
    assert any(f"committed in block {second.submission.block}" in line and "not revealed" in line for line in lines)
    samples = {
        (s.name, s.labels.get("outcome")): s.value
        for family in text_string_to_metric_families(metrics.render().decode())
        for s in family.samples
    }
    assert samples[("validator_chain_reveals_total", "missing")] >= 1
    assert samples[("validator_chain_reveals_total", "revealed")] >= 1


def test_a_refusal_before_sending_backs_off_to_the_next_interval(keys, pool, on_chain, embedder):  # noqa: F811
    """A Null-consensus subnet: the SDK refuses a self-weight without a permit before sending (not_authorized); the
    daemon tries again once per interval, not at every block."""
    sub = subnet(keys, pool, epoch_consensus="Null")
    sub.subnets[1].neurons[0].validator_permit = False
    on_chain(sub)
    store, clock = MemoryStore(), Clock()
    s = settings(set_weights="true", refresh_blocks=TEMPO)
    with chain_mode.session(s) as session:
        daemon = Daemon(store=store, embedder=embedder, settings=s, prompts=PROMPTS, query=session.miners,
                        clock=clock)  # fmt: skip
        session.start(daemon, store, background=False)
        for _ in range(2 * TEMPO):  # a round and a tick at every block, for two intervals
            one_round(daemon, session)
            advance(sub, clock, 1)
        assert session.fatal is None and session.mode.standing == "no validator permit"
    attempts = load_attempts(store, 1)
    assert sub.extrinsics == []  # nothing was ever sent
    assert 1 <= len(attempts) <= 2 and all(a.outcome == "refused" for a in attempts), [a.outcome for a in attempts]


def test_a_development_key_is_refused_on_a_public_chain(keys, pool, on_chain):  # noqa: F811
    from chain.errors import PermanentChainError
    from consensus.errors import ConfigError

    with pytest.raises(ConfigError, match="development URI on a public chain"):
        settings(network="finney")  # //Alice, by name: at load
    sub = subnet(keys, pool)
    sub.genesis = FINNEY  # a local node address that serves finney: at session start, from the genesis
    on_chain(sub)
    with pytest.raises(PermanentChainError, match="development URI on a public chain") as info:
        with chain_mode.session(settings()):
            pass
    assert info.value.kind == "wrong wallet" and "\n" not in str(info.value)
