"""Connect Four: the rules (rules.py), the perfect solver (solver.py), its use at the root of a move choice
(root.py), and the family's descriptor."""
from __future__ import annotations

import numpy as np

from shared.games.base import Game
from shared.games.connect4.rules import Connect4
from shared.games.family import GameFamily

__all__ = ["FAMILY", "Connect4"]

# Continuous self-play with 3 training samples per new position (BENCHMARKS.md, "The reuse ratio"): against the
# generation-synchronous 400 steps a generation it kept the solved outcome in 6 more points of the oracle positions
# after 30 minutes (two seeds per arm), with 62% of the worker-seconds in self-play instead of 20%.
# Line planes (the cells where either side would complete four, as two more input planes; BENCHMARKS.md "Line planes
# on Connect Four"): +10.8 points of raw-policy oracle and 0.639 head to head after 37 minutes, two seeds per arm.
_CONFIG = {
    "game": {"line_planes": True},
    "search": {"simulations": 64, "dirichlet_alpha": 1.0, "temperature_moves": 10},
    "selfplay": {"games_per_job": 128, "jobs_per_generation": 2},
    "train": {"batch_size": 256, "samples_per_position": 3.0, "steps_per_generation": 4000,
              "replay_window_positions": 100_000},
    "pipeline": {"overlap_selfplay": True},
    "gate": {"games": 400, "simulations": 16, "jobs": 2, "anchor_games": 20},
}


def _parse(key: str) -> Game | None:
    return Connect4() if key == "connect4" else None


def _root_solver(game: Game, simulations: int | None):
    from shared.games.connect4.root import root_solver

    return root_solver(game, simulations)


def _tactics_solver(game: Game, max_nodes: int):
    from shared.games.connect4.solver import Connect4Solver

    return Connect4Solver(max_nodes=max_nodes).state_values


def _oracle_set(game: Game, count: int, seed: int):
    from shared.games.connect4.oracle import oracle_set

    return oracle_set(game, count, seed)


def _oracle_set_from_positions(game: Game, states, count: int, seed: int):
    from shared.games.connect4.oracle import oracle_set_from_positions

    return oracle_set_from_positions(game, states, count, seed)


FAMILY = GameFamily(
    name="connect4",
    parse=_parse,
    name_from_params=lambda params: "connect4",
    presets=("connect4",),
    name_forms=("connect4",),
    network_size=lambda name: (4, 64) if name == "connect4" else None,
    config_defaults=lambda name: _CONFIG if name == "connect4" else None,
    root_solver=_root_solver,
    opening_plan=lambda game: ((2,), np.ones(game.num_actions, bool)),
    move_form=lambda game: f"a column digit 1-{game.width} from the left, e.g. 4",
    column_moves=True,
    tactics_solver=_tactics_solver,
    tactics_span="plies",
    oracle_set=_oracle_set,
    oracle_set_from_positions=_oracle_set_from_positions,
)
