"""Othello (Reversi) on 8x8 and 6x6: the rules (rules.py) and compiled playouts (playout.py), the exact endgame
solver (solver.py) and its use at the root of a move choice (root.py), the square-weights baseline player
(weights.py), and the family's descriptor."""
from __future__ import annotations

from typing import Any

import numpy as np

from shared.games.base import Game
from shared.games.family import BaselinePlayer, GameFamily
from shared.games.othello.rules import Othello

__all__ = ["FAMILY", "Othello"]

#: Dirichlet alpha: about 10 legal moves but from 1 to 20+: 0.3 on 8x8 keeps the noise on a few moves instead of
#: flattening the prior in wide middle-game positions; 0.5 on 6x6. The anchor is `weights` (the classic
#: square-weights player, weights.py): cheap, and a fixed, well-known yardstick for that game.
_CONFIG = {
    # CPU-sized like the other presets: 2 jobs of 128 games at 100 simulations, training on 2 torch threads (the
    # other local worker waits meanwhile) and a 32-simulation gate in 8 chunks (its early stop can cut it short); a GPU-sized preset would be 512 games at 200 simulations and a
    # 100-simulation gate: 4x the self-play simulations per generation and 3x the gate's per game
    "othello": {
        "search": {"simulations": 100, "dirichlet_alpha": 0.3, "temperature_moves": 10},
        "selfplay": {"games_per_job": 128, "jobs_per_generation": 2},
        "train": {"batch_size": 256, "steps_per_generation": 400, "replay_window_positions": 500_000,
                  "torch_threads": 2},
        "gate": {"games": 400, "simulations": 32, "jobs": 8},
    },
    "othello-6x6": {
        "search": {"simulations": 128, "dirichlet_alpha": 0.5, "temperature_moves": 6},
        "selfplay": {"games_per_job": 128, "jobs_per_generation": 4},
        "train": {"batch_size": 256, "steps_per_generation": 800, "replay_window_positions": 200_000,
                  "torch_threads": 2},
        "gate": {"games": 400, "simulations": 64, "jobs": 4},
    },
}
_NETWORKS = {"othello": (6, 64), "othello-6x6": (4, 64)}
_PRESETS = {"othello": 8, "othello-6x6": 6}
_ALIASES = {"othello-8x8": "othello"}


def _parse(key: str) -> Game | None:
    key = _ALIASES.get(key, key)
    return Othello(_PRESETS[key]) if key in _PRESETS else None


def _name_from_params(params: Any) -> str:
    size = int(params["height"])
    return "othello" if size == 8 else f"othello-{size}x{size}"


def _root_solver(game: Game, simulations: int | None):
    from shared.games.othello.root import root_solver

    return root_solver(game, simulations)


def _weights_player(game: Game, value: str, seed: int) -> Any:
    from shared.games.othello.weights import WeightsPlayer

    return WeightsPlayer(game, np.random.default_rng(seed))


def _tactics_solver(game: Game, max_nodes: int):
    from shared.games.othello.solver import OthelloSolver

    return OthelloSolver(game, max_nodes=max_nodes).move_values


def _move_form(game: Game) -> str:
    from shared.games.notation import square_range_hint

    return (f"a square like {game.action_to_str(0)} ({square_range_hint(game.height, game.width)}, rows counted "
            "from the top; pass only when forced)")


def _oracle_set(game: Game, count: int, seed: int):
    from shared.games.othello.oracle import oracle_set

    return oracle_set(game, count, seed)


def _late_midgame_set(game: Game, count: int, seed: int):
    from shared.games.othello.oracle import late_midgame_set

    return late_midgame_set(game, count, seed)


def _oracle_set_from_positions(game: Game, states, count: int, seed: int):
    from shared.games.othello.oracle import oracle_set_from_positions

    return oracle_set_from_positions(game, states, count, seed)


FAMILY = GameFamily(
    name="othello",
    parse=_parse,
    name_from_params=_name_from_params,
    presets=tuple(_PRESETS),
    name_forms=tuple(_PRESETS),
    network_size=_NETWORKS.get,
    config_defaults=_CONFIG.get,
    default_anchor="weights",
    root_solver=_root_solver,
    opening_plan=lambda game: ((4,), np.ones(game.num_actions, bool)),
    baseline_players={"weights": BaselinePlayer(_weights_player, only="Othello")},
    side_names=("black", "white"),
    move_form=_move_form,
    tactics_solver=_tactics_solver,
    tactics_span="empties",
    oracle_set=_oracle_set,
    oracle_phases={"late-midgame": _late_midgame_set},
    oracle_set_from_positions=_oracle_set_from_positions,
)
