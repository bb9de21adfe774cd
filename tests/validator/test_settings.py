import pytest

from consensus.errors import ConfigError
from validator.settings import load_settings


def test_defaults_are_the_seeds():
    s = load_settings(None, env={})
    assert s.consensus.consensus_threshold == 0.7 and s.consensus.lambda_factor == 1.0
    assert (s.consensus.weight_alignment, s.consensus.weight_quality, s.consensus.weight_confidence,
            s.consensus.weight_bonus) == (0.5, 0.2, 0.2, 0.1)
    assert s.emissions.consensus_multiplier == 1.2


def test_toml_then_dotenv_then_environment(tmp_path):
    cfg = tmp_path / "v.toml"
    cfg.write_text("[consensus]\nconsensus_threshold = 0.8\nlambda_factor = 0.5\n[emissions]\npool_units = 100\n")
    dotenv = tmp_path / ".env"
    dotenv.write_text("VALIDATOR_CONSENSUS__LAMBDA_FACTOR=0.25\nVALIDATOR_EMISSIONS__POOL_UNITS=200\n")
    s = load_settings(cfg, env={"VALIDATOR_EMISSIONS__POOL_UNITS": "300"}, dotenv_path=dotenv)
    assert s.consensus.consensus_threshold == 0.8
    assert s.consensus.lambda_factor == 0.25
    assert s.emissions.pool_units == 300


@pytest.mark.parametrize("text,needle", [
    ("[consensus]\nconsensus_threshold = 'high'\n", "consensus.consensus_threshold"),
    ("[consensus]\nquality_sensitivity = 2\n", "consensus.quality_sensitivity: must be <= 1.0"),
    ("[consensus]\nthreshhold = 0.7\n", "consensus.threshhold: unknown setting"),
    ("[consenssus]\n", "unknown section"),
    ("[consensus\n", "invalid TOML"),
    ("[emissions]\npool_units = 1.5\n", "emissions.pool_units: expected an integer"),
])
def test_bad_file_values_name_the_field(tmp_path, text, needle):
    cfg = tmp_path / "bad.toml"
    cfg.write_text(text)
    with pytest.raises(ConfigError, match=needle.replace("[", r"\[")):
        load_settings(cfg, env={})


@pytest.mark.parametrize("name,value,needle", [
    ("VALIDATOR_CONSENSUS__CLUSTERING", "maybe", "VALIDATOR_CONSENSUS__CLUSTERING: expected true/false"),
    ("VALIDATOR_CONSENSUS__NOPE", "1", "VALIDATOR_CONSENSUS__NOPE: unknown setting"),
    ("VALIDATOR_WHAT__X", "1", "unknown settings section"),
    ("VALIDATOR_EMBEDDING__RUNTIME", "gpu", "embedding.runtime: must be one of onnx, torch"),
])
def test_bad_environment_values_name_the_variable(name, value, needle):
    with pytest.raises(ConfigError, match=needle):
        load_settings(None, env={name: value})


def test_missing_config_file(tmp_path):
    with pytest.raises(ConfigError, match="cannot read config file"):
        load_settings(tmp_path / "absent.toml", env={})


def test_lm_settings_from_environment():
    from validator.settings import load_lm_config

    cfg = load_lm_config({"SERVER_URL": "http://127.0.0.1:8080/v1/", "API_TOKEN": "sk-x", "MODEL": "m",
                          "ENSEMBLE": "t", "AGGREGATION": "avg", "THINKING": "f"}, dotenv_path=None)
    assert cfg.endpoint.url == "http://127.0.0.1:8080/v1" and cfg.endpoint.token.get() == "sk-x"
    assert cfg.ensemble and cfg.aggregation == "avg" and not cfg.thinking
    assert cfg.judge == cfg.endpoint  # no judge server: the judge is the scorer
    assert "sk-x" not in repr(cfg)
    local = load_lm_config({}, dotenv_path=None)
    assert local.endpoint.local and local.thinking and not local.ensemble


@pytest.mark.parametrize("name,value", [("ENSEMBLE", "maybe"), ("AGGREGATION", "median"), ("THINKING", "yes please"),
                                        ("SERVER_URL", "localhost:8080"), ("LM_SCORE_MODE", "vibes"),
                                        ("LM_RETRIES", "0"), ("LM_AS_JUDGE_SERVER_URL", "ftp://x")])
def test_bad_lm_variables_are_named(name, value):
    from validator.settings import load_lm_config

    with pytest.raises(ConfigError, match=name):
        load_lm_config({name: value}, dotenv_path=None)
