"""Names in the Prefect UI carry the data directory's identity; `zeroforge ui` picks and remembers its port."""
from __future__ import annotations

import re
import socket
from pathlib import Path

import pytest

from flows.naming import artifact_key, name_prefix, run_identity
from flows.prefect_env import (UI_PORT, choose_ui_port, forget_ui_server, port_is_free, record_ui_server,
                               recorded_ui_port, recorded_ui_server)
from shared.layout import LayoutError, data_id


def test_names_carry_the_data_directory_identity(tmp_path: Path) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    assert run_identity(first) == data_id(first)[:6] and re.fullmatch(r"[0-9a-f]{6}", run_identity(first))
    assert run_identity(first) != run_identity(second)     # 2^-24 chance of a clash between two random ids
    assert name_prefix("tictactoe", first) == f"tictactoe-{run_identity(first)}"
    assert artifact_key("gomoku-15", first, "gate", 3) == f"gomoku-15-{run_identity(first)}-gen3-gate"
    assert artifact_key("tictactoe", first, "strength") == f"tictactoe-{run_identity(first)}-strength"
    assert re.fullmatch(r"[a-z0-9-]+", artifact_key("gomoku-9x9.5_x", first, "Gate Report", 12))


def test_identity_is_not_made_when_not_asked(tmp_path: Path) -> None:
    with pytest.raises(LayoutError, match="identity"):
        run_identity(tmp_path / "missing", create=False)
    assert not (tmp_path / "missing").exists()


def _busy_port() -> socket.socket:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    return listener


def test_ui_port_recorded_then_4200_then_any(tmp_path: Path) -> None:
    assert recorded_ui_port(tmp_path) is None
    first = choose_ui_port(tmp_path)
    assert first == UI_PORT or not port_is_free(UI_PORT)
    with _busy_port() as listener:
        port = listener.getsockname()[1]
        record_ui_server(tmp_path, f"http://127.0.0.1:{port}/api", pid=999_999_999)
        assert recorded_ui_port(tmp_path) == port and not port_is_free(port)
        assert recorded_ui_server(tmp_path) is None        # no such process: no server to report to
        chosen = choose_ui_port(tmp_path)                  # the recorded port is taken
        assert chosen != port and (chosen == UI_PORT or not port_is_free(UI_PORT))
    assert choose_ui_port(tmp_path) == port                # free again: the directory gets its port back
    forget_ui_server(tmp_path, pid=1)                      # another process's record is left alone
    assert recorded_ui_port(tmp_path) == port
    forget_ui_server(tmp_path, pid=999_999_999)
    assert recorded_ui_server(tmp_path) is None and recorded_ui_port(tmp_path) == port
