"""shared.child_processes.start_tied: a child that dies with the program that started it (kill -9 included), and
not with the thread that started it."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from shared.child_processes import start_tied
from tests.e2e.test_worker_death import _alive
from tests.e2e.waiting import wait_until

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")


# A program that starts one tied and one plain `sleep` from a thread that ends at once, prints their PIDs, and waits.
_PROGRAM = textwrap.dedent("""
    import subprocess, sys, threading, time
    from shared.child_processes import start_tied
    found = {}
    def start():
        found["tied"] = start_tied(["sleep", "120"]).pid
        found["plain"] = subprocess.Popen(["sleep", "120"]).pid
    thread = threading.Thread(target=start)
    thread.start()
    thread.join()
    print(found["tied"], found["plain"], flush=True)
    time.sleep(120)
""")


def test_a_tied_child_dies_when_its_program_is_killed_with_sigkill_and_a_plain_one_does_not() -> None:
    root = Path(__file__).resolve().parents[2]
    program = subprocess.Popen([sys.executable, "-c", _PROGRAM], cwd=root, stdout=subprocess.PIPE, text=True,
                               env=dict(os.environ, PYTHONPATH=str(root)))
    plain = None
    try:
        tied, plain = (int(word) for word in program.stdout.readline().split())
        assert _alive(tied) and _alive(plain)      # the starting thread has ended: the tied child lives on
        program.send_signal(signal.SIGKILL)
        program.wait(timeout=10)
        wait_until(lambda: not _alive(tied), 10, "the tied child to die with its program")
        assert _alive(plain)                       # without the tie it outlives a kill -9 (the bug this fixes)
    finally:
        if program.poll() is None:
            program.kill()
        if plain is not None and _alive(plain):
            os.kill(plain, signal.SIGKILL)


def test_a_tied_child_outlives_the_thread_that_started_it_and_runs_the_callers_preexec_fn() -> None:
    started: list[subprocess.Popen] = []
    thread = threading.Thread(target=lambda: started.append(start_tied(["sleep", "30"], preexec_fn=os.setsid)))
    thread.start()
    thread.join()
    child = started[0]
    try:
        assert child.poll() is None
        assert os.getsid(child.pid) == child.pid   # the caller's preexec_fn ran (a session of its own)
    finally:
        child.kill()
        child.wait()


def test_what_popen_raises_reaches_the_caller() -> None:
    with pytest.raises(FileNotFoundError):
        start_tied(["/nonexistent/zeroforge-no-such-binary"])
    assert start_tied([sys.executable, "-c", "raise SystemExit(3)"]).wait(timeout=30) == 3
