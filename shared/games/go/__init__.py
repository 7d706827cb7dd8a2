"""Go on N x N boards (N = 5..19, area scoring, positional superko): the rules (rules.py), the batched board
analysis (board.py), compiled light playouts (playout.py), GNU Go as a baseline player over GTP (gnugo.py), and
the family's descriptor."""
from __future__ import annotations

import re
from typing import Any, Mapping

from shared.games.base import Game, GameError
from shared.games.family import BaselinePlayer, EngineProtocol, GameFamily
from shared.games.go.rules import DEFAULT_KOMI, SIZE_RULES, Go, check_komi, score_text

__all__ = ["FAMILY", "Go"]

_NAME = re.compile(r"go-([0-9]{1,3})x([0-9]{1,3})")


def _parse(key: str) -> Game | None:
    match = _NAME.fullmatch(key)
    if match is None:
        return None
    height, width = (int(g) for g in match.groups())
    if height != width:
        raise GameError(f"go board {height}x{width} is not square: {SIZE_RULES}")
    return Go(height)


def _with_params(game: Game, params: Mapping[str, Any]) -> Game:
    """Go's komi is a game param that the name does not carry (default 7.5)."""
    if params.get("komi", DEFAULT_KOMI) != DEFAULT_KOMI:
        return Go(game.height, komi=check_komi(params["komi"]))
    return game


def _network_size(name: str) -> tuple[int, int] | None:
    match = re.fullmatch(r"go-(\d+)x\1", name)
    if match is None:
        return None
    return (6, 64) if int(match.group(1)) <= 9 else (10, 128)


def _config_defaults(name: str) -> dict[str, dict[str, Any]] | None:
    """Go: ~0.85 * N^2 legal moves early on, so alpha = 10 / (0.85 N^2) (0.15 on 9x9, 0.03 on 19x19); games
    resign below a root value of -0.9 (10% of them never resign, to measure false resignations); the anchor is a
    GNU Go-free baseline (pure-mcts:1000, light playouts).

    Generations are large (2 jobs of 128 games on boards up to 9x9, fewer on bigger ones: about 10,000 board
    points of games per job) so that the 400-game gate is not most of a generation's compute: with 64-128 games
    a generation the gate took 1.2-8.3 times the self-play's worker time, with 256 games 1.2-2.0 times
    (BENCHMARKS.md "go-9x9"). Training steps follow the new positions (8 samples each, at most 400 steps) and
    run on 2 torch threads, the core of the local worker that waits meanwhile (BENCHMARKS.md "Training threads");
    the gate runs in 8 chunks so that its early stop can cut it short."""
    match = _NAME.fullmatch(name)
    if match is None:
        return None
    cells = int(match.group(1)) ** 2
    alpha = round(min(1.0, max(0.03, 10.0 / (0.85 * cells))), 2)
    games = max(8, min(128, 128 * 81 // cells))
    return {
        "search": {"simulations": 100, "dirichlet_alpha": alpha, "temperature_moves": max(8, cells // 8)},
        "selfplay": {"games_per_job": games, "jobs_per_generation": 2, "resign_threshold": -0.9},
        "train": {"batch_size": 256, "steps_per_generation": 400, "replay_window_positions": 3_000 * cells,
                  "samples_per_position": 8.0, "torch_threads": 2},
        "gate": {"games": 400, "simulations": 32, "jobs": 8, "anchor_games": 20},
    }


def _gnugo_player(game: Game, value: str, seed: int) -> Any:
    from shared.games.go.gnugo import GnuGoPlayer   # starts GNU Go processes only when it plays

    return GnuGoPlayer(game, int(value), seed=seed)


FAMILY = GameFamily(
    name="go",
    parse=_parse,
    name_from_params=lambda params: f"go-{int(params['height'])}x{int(params['width'])}",
    with_params=_with_params,
    presets=("go-9x9",),
    name_forms=("go-9x9", "go-{N}x{N}"),
    names_help=SIZE_RULES,
    network_size=_network_size,
    config_defaults=_config_defaults,
    baseline_players={"gnugo": BaselinePlayer(_gnugo_player)},
    protocols={"gtp": EngineProtocol(default_game="go-9x9", game_help="Go board: go-9x9, go-13x13, go-NxN.",
                                     helpers={"score_text": score_text})},
)
