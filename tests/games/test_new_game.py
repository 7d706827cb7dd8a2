"""Adding a game is one package and one registration: a toy family, defined and registered here, is usable by name
everywhere the built-in games are (names, params, config defaults, network size, openings, players, root solver,
search and self-play), without any change to the generic code."""
from __future__ import annotations

import numpy as np
import pytest

from shared.games import GAME_NAMES, GameError, family_of, game_names, make_game, make_game_from_params, register_family
from shared.games.family import families, unregister_family
from tests.games.toyline import FAMILY as TOYLINE
from tests.games.toyline import CornerPlayer, ToyLine


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


def test_plugin_loading_from_the_environment(monkeypatch) -> None:
    from shared.games import plugins

    monkeypatch.setattr(plugins, "_problems", [])
    try:
        loaded = plugins.load_game_plugins({"ZEROFORGE_GAMES": "tests.games.toyline, no_such_games_module,"
                                                               "tests.games.toyline:ToyLine"})
        assert loaded == ["toyline"] and make_game("toyline-3").name == "toyline-3"
    finally:
        unregister_family("toyline")
    problems = plugins.plugin_problems()
    assert len(problems) == 2
    assert "cannot import 'no_such_games_module'" in problems[0] and "ZEROFORGE_GAMES" in problems[0]
    assert "tests.games.toyline.ToyLine is a class, not a GameFamily" in problems[1]
    with pytest.raises(GameError, match="unknown game 'toyline-4'.*cannot import 'no_such_games_module'"):
        make_game("toyline-4")


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
    threat = toyline.play_moves(toyline.parse_moves("a1 a4 b1 b4"))           # X wins on c1 (action 14)
    states = np.stack([states[0], threat.reshape(-1)])
    assert root_solver_moves(toyline, states, np.zeros(2, np.int64), visits, 4).tolist() == [0, 0]
    assert root_solver_moves(toyline, states, np.zeros(2, np.int64), visits, 8).tolist() == [0, 14]


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
