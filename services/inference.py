"""Shared-network inference: several self-play processes, one network on the device, merged forward passes.

    with InferenceServer(evaluator) as server:              # the parent holds the model (one copy)
        conn = server.connect()                              # one duplex pipe per client
        ... child process: InferenceClient(conn)(states) -> (logits, values), like the evaluator itself

The server is a thread of the process that holds the network. Each client owns one duplex pipe
(multiprocessing.Pipe) and sends one request at a time: `("eval", states [M, S] int16)`, answered by
`("ok", (logits [M, A] float32, values [M] float32))` or `("error", message)`. The server waits (blocking, with a
timeout, never spinning) for any request, then up to `window_s` more for the other clients' requests, and
evaluates everything it holds in ONE evaluator call (concatenated in client order), then answers each client
with its rows. A row's output does not depend on the other rows for row-wise evaluators (exactly) and for the
torch network up to float rounding of the batch size's kernels.

Two ways to serve, chosen by `server_parallelism(device, clients)`:
- merged (parallel=1, a GPU): one evaluator call at a time on everything that arrived; a bigger batch keeps the
  device busier at little extra cost per pass.
- parallel (parallel=N > 1, a CPU): each request is evaluated on its own, up to N at once on a pool of threads
  (torch runs a pass without holding the GIL), one torch thread each. On a CPU a pass costs about the same per
  position at any batch, so merging only serialises the network on one core: two search processes sharing one
  merged network on two cores ran at 0.59-0.74x of two separate workers (BENCHMARKS.md); answered in parallel,
  the same network (one copy of the weights) runs on every core, and each pass sees exactly the batch a
  separate worker would (the same outputs bit for bit).

Pipes carry numpy arrays pickled (a few hundred KB per step at most); that is simpler and robust (a client that
dies closes its pipe end, which the server sees as EOF) and costs little next to a forward pass.

The self-play job executor on top of it (N search processes kept across jobs) is services.search_pool. This
module imports no torch: the search processes stay light.
"""
from __future__ import annotations

import multiprocessing as mp
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from multiprocessing.connection import Connection, wait
from typing import Any, Callable

import numpy as np

from shared.search.errors import EvaluatorError

Evaluate = Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]
#: how long the server thread blocks waiting for requests before it checks for a stop request
POLL_S = 0.05


def server_parallelism(device: str, clients: int) -> int:
    """How many evaluator calls an InferenceServer for `clients` search processes runs at once on `device`:
    1 on a GPU (merged batches), `clients` on a CPU (each request on its own core); see the module docstring."""
    return 1 if str(device).startswith("cuda") else max(1, int(clients))


class InferenceServer:
    """Serves the evaluation requests of several clients with one evaluator; see the module docstring.

    evaluate: the Evaluator (states [M, S] int16 -> logits [M, A] float32, values [M] float32), called only from
    the server's threads. window_s: how long to wait for the other clients once one request arrived (merged
    mode). parallel: 1 merges the requests that arrived into one call; N > 1 evaluates each request on its own,
    up to N calls at once (the evaluator must then allow calls from several threads, as TorchEvaluator does).
    Statistics: `calls` evaluator calls, `positions` positions evaluated, `requests` requests answered.
    """

    def __init__(self, evaluate: Evaluate, window_s: float = 0.002, parallel: int = 1) -> None:
        if window_s < 0:
            raise ValueError(f"window_s={window_s} must be >= 0")
        if parallel < 1:
            raise ValueError(f"parallel={parallel} must be >= 1")
        self.evaluate = evaluate
        self.window_s = window_s
        #: the threads of parallel mode (None when merged: the server thread evaluates)
        self._pool = ThreadPoolExecutor(parallel, thread_name_prefix="inference") if parallel > 1 else None
        self._conns: list[Connection] = []          # server ends of live clients
        self._client_ends: list[Connection] = []    # client ends, closed here once handed over
        self._adopted: list[Connection] = []        # server ends that are the caller's (`adopt`): never closed here
        self._finished: dict[int, Any] = {}         # client index -> its ("done", payload) message payload
        self._index: dict[int, int] = {}            # id(server end) -> client index
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.calls = self.positions = self.requests = 0

    # ----- life cycle ------------------------------------------------------------------------------------
    def connect(self) -> Connection:
        """A new client's end of its pipe (pass it to a child process, or wrap it in InferenceClient)."""
        server_end, client_end = mp.Pipe(duplex=True)
        with self._lock:
            self._index[id(server_end)] = len(self._index)
            self._conns.append(server_end)
            self._client_ends.append(client_end)
        return client_end

    def adopt(self, conn: Connection) -> None:
        """Serve a client over an existing pipe end (this process's end of a long-lived search process's pipe):
        like `connect`, but the pipe stays open when the client finishes or the server closes (it is the
        caller's). The client's final message still ends its service by this server."""
        with self._lock:
            self._index[id(conn)] = len(self._index)
            self._conns.append(conn)
            self._adopted.append(conn)

    def start(self) -> "InferenceServer":
        """Start the server thread (idempotent)."""
        if self._thread is None:
            self._thread = threading.Thread(target=self._serve, name="inference-server", daemon=True)
            self._thread.start()
        return self

    def close(self, timeout: float = 10.0) -> None:
        """Stop the server thread (joined), wait for the evaluator calls under way and close every pipe end."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)
            if self._thread.is_alive():  # pragma: no cover - an evaluator call longer than timeout
                raise RuntimeError("inference server thread did not stop")
        if self._pool is not None:
            self._pool.shutdown(wait=True)
        with self._lock:
            for conn in self._conns + self._client_ends:
                if not self._is_adopted(conn):
                    conn.close()
            self._conns.clear()
            self._client_ends.clear()

    def release_client_ends(self) -> None:
        """Close this process's copies of the client ends (after the children got theirs), so that a child
        dying shows as EOF on the server end."""
        with self._lock:
            for conn in self._client_ends:
                conn.close()
            self._client_ends.clear()

    def __enter__(self) -> "InferenceServer":
        return self.start()

    def __exit__(self, *_exc: object) -> None:
        self.close()

    @property
    def alive_clients(self) -> int:
        """Clients whose pipe is still open and that have not reported done."""
        with self._lock:
            return len(self._conns)

    def results(self) -> dict[int, Any]:
        """Payloads of the clients' ("done", payload) messages, by client index (connect order)."""
        with self._lock:
            return dict(self._finished)

    # ----- serving ---------------------------------------------------------------------------------------
    def _serve(self) -> None:
        while not self._stop.is_set():
            with self._lock:
                conns = list(self._conns)
            if not conns:
                self._stop.wait(POLL_S)
                continue
            ready = wait(conns, timeout=POLL_S)
            if not ready:
                continue
            requests = self._read(ready)
            if self._pool is not None:                  # parallel: each request on its own, at once
                for request in requests:
                    self._pool.submit(self._answer, [request])
                continue
            deadline = time.monotonic() + self.window_s
            while True:
                with self._lock:
                    waiting = [c for c in self._conns if all(c is not r for r, _ in requests)]
                remaining = deadline - time.monotonic()
                if not waiting or remaining <= 0:
                    break
                more = wait(waiting, timeout=remaining)
                if not more:
                    break
                requests += self._read(more)
            if requests:
                self._answer(requests)

    def _read(self, ready: list) -> list[tuple[Connection, np.ndarray]]:
        """Receive one message from each ready pipe; returns the evaluation requests among them."""
        requests = []
        for conn in ready:
            try:
                kind, payload = conn.recv()
            except (EOFError, OSError):
                self._drop(conn)
                continue
            if kind == "eval":
                requests.append((conn, payload))
            else:  # "done" or "error": the client's final message
                with self._lock:
                    self._finished[self._index[id(conn)]] = (kind, payload)
                self._drop(conn)
        return requests

    def _drop(self, conn: Connection) -> None:
        with self._lock:
            if any(conn is c for c in self._conns):
                self._conns = [c for c in self._conns if c is not conn]
                if not self._is_adopted(conn):
                    conn.close()

    def _is_adopted(self, conn: Connection) -> bool:
        return any(conn is c for c in self._adopted)

    def _answer(self, requests: list[tuple[Connection, np.ndarray]]) -> None:
        """One evaluator call for all requests [sum M_i, S]; each client gets its rows back."""
        sizes = [states.shape[0] for _, states in requests]
        try:
            logits, values = self.evaluate(np.concatenate([states for _, states in requests]))
            logits, values = np.asarray(logits, np.float32), np.asarray(values, np.float32)
            replies = []
            start = 0
            for size in sizes:
                replies.append(("ok", (logits[start:start + size], values[start:start + size])))
                start += size
            with self._lock:
                self.calls += 1
                self.positions += start
        except Exception as exc:  # the clients raise it; the server keeps serving
            replies = [("error", f"{type(exc).__name__}: {exc}")] * len(requests)
        for (conn, _), reply in zip(requests, replies):
            try:
                conn.send(reply)
                with self._lock:
                    self.requests += 1
            except (BrokenPipeError, OSError):
                self._drop(conn)


class InferenceClient:
    """The search's Evaluator over an InferenceServer pipe: states [M, S] int16 -> (logits [M, A] float32,
    values [M] float32). One request at a time per client; EvaluatorError when the server is gone or the
    evaluation failed."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    def __call__(self, states: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        try:
            self.conn.send(("eval", np.ascontiguousarray(states)))
            kind, payload = self.conn.recv()
        except (EOFError, OSError) as exc:
            raise EvaluatorError(f"inference server gone: {exc}") from None
        if kind != "ok":
            raise EvaluatorError(f"inference server: {payload}")
        return payload

    def finish(self, kind: str, payload: Any) -> None:
        """Send the client's final message ("done" with a result, or "error" with a message) and close."""
        try:
            self.conn.send((kind, payload))
        finally:
            self.conn.close()


__all__ = ["InferenceClient", "InferenceServer", "server_parallelism"]
