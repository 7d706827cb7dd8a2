"""Model files: round trip, checksum, damaged files, wrong game, pickle refusal."""
from pathlib import Path

import pytest
import torch

from shared.games import make_game
from shared.network import (
    ModelFileError,
    NetworkSpec,
    create_model,
    load_model,
    model_file_info,
    save_model,
    weights_checksum,
)

SPEC = NetworkSpec(2, 16, 16)


class NotAWeight:
    """A custom class: loading it would need pickle to import and run code from this module."""

    def __init__(self):
        self.payload = "code"


@pytest.fixture()
def saved(tmp_path):
    game = make_game("connect4")
    model = create_model(game, SPEC, seed=3)
    _perturb_batch_norm(model)
    path = tmp_path / "models" / "m.pt"
    checksum = save_model(path, model, game, {"generation": 2, "note": "test"})
    return game, model, path, checksum


def _perturb_batch_norm(model):
    """Non-trivial running statistics, so the round trip checks buffers, not just parameters."""
    with torch.no_grad():
        for name, buf in model.named_buffers():
            if name.endswith("running_mean"):
                buf.uniform_(-0.5, 0.5)
            elif name.endswith("running_var"):
                buf.uniform_(0.5, 1.5)


def test_round_trip_gives_identical_outputs(saved):
    game, model, path, checksum = saved
    loaded = load_model(path, expected_game=game)
    assert loaded.checksum == checksum == weights_checksum(model.state_dict())
    assert loaded.metadata == {"generation": 2, "note": "test"}
    assert loaded.spec == SPEC and loaded.game is game and not loaded.model.training
    x = torch.from_numpy(game.encode(game.play_moves(game.parse_moves("4453"))))
    with torch.inference_mode():
        expected, loaded_out = model.eval()(x), loaded.model(x)
    assert torch.equal(expected[0], loaded_out[0]) and torch.equal(expected[1], loaded_out[1])


def test_load_without_expected_game_rebuilds_it(saved):
    game, _, path, _ = saved
    loaded = load_model(path)
    assert loaded.game.params() == game.params()


def test_no_temp_files_left_and_info(saved):
    _, model, path, checksum = saved
    assert [p.name for p in path.parent.iterdir()] == ["m.pt"]
    info = model_file_info(path)
    assert info["checksum"] == checksum and info["spec"] == SPEC.to_dict()
    assert info["game"]["name"] == "connect4" and info["metadata"]["generation"] == 2
    assert info["num_parameters"] == model.num_parameters()


def _flip_weight_bytes(path: Path, model) -> None:
    """Flip bytes inside the stored data of the largest weight tensor (torch stores it uncompressed)."""
    tensor = max(model.state_dict().values(), key=lambda t: t.numel())
    raw = tensor.contiguous().view(-1).view(torch.uint8).numpy().tobytes()
    data = bytearray(path.read_bytes())
    offset = bytes(data).find(raw[64:128])
    assert offset > 0
    for i in range(offset, offset + 8):
        data[i] ^= 0x5A
    path.write_bytes(bytes(data))


def test_flipped_bytes_fail_the_checksum(saved):
    game, model, path, _ = saved
    _flip_weight_bytes(path, model)
    with pytest.raises(ModelFileError, match="checksum") as info:
        load_model(path, expected_game=game)
    assert str(path) in str(info.value)


def test_edited_weights_with_stale_checksum_are_refused(saved):
    game, _, path, _ = saved
    payload = torch.load(path, weights_only=True)
    payload["state_dict"]["policy_fc.bias"] += 1.0
    torch.save(payload, path)
    with pytest.raises(ModelFileError, match="checksum"):
        load_model(path, expected_game=game)


@pytest.mark.parametrize("keep", [0, 100, 0.5])
def test_truncated_file(saved, keep):
    game, _, path, _ = saved
    data = path.read_bytes()
    path.write_bytes(data[: int(len(data) * keep) if isinstance(keep, float) else keep])
    with pytest.raises(ModelFileError, match="damaged or truncated") as info:
        load_model(path, expected_game=game)
    assert str(path) in str(info.value)


def test_missing_file(tmp_path):
    with pytest.raises(ModelFileError, match="does not exist"):
        load_model(tmp_path / "nope.pt")


@pytest.mark.parametrize("other", ["tictactoe", "gomoku-8x8-5"])
def test_model_for_another_game_is_refused(saved, other):
    _, _, path, _ = saved
    with pytest.raises(ModelFileError, match="connect4") as info:
        load_model(path, expected_game=make_game(other))
    assert str(path) in str(info.value) and other in str(info.value)


def test_model_for_another_board_size_is_refused(tmp_path):
    small = make_game("gomoku-8x8-5")
    path = tmp_path / "g.pt"
    save_model(path, create_model(small, NetworkSpec(1, 8, 8), seed=0), small)
    with pytest.raises(ModelFileError, match="gomoku-15"):
        load_model(path, expected_game=make_game("gomoku-15"))
    same_size_other_rule = make_game("gomoku-8x8-4")
    with pytest.raises(ModelFileError, match="gomoku-8x8-5"):
        load_model(path, expected_game=same_size_other_rule)


def test_pickle_bearing_file_is_refused_without_running_code(tmp_path):
    path = tmp_path / "evil.pt"
    torch.save({"format_version": 1, "state_dict": {}, "metadata": NotAWeight()}, path)
    with pytest.raises(ModelFileError, match="pickled Python objects") as info:
        load_model(path)
    assert str(path) in str(info.value)


def test_plain_torch_file_that_is_not_a_model(tmp_path):
    path = tmp_path / "plain.pt"
    torch.save({"weights": torch.zeros(3)}, path)
    with pytest.raises(ModelFileError, match="not a zeroforge model file"):
        model_file_info(path)


def test_model_that_does_not_fit_the_game_is_not_saved(tmp_path):
    model = create_model(make_game("tictactoe"), NetworkSpec(1, 8, 8), seed=0)
    with pytest.raises(ModelFileError, match="geometry"):
        save_model(tmp_path / "x.pt", model, make_game("connect4"))
    with pytest.raises(ModelFileError, match="JSON"):
        save_model(tmp_path / "y.pt", model, make_game("tictactoe"), {"bad": object()})
    assert list(tmp_path.iterdir()) == []
