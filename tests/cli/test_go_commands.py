"""`zeroforge play` and `zeroforge analyze` with Go: moves in GTP coordinates (columns without I, rows from the
bottom, pass)."""
from __future__ import annotations

import json

import pytest

from cli.analyze import analyze
from cli.play import play
from shared.games import make_game
from shared.network import create_model, save_model
from tests.cli.conftest import TINY_SPEC, one_line_error

GO9 = make_game("go-9x9")


@pytest.fixture(scope="module")
def go_model(tmp_path_factory):
    path = tmp_path_factory.mktemp("go-model") / "go-9x9.pt"
    save_model(path, create_model(GO9, TINY_SPEC, seed=1), GO9, {"note": "untrained test model"})
    return path


def test_analyze_go_position_in_gtp_coordinates(runner, go_model):
    result = runner.invoke(analyze, ["--game", "go-9x9", "--moves", "E5 d4, pass", "--model", str(go_model),
                                     "--sims", "16", "--json"])
    assert result.exit_code == 0, result.output
    answer = json.loads(result.stdout)
    played = GO9.play_moves(GO9.parse_moves("E5 D4 pass"))
    assert answer["to_move"] == "second" and GO9.legal_mask(played)[0, GO9.parse_action(answer["move"])]
    assert answer["top"][0]["move"] == answer["move"]
    one_line_error(runner.invoke(analyze, ["--game", "go-9x9", "--moves", "E5 E5", "--model", str(go_model)]),
                   "occupied")
    one_line_error(runner.invoke(analyze, ["--game", "go-9x9", "--moves", "I5", "--model", str(go_model)]),
                   "GTP skips the letter I")


def test_play_go_with_gtp_moves_and_pass(runner, go_model):
    result = runner.invoke(play, ["--game", "go-9x9", "--model", str(go_model), "--sims", "8"],
                           input="I5\nE5\nE5\npass\nquit\n")
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "one move such as A9" in out and "A  B  C  D  E  F  G  H  J" in out
    assert out.count("not accepted") == 2 and "GTP skips the letter I" in out and "E5 is occupied" in out
    assert out.count("AI (O) plays") == 2 and "passes 1" in out and "area score now" in out
    assert "game left unfinished" in out or "game over" in out      # the AI may answer the pass with a pass
