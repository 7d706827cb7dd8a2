"""The registry job (services.registry_job) and `zeroforge models rollback/promote --store` (cli.registry_request):
a host with only the store and Redis changes the pipeline's registry through a job that a worker on the data
directory runs, with the registry's own checks; when no such worker takes it, it is cancelled, never left queued."""
from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from cli.models import models
from services.payloads import PayloadError, RegistryChangePayload, WorkerContext
from services.registry_job import registry_job
from shared.layout import DataLayout
from shared.registry import ModelRegistry
from shared.store import claim_store, open_store
from shared.store.view import publish_view, record_store_url
from tests.services.conftest import run_burst_worker


@pytest.fixture
def promoted_twice(layout: DataLayout, registry: ModelRegistry, initial_version: str) -> str:
    """A registry where 000002 superseded 000001 as best; returns the store URL (a local directory) holding the
    deployment's view."""
    second = registry.register(registry.get(initial_version).path, parent=initial_version, generation=1).version
    registry.promote(second, reason="gate won", force=True, by="gate")
    url = str(layout.root.parent / "store")
    claim_store(open_store(url), layout.data_id())
    publish_view(open_store(url), layout)
    return url


def _payload(layout: DataLayout, action: str, version: str, **more) -> dict:
    return RegistryChangePayload(data_id=layout.data_id(), game="tictactoe", action=action, version=version,
                                 reason="from the laptop", by="me@laptop", **more).model_dump(mode="json")


def test_the_job_changes_the_registry_with_its_own_checks(layout, context, registry, promoted_twice) -> None:
    record_store_url(layout.root, promoted_twice)          # what `zeroforge run --store` records
    done = registry_job(_payload(layout, "rollback", "1"), context)
    assert done["error"] is None and done["version"] == "000001"
    assert done["entry"]["event"] == "rollback" and done["entry"]["by"] == "me@laptop"
    assert registry.best_version() == "000001" and registry.get("2").status == "retired"
    view = json.loads(open_store(promoted_twice).get_bytes(layout.store_key(layout.registry_view_path)))
    assert '"version": "000001"' in view["files"]["best"]                 # the store's view was republished
    again = registry_job(_payload(layout, "rollback", "000001"), context)
    assert again["entry"] is None and again["error"] is None                 # nothing to change
    refused = registry_job(_payload(layout, "promote", "7"), context)
    assert "unknown model version 000007" in refused["error"] and registry.best_version() == "000001"


def test_the_job_never_runs_on_a_store_replica(layout, promoted_twice, tmp_path: Path) -> None:
    replica = WorkerContext(data_dir=tmp_path / "replica", store=promoted_twice)
    with pytest.raises(PayloadError, match="where the pipeline's data directory is"):
        registry_job(_payload(layout, "rollback", "1"), replica)


def test_rollback_with_store_runs_on_the_data_directory_hosts_worker(layout, context, registry, promoted_twice,
                                                                     fake_redis, monkeypatch) -> None:
    import services.jobqueue

    monkeypatch.setattr(services.jobqueue, "connect", lambda url=None: fake_redis)
    monkeypatch.setenv("REDIS_URL", "redis://in-memory")
    outcome = {}
    asking = threading.Thread(target=lambda: outcome.update(result=CliRunner().invoke(
        models, ["rollback", "1", "--reason", "trying the older one", "--store", promoted_twice, "--wait", "20"])))
    asking.start()
    deadline = time.monotonic() + 20
    while not fake_redis.llen("rq:queue:train") and time.monotonic() < deadline:
        time.sleep(0.02)
    run_burst_worker(fake_redis, context, queues=("train",))
    asking.join(timeout=20)
    result = outcome["result"]
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("rollback: 000001 (previous best 000002, now retired): trying the older one [by ")
    assert registry.best_version() == "000001" and registry.history()[-1]["reason"] == "trying the older one"


def test_a_change_no_worker_takes_is_cancelled(layout, registry, promoted_twice, fake_redis, monkeypatch) -> None:
    import services.jobqueue

    monkeypatch.setattr(services.jobqueue, "connect", lambda url=None: fake_redis)
    monkeypatch.setenv("REDIS_URL", "redis://in-memory")
    result = CliRunner().invoke(models, ["promote", "1", "--store", promoted_twice, "--wait", "1"])
    assert result.exit_code == 2
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "no worker took the promote within 1 s, so it was cancelled" in lines[0]
    assert "zeroforge worker --queues train" in lines[0]
    assert fake_redis.llen("rq:queue:train") == 0 and not fake_redis.keys("rq:job:*")    # never fires later
    assert registry.best_version() == "000002"
    monkeypatch.delenv("REDIS_URL")
    monkeypatch.delenv("ZEROFORGE_REDIS_URL", raising=False)
    no_redis = CliRunner().invoke(models, ["promote", "1", "--store", promoted_twice])
    assert no_redis.exit_code == 2 and "set REDIS_URL" in no_redis.stderr
