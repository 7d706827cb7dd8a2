"""Per-game defaults: the bottom layer under zeroforge.toml, environment variables and `--set`.

The values live in each game family's descriptor (shared/games/<family>/__init__.py, `config_defaults`
and `default_anchor`); this module reads them. Sizes are chosen for small CPU machines (tic-tac-toe trains to
near-perfect play in minutes on two cores); scale simulations, games and windows up for GPUs. The network size
([game] blocks, channels, value_hidden) is not set here: it comes from shared/network/spec.py, which reads the
families' `network_size`.

Dirichlet alpha follows AlphaZero's rule of thumb alpha ~ 10 / (typical number of legal moves)
(chess 0.3 with ~35 moves, Go 0.03 with ~250), capped at 1.0 because alpha >= 1 already spreads the
noise almost uniformly:
- tic-tac-toe (~5 legal moves) and Connect Four (~7): 1.0 (the cap);
- Gomoku: typical legal moves ~ 0.85 * cells (games end well before the board fills), so
  alpha = 10 / (0.85 * H * W): 6x6 -> 0.33, 8x8 -> 0.18, 15x15 -> 0.05;
- Othello (~10 legal moves but from 1 to 20+): 0.3 on 8x8 keeps the noise on a few moves instead of
  flattening the prior in wide middle-game positions; 0.5 on 6x6.
Othello's anchor is `weights` (the classic square-weights player, shared.games.othello.weights): cheap, and a
fixed, well-known yardstick for that game.
"""
from __future__ import annotations

import copy
from typing import Any

from shared.config.errors import ConfigError
from shared.games import GameError, families
from shared.games.family import parse_game
from shared.network.spec import default_network_spec


def known_game_forms() -> tuple[str, ...]:
    """How the names of the registered games are written (e.g. "connect4", "gomoku-{H}x{W}-{n}")."""
    return tuple(form for family in families().values() for form in family.name_forms)


def game_defaults(game_name: str) -> dict[str, dict[str, Any]]:
    """Per-game default values as nested {section: {field: value}}, always including game.name.

    Only fields that differ from the section defaults are listed; they come from the game family's descriptor
    (`GameFamily.config_defaults` and `default_anchor`). Raises ConfigError for a name no family knows, or whose
    sizes are invalid (the game package itself validates the exact name later).
    """
    if not isinstance(game_name, str):
        raise ConfigError(f"game.name: a game name must be text, got {game_name!r}")
    name = game_name.strip().lower()
    try:
        parse_game(name)          # the sizes must be valid before any default is computed from them
    except GameError as exc:
        raise ConfigError(f"game.name: {exc}") from None
    for family in families().values():
        found = family.config_defaults(name)
        if found is not None:
            values = copy.deepcopy(found)
            if family.default_anchor is not None:
                values.setdefault("gate", {}).setdefault("anchor", family.default_anchor)
            break
    else:
        raise ConfigError(
            f"game.name: unknown game {game_name!r}; known forms: {', '.join(known_game_forms())} "
            "— pass --game, or set name in [game] of zeroforge.toml"
        )
    spec = default_network_spec(name)
    values["game"] = {**values.get("game", {}), "name": name, "blocks": spec.blocks, "channels": spec.channels,
                      "value_hidden": spec.value_hidden}
    return values
