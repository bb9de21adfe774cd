"""The SDK surface chain/ relies on: if a bittensor upgrade changes any of it, these fail and say what moved.

chain/sdk.py is written against bittensor 11.3.0 and chain/testing/ serves
what that version reads. Each test names the SDK place it pins.
"""

from __future__ import annotations

import dataclasses
import importlib.metadata
import inspect
import re
from pathlib import Path

import pytest

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

bt = pytest.importorskip("bittensor")

import bittensor_core  # noqa: E402
from bittensor import metagraph as sdk_metagraph  # noqa: E402
from bittensor.intents import weights as sdk_weights  # noqa: E402
from bittensor.intents.plan import Plan  # noqa: E402
from bittensor.reads.base import REGISTRY  # noqa: E402

from chain import base, sdk  # noqa: E402
from chain.testing import InMemorySubstrate  # noqa: E402
from chain.testing.subnet import metagraph_record  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


def params(fn) -> list[str]:
    return list(inspect.signature(fn).parameters)


def test_the_installed_sdk_is_the_pinned_one():
    extra = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]["chain"]
    assert extra == [f"bittensor=={sdk.SDK_VERSION}"]
    assert importlib.metadata.version("bittensor") == sdk.SDK_VERSION


def test_client_surface():
    assert params(bt.Client.__init__)[:2] == ["self", "network"]
    assert inspect.signature(bt.Client.__init__).parameters["substrate"].kind is inspect.Parameter.KEYWORD_ONLY
    assert params(bt.Client.at) == ["self", "block"]
    assert params(bt.Client.plan) == ["self", "intent", "wallet", "kwargs"]
    assert params(bt.Client.execute) == ["self", "intent", "wallet", "kwargs"]
    from bittensor.executor import Executor

    execute = inspect.signature(Executor.execute).parameters
    assert {"wait_for_inclusion", "wait_for_finalization"} <= set(execute)
    for name in ("connect", "close"):
        assert inspect.iscoroutinefunction(getattr(bt.Client, name))


def test_reads_we_call():
    from bittensor.namespaces import Subnets

    assert params(Subnets.metagraph) == ["self", "netuid", "block", "commitments"]
    assert params(Subnets.commit_reveal_enabled) == ["self", "netuid", "block"]
    for name in ("weights_rate_limit", "min_allowed_weights", "max_weight_limit"):
        assert REGISTRY[name].category == "Hyperparameters" and REGISTRY[name].params == {"netuid": "integer"}
    st = bt.storage.SubtensorModule
    assert (st.WeightsVersionKey[:2], st.ActivityCutoff[:2]) == (
        ("SubtensorModule", "WeightsVersionKey"),
        ("SubtensorModule", "ActivityCutoff"),
    )


def test_the_metagraph_fields_we_read():
    neuron = {f.name for f in dataclasses.fields(bt.MetagraphNeuron)}
    assert {
        "uid",
        "hotkey",
        "coldkey",
        "axon",
        "validator_permit",
        "total_stake",
        "last_update",
        "block_at_registration",
        "active",
    } <= neuron
    assert {"block", "tempo", "neurons", "owner_hotkey"} <= {f.name for f in dataclasses.fields(bt.Metagraph)}


def test_the_in_memory_metagraph_serves_every_key_the_sdk_decodes():
    source = inspect.getsource(sdk_metagraph._build)
    read = {a or b or c for a, b, c in re.findall(r'column\("(\w+)"\)|graph\["(\w+)"\]|graph\.get\("(\w+)"\)', source)}
    optional = {"collateral_locked", "collateral_min", "collateral_earned"}  # spec >= 435 only; None before
    sub = InMemorySubstrate()
    sub.add_subnet(1, owner_hotkey="a", owner_coldkey="a")
    assert read - optional <= set(metagraph_record(sub.subnets[1], sub.block)), (
        "metagraph.py reads keys we do not serve"
    )


def test_the_in_memory_chain_serves_every_storage_item_set_weights_reads():
    read = set(re.findall(r"\bst\.(\w+)", inspect.getsource(sdk_weights)))
    assert read == {
        "BlocksSinceLastStep",
        "CommitRevealWeightsEnabled",
        "LastEpochBlock",
        "LastUpdate",
        "MaxWeightsLimit",
        "MinAllowedWeights",
        "PendingEpochAt",
        "RevealPeriodEpochs",
        "SubnetEpochConsensus",
        "SubnetEpochIndex",
        "Tempo",
        "Uids",
        "ValidatorPermit",
        "WeightsSetRateLimit",
    }, "SetWeights reads other storage: serve it in chain/testing/substrate.py"


def test_set_weights_intent_and_the_calls_it_builds():
    fields = {f.name: f for f in dataclasses.fields(sdk_weights.SetWeights)}
    assert {"netuid", "uids", "weights", "mechid", "version_key"} <= set(fields)
    assert sdk_weights.SetWeights.signer == "hotkey" and sdk_weights.DEFAULT_COMMIT_REVEAL_VERSION == 4
    assert params(bt.calls.SubtensorModule.set_mechanism_weights) == [
        "netuid",
        "mecid",
        "dests",
        "weights",
        "version_key",
    ]
    assert params(bt.calls.SubtensorModule.commit_timelocked_mechanism_weights) == [
        "netuid",
        "mecid",
        "commit",
        "reveal_round",
        "commit_reveal_version",
    ]
    # what chain.weights repeats, and tests/chain/test_weights.py compares against
    assert params(sdk_weights.clip_to_max_weight) == ["weights", "limit"]
    assert params(sdk_weights.normalize) == ["uids", "weights"]
    assert params(sdk_weights._conform) == ["uids", "weights", "preflight", "netuid", "raw_u16"]
    assert [f.name for f in dataclasses.fields(sdk_weights._Preflight)] == [
        "uid",
        "commit_reveal",
        "min_allowed_weights",
        "max_weight_limit",
    ]


def test_results_plans_and_errors():
    assert {"call", "extras", "fee", "effects", "warnings", "violations", "signer_address"} <= {
        f.name for f in dataclasses.fields(Plan)
    }
    assert {"success", "message", "block_hash", "extrinsic_id", "error", "data"} <= {
        f.name for f in dataclasses.fields(bt.ExtrinsicResult)
    }
    error = bt.ChainError("x", "NeuronNoValidatorPermit")
    assert (error.name, error.code.value) == ("NeuronNoValidatorPermit", "not_authorized")
    codes = {c.value for c in bt.ErrorCode}
    assert set(sdk._PERMANENT_CODES) | sdk._REJECTED_CODES <= codes
    from bittensor._generated.errors import ERRORS

    names = {info.name for info in ERRORS.values()}
    assert set(sdk._PERMANENT_NAMES) - {"NotRegistered"} <= names


def test_the_substrate_protocol_is_fully_implemented_by_the_in_memory_chain():
    """A method the SDK adds to its Substrate protocol must be added to chain/testing/substrate.py (or this says which)."""
    wanted = {name for name, value in vars(bt.Substrate).items() if callable(value) and not name.startswith("_")}
    missing = sorted(wanted - set(dir(InMemorySubstrate)))
    assert not missing, f"InMemorySubstrate lacks {missing}"
    for name in sorted(wanted):
        theirs, ours = getattr(bt.Substrate, name), getattr(InMemorySubstrate, name)
        assert inspect.iscoroutinefunction(theirs) == inspect.iscoroutinefunction(ours) or inspect.isasyncgenfunction(
            ours
        ), name
        positional = [
            p
            for p in params(theirs)
            if inspect.signature(theirs).parameters[p].kind
            in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.POSITIONAL_ONLY)
        ]
        assert params(ours)[: len(positional)] == positional, name


def test_keys_and_networks():
    pair = bittensor_core.Keypair.create_from_uri("//Alice")
    assert pair.ss58_address == "5GrwvaEF5zXb26Fz9rcQpDWS57CtERHpNehXCPcNoHGKutQY"
    assert len(pair.sign(b"m")) == 64
    assert re.search(
        r"verify\(message, signature, ss58_address", bittensor_core.verify.__doc__ or ""
    ) or bittensor_core.verify(b"m", pair.sign(b"m"), pair.ss58_address)
    from bittensor.settings import NETWORKS

    assert set(base.NETWORKS) == set(NETWORKS)
