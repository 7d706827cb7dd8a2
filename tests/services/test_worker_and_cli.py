"""services.worker device checks and CLI smoke tests: bad settings fail at start, cleanly, with exit code 2."""
from __future__ import annotations

import pytest
import torch
from click.testing import CliRunner

from cli import main
from services.worker import WorkerConfigError, validate_device

UNREACHABLE_REDIS = "redis://127.0.0.1:1/0"


def test_cpu_is_always_valid() -> None:
    assert validate_device("cpu") == "cpu"


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the message on a machine without CUDA")
@pytest.mark.parametrize("device", ["cuda", "cuda:0"])
def test_cuda_without_a_gpu_is_a_clear_error(device: str) -> None:
    with pytest.raises(WorkerConfigError, match=rf"--device {device}: this machine has no CUDA GPU.*use --device cpu"):
        validate_device(device)


@pytest.mark.parametrize("device", ["gpu", "cuda:", "cuda:x", "CPU", "mps0", ""])
def test_unknown_device_names_are_rejected(device: str) -> None:
    with pytest.raises(WorkerConfigError, match="expected cpu, cuda or cuda:N"):
        validate_device(device)


def _invoke(args: list[str]):
    return CliRunner().invoke(main, args, env={"ZEROFORGE_SEARCH__SIMULATIONS": None, "REDIS_URL": None})


def _assert_clean_failure(result, exit_code: int) -> None:
    assert result.exit_code == exit_code, result.output
    assert isinstance(result.exception, SystemExit), repr(result.exception)
    assert "Traceback" not in result.output


def test_run_rejects_a_bad_setting_before_starting_anything(tmp_path) -> None:
    result = _invoke(["run", "--game", "tictactoe", "--data-dir", str(tmp_path / "d"), "--set", "search.simulations=0"])
    _assert_clean_failure(result, 2)
    assert "search.simulations" in result.output and ">= 1" in result.output
    assert not (tmp_path / "d").exists(), "nothing may be created for a config that does not validate"


def test_run_rejects_a_malformed_set(tmp_path) -> None:
    result = _invoke(["run", "--game", "tictactoe", "--data-dir", str(tmp_path / "d"), "--set", "nonsense"])
    _assert_clean_failure(result, 2)
    assert "nonsense" in result.output and "section.field=value" in result.output


def test_run_rejects_an_unknown_key(tmp_path) -> None:
    result = _invoke(["run", "--game", "tictactoe", "--data-dir", str(tmp_path / "d"), "--set", "search.simulation=3"])
    _assert_clean_failure(result, 2)
    assert "unknown key 'simulation'" in result.output and "simulations" in result.output


@pytest.fixture
def data_dir(tmp_path) -> str:
    from shared.layout import data_id

    data_id(tmp_path / "data")
    return str(tmp_path / "data")


def test_worker_rejects_a_directory_that_is_no_data_directory(tmp_path) -> None:
    result = _invoke(["worker", "--data-dir", str(tmp_path), "--redis-url", UNREACHABLE_REDIS])
    _assert_clean_failure(result, 2)
    assert "--data-dir" in result.output and "zeroforge-id" in result.output


def test_worker_rejects_a_bogus_device(data_dir) -> None:
    result = _invoke(["worker", "--device", "bogus", "--data-dir", data_dir, "--redis-url", UNREACHABLE_REDIS])
    _assert_clean_failure(result, 2)
    assert "bogus" in result.output and "expected cpu, cuda or cuda:N" in result.output


def test_worker_rejects_an_unknown_queue(data_dir) -> None:
    result = _invoke(["worker", "--queues", "selfplay,bogus", "--data-dir", data_dir, "--redis-url", UNREACHABLE_REDIS])
    _assert_clean_failure(result, 2)
    assert "unknown queue(s) ['bogus']" in result.output


def test_worker_reports_an_unreachable_redis(data_dir) -> None:
    result = _invoke(["worker", "--device", "cpu", "--data-dir", data_dir, "--redis-url", UNREACHABLE_REDIS])
    _assert_clean_failure(result, 1)
    assert f"cannot reach Redis at {UNREACHABLE_REDIS}" in result.output


def test_worker_options_precision_overlap_processes(data_dir, monkeypatch) -> None:
    seen = {}

    def fake_run_worker(redis_url, queues, context, *args, **kwargs):
        seen["context"] = context

    monkeypatch.setattr("services.worker.run_worker", fake_run_worker)
    result = _invoke(["worker", "--data-dir", data_dir, "--redis-url", UNREACHABLE_REDIS, "--precision", "bf16",
                      "--overlap", "on", "--processes", "3"])
    assert result.exit_code == 0, result.output
    context = seen["context"]
    assert (context.precision, context.overlap, context.processes) == ("bf16", "on", 3)
    bad = _invoke(["worker", "--data-dir", data_dir, "--redis-url", UNREACHABLE_REDIS, "--processes", "0"])
    _assert_clean_failure(bad, 2)
    bad = _invoke(["worker", "--data-dir", data_dir, "--redis-url", UNREACHABLE_REDIS, "--precision", "fp16"])
    _assert_clean_failure(bad, 2)
