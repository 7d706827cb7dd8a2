"""Self-play over N search processes that share one network: a pool of long-lived processes, kept across jobs.

    pool = SearchProcessPool(2)                               # spawns nothing yet
    records = pool.play("connect4", evaluator, 512, config, seeds=[11, 12])   # spawns 2 processes, plays
    records = pool.play("connect4", evaluator, 512, config, seeds=[13, 14])   # the same 2 processes
    pool.close()

Each search process plays its share of a job's games with `play_selfplay_games` through an InferenceClient; this
process serves their leaves with the job's one evaluator (an `InferenceServer` over the processes' pipes, see
services.inference) and merges their records in process order. The processes wait for the next job between
jobs, so a worker pays their start (about 1.6 s a job with 2 processes on a 2-core VM: a fresh Python, numpy,
the compiled kernels loaded) once instead of at every job. After a job that failed in any way (a process's
error or death, the evaluator's error, the timeout) every process is stopped and the next job starts new ones.

Messages on a process's pipe, besides the client's evaluation requests: ("play", game name, games, SelfPlayConfig,
seed) from the pool; ("done", records as a dict of arrays) or ("error", traceback) back; ("stop",) or the pipe's
end closing ends the process. `worker_pool(N)` is the pool of this process for N search processes (the worker's
`--processes`); `play_selfplay_shared` runs one job on a pool of its own.
"""
from __future__ import annotations

import multiprocessing as mp
import time
import traceback
from dataclasses import fields
from multiprocessing.connection import Connection, wait

import numpy as np

from services.inference import POLL_S, Evaluate, InferenceClient, InferenceServer
from shared.search.errors import EvaluatorError
from shared.search.selfplay import SelfPlayConfig, SelfPlayRecords


def _search_process(conn: Connection) -> None:
    """A pool's search process: play each job sent on `conn` until told to stop or the pool's end closes."""
    from shared.games import make_game
    from shared.search.selfplay import play_selfplay_games

    client = InferenceClient(conn)
    while True:
        try:
            message = conn.recv()
        except (EOFError, OSError):
            return
        if message[0] != "play":
            return
        _, game_name, num_games, config, seed = message
        try:
            records = play_selfplay_games(make_game(game_name), client, num_games, config,
                                          np.random.default_rng(seed))
            reply = ("done", records_as_dict(records))
        except BaseException:
            reply = ("error", traceback.format_exc(limit=8))
        try:
            conn.send(reply)
        except (BrokenPipeError, OSError):
            return


def records_as_dict(records: SelfPlayRecords) -> dict[str, np.ndarray]:
    """The records' arrays by field name (what crosses a process boundary; SelfPlayRecords(**d) rebuilds them)."""
    return {f.name: getattr(records, f.name) for f in fields(SelfPlayRecords)}


def merge_records(parts: list[SelfPlayRecords]) -> SelfPlayRecords:
    """Concatenate the records of several game batches; game ids of part k are offset by the games before it."""
    offsets = np.cumsum([0] + [p.results.shape[0] for p in parts[:-1]])
    merged = {}
    for f in fields(SelfPlayRecords):
        chunks = [getattr(p, f.name) for p in parts]
        if f.name == "game_id":
            chunks = [(c + off).astype(np.int32) for c, off in zip(chunks, offsets)]
        # Optional per-game fields (ownership: games with territory only) are None in every part or in none.
        merged[f.name] = None if any(c is None for c in chunks) else np.concatenate(chunks)
    return SelfPlayRecords(**merged)


def split_games(num_games: int, processes: int) -> list[int]:
    """num_games split as evenly as possible over min(processes, num_games) processes (larger shares first)."""
    count = max(1, min(processes, num_games))
    return [num_games // count + (1 if k < num_games % count else 0) for k in range(count)]


class SearchProcessPool:
    """`processes` spawned search processes kept across self-play jobs; see the module docstring."""

    def __init__(self, processes: int) -> None:
        if processes < 1:
            raise ValueError(f"processes={processes} must be >= 1")
        self.processes = processes
        self._children: list = []
        self._conns: list[Connection] = []          # this process's end of each child's pipe
        #: processes started so far (a restart after a failed job adds `processes` more)
        self.started = 0

    def __enter__(self) -> "SearchProcessPool":
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    @property
    def pids(self) -> list[int]:
        """The process ids of the running search processes (empty before the first job and after close)."""
        return [child.pid for child in self._children]

    def _ensure_started(self) -> None:
        """Start the processes, or start them again when any of them is gone."""
        if self._children and all(child.is_alive() for child in self._children):
            return
        self.close()
        context = mp.get_context("spawn")
        for _ in range(self.processes):
            ours, theirs = context.Pipe(duplex=True)
            child = context.Process(target=_search_process, args=(theirs,), name="search-process", daemon=True)
            child.start()
            theirs.close()                          # the child's copy is its own: its death shows here as EOF
            self._children.append(child)
            self._conns.append(ours)
        self.started += self.processes

    def play(self, game_name: str, evaluate: Evaluate, num_games: int, config: SelfPlayConfig, seeds: list[int],
             window_s: float = 0.002, timeout_s: float | None = None, parallel: int = 1) -> SelfPlayRecords:
        """Play `num_games` self-play games of `game_name` over the pool's processes, sharing `evaluate` (called
        in this process only).

        Process k plays split_games(num_games, processes)[k] games with np.random.default_rng(seeds[k]); the
        records are merged in process order (game ids offset). window_s, parallel: the InferenceServer's
        (`server_parallelism`; 1 = merged passes). A failure of any kind raises EvaluatorError (with the
        process's traceback when it sent one) and stops every process; the next job starts new ones.
        """
        shares = split_games(num_games, self.processes)
        if len(seeds) < len(shares):
            raise ValueError(f"need {len(shares)} seeds, got {len(seeds)}")
        self._ensure_started()
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        playing = self._children[:len(shares)]
        server = InferenceServer(evaluate, window_s=window_s, parallel=parallel)
        finished = False
        try:
            for conn, share, seed in zip(self._conns, shares, seeds):
                conn.send(("play", game_name, share, config, seed))
                server.adopt(conn)
            server.start()
            while server.alive_clients and not _any_failed(server) and all(c.is_alive() for c in playing):
                if deadline is not None and time.monotonic() > deadline:
                    raise EvaluatorError(f"shared self-play did not finish within {timeout_s} s")
                wait([child.sentinel for child in playing], timeout=POLL_S)   # wakes when a process exits
            # Every process that answered has sent its final message (the server then stops listening to it).
            finished = not _any_failed(server) and len(server.results()) == len(shares)
        finally:
            server.close()
            if not finished:
                self.close()
        results = server.results()
        failures = [payload for kind, payload in results.values() if kind == "error"]
        if failures or len(results) < len(shares):
            raise EvaluatorError("a self-play process failed:\n" + (failures[0] if failures else "it exited early"))
        return merge_records([SelfPlayRecords(**results[k][1]) for k in range(len(shares))])

    def close(self, grace_s: float = 5.0) -> None:
        """Stop every process (asked to stop, then terminated, then killed) and close the pipes."""
        for conn in self._conns:
            try:
                conn.send(("stop",))
            except (BrokenPipeError, OSError):
                pass
            conn.close()
        end = time.monotonic() + grace_s
        for child in self._children:
            child.join(max(0.0, end - time.monotonic()))
        for child in self._children:
            if child.is_alive():
                child.terminate()
                child.join(2.0)
            if child.is_alive():  # pragma: no cover
                child.kill()
                child.join(2.0)
        self._children, self._conns = [], []


def _any_failed(server: InferenceServer) -> bool:
    return any(kind == "error" for kind, _ in server.results().values())


_WORKER_POOL: SearchProcessPool | None = None


def worker_pool(processes: int) -> SearchProcessPool:
    """This process's pool of `processes` search processes, kept from one self-play job to the next (a pool of
    another size is closed and replaced). Its processes end with this process (they are daemons, and a process
    whose pipe closes ends)."""
    global _WORKER_POOL
    if _WORKER_POOL is None or _WORKER_POOL.processes != processes:
        close_worker_pool()
        _WORKER_POOL = SearchProcessPool(processes)
    return _WORKER_POOL


def close_worker_pool() -> None:
    """Stop this process's pool (`worker_pool`), if any."""
    global _WORKER_POOL
    if _WORKER_POOL is not None:
        _WORKER_POOL.close()
        _WORKER_POOL = None


def play_selfplay_shared(game_name: str, evaluate: Evaluate, num_games: int, config: SelfPlayConfig,
                         seeds: list[int], processes: int, window_s: float = 0.002,
                         timeout_s: float | None = None, parallel: int = 1) -> SelfPlayRecords:
    """One job on a pool of its own (started, used, stopped): `SearchProcessPool(processes).play(...)` with the
    same arguments. Every process is stopped before returning."""
    with SearchProcessPool(processes) as pool:
        return pool.play(game_name, evaluate, num_games, config, seeds, window_s=window_s, timeout_s=timeout_s,
                         parallel=parallel)


__all__ = ["SearchProcessPool", "close_worker_pool", "merge_records", "play_selfplay_shared", "records_as_dict",
           "split_games", "worker_pool"]
