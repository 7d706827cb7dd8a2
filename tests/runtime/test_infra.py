"""Deployment files in infra/: redis.conf really runs, systemd units and compose.yaml are well formed,
the env example is a valid config layer, and every command they name exists."""
from __future__ import annotations

import configparser
import re
import shlex
import shutil
import sys
from pathlib import Path

import pytest
import redis
import yaml

from services.redis_server import embedded_binary, start_server
from shared.config import PipelineConfig, load_config

INFRA = Path(__file__).resolve().parents[2] / "infra"
UNITS = {
    "zeroforge-worker@.service": "always",
    "zeroforge-prefect.service": "always",
    "zeroforge-pipeline.service": "on-failure",
    "zeroforge-store.service": "always",
}
COMPOSE_SERVICES = {"redis", "prefect", "pipeline", "worker", "worker-gpu", "store"}


def _unit(name: str) -> configparser.ConfigParser:
    parser = configparser.ConfigParser(strict=False, interpolation=None)
    parser.optionxform = str  # systemd keys are case-sensitive
    parser.read(INFRA / "systemd" / name)
    return parser


def _compose() -> dict:
    return yaml.safe_load((INFRA / "compose.yaml").read_text())


def _env_example() -> dict[str, str]:
    """KEY=VALUE lines of the env example, commented-out examples (# ZEROFORGE_...=...) included."""
    pairs = re.findall(r"^(?:# )?([A-Z][A-Z0-9_]*)=(.*)$", (INFRA / "zeroforge.env.example").read_text(), re.MULTILINE)
    return dict(pairs)


def _server_binaries() -> list[str]:
    found = [shutil.which("redis-server")] if shutil.which("redis-server") else []
    return found + [str(embedded_binary())]


@pytest.mark.parametrize("binary", _server_binaries(), ids=lambda b: Path(b).name)
def test_redis_conf_runs_with_auth_persistence_and_noeviction(binary):
    text = (INFRA / "redis" / "redis.conf").read_text()
    assert re.search(r"^requirepass CHANGE-ME", text, re.MULTILINE), "the placeholder must be obvious"
    # start with the file, overriding port/bind/dir/password on the command line (as compose does)
    with start_server(binary, config_file=INFRA / "redis" / "redis.conf", password="test-secret") as handle:
        port = int(handle.url.rsplit(":", 1)[1].split("/")[0])
        with pytest.raises(redis.AuthenticationError):
            redis.Redis(port=port, retry=None).ping()
        client = handle.client()
        assert client.ping()
        settings = {key: client.config_get(key)[key] for key in ("appendonly", "maxmemory-policy", "protected-mode")}
        assert settings == {"appendonly": "yes", "maxmemory-policy": "noeviction", "protected-mode": "yes"}
        assert client.config_get("save")["save"].strip() != ""  # RDB save points on
        client.close()


@pytest.mark.parametrize("name", sorted(UNITS))
def test_systemd_units_parse_with_required_keys(name):
    unit = _unit(name)
    assert unit["Unit"]["Description"] and unit["Install"]["WantedBy"] == "multi-user.target"
    service = unit["Service"]
    assert service["User"] == "zeroforge" and service["Restart"] == UNITS[name]
    assert service["EnvironmentFile"] == "/etc/zeroforge/zeroforge.env"
    assert shlex.split(service["ExecStart"])[0].startswith("/")  # systemd wants an absolute path


def test_worker_unit_command():
    exec_start = _unit("zeroforge-worker@.service")["Service"]["ExecStart"]
    assert exec_start.endswith("zeroforge worker --queues train,eval,selfplay --device %i")
    assert "REDIS_URL" not in exec_start    # the password stays in the environment file, off the command line
    prefect = _unit("zeroforge-prefect.service")["Service"]["ExecStart"]
    assert prefect.endswith("prefect server start --host 127.0.0.1 --port 4200")


def test_compose_stack():
    compose = _compose()
    services = compose["services"]
    assert set(services) == COMPOSE_SERVICES
    assert "./redis/redis.conf:/usr/local/etc/redis/redis.conf:ro" in services["redis"]["volumes"]
    for name in ("pipeline", "worker", "worker-gpu"):
        assert "zeroforge-data:/data" in services[name]["volumes"]
        assert services[name]["build"]["dockerfile"] == "infra/Dockerfile"
    assert (INFRA / "Dockerfile").is_file() and (INFRA / services["redis"]["volumes"][0].split(":")[0]).is_file()
    devices = services["worker-gpu"]["deploy"]["resources"]["reservations"]["devices"]
    assert devices[0]["driver"] == "nvidia" and devices[0]["capabilities"] == ["gpu"]
    assert set(compose["volumes"]) == {"redis-data", "prefect-data", "zeroforge-data", "store-data"}
    assert services["store"]["profiles"] == ["store"] and services["store"]["volumes"] == ["store-data:/store"]
    assert services["prefect"]["ports"] == ["127.0.0.1:4200:4200"] and "ports" not in services["redis"]


def test_env_example_is_a_valid_config_layer():
    env = _env_example()
    assert env["REDIS_URL"].startswith("redis://:CHANGE-ME")
    cfg = load_config(PipelineConfig, env["ZEROFORGE_GAME"], None, env)
    assert str(cfg.pipeline.data_dir) == env["ZEROFORGE_PIPELINE__DATA_DIR"]
    assert cfg.search.simulations == int(env["ZEROFORGE_SEARCH__SIMULATIONS"])


def _zeroforge_invocations() -> list[list[str]]:
    """argv (from the `zeroforge` word on) of every zeroforge command in the units and compose.yaml."""
    commands = [shlex.split(_unit(name)["Service"]["ExecStart"]) for name in UNITS]
    commands += [service["command"] for service in _compose()["services"].values() if "command" in service]
    found = []
    for argv in commands:
        for index, word in enumerate(argv):
            if Path(word).name == "zeroforge":
                found.append(argv[index:])
    return found


def test_named_executables_exist():
    venv_bin = Path(sys.executable).parent
    assert (venv_bin / "zeroforge").exists() and (venv_bin / "prefect").exists()
    # worker, pipeline and store units; pipeline, 2 workers and the store in compose
    assert len(_zeroforge_invocations()) == 7


def test_zeroforge_subcommands_and_options_exist():
    """The CLI subcommands the infra files call must exist with these options."""
    import click

    from cli import main

    ctx = click.Context(main)
    for argv in _zeroforge_invocations():
        name, rest = argv[1], argv[2:]
        command = main.get_command(ctx, name)
        assert command is not None, f"`zeroforge {name}` (used in infra/) is not a CLI command"
        if isinstance(command, click.Group):       # `zeroforge store serve ...`
            name, command, rest = f"{name} {rest[0]}", command.get_command(ctx, rest[0]), rest[1:]
            assert command is not None, f"`zeroforge {name}` (used in infra/) is not a CLI command"
        options = {opt for param in command.params for opt in param.opts + param.secondary_opts}
        missing = [word for word in rest if word.startswith("--") and word not in options]
        assert not missing, f"`zeroforge {name}` has no option(s) {missing} used in infra/"


def test_no_redis_url_or_password_on_a_command_line():
    """The units and compose.yaml pass the Redis URL (with its password) in the environment, which `ps` does not
    show to other users, never as an argument."""
    for argv in _zeroforge_invocations():
        assert "--redis-url" not in argv and not any("redis://" in word or "PASSWORD" in word for word in argv), argv
