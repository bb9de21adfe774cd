"""A real two-node Ray cluster and a real S3 store: whatif and replay across both nodes equal in-process.

CI starts the cluster (``scripts/ray_cluster.py``, in ``.ci/run``) with the S3
server's credentials in its environment and exports its address as
``VALIDATOR_TEST_RAY_ADDRESS``; without it this module starts one itself and
stops it at the end. The workers read the credentials from their own
environment: the task arguments carry none.
"""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from storage.codec import dumps
from tests.storage.conftest import _CI_SERVER, S3Endpoint, load_s3_server
from tests.validator.test_daemon import ANSWERS, ScriptedQuery, make
from validator.replaying.ray_engine import RayExecutor, RayOptions

pytestmark = pytest.mark.slow
ray = pytest.importorskip("ray")

ROOT = Path(__file__).resolve().parents[2]
ADDRESS = os.environ.get("VALIDATOR_TEST_RAY_ADDRESS", "")  # read now: clean_env drops VALIDATOR_* per test
# Ray reads RAY_AUTH_MODE once, when it is imported (above): a driver imported without it cannot join a cluster with
# token authentication, so the cluster this module starts itself runs without (CI's, started before pytest, with)
DRIVER_AUTH = os.environ.get("RAY_AUTH_MODE", "")
GROUPS = {text: "mutable" for text in ANSWERS.values()}
ROUNDS = 12


def fake_embedder(_settings):
    from consensus.fake import FakeEmbedder

    return FakeEmbedder(groups=GROUPS)


@pytest.fixture(scope="module")
def s3(tmp_path_factory):
    if _CI_SERVER["VALIDATOR_TEST_S3_ENDPOINT"]:
        yield S3Endpoint(
            _CI_SERVER["VALIDATOR_TEST_S3_ENDPOINT"],
            _CI_SERVER["VALIDATOR_TEST_S3_ACCESS_KEY_ID"],
            _CI_SERVER["VALIDATOR_TEST_S3_SECRET_ACCESS_KEY"],
        )
        return
    server_module = load_s3_server()
    server = server_module.start(tmp_path_factory.mktemp("s3"))
    try:
        yield S3Endpoint(server.endpoint, server.access_key, server.secret_key)
    finally:
        server_module.stop(server, kill=True)


@pytest.fixture(scope="module")
def cluster(s3, tmp_path_factory):
    """The address of a running two-node cluster whose workers hold the S3 credentials in their environment."""
    import cloudpickle

    cloudpickle.register_pickle_by_value(sys.modules[__name__])  # the embedder factory travels by value
    address, root = ADDRESS, None
    if not address:
        root = tmp_path_factory.mktemp("ray-cluster")
        env = dict(os.environ, AWS_ACCESS_KEY_ID=s3.access_key, AWS_SECRET_ACCESS_KEY=s3.secret_key)
        script = [sys.executable, str(ROOT / "scripts" / "ray_cluster.py")]
        auth = [] if DRIVER_AUTH == "token" else ["--no-auth"]
        subprocess.run([*script, "start", "--dir", str(root), *auth], check=True, env=env, cwd=ROOT, timeout=900)
        out = subprocess.run([*script, "env", "--dir", str(root)], check=True, capture_output=True, text=True)
        exported = dict(line[len("export ") :].split("=", 1) for line in out.stdout.strip().splitlines())
        address = exported.pop("VALIDATOR_TEST_RAY_ADDRESS")
        saved = {name: os.environ.get(name) for name in exported}
        os.environ.update(exported)  # the cluster's token (RAY_AUTH_*), for this driver
    ray.init(address=address, logging_level="ERROR", log_to_driver=False)
    try:
        yield address
    finally:
        ray.shutdown()
        if root is not None:
            for name, value in saved.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value
        if root is not None:
            subprocess.run(
                [sys.executable, str(ROOT / "scripts" / "ray_cluster.py"), "stop", "--dir", str(root)],
                check=False,
                timeout=120,
            )


def s3_settings(s3, **daemon):
    from validator.settings import load_settings

    env = {
        "AWS_ACCESS_KEY_ID": s3.access_key,
        "AWS_SECRET_ACCESS_KEY": s3.secret_key,
        "VALIDATOR_S3__ENDPOINT_URL": s3.url,
        "VALIDATOR_DAEMON__INTERVAL_S": "0",
        **{f"VALIDATOR_DAEMON__{k.upper()}": str(v) for k, v in daemon.items()},
    }
    return load_settings(None, env=env, dotenv_path=None)


@pytest.fixture(scope="module")
def daemon_uri(s3, cluster):
    from validator.app import store_for

    uri = f"s3://cluster-{uuid.uuid4().hex[:10]}/validator"
    settings = s3_settings(s3)
    from storage.s3 import S3Store

    store = S3Store(uri[5:].split("/")[0], "validator", settings=settings.s3_settings(), create_bucket=True)
    clock = iter(1_700_000_000.0 + 60 * i for i in range(ROUNDS + 2))
    daemon = make(store, fake_embedder(None), ScriptedQuery({"dave": "timeout"}), heatmap=True)
    daemon.clock = lambda: next(clock)
    daemon.run(rounds=ROUNDS)
    assert len(store_for(uri, settings).list("rounds/")) >= 4 * ROUNDS
    return uri


def test_cluster_has_two_nodes(cluster):
    alive = [n for n in ray.nodes() if n["Alive"]]
    assert len(alive) == 2 and int(ray.cluster_resources()["CPU"]) == 2


def test_whatif_across_both_nodes_equals_in_process(s3, daemon_uri):
    from validator.app import store_for
    from validator.replaying.whatif_run import run_whatif

    new = s3_settings(s3, moving_average_alpha=0.2, quorum=3)
    store = store_for(daemon_uri, new)
    inproc = run_whatif(store, new, fake_embedder(None), whatif_id="same", source=daemon_uri)
    # the same id on the same store: every record the cluster computes must equal, byte for byte, the one
    # the in-process run wrote (a different one would be a WriteConflict, a failed round); the workers get
    # the settings without secrets (RayExecutor) and read their own
    on_ray = run_whatif(
        store,
        new,
        whatif_id="same",
        source=daemon_uri,
        executor=RayExecutor(daemon_uri, RayOptions(max_in_flight=4), embedder_factory=fake_embedder),
    )
    assert not on_ray.failures and len(on_ray.rounds) == ROUNDS
    assert dumps(inproc.to_json()) == dumps(on_ray.to_json())


def test_replay_across_both_nodes_equals_in_process(s3, daemon_uri):
    from storage import keys
    from validator.app import store_for
    from validator.replaying.replay_run import replay_store

    new = s3_settings(s3, quorum=4)
    store = store_for(daemon_uri, new)
    before = replay_store(store, new, fake_embedder(None), replay_id="in")
    after = replay_store(
        store, new, replay_id="on-ray", executor=RayExecutor(daemon_uri, embedder_factory=fake_embedder)
    )
    assert not after.failures and [d.to_json() for d in before.diffs] == [d.to_json() for d in after.diffs]
    for d in after.diffs:
        a = store.get(keys.replay_evaluation(d.round_id, "in")).replace(b'"in"', b'"on-ray"')
        assert a == store.get(keys.replay_evaluation(d.round_id, "on-ray"))
