"""`zeroforge models export V --format onnx`: the ONNX file runs in onnxruntime and gives torch's outputs.

Tolerance: logits and values agree with torch within atol 1e-4 (float32 on CPU; observed differences are
around 1e-6).
"""
from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from cli import main
from shared.games import make_game
from shared.layout import shipped_model_path
from shared.network import load_model
from shared.network.inputs import encode_inputs
from shared.network.onnx_export import ONNX_FORMAT, file_sha256

ort = pytest.importorskip("onnxruntime")
onnx = pytest.importorskip("onnx")

ATOL = 1e-4


def _random_positions(game, count: int, seed: int) -> np.ndarray:
    """`count` non-terminal positions reached by random legal moves: [count, S] int16."""
    rng = np.random.default_rng(seed)
    states = []
    while len(states) < count:
        state = game.initial_states(1)
        for _ in range(int(rng.integers(0, 12))):
            legal = np.flatnonzero(game.legal_mask(state)[0])
            nxt = game.step(state, np.array([rng.choice(legal)]))
            if game.is_terminal(nxt)[0]:
                break
            state = nxt
        states.append(state[0])
    return np.stack(states)


def _compare(path, model_file, game, count: int) -> None:
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    net = load_model(model_file, expected_game=game).model
    planes = encode_inputs(game, _random_positions(game, count, seed=count), net.spec.line_planes)  # [N, C, H, W]
    logits, values = session.run(["logits", "value"], {"planes": planes})
    with torch.no_grad():
        want_logits, want_values = net(torch.as_tensor(planes))
    assert logits.shape == (count, game.num_actions) and values.shape == (count,)
    np.testing.assert_allclose(logits, want_logits.numpy(), atol=ATOL, rtol=0)
    np.testing.assert_allclose(values, want_values.numpy(), atol=ATOL, rtol=0)


def test_registry_version_exports_and_matches_torch(runner, tictactoe_registry, tmp_path):
    out = tmp_path / "ttt.onnx"
    result = runner.invoke(main, ["models", "export", "000001", "--format", "onnx", "-o", str(out),
                                  "--game", "tictactoe", "--data-dir", str(tictactoe_registry), "--json"])
    assert result.exit_code == 0, result.output
    game = make_game("tictactoe")
    model_file = tictactoe_registry / "games" / "tictactoe" / "models" / "versions" / "000001" / "model.pt"
    props = {p.key: p.value for p in onnx.load(str(out)).metadata_props}
    assert props == {k: v for k, v in json.loads(result.stdout).items() if k != "path"}
    assert props["zeroforge_format"] == ONNX_FORMAT and props["version"] == "000001"
    assert json.loads(props["game_params"]) == game.params()
    assert props["source_sha256"] == file_sha256(model_file)
    assert json.loads(props["input_shape"]) == ["batch", 4, 3, 3] and props["encoding_planes"] == "4"
    assert "own marks" in props["encoding"]
    for count in (1, 7):                                                              # the batch axis is dynamic
        _compare(out, model_file, game, count)


def test_shipped_connect4_exports_and_matches_torch(runner, tmp_path):
    out = tmp_path / "c4.onnx"
    result = runner.invoke(main, ["models", "export", "shipped", "--game", "connect4", "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert f"wrote {out}" in result.stdout and "connect4 shipped" in result.stdout
    _compare(out, shipped_model_path("connect4"), make_game("connect4"), 16)


def test_a_network_with_the_optional_parts_exports_without_its_training_head(tmp_path):
    """Global pooling is in the graph; the ownership head (a training target) is not an output."""
    from shared.network import NetworkSpec, create_model, save_model
    from shared.network.onnx_export import export_onnx

    game = make_game("go-5x5")
    model_file = tmp_path / "go.pt"
    save_model(model_file, create_model(game, NetworkSpec(3, 16, ownership=True, global_pool=True), seed=2), game)
    export_onnx(model_file, tmp_path / "go.onnx", game, version="test")
    assert [o.name for o in onnx.load(str(tmp_path / "go.onnx")).graph.output] == ["logits", "value"]
    _compare(tmp_path / "go.onnx", model_file, game, 5)


def test_a_network_with_line_planes_exports_them_as_inputs(tmp_path):
    from shared.network import NetworkSpec, create_model, save_model
    from shared.network.onnx_export import export_onnx

    game = make_game("gomoku-6x6-4")
    model_file = tmp_path / "g.pt"
    save_model(model_file, create_model(game, NetworkSpec(2, 16, line_planes=True), seed=3), game)
    props = export_onnx(model_file, tmp_path / "g.onnx", game, version="test")
    assert props["encoding_planes"] == str(game.num_planes + 2) and "2 line planes" in props["encoding"]
    assert json.loads(props["input_shape"]) == ["batch", game.num_planes + 2, 6, 6]
    _compare(tmp_path / "g.onnx", model_file, game, 6)


def test_export_errors_are_one_line(runner, tmp_path):
    from tests.cli.conftest import one_line_error

    one_line_error(runner.invoke(main, ["models", "export", "000004", "--game", "tictactoe", "--data-dir",
                                        str(tmp_path)]), "registry")
    one_line_error(runner.invoke(main, ["models", "export", "random", "--game", "tictactoe"]), "not a network")
