"""Per-game defaults: the bottom layer under zeroforge.toml, environment variables and `--set`.

Sizes are chosen for small CPU machines (tic-tac-toe trains to near-perfect play in minutes on two
cores); scale simulations, games and windows up for GPUs. The network size ([game] blocks, channels,
value_hidden) is not set here: it comes from the one table in shared/network/spec.py.

Dirichlet alpha follows AlphaZero's rule of thumb alpha ~ 10 / (typical number of legal moves)
(chess 0.3 with ~35 moves, Go 0.03 with ~250), capped at 1.0 because alpha >= 1 already spreads the
noise almost uniformly:
- tic-tac-toe (~5 legal moves) and Connect Four (~7): 1.0 (the cap);
- Gomoku: typical legal moves ~ 0.85 * cells (games end well before the board fills), so
  alpha = 10 / (0.85 * H * W): 6x6 -> 0.33, 8x8 -> 0.18, 15x15 -> 0.05;
- Othello (~10 legal moves but from 1 to 20+): 0.3 on 8x8 keeps the noise on a few moves instead of
  flattening the prior in wide middle-game positions; 0.5 on 6x6.
Othello's anchor is `weights` (the classic square-weights player, shared.search.weights): cheap, and a
fixed, well-known yardstick for that game.
"""
from __future__ import annotations

import copy
import re
from typing import Any

from shared.config.errors import ConfigError
from shared.games import GameError, make_game
from shared.network.spec import default_network_spec

_GOMOKU_PATTERN = re.compile(r"^gomoku-([0-9]{1,3})x([0-9]{1,3})-([0-9]{1,3})$")

_PRESETS: dict[str, dict[str, dict[str, Any]]] = {
    "tictactoe": {
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
        "gate": {"simulations": 4, "jobs": 2, "anchor": "minimax", "anchor_games": 40, "promote_all_draws": True},
        "pipeline": {"generations": 8},
    },
    "connect4": {
        "search": {"simulations": 64, "dirichlet_alpha": 1.0, "temperature_moves": 10},
        "selfplay": {"games_per_job": 128, "jobs_per_generation": 2},
        "train": {"batch_size": 256, "steps_per_generation": 400, "replay_window_positions": 100_000},
        "gate": {"games": 400, "simulations": 16, "jobs": 2, "anchor_games": 20},
    },
    # CPU-sized like the other presets: 2 jobs of 128 games at 100 simulations and a 32-simulation gate in 8
    # chunks (its early stop can cut it short); the earlier preset (512 games at 200 simulations, a 100-simulation
    # gate) was sized for a GPU: 4x the self-play simulations per generation and 3x the gate's per game
    "othello": {
        "search": {"simulations": 100, "dirichlet_alpha": 0.3, "temperature_moves": 10},
        "selfplay": {"games_per_job": 128, "jobs_per_generation": 2},
        "train": {"batch_size": 256, "steps_per_generation": 400, "replay_window_positions": 500_000},
        "gate": {"games": 400, "simulations": 32, "jobs": 8, "anchor": "weights"},
    },
    "othello-6x6": {
        "search": {"simulations": 128, "dirichlet_alpha": 0.5, "temperature_moves": 6},
        "selfplay": {"games_per_job": 128, "jobs_per_generation": 4},
        "train": {"batch_size": 256, "steps_per_generation": 800, "replay_window_positions": 200_000},
        "gate": {"games": 400, "simulations": 64, "jobs": 4, "anchor": "weights"},
    },
}

KNOWN_GAME_FORMS = ("tictactoe", "connect4", "othello", "othello-6x6", "gomoku-15", "gomoku-{H}x{W}-{n}", "go-9x9",
                    "go-{N}x{N}")
_GO_PATTERN = re.compile(r"^go-([0-9]{1,3})x([0-9]{1,3})$")


def _go_defaults(size: int) -> dict[str, dict[str, Any]]:
    """Go: ~0.85 * N^2 legal moves early on, so alpha = 10 / (0.85 N^2) (0.15 on 9x9, 0.03 on 19x19); games
    resign below a root value of -0.9 (10% of them never resign, to measure false resignations); the anchor is a
    GNU Go-free baseline (pure-mcts:1000, light playouts).

    Generations are large (2 jobs of 128 games on boards up to 9x9, fewer on bigger ones: about 10,000 board
    points of games per job) so that the 400-game gate is not most of a generation's compute: with 64-128 games
    a generation the gate took 1.2-8.3 times the self-play's worker time, with 256 games 1.2-2.0 times
    (BENCHMARKS.md "go-9x9"). Training steps follow the new positions (8 samples each, at most 400 steps); the
    gate runs in 8 chunks so that its early stop can cut it short."""
    cells = size * size
    alpha = round(min(1.0, max(0.03, 10.0 / (0.85 * cells))), 2)
    games = max(8, min(128, 128 * 81 // cells))
    return {
        "search": {"simulations": 100, "dirichlet_alpha": alpha, "temperature_moves": max(8, cells // 8)},
        "selfplay": {"games_per_job": games, "jobs_per_generation": 2, "resign_threshold": -0.9},
        "train": {"batch_size": 256, "steps_per_generation": 400, "replay_window_positions": 3_000 * cells,
                  "samples_per_position": 8.0},
        "gate": {"games": 400, "simulations": 32, "jobs": 8, "anchor_games": 20},
    }


def _gomoku_defaults(height: int, width: int) -> dict[str, dict[str, Any]]:
    """Defaults scaled by board area (see the module docstring for alpha)."""
    cells = height * width
    alpha = round(min(1.0, max(0.03, 10.0 / (0.85 * cells))), 2)
    if cells <= 49:
        sims, temp_moves, games, jobs, gate_sims, steps = 64, 6, 128, 2, 32, 300
    elif cells <= 121:
        sims, temp_moves, games, jobs, gate_sims, steps = 100, 8, 128, 2, 32, 400
    else:
        sims, temp_moves, games, jobs, gate_sims, steps = 400, 12, 32, 16, 200, 1000
    return {
        "search": {"simulations": sims, "dirichlet_alpha": alpha, "temperature_moves": temp_moves},
        "selfplay": {"games_per_job": games, "jobs_per_generation": jobs},
        "train": {  # replay window: ~5k positions per board cell
            "batch_size": 256, "steps_per_generation": steps, "replay_window_positions": 5_000 * cells,
        },
        "gate": {"games": 400, "simulations": gate_sims, "jobs": 2, "anchor_games": 20},
    }


def game_defaults(game_name: str) -> dict[str, dict[str, Any]]:
    """Per-game default values as nested {section: {field: value}}, always including game.name.

    Only fields that differ from the section defaults are listed. Raises ConfigError for a name of
    no known family (the game package itself validates the exact name later).
    """
    if not isinstance(game_name, str):
        raise ConfigError(f"game.name: a game name must be text, got {game_name!r}")
    name = game_name.strip().lower()
    if _GOMOKU_PATTERN.match(name) or _GO_PATTERN.match(name):
        try:
            make_game(name)          # the sizes must be valid before any default is computed from them
        except GameError as exc:
            raise ConfigError(f"game.name: {exc}") from None
    if name in _PRESETS:
        values = copy.deepcopy(_PRESETS[name])
    elif name == "gomoku-15":
        values = _gomoku_defaults(15, 15)
    elif match := _GOMOKU_PATTERN.match(name):
        values = _gomoku_defaults(int(match.group(1)), int(match.group(2)))
    elif match := _GO_PATTERN.match(name):
        values = _go_defaults(int(match.group(1)))
    else:
        raise ConfigError(
            f"game.name: unknown game {game_name!r}; known forms: {', '.join(KNOWN_GAME_FORMS)} "
            "— pass --game, or set name in [game] of zeroforge.toml"
        )
    spec = default_network_spec(name)
    values["game"] = {"name": name, "blocks": spec.blocks, "channels": spec.channels,
                      "value_hidden": spec.value_hidden}
    return values
