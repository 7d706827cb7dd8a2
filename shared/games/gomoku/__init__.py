"""Freestyle Gomoku on any H x W board with n in a row: the rules (rules.py), the VCF threat solver (vcf.py,
vcf_lines.py) and its use at the root of a move choice (threats.py), and the family's descriptor."""
from __future__ import annotations

import re
from typing import Any

import numpy as np

from shared.games.base import Game
from shared.games.family import EngineProtocol, GameFamily
from shared.games.gomoku.rules import SIZE_RULES, Gomoku, gomoku_name

__all__ = ["FAMILY", "Gomoku", "gomoku_name"]

_NAME = re.compile(r"gomoku-([0-9]{1,3})x([0-9]{1,3})-([0-9]{1,3})")
_PRESETS = {"gomoku-15": (15, 15, 5), "gomoku-8x8-5": (8, 8, 5), "gomoku-6x6-4": (6, 6, 4)}


def _parse(key: str) -> Game | None:
    if key in _PRESETS:
        return Gomoku(*_PRESETS[key])
    match = _NAME.fullmatch(key)
    if match is None:
        return None
    height, width, n_in_row = (int(g) for g in match.groups())
    return Gomoku(height, width, n_in_row)


def _board(name: str) -> tuple[int, int] | None:
    """(height, width) of "gomoku-15" or a "gomoku-{H}x{W}-{n}" name, else None."""
    if name == "gomoku-15":
        return 15, 15
    match = re.fullmatch(r"gomoku-(\d+)x(\d+)-(\d+)", name)
    return None if match is None else (int(match.group(1)), int(match.group(2)))


def _network_size(name: str) -> tuple[int, int] | None:
    """Default network by board area: up to 7x7 3x32, up to 11x11 4x48, larger 10x128."""
    board = _board(name)
    if board is None:
        return None
    area = board[0] * board[1]
    if area <= 49:
        return 3, 32
    if area <= 121:
        return 4, 48
    return 10, 128


def _config_defaults(name: str) -> dict[str, dict[str, Any]] | None:
    """Pipeline defaults scaled by board area. Dirichlet alpha: typical legal moves ~ 0.85 * cells (games end
    well before the board fills), so alpha = 10 / (0.85 * H * W): 6x6 -> 0.33, 8x8 -> 0.18, 15x15 -> 0.05. Boards
    above 11x11 search self-play's root with Gumbel AlphaZero (its Dirichlet alpha and temperature then unused):
    on gomoku-15 at 16 simulations it learnt where PUCT's root did not (BENCHMARKS.md, "Gumbel root against PUCT on
    gomoku-15"), and their networks get line planes (the cells where either side would complete the line): on
    gomoku-15 after 1.6-2 hours of half a core, two seeds per arm, the raw policy kept 64 more points of the oracle set
    and the bests won 0.580 head to head at 16 simulations (BENCHMARKS.md, "Line planes on gomoku-15")."""
    board = _board(name) if name == "gomoku-15" or _NAME.fullmatch(name) else None
    if board is None:
        return None
    cells = board[0] * board[1]
    alpha = round(min(1.0, max(0.03, 10.0 / (0.85 * cells))), 2)
    if cells <= 49:
        sims, temp_moves, games, jobs, gate_sims, steps = 64, 6, 128, 2, 32, 300
    elif cells <= 121:
        sims, temp_moves, games, jobs, gate_sims, steps = 100, 8, 128, 2, 32, 400
    else:
        sims, temp_moves, games, jobs, gate_sims, steps = 400, 12, 32, 16, 200, 1000
    search = {"simulations": sims, "dirichlet_alpha": alpha, "temperature_moves": temp_moves}
    network: dict[str, Any] = {}
    if cells > 121:
        search["root"] = "gumbel"
        network["line_planes"] = True
    return {
        "game": network,
        "search": search,
        "selfplay": {"games_per_job": games, "jobs_per_generation": jobs},
        "train": {  # replay window: ~5k positions per board cell; 2 threads: the other local worker waits
            "batch_size": 256, "steps_per_generation": steps, "replay_window_positions": 5_000 * cells,
            "torch_threads": 2,
        },
        "gate": {"games": 400, "simulations": gate_sims, "jobs": 2, "anchor_games": 20},
    }


def _central_lines(size: int, radius: int) -> np.ndarray:
    low, high = (size - 1) // 2 - radius, size // 2 + radius
    return np.arange(max(low, 0), min(high, size - 1) + 1)


def _opening_plan(game: Game) -> tuple[tuple[int, ...], np.ndarray]:
    """2-4 plies on cells near the centre: the central square of lines within r of the middle, r = 2 on boards
    of 9+ lines, else 1 (2r+1 lines wide, 2r+2 on an even board where both middle lines count)."""
    radius = 2 if min(game.height, game.width) >= 9 else 1
    rows = _central_lines(game.height, radius)
    cols = _central_lines(game.width, radius)
    allowed = np.zeros(game.num_actions, bool)
    allowed[(rows[:, None] * game.width + cols[None, :]).ravel()] = True
    return (2, 3, 4), allowed


def _root_solver(game: Game, simulations: int | None):
    """VCF attack and defence at any number of simulations, plus the quiet-threat check from
    threats.QUIET_MIN_SIMULATIONS (shared.games.gomoku.threats)."""
    from shared.games.gomoku.threats import vcf_root_moves

    return lambda states, actions, visits: vcf_root_moves(game, states, actions, visits, simulations)


def _move_form(game: Game) -> str:
    from shared.games.notation import square_range_hint

    square = game.action_to_str((game.height // 2) * game.width + game.width // 2)
    return f"a square like {square} ({square_range_hint(game.height, game.width)}, rows counted from the bottom)"


def _oracle_set(game: Game, count: int, seed: int):
    from shared.games.gomoku.oracle import oracle_set

    return oracle_set(game, count, seed)


FAMILY = GameFamily(
    name="gomoku",
    parse=_parse,
    name_from_params=lambda params: gomoku_name(int(params["height"]), int(params["width"]), int(params["n_in_row"])),
    presets=tuple(_PRESETS),
    name_forms=("gomoku-15", "gomoku-{H}x{W}-{n}"),
    names_help=f"'gomoku-{{H}}x{{W}}-{{n}}' with {SIZE_RULES}",
    network_size=_network_size,
    config_defaults=_config_defaults,
    root_solver=_root_solver,
    opening_plan=_opening_plan,
    move_form=_move_form,
    sgf_records=True,
    protocols={"pbrain": EngineProtocol(
        default_game="gomoku-15",
        game_help="The Gomoku board the brain plays: gomoku-15 (15x15), gomoku-20x20-5 (20x20, Gomocup's "
                  "freestyle board; needs a model for it), any gomoku-HxW-5.")},
    oracle_set=_oracle_set,
)
