"""flows.selfplay_feeder: the self-play queue is kept holding one waiting job per live self-play worker, up to the
bound (fakeredis, zeroforge's worker class registered as a live worker)."""
from __future__ import annotations

from rq import Queue
from rq.serializers import JSONSerializer

from flows.selfplay_feeder import SelfPlayFeeder
from services.jobqueue import QUEUE_SELFPLAY, JobSpec
from services.payloads import MatchPayload
from tests.services.conftest import match_payload


def _live_worker(connection, context, name: str):
    from services.worker import ZeroforgeWorker

    worker = ZeroforgeWorker([QUEUE_SELFPLAY], connection=connection, serializer=JSONSerializer, context=context,
                             name=name)
    worker.register_birth()
    worker.heartbeat()
    return worker


def test_the_queue_holds_a_job_per_live_worker_up_to_the_bound(fake_redis, layout, config, context) -> None:
    payload = MatchPayload.model_validate(match_payload(layout, config, "random", "random", [0], 1))

    def make(i: int) -> JobSpec:
        return JobSpec(func="services.gatekeeper.match_job", payload=payload, queue=QUEUE_SELFPLAY,
                       job_id=f"zf-x-tictactoe-g000002-m000001-sp{i:04d}", timeout_s=60)

    queue = Queue(QUEUE_SELFPLAY, connection=fake_redis, serializer=JSONSerializer)
    feeder = SelfPlayFeeder(make, first_index=2, max_jobs=5, logger=None)
    assert feeder.top_up(fake_redis) == 0 and feeder.jobs == 2         # no live worker: nothing to feed
    _live_worker(fake_redis, context, "w1")
    _live_worker(fake_redis, context, "w2")
    assert feeder.top_up(fake_redis) == 2 and feeder.jobs == 4
    assert queue.get_job_ids() == [make(2).job_id, make(3).job_id]
    assert feeder.top_up(fake_redis) == 0                                # both still waiting: enough
    queue.pop_job_id()                                                   # a worker took one
    assert feeder.top_up(fake_redis) == 1 and feeder.jobs == 5
    queue.pop_job_id()
    assert feeder.top_up(fake_redis) == 0 and feeder.jobs == 5           # the bound
