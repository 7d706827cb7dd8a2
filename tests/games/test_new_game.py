"""Adding a game is one package and one registration: a toy family, defined and registered here, is usable by name
everywhere the built-in games are (names, params, config defaults, network size, openings, players, root solver,
search and self-play), without any change to the generic code."""
from __future__ import annotations

import re

import numpy as np
import pytest

from shared.games import (GAME_NAMES, GameError, GameFamily, family_of, game_names, make_game,
                          make_game_from_params, register_family)
from shared.games.base import F_LAST
from shared.games.family import BaselinePlayer, families, unregister_family
from shared.games.inarow import InARowGame
from shared.games.notation import parse_square, render_grid, split_tokens, square_name

# ----- the whole new game: rules + descriptor --------------------------------------------------------------------

_NAME = re.compile(r"toyline-([0-9]{1,2})")


class ToyLine(InARowGame):
    """Three in a row on an N x N board (N = 3..5); squares written like Gomoku's ("b2", rows from the bottom)."""

    family = "toyline"

    def __init__(self, size: int = 4) -> None:
        if not 3 <= size <= 5:
            raise GameError(f"toyline size {size} is out of range 3..5")
        super().__init__(f"toyline-{size}", size, size, 3)

    def action_to_str(self, action: int) -> str:
        return square_name(int(action) // self.width, int(action) % self.width, self.height, True)

    def parse_action(self, text: str) -> int:
        return parse_square(str(text).strip(), self.height, self.width, True)

    def parse_moves(self, text: str) -> list[int]:
        return [self.parse_action(token) for token in split_tokens(text)]

    def render(self, state: np.ndarray, highlight_last: bool = True) -> str:
        state = self._single_state(state)
        last = int(state[self.num_cells + F_LAST]) if highlight_last else -1
        cols = [chr(ord("a") + c) for c in range(self.width)]
        rows = [str(self.height - r) for r in range(self.height)]
        return "\n".join(render_grid(state[: self.num_cells], last, cols, rows) + [self._status_line(state)])


def _parse(key: str) -> ToyLine | None:
    match = _NAME.fullmatch(key)
    return None if match is None else ToyLine(int(match.group(1)))


class CornerPlayer:
    """A baseline only toyline games seat: the lowest legal square."""

    def __init__(self, game, name: str = "corner") -> None:
        self.game, self.name = game, name

    def select_actions(self, states: np.ndarray) -> np.ndarray:
        return self.game.legal_mask(states).argmax(axis=1).astype(np.int64)

    def reset(self) -> None:
        """Nothing to forget."""


def _root_solver(game, simulations):
    """Plays the centre-most legal square whenever the search ran at least 8 simulations (a visible marker)."""
    if simulations is None or simulations < 8:
        return None
    return lambda states, actions, visits: np.full(len(actions), game.num_cells // 2, np.int64)


TOYLINE = GameFamily(
    name="toyline",
    parse=_parse,
    name_from_params=lambda params: f"toyline-{int(params['height'])}",
    presets=("toyline-4",),
    name_forms=("toyline-{N}",),
    names_help="'toyline-{N}' with N in 3..5",
    network_size=lambda name: (1, 8) if _NAME.fullmatch(name) else None,
    config_defaults=lambda name: ({"search": {"simulations": 16}, "selfplay": {"games_per_job": 4}}
                                  if _NAME.fullmatch(name) else None),
    default_anchor="corner",
    root_solver=_root_solver,
    opening_plan=lambda game: ((1,), np.ones(game.num_actions, bool)),
    baseline_players={"corner": BaselinePlayer(lambda game, value, seed: CornerPlayer(game), only="toyline")},
    move_form=lambda game: "a square like b2",
)


@pytest.fixture()
def toyline():
    register_family(TOYLINE)
    try:
        yield make_game("toyline-4")
    finally:
        unregister_family("toyline")


# ----- what the registration gives --------------------------------------------------------------------------------

def test_names_and_params(toyline) -> None:
    assert isinstance(toyline, ToyLine) and family_of(toyline) is TOYLINE
    assert "toyline-4" in game_names() and "toyline-4" not in GAME_NAMES      # GAME_NAMES: the built-in presets
    assert make_game(" TOYLINE-5 ").name == "toyline-5"
    assert make_game_from_params(toyline.params()) == toyline
    params = toyline.params()
    del params["name"]
    assert make_game_from_params(params) == toyline                           # by the family's size fields
    with pytest.raises(GameError, match="toyline-\\{N\\}"):
        make_game("toyline-9x9")
    with pytest.raises(GameError, match="out of range"):
        make_game("toyline-9")


def test_unregister_family(toyline) -> None:
    unregister_family("toyline")
    assert "toyline" not in families()
    with pytest.raises(GameError, match="unknown game"):
        make_game("toyline-4")
    register_family(TOYLINE)


def test_config_network_and_positions(toyline) -> None:
    from shared.config import PipelineConfig, load_config
    from shared.network.spec import default_network_spec
    from shared.players.positions import move_form, position_from_moves

    config = load_config(PipelineConfig, "toyline-4", env=None)
    assert config.game.name == "toyline-4" and config.search.simulations == 16 and config.gate.anchor == "corner"
    assert (config.game.blocks, config.game.channels) == (1, 8)
    assert default_network_spec("toyline-3").blocks == 1
    assert move_form(toyline) == "a square like b2"
    assert position_from_moves(toyline, "a1 b2")[: toyline.num_cells].tolist().count(0) == 14


def test_players_openings_and_root_solver(toyline) -> None:
    from shared.players.spec import PlayerSpecError, build_player, check_fixed_player
    from shared.players.arena import play_match
    from shared.search import SearchConfig, opening_set
    from shared.search.root_solver import root_solver_moves, uses_root_solver

    openings = opening_set(toyline, 8, seed=3)
    assert all(len(moves) == 1 for moves in openings) and len({m[0] for m in openings}) == 8

    corner = build_player("corner", toyline, search=SearchConfig(num_simulations=4))
    assert isinstance(corner, CornerPlayer)
    assert check_fixed_player("corner", toyline).kind == "corner"
    with pytest.raises(PlayerSpecError, match="corner plays only toyline"):
        check_fixed_player("corner", make_game("connect4"))
    result = play_match(toyline, corner, build_player("random", toyline, search=SearchConfig(), seed=1),
                        openings[:2])
    assert len(result.games) == 4

    states = toyline.initial_states(2)
    visits = np.ones((2, toyline.num_actions), np.float32)
    assert not uses_root_solver(toyline, 4) and uses_root_solver(toyline, 8)
    assert root_solver_moves(toyline, states, np.zeros(2, np.int64), visits, 4).tolist() == [0, 0]
    assert root_solver_moves(toyline, states, np.zeros(2, np.int64), visits, 8).tolist() == [8, 8]


def test_batched_search_and_selfplay(toyline) -> None:
    from shared.search import BatchedMCTS, SearchConfig, SelfPlayConfig, play_selfplay_games
    from tests.search.helpers import HashEvaluator

    rng = np.random.default_rng(0)
    mcts = BatchedMCTS(toyline, HashEvaluator(toyline), SearchConfig(num_simulations=24), rng)
    result = mcts.search(toyline.initial_states(3), add_noise=True)
    assert result.visits.shape == (3, toyline.num_actions) and np.all(result.visits.sum(axis=1) > 0)

    records = play_selfplay_games(toyline, HashEvaluator(toyline), 4,
                                  SelfPlayConfig(search=SearchConfig(num_simulations=8)), np.random.default_rng(1))
    assert records.results.shape == (4,) and records.states.shape[1] == toyline.state_size
    again = play_selfplay_games(toyline, HashEvaluator(toyline), 4,
                                SelfPlayConfig(search=SearchConfig(num_simulations=8)), np.random.default_rng(1))
    assert np.array_equal(records.states, again.states)          # the same games for the same seed
