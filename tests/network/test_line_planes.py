"""The line planes (shared.network.inputs): two input planes of the immediate winning cells, checked against the
rules on random positions of every in-a-row game, under the symmetries, through the evaluator, the trainer's batches,
model files and the config, with clear errors for games without lines."""
from __future__ import annotations

import numpy as np
import pytest

from shared.config import ConfigError, PipelineConfig, load_config
from shared.games import make_game
from shared.games.base import F_PLAYER
from shared.network import NetworkSpec, create_model, load_model, model_file_info, save_model
from shared.network.evaluator import TorchEvaluator
from shared.network.inputs import LINE_PLANES, encode_inputs, has_lines, input_planes
from shared.network.modelfile import ModelFileError
from shared.network.spec import NetworkError
from shared.network.training import sample_batch
from tests.games.helpers import longest_line_through, random_playout, sample_rows

LINES = NetworkSpec(2, 16, 32, line_planes=True)


def _random_positions(game, count: int, seed: int) -> np.ndarray:
    """Up to `count` [N, S] int16 non-terminal positions of random games."""
    positions = random_playout(game, count, seed).all_positions()
    return sample_rows(positions[~game.is_terminal(positions)], count, seed)


def _winning_cells_by_rule(game, state: np.ndarray, player: int) -> set[int]:
    """Empty cells where a stone of `player` completes n in a row (overlines count), by counting stones."""
    board = state[: game.num_cells].reshape(game.height, game.width)
    return {int(cell) for cell in np.flatnonzero(board.ravel() == 0)
            if longest_line_through(board, *divmod(int(cell), game.width), player) >= game.n_in_row}


@pytest.mark.parametrize("name", ["tictactoe", "gomoku-6x6-4", "gomoku-15", "connect4"])
def test_the_planes_mark_each_side_s_winning_cells(name: str) -> None:
    game = make_game(name)
    states = _random_positions(game, 40, seed=7)
    planes = encode_inputs(game, states, line_planes=True)
    assert planes.shape == (40, game.num_planes + LINE_PLANES, game.height, game.width)
    assert planes.dtype == np.float32
    np.testing.assert_array_equal(planes[:, : game.num_planes], game.encode(states))
    marked = 0
    for row, state in enumerate(states):
        to_move = int(state[game.num_cells + F_PLAYER])
        own = set(np.flatnonzero(planes[row, -2].ravel()).tolist())
        other = set(np.flatnonzero(planes[row, -1].ravel()).tolist())
        assert own == _winning_cells_by_rule(game, state, to_move)
        assert other == _winning_cells_by_rule(game, state, -to_move)
        marked += len(own) + len(other)
    assert marked > 0, "the random positions should hold some winning cells"


def test_the_side_to_move_s_plane_wins_at_once() -> None:
    game = make_game("gomoku-15")
    states = _random_positions(game, 60, seed=3)
    own = encode_inputs(game, states, line_planes=True)[:, -2].reshape(60, -1) > 0
    np.testing.assert_array_equal(own, game.move_outcomes(states) == 1)


@pytest.mark.parametrize("k", range(8))
def test_the_planes_turn_with_the_board(k: int) -> None:
    game = make_game("gomoku-6x6-4")
    states = _random_positions(game, 30, seed=11)
    turned = encode_inputs(game, game.transform_states(states, k), line_planes=True)
    np.testing.assert_array_equal(turned, game.transform_planes(encode_inputs(game, states, line_planes=True), k))


def test_games_without_lines_are_refused_with_the_fix() -> None:
    for name in ("othello-6x6", "go-5x5"):
        assert not has_lines(make_game(name))
        with pytest.raises(NetworkError, match="no lines.*game.line_planes = false"):
            create_model(make_game(name), LINES)
    with pytest.raises(ConfigError, match="line_planes"):
        load_config(PipelineConfig, "othello", env=None, overrides={"game.line_planes": True})
    config = load_config(PipelineConfig, "gomoku-8x8-5", env=None, overrides={"game.line_planes": True})
    assert config.game.line_planes


def test_the_spec_stores_line_planes_only_when_on() -> None:
    assert "line_planes" not in NetworkSpec(2, 16).to_dict()
    assert LINES.to_dict()["line_planes"] is True and NetworkSpec.from_dict(LINES.to_dict()) == LINES
    assert str(LINES) == "2x16 (value hidden 32, line planes)"


def test_the_evaluator_and_the_trainer_s_batches_use_the_planes() -> None:
    game = make_game("gomoku-6x6-4")
    states = _random_positions(game, 16, seed=5)
    model = create_model(game, LINES, seed=1)
    evaluator = TorchEvaluator(model, game)
    assert evaluator.encode(states).shape[1] == input_planes(game, True) == game.num_planes + 2
    logits, values = evaluator(states)
    assert logits.shape == (16, game.num_actions) and values.shape == (16,)
    pi = np.full((16, game.num_actions), 1.0 / game.num_actions, np.float32)
    planes, _, _ = sample_batch(game, states, pi, np.zeros(16, np.float32), 8, np.random.default_rng(0), True,
                                line_planes=True)
    assert planes.shape == (8, game.num_planes + 2, 6, 6)
    plain = TorchEvaluator(create_model(game, NetworkSpec(2, 16, 32), seed=1), game)
    assert plain.encode(states).shape[1] == game.num_planes


def test_model_files_keep_the_line_planes(tmp_path) -> None:
    game = make_game("connect4")
    model = create_model(game, LINES, seed=2)
    path = tmp_path / "m.pt"
    save_model(path, model, game, {"generation": 1})
    loaded = load_model(path, expected_game=game)
    assert loaded.spec == LINES and model_file_info(path)["geometry"]["num_planes"] == game.num_planes + 2
    states = _random_positions(game, 6, seed=1)
    for a, b in zip(TorchEvaluator(model, game)(states), TorchEvaluator(loaded.model, game)(states)):
        np.testing.assert_array_equal(a, b)


def test_a_model_file_asking_line_planes_of_a_game_without_lines_is_refused(tmp_path) -> None:
    import torch
    game = make_game("connect4")
    path = tmp_path / "m.pt"
    save_model(path, create_model(game, LINES), game)
    payload = torch.load(path, weights_only=True)
    payload["game"] = make_game("othello-6x6").params()
    torch.save(payload, path)
    with pytest.raises(ModelFileError, match=str(path)):
        load_model(path)
