"""The gnugo:LEVEL player (shared.games.go.gnugo): spec parsing, a paired match against random, how it follows each
game (one rebuild per game, set-up of positions without history, restart after a crash), bounded reads, and no
GNU Go process left behind."""
from __future__ import annotations

import os
import signal
import sys

import numpy as np
import pytest

from shared.games import GameError, make_game
from shared.games.go import gnugo
from shared.games.go.gnugo import GnuGoError, GnuGoPlayer, GtpProcess
from shared.players.spec import PlayerSpec, PlayerSpecError, build_player, parse_player_spec
from shared.players.arena import play_match
from shared.players.player import RandomPlayer
from shared.search import SearchConfig, opening_set
from tests.gnugo_helpers import gnugo_children, requires_gnugo

GO9 = make_game("go-9x9")


@pytest.fixture
def count_rebuilds(monkeypatch) -> list[int]:
    """Plies of the states a GnuGoPlayer had to rebuild from scratch (no record continued them)."""
    plies: list[int] = []
    original = GnuGoPlayer._rebuild_commands

    def spy(self, state):
        plies.append(int(state[GO9.num_cells + 2]))
        return original(self, state)

    monkeypatch.setattr(GnuGoPlayer, "_rebuild_commands", spy)
    return plies


def random_game_state(plies: int, seed: int) -> np.ndarray:
    """The [1, S] state after `plies` random legal non-pass moves (a live game)."""
    rng = np.random.default_rng(seed)
    state = GO9.initial_states(1)
    for _ in range(plies):
        legal = np.flatnonzero(GO9.legal_mask(state)[0, :-1])
        state = GO9.step(state, rng.choice(legal)[None])
    assert not GO9.is_terminal(state)[0]
    return state


def test_spec_parsing():
    assert parse_player_spec("gnugo:0") == PlayerSpec("gnugo", "0")
    assert parse_player_spec("gnugo:10") == PlayerSpec("gnugo", "10")
    for bad in ("gnugo", "gnugo:11", "gnugo:x", "gnugo:-1", "gnugo:1:2"):
        with pytest.raises(PlayerSpecError, match="gnugo:LEVEL with LEVEL from 0 to 10"):
            parse_player_spec(bad)


def test_plays_go_only():
    with pytest.raises(GameError, match="GNU Go plays only Go"):
        build_player("gnugo:1", make_game("tictactoe"), search=SearchConfig())


def test_missing_gnugo_says_how_to_install(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(gnugo, "DEBIAN_GNUGO", tmp_path / "gnugo")
    with pytest.raises(GnuGoError, match=r"not installed.*apt-get install gnugo"):
        build_player("gnugo:1", GO9, search=SearchConfig())


def test_reads_have_deadlines_and_a_dead_engine_is_an_error():
    silent = [sys.executable, "-c", "import time; time.sleep(60)"]
    with pytest.raises(GnuGoError, match="did not start as a GTP engine.*did not answer within 0.5 s"):
        GtpProcess(silent, timeout=0.5)
    with pytest.raises(GnuGoError, match="did not start as a GTP engine.*has stopped"):
        GtpProcess([sys.executable, "-c", "pass"], timeout=5)


@requires_gnugo
def test_paired_match_against_random_follows_each_game(count_rebuilds):
    random_player = RandomPlayer(GO9, np.random.default_rng(0))
    with GnuGoPlayer(GO9, 0) as player:
        result = play_match(GO9, player, random_player, opening_set(GO9, 1, seed=3), games_per_opening=2)
        assert len(player.process_ids) == 2 and set(player.process_ids) <= set(gnugo_children())
    assert [g.result for g in result.games] == [1, 1]                 # GNU Go beats random with either colour
    assert count_rebuilds == [2, 3]        # each game was rebuilt once (after its 2-ply opening), then followed
    assert gnugo_children() == []


@requires_gnugo
def test_position_without_history_is_set_up(count_rebuilds):
    state = random_game_state(30, seed=5)                              # too old for the history boards
    rng = np.random.default_rng(1)
    with GnuGoPlayer(GO9, 0) as player:
        for _ in range(4):
            action = player.select_actions(state)
            assert action.shape == (1,) and GO9.legal_mask(state)[0, action[0]]
            state = GO9.step(state, action)
            state = GO9.step(state, RandomPlayer(GO9, rng).select_actions(state))
    assert count_rebuilds == [30]                                      # set up once, then followed
    assert gnugo_children() == []


@requires_gnugo
def test_crashed_process_is_restarted_with_its_game(count_rebuilds):
    states = np.concatenate([random_game_state(2, seed=s) for s in (1, 2)])     # Black to move in both
    rng = np.random.default_rng(2)
    with GnuGoPlayer(GO9, 0) as player:
        for turn in range(8):
            if turn == 4:
                victim = player.process_ids[0]
                os.kill(victim, signal.SIGKILL)
            actions = player.select_actions(states)
            assert GO9.legal_mask(states)[np.arange(2), actions].all()
            states = GO9.step(states, actions)
            states = GO9.step(states, RandomPlayer(GO9, rng).select_actions(states))
            assert not GO9.is_terminal(states).any()
        assert len(player.process_ids) == 2 and victim not in player.process_ids
        player.reset()                                                 # reset stops the processes
        assert gnugo_children() == []
    assert count_rebuilds == [2, 2]                                    # the restart replayed the game's record


@requires_gnugo
def test_a_move_that_times_out_stops_every_process():
    state = random_game_state(2, seed=3)
    with GnuGoPlayer(GO9, 10, move_timeout=1e-4) as player:          # no engine answers genmove that fast
        with pytest.raises(GnuGoError, match="did not answer within"):
            player.select_actions(np.concatenate([state, state]))
        assert player.process_ids == [] and gnugo_children() == []
        player.move_timeout = 60.0
        assert GO9.legal_mask(state)[0, player.select_actions(state)[0]]  # usable again afterwards
    assert gnugo_children() == []
