"""services.inference: one server batches several client processes' requests; outputs and games are exact."""
from __future__ import annotations

import multiprocessing as mp
import threading

import numpy as np
import pytest

from services.inference import InferenceClient, InferenceServer, server_parallelism
from shared.games import make_game
from shared.search.errors import EvaluatorError
from tests.search.helpers import HashEvaluator, RecordingEvaluator


def _positions(game, count, seed):
    rng = np.random.default_rng(seed)
    states = game.initial_states(count)
    for _ in range(3):
        mask = game.legal_mask(states)
        actions = np.array([rng.choice(np.flatnonzero(row)) for row in mask])
        stepped = game.step(states, actions)
        keep = ~game.is_terminal(stepped)
        states[keep] = stepped[keep]
    return states


def _ask_from_threads(server, batches):
    """Send batch k from thread k through its own in-process client, all at once; returns {k: (logits, values)}."""
    clients = [InferenceClient(server.connect()) for _ in batches]
    outputs: dict[int, tuple] = {}

    def run(k):
        outputs[k] = clients[k](batches[k])

    threads = [threading.Thread(target=run, args=(k,)) for k in range(len(batches))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    return outputs


def _client_main(conn, states_list, out_queue, index):
    """Child process: evaluate each batch through the server, put the outputs on out_queue."""
    client = InferenceClient(conn)
    outputs = [client(states) for states in states_list]
    client.finish("done", len(outputs))
    out_queue.put((index, outputs))


def test_two_client_processes_get_exactly_the_direct_outputs():
    game = make_game("tictactoe")
    evaluator = RecordingEvaluator(game)
    batches = [[_positions(game, n, seed=10 * k + n) for n in (3, 5, 7, 1)] for k in range(2)]
    ctx = mp.get_context("spawn")
    out = ctx.Queue()
    before = threading.active_count()
    with InferenceServer(evaluator, window_s=1.0) as server:   # long window: merging does not depend on timing
        procs = [ctx.Process(target=_client_main, args=(server.connect(), batches[k], out, k)) for k in range(2)]
        for p in procs:
            p.start()
        server.release_client_ends()
        got = dict(out.get(timeout=60) for _ in procs)
        for p in procs:
            p.join(30)
            assert p.exitcode == 0
    assert threading.active_count() == before            # the server thread is gone
    direct = HashEvaluator(game)
    for k in range(2):
        for states, (logits, values) in zip(batches[k], got[k]):
            want_logits, want_values = direct(states)
            np.testing.assert_array_equal(logits, want_logits)
            np.testing.assert_array_equal(values, want_values)
    assert sum(evaluator.batches) == 2 * (3 + 5 + 7 + 1)
    assert len(evaluator.batches) < 8                     # some requests were merged into one call
    assert server.results() == {0: ("done", 4), 1: ("done", 4)}


def test_in_process_client_and_evaluator_errors_reach_the_client():
    game = make_game("tictactoe")

    def broken(states):
        raise ValueError("bad weights")

    with InferenceServer(broken) as server:
        client = InferenceClient(server.connect())
        with pytest.raises(EvaluatorError, match="bad weights"):
            client(game.initial_states(2))
    with pytest.raises(EvaluatorError, match="server gone"):  # closed server: an error, not a hang
        client(game.initial_states(2))


def test_torch_evaluator_behind_the_server_matches_direct_calls_from_two_threads():
    from shared.network import NetworkSpec, TorchEvaluator, create_model

    game = make_game("connect4")
    evaluator = TorchEvaluator(create_model(game, NetworkSpec(1, 16, 16), seed=3), game, precision="fp32")
    batches = [_positions(game, n, seed=n) for n in (5, 9)]
    with InferenceServer(evaluator, window_s=0.5) as server:
        outputs = _ask_from_threads(server, batches)
    assert server.calls == 1 and server.positions == 14     # both requests in one forward pass
    for k, states in enumerate(batches):
        logits, values = evaluator(states)
        np.testing.assert_allclose(outputs[k][0], logits, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(outputs[k][1], values, rtol=1e-5, atol=1e-5)


def test_server_parallelism_merges_on_a_gpu_and_runs_one_pass_per_client_on_a_cpu():
    assert server_parallelism("cuda", 4) == server_parallelism("cuda:1", 3) == 1
    assert server_parallelism("cpu", 3) == 3 and server_parallelism("cpu", 1) == 1
    with pytest.raises(ValueError, match="parallel"):
        InferenceServer(HashEvaluator(make_game("tictactoe")), parallel=0)


def test_parallel_mode_evaluates_each_request_on_its_own_and_at_the_same_time():
    game = make_game("tictactoe")
    both_inside = threading.Barrier(2, timeout=30)    # passes only when two evaluator calls run at once
    direct = HashEvaluator(game)

    def evaluate(states):
        both_inside.wait()
        return direct(states)

    batches = [_positions(game, n, seed=n) for n in (3, 6)]
    with InferenceServer(evaluate, window_s=1.0, parallel=2) as server:   # the window is not waited in this mode
        outputs = _ask_from_threads(server, batches)
    assert server.calls == 2 and server.requests == 2 and server.positions == 9    # never merged
    for k, states in enumerate(batches):
        np.testing.assert_array_equal(outputs[k][0], direct(states)[0])
        np.testing.assert_array_equal(outputs[k][1], direct(states)[1])


def test_torch_evaluator_called_from_two_threads_at_once_gives_the_serial_outputs(monkeypatch):
    import time

    import shared.network.evaluator as evaluator_module
    from shared.network import NetworkSpec, TorchEvaluator, create_model

    game = make_game("connect4")
    measured = []
    real_resolve = evaluator_module.resolve_precision

    def slow_resolve(*args):
        measured.append(args[-1])
        time.sleep(0.2)                               # widen the window in which a second thread could measure too
        return real_resolve(*args)

    monkeypatch.setattr(evaluator_module, "resolve_precision", slow_resolve)
    evaluator = TorchEvaluator(create_model(game, NetworkSpec(1, 16, 16), seed=3), game, precision="auto")
    states = _positions(game, 8, seed=1)
    serial = evaluator(states)
    measured.clear()
    evaluator._bucket_bf16.clear()
    outputs: list = [None] * 4
    start = threading.Barrier(4, timeout=30)

    def run(k):
        start.wait()
        outputs[k] = evaluator(states)

    threads = [threading.Thread(target=run, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert len(measured) == 1                         # auto's decision was made once, not once per thread
    for logits, values in outputs:
        np.testing.assert_array_equal(logits, serial[0])
        np.testing.assert_array_equal(values, serial[1])
