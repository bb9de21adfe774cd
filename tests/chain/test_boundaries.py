"""chain/ keeps the SDK at its edge: its importers (chain.sdk*, the test chain), nothing needs it but the edge, no env reads."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.helpers import imported_top_levels, run_without_sdk

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("chain", "consensus", "emissions", "embedding", "storage", "lm", "judge", "narrative", "validator")
SDK = {"bittensor", "bittensor_core", "bittensor_wallet", "websockets"}
# the edge (chain/sdk.py with its connection and its keys, chain/sdk_client.py and chain/sdk_wallet.py) and the test chain
SDK_IMPORTERS = {
    "chain/sdk.py",
    "chain/sdk_client.py",
    "chain/sdk_wallet.py",
    "chain/testing/substrate.py",
    "chain/testing/metadata.py",  # the SDK's codec, imported when asked for
    "chain/testing/extrinsics.py",  # the SDK's extrinsic builder and sr25519
}


def test_only_the_edge_imports_the_sdk():
    importers = {
        str(p.relative_to(ROOT))
        for package in PACKAGES
        for p in (ROOT / package).rglob("*.py")
        if imported_top_levels(p) & SDK
    }
    assert importers == SDK_IMPORTERS


def test_chain_imports_no_validator_and_reads_no_environment():
    for path in sorted((ROOT / "chain").rglob("*.py")):
        assert "validator" not in imported_top_levels(path), path
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            assert not (isinstance(node, ast.Attribute) and node.attr in {"environ", "getenv", "putenv"}), path


def test_everything_but_the_edge_works_without_the_sdk():
    """In a fresh interpreter where the SDK cannot be imported: the pure parts work, the edge says what is missing."""
    run_without_sdk("""
        import chain
        from chain import epistula
        from chain.types import Hyperparameters, MetagraphSnapshot, Neuron
        hp = Hyperparameters(100, 1, 65535, 0, False)
        snap = MetagraphSnapshot(1, 10, 360, (Neuron(0, "v", "c", None, True, 1.0, 0),
                                             Neuron(1, "m", "c", "1.2.3.4:5", False, 0.0, 0)), hp)
        assert chain.weight_vector({"m": 1.0}, snap, "v").u16 == (65535,)
        assert chain.weights_due(block=10, tempo=360, weights_rate_limit=100, last_update=None).due
        verifier = epistula.EpistulaVerifier("m", epistula.KnownSigners({"v": 1.0}))
        assert verifier.check({}, b"") == "unsigned request"
        for attempt in (lambda: chain.open_chain("test", 1),
                        lambda: verifier.check({**epistula.sign_request(type("K", (), {
                            "ss58_address": "v", "sign": lambda self, m: b"x" * 64})(), b"", "m")}, b"")):
            try:
                attempt()
            except chain.PermanentChainError as exc:
                assert exc.kind == "extra not installed", exc.kind
            else:
                raise AssertionError("the edge loaded without the SDK")
    """)
