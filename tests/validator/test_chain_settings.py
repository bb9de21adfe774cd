"""The [chain] settings: read from TOML, .env and VALIDATOR_CHAIN__*, checked at load, the hotkey URI secret."""

from __future__ import annotations

import pytest

from consensus.errors import ConfigError
from tests.helpers import run_without_sdk
from validator.settings import load_settings

URI = "//Alice-never-print-me"


def test_chain_mode_is_off_by_default_and_on_with_a_netuid(tmp_path):
    off = load_settings(None, env={}, dotenv_path=None).chain
    assert (off.enabled, off.signs, off.network, off.set_weights) == (False, False, "finney", False)
    dotenv = tmp_path / ".env"
    dotenv.write_text(f"VALIDATOR_CHAIN__NETUID=12\nVALIDATOR_CHAIN__HOTKEY_URI={URI}\n")
    on = load_settings(
        None,
        env={"VALIDATOR_CHAIN__NETWORK": "ws://127.0.0.1:9944", "VALIDATOR_CHAIN__SET_WEIGHTS": "true"},
        dotenv_path=dotenv,
    ).chain
    assert (on.enabled, on.netuid, on.network, on.set_weights, on.hotkey_uri) == (
        True,
        12,
        "ws://127.0.0.1:9944",
        True,
        URI,
    )
    assert URI not in repr(on)


def test_a_miners_file_signs_only_when_a_key_is_named():
    assert load_settings(None, env={"VALIDATOR_CHAIN__WALLET": "validator"}, dotenv_path=None).chain.signs
    assert not load_settings(None, env={"VALIDATOR_CHAIN__HOTKEY": "other"}, dotenv_path=None).chain.signs


@pytest.mark.parametrize(
    "env, field",
    [
        ({"VALIDATOR_CHAIN__NETWORK": "mainnet"}, "chain.network"),
        ({"VALIDATOR_CHAIN__NETUID": "-2"}, "chain.netuid"),
        ({"VALIDATOR_CHAIN__BASE_PATH": "v1"}, "chain.base_path"),
        ({"VALIDATOR_CHAIN__BLOCK_TIME_S": "0"}, "chain.block_time_s"),
    ],
)
def test_bad_values_stop_at_load_naming_the_field(env, field):
    with pytest.raises(ConfigError, match=field.replace(".", r"\.")):
        load_settings(None, env=env, dotenv_path=None)


def test_the_hotkey_uri_is_never_read_from_a_file(tmp_path):
    config = tmp_path / "v.toml"
    config.write_text(f'[chain]\nnetuid = 3\nhotkey_uri = "{URI}"\n')
    with pytest.raises(ConfigError, match="VALIDATOR_CHAIN__HOTKEY_URI") as info:
        load_settings(config, env={}, dotenv_path=None)
    assert URI not in str(info.value)
    config.write_text('[chain]\nnetuid = 3\nwallet = "validator"\n')
    assert load_settings(config, env={}, dotenv_path=None).chain.wallet == "validator"


def test_file_mode_needs_no_sdk():
    """In an interpreter where the SDK cannot be imported: the CLI, the miner client, the pool and chain mode's
    modules load, and opening chain mode says the extra is missing."""
    run_without_sdk("""
        from validator.cli.main import build_parser
        import minerpool, validator.daemon.chain, validator.miners.client
        from validator.daemon.chain import session
        from validator.settings import load_settings
        build_parser().parse_args(["daemon", "--netuid", "1", "--set-weights"])
        settings = load_settings(None, env={"VALIDATOR_CHAIN__NETUID": "1"}, dotenv_path=None)
        try:
            with session(settings):
                pass
        except OSError as exc:
            assert exc.kind == "extra not installed", exc
        else:
            raise AssertionError("chain mode opened without the SDK")
    """)
