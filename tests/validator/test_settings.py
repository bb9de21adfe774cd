"""The settings package: layers and their precedence, aliases, secrets, and that it is the only env reader."""

from __future__ import annotations

import argparse
import ast
import dataclasses
import logging
from pathlib import Path

import pytest

from consensus.errors import ConfigError
from consensus.params import ConfigDeprecationWarning, leaves
from validator.settings import (
    RECORDED,
    SECTIONS,
    Environment,
    Settings,
    aliases_of,
    load_env,
    load_settings,
    secret_fields,
)

ROOT = Path(__file__).resolve().parents[2]
TOKEN = "sk-lm-token-that-must-never-leak-0123456789"
AWS_SECRET = "aws-secret-that-must-never-leak-0123456789"


def settings(env: dict[str, str], **kw) -> Settings:
    return load_settings(kw.pop("config", None), env=env, dotenv_path=kw.pop("dotenv_path", None), **kw)


def test_without_any_layer_every_section_has_its_declared_defaults(tmp_path):
    s = settings({"VALIDATOR_CACHE_DIR": str(tmp_path)})  # the cache dir is the one value the loader fills in
    for name, cls in SECTIONS.items():
        expected = cls(cache_dir=str(tmp_path)) if name == "paths" else cls()
        assert getattr(s, name) == expected, name
    assert s.consensus.clusters.consensus_threshold == 0.7 and s.consensus.clusters.lambda_factor == 1.0  # the seed's
    assert not s.lm.enabled and s.lm_client.score_mode == "yesno" and s.lm_client.server_url == ""


def test_toml_then_dotenv_then_environment(tmp_path):
    cfg = tmp_path / "v.toml"
    cfg.write_text("[consensus]\nconsensus_threshold = 0.8\nlambda_factor = 0.5\n[emissions]\npool_units = 100\n")
    dotenv = tmp_path / ".env"
    dotenv.write_text("VALIDATOR_CONSENSUS__LAMBDA_FACTOR=0.25\nVALIDATOR_EMISSIONS__POOL_UNITS=200\n")
    s = settings({"VALIDATOR_EMISSIONS__POOL_UNITS": "300"}, config=cfg, dotenv_path=dotenv)
    assert s.consensus.clusters.consensus_threshold == 0.8
    assert s.consensus.clusters.lambda_factor == 0.25
    assert s.emissions.pool_units == 300


def test_command_defaults_sit_under_the_file_and_flags_over_everything(tmp_path):
    daemon = {"lm": {"enabled": True}}
    assert settings({}, defaults=daemon).lm.enabled
    cfg = tmp_path / "v.toml"
    cfg.write_text("[lm]\nenabled = false\n[daemon]\ninterval_s = 5\n")
    assert not settings({}, config=cfg, defaults=daemon).lm.enabled
    assert not settings({"VALIDATOR_LM__ENABLED": "f"}, defaults=daemon).lm.enabled
    flagged = settings(
        {"VALIDATOR_DAEMON__INTERVAL_S": "7"},
        config=cfg,
        overrides={"daemon": {"interval_s": 0.0}, "lm": {"enabled": True}},
    )
    assert flagged.daemon.interval_s == 0.0 and flagged.lm.enabled


def test_a_bad_flag_is_named_as_the_command_line():
    with pytest.raises(ConfigError, match=r"command line \(daemon.interval_s\): must be >= 0.0"):
        settings({}, overrides={"daemon": {"interval_s": -1.0}})


@pytest.mark.parametrize(
    "text,needle",
    [
        ("[consensus]\nconsensus_threshold = 'high'\n", "consensus.clusters.consensus_threshold"),
        ("[consensus]\nquality_sensitivity = 2\n", "consensus.filters.length_tolerance: must be <= 1.0"),
        ("[consensus]\nthreshhold = 0.7\n", "consensus.threshhold: unknown setting"),
        ("[consenssus]\n", "unknown settings section; did you mean [consensus]?"),
        ("[consensus\n", "invalid TOML"),
        ("[emissions]\npool_units = 1.5\n", "emissions.pool_units: expected an integer"),
        ("[lm_client]\nserver_url = 'localhost:8080'\n", "lm_client.server_url: expected an http"),
    ],
)
def test_bad_file_values_name_the_field(tmp_path, text, needle):
    cfg = tmp_path / "bad.toml"
    cfg.write_text(text)
    with pytest.raises(ConfigError, match=needle.replace("[", r"\[")) as info:
        settings({}, config=cfg)
    assert str(info.value).startswith(f"{cfg}: ")  # and the file, a type error included (issue 27)


@pytest.mark.parametrize(
    "name,value,needle",
    [
        ("VALIDATOR_CONSENSUS__CLUSTERING", "maybe", "VALIDATOR_CONSENSUS__CLUSTERING: expected true/false"),
        ("VALIDATOR_CONSENSUS__NOPE", "1", "VALIDATOR_CONSENSUS__NOPE: unknown setting"),
        ("VALIDATOR_WHAT__X", "1", "unknown settings section"),
        (
            "VALIDATOR_EMBEDDING__RUNTIME",
            "gpu",
            r"VALIDATOR_EMBEDDING__RUNTIME \(embedding.runtime\): must be one of onnx, openvino, torch",
        ),
        ("VALIDATOR_DAEMON__QUORUM", "1", r"VALIDATOR_DAEMON__QUORUM \(daemon.quorum\): must be >= 2"),
    ],
)
def test_bad_environment_values_name_the_variable(name, value, needle):
    with pytest.raises(ConfigError, match=needle):
        settings({name: value})


def test_missing_config_file(tmp_path):
    with pytest.raises(ConfigError, match="cannot read config file"):
        settings({}, config=tmp_path / "absent.toml")


# -- the seed's names and the other aliases ------------------------------------------------------


def test_lm_settings_from_the_seeds_names():
    cfg = settings(
        {
            "SERVER_URL": "http://127.0.0.1:8080/v1/",
            "API_TOKEN": TOKEN,
            "MODEL": "m",
            "THINKING": "f",
            "LM_SCORE_MODE": "sampled",
            "LM_RETRIES": "3",
            "LM_TIMEOUT_S": "9.5",
            "LM_CACHE": "t",
            "LM_CACHE_DIR": "cache/lm",
            "LM_CALIBRATION": "cal.json",
        }
    ).lm_config()
    assert cfg.endpoint.url == "http://127.0.0.1:8080/v1" and cfg.endpoint.token.get() == TOKEN
    assert cfg.endpoint.model == "m" and not cfg.thinking
    assert (cfg.score_mode, cfg.retries, cfg.timeout_s, cfg.cache) == ("sampled", 3, 9.5, True)
    assert (cfg.cache_dir, cfg.calibration_file) == ("cache/lm", "cal.json")
    assert cfg.judge == cfg.endpoint  # no judge server: the judge is the scorer
    local = settings({}).lm_config()
    assert local.endpoint.local and local.thinking and local.endpoint.token is None


def test_a_judge_server_of_its_own():
    cfg = settings(
        {
            "SERVER_URL": "http://a:1/v1",
            "LM_AS_JUDGE_SERVER_URL": "https://b:2/v1",
            "LM_AS_JUDGE_API_TOKEN": TOKEN,
            "LM_AS_JUDGE_MODEL": "big",
        }
    ).lm_config()
    assert (cfg.judge.url, cfg.judge.model, cfg.judge.token.get()) == ("https://b:2/v1", "big", TOKEN)
    assert cfg.endpoint.url == "http://a:1/v1" and cfg.endpoint.token is None


def test_the_prefixed_name_wins_over_its_alias_and_empty_counts_as_unset():
    s = settings({"VALIDATOR_LM_CLIENT__MODEL": "prefixed", "MODEL": "alias"})
    assert s.lm_client.model == "prefixed"
    s = settings({"VALIDATOR_LM_CLIENT__MODEL": "", "MODEL": "alias", "SERVER_URL": ""})
    assert s.lm_client.model == "alias" and s.lm_config().endpoint.local


def test_the_environment_wins_over_dotenv_name_by_name(tmp_path):
    dotenv = tmp_path / ".env"
    dotenv.write_text(f"SERVER_URL=http://from-dotenv:1/v1\nAPI_TOKEN={TOKEN}\n")
    cfg = settings({"SERVER_URL": "http://from-env:2/v1"}, dotenv_path=dotenv).lm_config()
    assert cfg.endpoint.url == "http://from-env:2/v1" and cfg.endpoint.token.get() == TOKEN


@pytest.mark.parametrize(
    "name,value",
    [
        ("ENSEMBLE", "maybe"),
        ("AGGREGATION", "median"),
        ("THINKING", "yes please"),
        ("SERVER_URL", "localhost:8080"),
        ("LM_SCORE_MODE", "vibes"),
        ("LM_RETRIES", "0"),
        ("LM_TIMEOUT_S", "soon"),
        ("LM_AS_JUDGE_SERVER_URL", "ftp://x"),
        ("VALIDATOR_LM_THREADS", "-1"),
    ],
)
def test_bad_alias_values_name_the_variable(name, value):
    with pytest.raises(ConfigError, match=name):
        settings({name: value})


def test_threads_and_cache_dir_aliases(tmp_path):
    s = settings({"VALIDATOR_THREADS": "3", "VALIDATOR_LM_THREADS": "2", "VALIDATOR_CACHE_DIR": str(tmp_path)})
    assert s.embedding.threads == 3 and s.lm_client.local_threads == 2 and s.paths.cache == tmp_path
    cfg = s.lm_config()
    assert cfg.local_threads == 2 and cfg.local_cache_dir == str(tmp_path)
    assert cfg.cache_dir == str(tmp_path / "lm-responses")
    assert settings({"XDG_CACHE_HOME": str(tmp_path)}).paths.cache == tmp_path / "consensus-validator"
    assert settings({}).paths.cache == Path.home() / ".cache" / "consensus-validator"


def test_s3_settings_from_the_standard_names():
    s3 = settings(
        {
            "VALIDATOR_S3_ENDPOINT": "http://127.0.0.1:9000",
            "AWS_ENDPOINT_URL": "http://other",
            "AWS_REGION": "eu-west-1",
            "AWS_DEFAULT_REGION": "ap-south-1",
            "AWS_ACCESS_KEY_ID": "AKIAEXAMPLE01",
            "AWS_SECRET_ACCESS_KEY": AWS_SECRET,
            "VALIDATOR_S3__MAX_ATTEMPTS": "1",
        }
    ).s3_settings()
    assert (s3.endpoint_url, s3.region, s3.access_key_id, s3.secret_access_key, s3.max_attempts) == (
        "http://127.0.0.1:9000",
        "eu-west-1",
        "AKIAEXAMPLE01",
        AWS_SECRET,
        1,
    )
    assert AWS_SECRET not in repr(s3)
    s3 = settings({"AWS_ENDPOINT_URL": "http://other", "VALIDATOR_S3_ENDPOINT": ""}).s3_settings()
    assert (s3.endpoint_url, s3.region, s3.access_key_id, s3.secret_access_key) == (
        "http://other",
        "us-east-1",
        None,
        None,
    )


@pytest.mark.parametrize(
    "present,missing", [("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"), ("AWS_SECRET_ACCESS_KEY", "AWS_ACCESS_KEY_ID")]
)
def test_a_missing_required_value_fails_at_start_naming_the_variable(present, missing):
    s = settings({present: AWS_SECRET})  # a command that never touches S3 is not stopped by it
    with pytest.raises(ConfigError, match=missing) as info:
        s.s3_settings()  # the daemon asks for these at start, before any miner, when its store is s3://
    assert AWS_SECRET not in str(info.value)


# -- secrets -------------------------------------------------------------------------------------


def test_secrets_are_refused_in_the_file_without_echoing_them(tmp_path):
    cfg = tmp_path / "v.toml"
    cfg.write_text(f"[lm_client]\napi_token = '{TOKEN}'\n")
    with pytest.raises(ConfigError, match="only from the environment") as info:
        settings({}, config=cfg)
    assert TOKEN not in str(info.value)


def test_secrets_never_appear_in_repr_records_or_logs(caplog):
    from validator.app import App

    caplog.set_level(logging.DEBUG)
    env = {
        "SERVER_URL": "http://127.0.0.1:9/v1",
        "API_TOKEN": TOKEN,
        "LM_AS_JUDGE_SERVER_URL": "http://j:1/v1",
        "LM_AS_JUDGE_API_TOKEN": TOKEN,
        "AWS_ACCESS_KEY_ID": "AKIAEXAMPLE01",
        "AWS_SECRET_ACCESS_KEY": AWS_SECRET,
        "AWS_SESSION_TOKEN": AWS_SECRET,
    }
    s = settings(env)
    app = App(settings=s, env=load_env(env, None), embedder=None)  # type: ignore[arg-type]
    shown = " ".join(
        [
            repr(s),
            str(s),
            repr(s.lm_config()),
            repr(s.s3_settings()),
            repr(s.as_dict()),
            repr(app),
            repr(load_env(env, None)),
            caplog.text,
        ]
    )
    assert TOKEN not in shown and AWS_SECRET not in shown
    for cls in SECTIONS.values():  # every secret field is hidden from repr
        for f in dataclasses.fields(cls):
            assert f.repr is (f.name not in secret_fields(cls))
    assert secret_fields(SECTIONS["lm_client"]) == {"api_token", "judge_api_token"}


def test_records_keep_the_evaluation_sections_only():
    s = settings({"VALIDATOR_CACHE_DIR": "cache", "SERVER_URL": "http://a:1/v1"})
    assert tuple(s.as_dict()) == RECORDED == ("consensus", "emissions", "input", "embedding", "lm", "daemon")


def test_environment_is_a_mapping_that_hides_its_values(tmp_path):
    dotenv = tmp_path / ".env"
    dotenv.write_text(f"MINER_KEY={TOKEN}\nOTHER=1\n")
    env = load_env({"OTHER": "2"}, dotenv)
    assert isinstance(env, Environment) and env["MINER_KEY"] == TOKEN and env["OTHER"] == "2"
    assert repr(env) == f"Environment({len(env)} variables)"


# -- lm.enabled and --lm -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "command,flag,variable,expected",
    [
        ("daemon", None, None, True),  # the daemon asks the LM unless told otherwise
        ("daemon", False, None, False),  # --no-lm
        ("daemon", None, "false", False),  # lm.enabled = false in the environment (or the file)
        ("daemon", True, "false", True),  # the flag wins over the setting
        ("replay", None, None, False),  # replay: lm.enabled's own default
        ("replay", True, None, True),  # --lm
        ("replay", None, "true", True),
    ],
)
def test_lm_flag_overrides_lm_enabled(monkeypatch, command, flag, variable, expected):
    from validator.cli.common import LM_DEFAULT, load

    if variable is not None:
        monkeypatch.setenv("VALIDATOR_LM__ENABLED", variable)
    args = argparse.Namespace(config=None, lm=flag)
    s, _ = load(args, defaults=LM_DEFAULT if command == "daemon" else None)
    assert s.lm.enabled is expected


def test_the_parsers_leave_lm_unset_unless_given():
    from validator.cli.main import build_parser

    parser = build_parser()
    for argv in (["daemon"], ["round", "--prompt", "p"], ["replay", "x.jsonl"]):
        assert parser.parse_args(argv).lm is None
        assert parser.parse_args([*argv, "--no-lm"]).lm is False
        assert parser.parse_args([*argv, "--lm"]).lm is True


@pytest.mark.parametrize("enabled", [False, True])
def test_open_app_opens_the_lm_only_when_enabled(enabled):
    from consensus.fake import FakeEmbedder
    from validator.app import open_app

    env = {"SERVER_URL": "http://127.0.0.1:9/v1", "API_TOKEN": TOKEN}  # a remote LM: nothing starts
    s = settings(env, overrides={"lm": {"enabled": enabled}})
    with open_app(s, load_env(env, None), store="memory://", embedder_factory=lambda _: FakeEmbedder()) as app:
        assert (app.lm is not None) is enabled and app.miners is None and app.store is not None
        if enabled:
            assert app.lm.config.endpoint.url == "http://127.0.0.1:9/v1"
        assert TOKEN not in repr(app)


# -- docs and the one reader ---------------------------------------------------------------------


def test_the_settings_tables_are_generated_from_the_declarations():
    """docs/configuration.md's tables are what scripts/gen_config_docs.py writes: run it after changing a setting."""
    import runpy

    tables = runpy.run_path(str(ROOT / "scripts" / "gen_config_docs.py"))["tables"]
    doc = (ROOT / "docs" / "configuration.md").read_text()
    assert doc.endswith(tables()), "run: PYTHONPATH=. python scripts/gen_config_docs.py"


def test_every_section_and_alias_is_documented():
    doc = (ROOT / "docs" / "configuration.md").read_text()
    for name, cls in SECTIONS.items():
        for table in {f"{name}.{d.rpartition('.')[0]}" if "." in d else name for d in leaves(cls)}:
            assert f"## [{table}]" in doc
        for aliases in aliases_of(cls).values():
            for alias in aliases:
                assert f"`{alias}`" in doc, alias


# packages whose code must not read or write the process environment (scripts, benchmarks and tests may)
PACKAGES = ("consensus", "emissions", "embedding", "judge", "lm", "narrative", "storage", "validator")
_ENV_NAMES = {"environ", "environb", "getenv", "getenvb", "putenv", "unsetenv"}


def _env_uses(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if (
            isinstance(node, ast.Attribute)
            and node.attr in _ENV_NAMES
            and isinstance(node.value, ast.Name)
            and node.value.id == "os"
        ):
            found.append(f"{path.relative_to(ROOT)}:{node.lineno}: os.{node.attr}")
        elif isinstance(node, ast.ImportFrom) and node.module == "os" and any(a.name in _ENV_NAMES for a in node.names):
            found.append(f"{path.relative_to(ROOT)}:{node.lineno}: from os import ...")
    return found


def test_the_settings_package_is_the_only_reader_of_the_environment():
    allowed = ROOT / "validator" / "settings"
    found = [
        use
        for package in PACKAGES
        for path in sorted((ROOT / package).rglob("*.py"))
        if allowed not in path.parents
        for use in _env_uses(path)
    ]
    assert not found, "the environment is read outside validator/settings:\n" + "\n".join(found)
    assert _env_uses(allowed / "loader.py"), "the check itself must see os.environ where it is"


def test_cli_subcommands_import_no_other_subcommand():
    """One module per subcommand, sharing only validator/cli/common.py: no cycle can form between them."""
    cli = ROOT / "validator" / "cli"
    commands = {p.stem for p in cli.glob("*.py")} - {"__init__", "common"}
    for path in sorted(cli.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
                imported = {n.split(".")[2] for n in names if n.startswith("validator.cli.") and n.count(".") >= 2}
                assert not (imported & commands) - {"main"} or path.stem == "main", (path.name, imported)


def test_the_alias_table_of_the_docs_matches_the_declared_aliases():
    import re

    doc = (ROOT / "docs" / "configuration.md").read_text()
    table = doc.split("## Aliases", 1)[1].split("\n## ", 1)[0]
    documented: dict[str, tuple[str, ...]] = {}
    for row in table.splitlines():
        cells = [c.strip() for c in row.strip("|").split("|")]
        if len(cells) >= 2 and re.fullmatch(r"`\w+\.\w+`", cells[1]):
            documented[cells[1].strip("`")] = tuple(re.findall(r"`(\w+)`", cells[0]))
    declared = {f"{name}.{key}": names for name, cls in SECTIONS.items() for key, names in aliases_of(cls).items()}
    assert documented == declared


def test_the_embedded_pool_runs_rounds_back_to_back_unless_told_otherwise(tmp_path, monkeypatch):
    import argparse

    from validator.cli.common import LM_DEFAULT, load

    for var in (
        "VALIDATOR_DAEMON__INTERVAL_S",
        "VALIDATOR_DAEMON__MINERS_FILE",
        "SERVER_URL",
        "VALIDATOR_LM_CLIENT__SERVER_URL",
    ):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.chdir(tmp_path)  # no .env here

    def daemon(config=None, miners=None):
        return load(argparse.Namespace(config=config, lm=None, miners=miners), defaults=LM_DEFAULT)[0]

    embedded = daemon()
    assert embedded.daemon.interval_s == 0.0 and embedded.lm.reference_mode == "short"
    assert daemon(miners="miners.toml").daemon.interval_s == 30.0  # real miners: paced
    cfg = tmp_path / "v.toml"
    cfg.write_text("[daemon]\ninterval_s = 12\n")
    assert daemon(config=cfg).daemon.interval_s == 12.0  # the operator's own pace wins
    monkeypatch.setenv("VALIDATOR_DAEMON__INTERVAL_S", "7")
    assert daemon().daemon.interval_s == 7.0


def test_the_edge_configs_and_their_sections_share_one_declaration():
    """LM, S3 and query limits: the section's defaults, docs and limits are the edge value's own (issue 26)."""
    import dataclasses

    from lm.config import LMConfig
    from storage.s3_settings import S3Settings
    from validator.miners.limits import QueryLimits
    from validator.settings import DaemonSettings, LMClientSettings, S3Section, Settings

    def meta(cls, name):
        f = next(x for x in dataclasses.fields(cls) if x.name == name)
        return f.default, {k: f.metadata.get(k) for k in ("lo", "hi", "choices", "lo_open")}

    pairs = [
        (LMClientSettings, LMConfig, n, n)
        for n in ("thinking", "score_mode", "retries", "timeout_s", "cache", "local_threads")
    ]
    pairs += [(S3Section, S3Settings, n, n) for n in ("region", "connect_timeout_s", "read_timeout_s", "max_attempts")]
    pairs += [
        (DaemonSettings, QueryLimits, a, b)
        for a, b in (
            ("request_timeout_s", "request_timeout_s"),
            ("round_deadline_s", "deadline_s"),
            ("max_answer_chars", "max_answer_chars"),
            ("max_tokens", "max_tokens"),
        )
    ]
    for section, edge, a, b in pairs:
        assert meta(section, a) == meta(edge, b), (section.__name__, a)
    settings = Settings()
    assert settings.s3_settings() == S3Settings()
    lm = settings.lm_config()
    assert all(getattr(lm, n) == getattr(LMConfig(), n) for n in ("thinking", "retries", "timeout_s", "score_mode"))
    with pytest.raises(ValueError, match="lm_client.retries"):
        LMConfig(retries=0)
    with pytest.raises(ValueError, match="s3.max_attempts"):
        S3Settings(max_attempts=11)


@pytest.mark.parametrize(
    "text,needle",
    [
        (
            "[consensus]\nconsensus_treshold = 0.5\n",
            "consensus.consensus_treshold: unknown setting; did you mean [consensus.clusters] consensus_threshold?",
        ),
        ("[consensos]\n", "[consensos]: unknown settings section; did you mean [consensus]?"),
        (
            "[consensus]\ncopy_rule = 'derivaton'\n",
            "must be one of derivation, legacy; got 'derivaton'; did you mean 'derivation'?",
        ),
        ("[consensus]\nzzzqqq = 1\n", "consensus.zzzqqq: unknown setting ([consensus] has "),
    ],
)
def test_a_typo_gets_the_closest_known_name_on_one_line(tmp_path, text, needle):
    """Issue 36: one line with a suggestion, never the section's 80 names."""
    cfg = tmp_path / "typo.toml"
    cfg.write_text(text)
    with pytest.raises(ConfigError) as info:
        settings({}, config=cfg)
    message = str(info.value)
    assert needle in message and "\n" not in message and len(message) < 200 + len(str(cfg))


def test_an_environment_typo_gets_the_closest_variable():
    with pytest.raises(ConfigError, match="did you mean VALIDATOR_CONSENSUS__CLUSTERS__CONSENSUS_THRESHOLD\\?$"):
        settings({"VALIDATOR_CONSENSUS__CONSENSUS_TRESHOLD": "0.5"})
    with pytest.raises(ConfigError, match="did you mean VALIDATOR_CONSENSUS__CLUSTERS__CONSENSUS_THRESHOLD\\?$"):
        settings({"VALIDATOR_CONSENSUS__CLUSTERS__CONSENSUS_TRESHOLD": "0.5"})
    with pytest.raises(ConfigError, match="did you mean VALIDATOR_CONSENSUS__CONSENSUS_THRESHOLD\\?$"):
        settings({"VALIDATOR_CONSENSOS__CONSENSUS_THRESHOLD": "0.5"})
    with pytest.raises(ConfigError, match="got 'openvno'; did you mean 'openvino'\\?$"):
        settings({"VALIDATOR_EMBEDDING__RUNTIME": "openvno"})


def test_a_config_typo_on_the_command_line_is_one_line_without_traceback(tmp_path):
    import subprocess
    import sys

    cfg = tmp_path / "typo.toml"
    cfg.write_text("[consensus]\nconsensus_treshold = 0.5\n")
    done = subprocess.run(
        [sys.executable, "-m", "validator", "weights", "show", str(tmp_path), "--config", str(cfg)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and "did you mean [consensus.clusters] consensus_threshold?" in done.stderr
    assert "Traceback" not in done.stderr


# -- the consensus tables and the keys that left them (issue 34) ------------------------------------------


def test_the_consensus_settings_read_from_their_stage_s_table(tmp_path):
    cfg = tmp_path / "nested.toml"
    cfg.write_text("[consensus.clusters]\nconsensus_threshold = 0.8\n[consensus.quality]\nquality_stems = false\n")
    s = settings({"VALIDATOR_CONSENSUS__WEIGHTS__WEIGHT_REFERENCE": "0.4"}, config=cfg)
    assert s.consensus.clusters.consensus_threshold == 0.8 and s.consensus.quality.quality_stems is False
    assert s.consensus.weights.weight_reference == 0.4
    assert s.as_dict()["consensus"]["consensus_threshold"] == 0.8  # records keep one flat table, as before


@pytest.mark.parametrize(
    ("text", "env", "warned"),
    [
        ("[consensus]\nconsensus_threshold = 0.8\n", {}, "write [consensus.clusters] consensus_threshold"),
        ({}, {"VALIDATOR_CONSENSUS__CONSENSUS_THRESHOLD": "0.8"}, "VALIDATOR_CONSENSUS__CLUSTERS__CONSENSUS_THRESHOLD"),
    ],
)
def test_an_old_flat_consensus_key_still_reads_with_a_one_line_warning(tmp_path, text, env, warned):
    cfg = None
    if isinstance(text, str):
        cfg = tmp_path / "flat.toml"
        cfg.write_text(text)
    with pytest.warns(ConfigDeprecationWarning) as caught:
        s = settings(env, config=cfg)
    assert s.consensus.clusters.consensus_threshold == 0.8
    (message,) = [str(w.message) for w in caught]
    assert warned in message and "\n" not in message


def test_a_renamed_key_reads_as_the_new_one_and_names_it(tmp_path):
    cfg = tmp_path / "old.toml"
    cfg.write_text("[consensus]\nquality_filtering = false\nquality_sensitivity = 0.5\nheatmap = false\n")
    with pytest.warns(ConfigDeprecationWarning) as caught:
        s = settings({}, config=cfg)
    assert s.consensus.filters.length_filter is False and s.consensus.filters.length_tolerance == 0.5
    assert s.output.heatmap is False  # not a consensus rule: it moved to [output]
    messages = [str(w.message) for w in caught]
    assert any(
        "consensus.quality_sensitivity: deprecated, write [consensus.filters] length_tolerance" in m for m in messages
    )
    assert any("write [output] heatmap" in m for m in messages)
    with pytest.raises(ConfigError, match="consensus.filters.length_tolerance: must be <= 1.0"):
        cfg.write_text("[consensus]\nquality_sensitivity = 2\n")
        with pytest.warns(ConfigDeprecationWarning):
            settings({}, config=cfg)


def test_a_retired_key_is_ignored_at_its_constant_and_refused_otherwise(tmp_path):
    cfg = tmp_path / "retired.toml"
    cfg.write_text("[consensus]\ncopy_cosine = 0.95\n")
    with pytest.warns(ConfigDeprecationWarning, match="consensus.stages.COPY_COSINE = 0.95"):
        assert settings({}, config=cfg).consensus == settings({}).consensus
    with pytest.warns(ConfigDeprecationWarning, match="VALIDATOR_CONSENSUS__LOF_NEIGHBORS: no longer a setting"):
        assert settings({"VALIDATOR_CONSENSUS__LOF_NEIGHBORS": "10"}).consensus == settings({}).consensus
    cfg.write_text("[consensus]\ncopy_cosine = 0.9\n")
    with pytest.raises(
        ConfigError, match="copy_cosine: no longer a setting: the constant consensus.stages.COPY_COSINE"
    ):
        settings({}, config=cfg)


def test_a_setting_changed_on_a_benchmark_s_command_line_reads_like_the_file_s():
    from validator.settings import with_changes

    s = with_changes(Settings(), {"consensus": {"quality.quality_prose": 0.0}})
    assert s.consensus.quality.quality_prose == 0.0
    with pytest.warns(ConfigDeprecationWarning, match="write \\[consensus.quality\\] quality_prose"):
        assert with_changes(Settings(), {"consensus": {"quality_prose": 0.0}}) == s
    with pytest.raises(ConfigError, match="did you mean consensus.quality.quality_prose"):
        with_changes(Settings(), {"consensus": {"quality.quality_pros": 0.0}})


# -- named profiles (issue 48: the seed as a profile an operator selects) -----------------------------------


def test_the_seed_profile_sets_only_changed_defaults_and_sits_under_the_file_and_the_environment(tmp_path):
    from consensus.params import flatten
    from validator.settings import PROFILES

    assert "seed" in PROFILES
    base, seed = settings({}), settings({}, profile="seed")
    changed = {
        name: {k for k, v in flatten(getattr(seed, name)).items() if v != flatten(getattr(base, name))[k]}
        for name in SECTIONS
    }
    written = [
        line
        for line in PROFILES["seed"].read_text(encoding="utf-8").splitlines()
        if " = " in line and not line.startswith("#")
    ]
    assert sum(map(len, changed.values())) == len(written)  # every key of the profile changes a default
    assert seed.consensus.filters.outlier_detection and seed.emissions.top_bonus_max == 0.5  # LOF, the tanh bonus
    assert seed.emissions.speed_mode == "latency" and seed.embedding.runtime == "onnx"
    cfg = tmp_path / "over.toml"
    cfg.write_text("[emissions]\ntop_bonus_max = 0.25\n")
    assert settings({}, profile="seed", config=cfg).emissions.top_bonus_max == 0.25  # the file wins
    env = {"VALIDATOR_CONSENSUS__FILTERS__OUTLIER_DETECTION": "false"}
    assert not settings(env, profile="seed").consensus.filters.outlier_detection  # the environment wins
    assert settings({}, config=PROFILES["seed"]) == seed  # the shipped file is a settings file too


def test_an_unknown_profile_is_one_line_naming_the_profiles(capsys):
    from validator.cli.main import build_parser

    with pytest.raises(ConfigError, match=r"^--profile: no profile 'sed'; the profiles: seed$"):
        settings({}, profile="sed")
    parser = build_parser()
    for argv in (["daemon"], ["round", "--prompt", "p"], ["replay", "x.jsonl"], ["whatif", "runs"]):
        assert parser.parse_args([*argv, "--profile", "seed"]).profile == "seed"
    with pytest.raises(SystemExit):
        parser.parse_args(["replay", "x.jsonl", "--profile", "sed"])
    assert "invalid choice: 'sed'" in capsys.readouterr().err


def test_the_commands_load_the_profile_they_are_given(monkeypatch):
    from validator.cli.common import load

    s, _ = load(argparse.Namespace(config=None, lm=None, profile="seed"))
    assert s == load_settings(None, dotenv_path=None, profile="seed") != load_settings(None, dotenv_path=None)
