"""Run by tests/e2e/test_rollback_during_gate.py in a fresh process (its own PREFECT_HOME): the real gate and decide
flows on a real redis-server with an in-process worker thread, while `zeroforge models rollback` runs in another
process in the middle of the gate's job. Prints one JSON line with what the registry says afterwards.
Prefect is configured as `zeroforge run` configures it (flows.prefect_env.configure_prefect, before prefect is
imported): without it the temporary server runs Prefect's telemetry service, whose writes can fail with "database
is locked" on a loaded machine and print a traceback that is not the pipeline's.

    python -m tests.e2e.rollback_scenario DATA_DIR
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

from rq.serializers import JSONSerializer
from rq.timeouts import TimerDeathPenalty

from flows.prefect_env import configure_prefect

configure_prefect(Path(sys.argv[1]) if len(sys.argv) > 1 else Path.cwd(), use_recorded_ui=False)

import services.gatekeeper as gatekeeper  # noqa: E402 (after configure_prefect)
from flows.gate import gate_flow  # noqa: E402
from flows.promote import decide_flow  # noqa: E402
from services.initial_model import ensure_initial_model
from services.jobqueue import QUEUE_EVAL, REDIS_URL_ENV, connect
from services.payloads import WorkerContext
from services.redis_server import ensure_redis
from services.worker import ZeroforgeWorker
from shared.config import PipelineConfig, load_config
from shared.layout import DataLayout
from shared.registry import ModelRegistry


class ThreadWorker(ZeroforgeWorker):
    """A ZeroforgeWorker that can run in a thread (no signal handlers, a timer instead of SIGALRM)."""

    death_penalty_class = TimerDeathPenalty

    def _install_signal_handlers(self) -> None:
        pass


def main(data: Path) -> None:
    cfg = load_config(PipelineConfig, "tictactoe", env=None, overrides={
        "game.blocks": 1, "game.channels": 8, "gate.games": 8, "gate.jobs": 1, "gate.simulations": 4,
        "gate.promote_rule": "score_above", "gate.threshold": 0.01, "gate.early_stop": "false", "gate.anchor": "none"})
    layout = DataLayout(data, "tictactoe")
    registry = ModelRegistry(layout.registry_dir)
    first = ensure_initial_model(layout, cfg.game, 0)
    second = registry.register(registry.get(first).path, parent=first, generation=1).version
    registry.set_gate_result(second, {"score": 0.6, "promote": True})
    registry.promote(second, reason="gate gen 1", by="gate")
    # the candidate is a copy of the best model: the gate's games are even, so score_above 0.01 promotes it
    candidate = registry.register(registry.get(second).path, parent=second, generation=2).version

    real_chunk = gatekeeper.play_match_chunk
    rollbacks = []

    def chunk_with_a_rollback(*args, **kwargs):
        if not rollbacks:   # an operator rolls back while the gate's first job is running
            rollbacks.append(subprocess.run(
                [sys.executable, "-m", "cli", "models", "rollback", first, "--reason", "regressed in play",
                 "--data-dir", str(data), "--game", "tictactoe"], capture_output=True, text=True, timeout=120))
        return real_chunk(*args, **kwargs)

    gatekeeper.play_match_chunk = chunk_with_a_rollback
    with ensure_redis(prefer=("path",)) as redis:
        os.environ[REDIS_URL_ENV] = redis.url
        worker = ThreadWorker([QUEUE_EVAL], connection=connect(redis.url), serializer=JSONSerializer,
                              context=WorkerContext(data_dir=data), heartbeat_s=1)
        thread = threading.Thread(target=worker.work, kwargs={"max_idle_time": 60}, daemon=True)
        thread.start()
        gate = gate_flow(config=cfg, generation=2, data_dir=str(data), candidate=candidate, best=second)
        decision = decide_flow(config=cfg, generation=2, data_dir=str(data), candidate=candidate, best=second,
                               gate=gate)
    after = ModelRegistry(layout.registry_dir)
    record = after.get(candidate)
    print(json.dumps({
        "gate_promote": gate["promote"], "decision": decision, "best": after.best_version(),
        "candidate": candidate, "first": first, "second": second, "status": record.status,
        "second_status": after.get(second).status,
        "reason": record.status_reason, "rollback_rc": rollbacks[0].returncode if rollbacks else None,
        "rollback_out": (rollbacks[0].stdout + rollbacks[0].stderr) if rollbacks else "",
        "history": [(h["event"], h["version"]) for h in after.history()],
    }))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
