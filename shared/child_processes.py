"""Child processes that end with the program that started them, however it ends (kill -9 included).

A program that starts a server (a private redis-server, Prefect's temporary server, SeaweedFS, local workers) stops
it in its own cleanup; a program killed with SIGKILL, or by the OOM killer, runs no cleanup, and its servers would
keep running (holding ports and memory) with no one left to stop them. Linux sends a child a chosen signal when its
parent dies if the child asks for it between fork and exec (prctl PR_SET_PDEATHSIG); the ask survives the exec.

The "parent" Linux watches is the *thread* that forked the child, not the process: a server started from a
short-lived thread would be killed as soon as that thread returned. So every child started here is forked by one
daemon thread that lives as long as the process (one per process, started on first use). Daemon threads outlive the
interpreter's exit handlers (they end only when the process itself exits), so a program that ends normally still
stops its children its own way first (SIGTERM from its cleanup, atexit handlers), and the signal is only the
backstop. Where prctl is missing (not Linux) children are started plainly.
"""
from __future__ import annotations

import os
import queue
import signal
import subprocess
import threading
from concurrent.futures import Future
from typing import Any, Callable

__all__ = ["process_exists", "start_tied"]


def _load_prctl():
    """libc's prctl, resolved once in the parent (a child between fork and exec must not load libraries)."""
    try:
        import ctypes

        return ctypes.CDLL("libc.so.6", use_errno=True).prctl
    except (OSError, AttributeError):
        return None


_PRCTL = _load_prctl()
_PR_SET_PDEATHSIG = 1


def _die_with_parent(parent_pid: int, then: Callable[[], Any] | None) -> Callable[[], None]:
    """A preexec_fn: in the child before exec, ask Linux for SIGKILL when its parent thread ends, and exit at once if
    the parent already died before that (the signal would never come); then run the caller's own preexec_fn."""
    def arm() -> None:
        if _PRCTL is not None:
            _PRCTL(_PR_SET_PDEATHSIG, int(signal.SIGKILL))
            if os.getppid() != parent_pid:
                os._exit(1)
        if then is not None:
            then()
    return arm


class _Spawner:
    """The one thread of this process that forks tied children (see the module's docstring)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pid: int | None = None
        self._requests: queue.SimpleQueue | None = None

    def submit(self, args: tuple, kwargs: dict) -> subprocess.Popen:
        with self._lock:
            if self._pid != os.getpid():   # first use, or a forked copy of this process: no thread here yet
                self._requests = queue.SimpleQueue()
                threading.Thread(target=self._serve, args=(self._requests,), name="zeroforge-child-spawner",
                                 daemon=True).start()
                self._pid = os.getpid()
            requests = self._requests
        result: Future = Future()
        requests.put((args, kwargs, result))
        return result.result()   # the Popen, or what Popen raised (FileNotFoundError, ...)

    @staticmethod
    def _serve(requests: queue.SimpleQueue) -> None:
        while True:
            args, kwargs, result = requests.get()
            try:
                kwargs = dict(kwargs, preexec_fn=_die_with_parent(os.getpid(), kwargs.get("preexec_fn")))
                result.set_result(subprocess.Popen(*args, **kwargs))
            except BaseException as exc:   # handed to the caller, which raises it
                result.set_exception(exc)


_SPAWNER = _Spawner()


def start_tied(*popen_args: Any, **popen_kwargs: Any) -> subprocess.Popen:
    """`subprocess.Popen(*popen_args, **popen_kwargs)`, except that the child gets SIGKILL when this process ends
    by any means (a normal exit first runs the program's own cleanup, which should stop it more gently). Takes and
    returns exactly what Popen does (a caller's preexec_fn runs after the arming); raises what Popen raises. Safe
    from any thread; the child does not die when the calling thread ends."""
    return _SPAWNER.submit(popen_args, popen_kwargs)


def process_exists(pid: int) -> bool:
    """True while a process with this PID exists (of any user; a zombie counts), False once it is gone."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:      # another user's process
        return True
    return True
