"""Tic-tac-toe: the rules (rules.py), its exact solution and perfect player (minimax.py), and its descriptor."""
from __future__ import annotations

from typing import Any

import numpy as np

from shared.games.base import Game
from shared.games.family import BaselinePlayer, GameFamily
from shared.games.tictactoe.rules import TicTacToe

__all__ = ["FAMILY", "TicTacToe"]

_CONFIG = {
    # solver off in self-play only (matches keep it): with it the default run's raw policy lost 8 of 100
    # paired games to minimax, without it 2 (BENCHMARKS.md, "MCTS-solver in tic-tac-toe self-play").
    "search": {"simulations": 64, "dirichlet_alpha": 1.0, "temperature_moves": 4, "solver": False},
    "selfplay": {"games_per_job": 128, "jobs_per_generation": 2},
    "train": {
        "batch_size": 128, "steps_per_generation": 1500, "replay_window_positions": 20_000,
        "replay_window_generations": 6, "checkpoint_every": 200,
    },
    # gate at 4 simulations: at 16 every game between two decent candidates is drawn and the best stops
    # changing after generation 2-3, so the best's raw policy is what those first generations reached;
    # even at 4 the gate draws every game from generation 3 or so, and an all-drawn gate promotes
    # (BENCHMARKS.md, tic-tac-toe)
    "gate": {"simulations": 4, "jobs": 2, "anchor_games": 40, "promote_all_draws": True},
    "pipeline": {"generations": 8},
}


def _parse(key: str) -> Game | None:
    return TicTacToe() if key == "tictactoe" else None


def _opening_plan(game: Game) -> tuple[tuple[int, ...], np.ndarray]:
    return (1, 2), np.ones(game.num_actions, bool)


def _drawn_only(game: Game, openings: list[list[int]]) -> list[list[int]]:
    """The openings whose exact minimax value is a draw: a random 2-ply opening can be a forced win for one side,
    and then even perfect play loses one game of the pair, which would make "never loses to minimax" meaningless
    as a strength test."""
    from shared.games.tictactoe.minimax import board_keys, solve_values

    values = solve_values(game)
    return [moves for moves in openings if values[board_keys(game, game.play_moves(moves))[0]] == 0]


def _minimax_player(game: Game, value: str, seed: int) -> Any:
    from shared.games.tictactoe.minimax import MinimaxPlayer

    return MinimaxPlayer(game)


def _oracle_set(game: Game, count: int, seed: int):
    from shared.games.tictactoe.oracle import oracle_set

    return oracle_set(game, count, seed)


def _oracle_set_from_positions(game: Game, states, count: int, seed: int):
    from shared.games.tictactoe.oracle import oracle_set_from_positions

    return oracle_set_from_positions(game, states, count, seed)


FAMILY = GameFamily(
    name="tictactoe",
    parse=_parse,
    name_from_params=lambda params: "tictactoe",
    presets=("tictactoe",),
    name_forms=("tictactoe",),
    network_size=lambda name: (2, 32) if name == "tictactoe" else None,
    config_defaults=lambda name: _CONFIG if name == "tictactoe" else None,
    default_anchor="minimax",
    opening_plan=_opening_plan,
    opening_filter=_drawn_only,
    baseline_players={"minimax": BaselinePlayer(_minimax_player, only="tictactoe")},
    move_form=lambda game: "a square digit 1-9, row by row from the top left, e.g. 5",
    oracle_set=_oracle_set,
    oracle_set_from_positions=_oracle_set_from_positions,
)
