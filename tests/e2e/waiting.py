"""Polling helper of the end-to-end tests."""
from __future__ import annotations

import time


def wait_until(predicate, timeout_s: float, what: str, poll_s: float = 0.05):
    """Call predicate() every poll_s seconds until it returns a truthy value, and return that value; fail the
    test with "timed out waiting for <what>" after timeout_s seconds."""
    deadline = time.monotonic() + timeout_s
    while True:
        value = predicate()
        if value:
            return value
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(poll_s)
