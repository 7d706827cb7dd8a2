"""Training the ownership head: targets that turn with the planes, the masked loss, a loss that falls, and a whole
Go generation (self-play job, shard, training job) with both optional network parts."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from services.initial_model import ensure_initial_model
from services.payloads import WorkerContext
from services.selfplay import selfplay_job
from services.trainer import train_job
from shared.config import PipelineConfig, load_config
from shared.games import make_game
from shared.games.base import F_PLAYER
from shared.layout import DataLayout
from shared.network import NetworkSpec, create_model, load_model
from shared.network.training import TrainSettings, make_optimizer, ownership_loss, sample_batch, train_step
from shared.registry import ModelRegistry
from shared.shards import read_shard
from tests.services.conftest import TINY_OVERRIDES, selfplay_payload, train_payload


@pytest.fixture(scope="module")
def go5():
    return make_game("go-5x5")


def _position(game) -> np.ndarray:
    """A go-5x5 position without symmetry, white to move: [1, S] int16."""
    return game.play_moves(game.parse_moves("a1 b1 a2 c3 d1")).reshape(1, -1)


def test_ownership_targets_turn_with_the_planes(go5) -> None:
    states = _position(go5)
    to_move = int(states[0, go5.num_cells + F_PLAYER])
    owner = go5.ownership(states) * to_move                       # side to move's view, [1, 25]
    pi = np.full((1, go5.num_actions), 1.0 / go5.num_actions, np.float32)
    z = np.zeros(1, np.float32)
    planes, _, _, targets, known = sample_batch(go5, states, pi, z, 64, np.random.default_rng(0), True,
                                                owner.astype(np.int8), np.array([True]))
    assert targets.shape == (64, 25) and targets.dtype == np.float32 and known.all()
    seen = set()
    for i in range(64):
        k = next(k for k in range(go5.num_symmetries)
                 if np.array_equal(go5.encode(go5.transform_states(states, k))[0], planes[i]))
        seen.add(k)
        np.testing.assert_array_equal(targets[i], go5.ownership(go5.transform_states(states, k))[0] * to_move)
    assert len(seen) == go5.num_symmetries


def test_the_ownership_loss_counts_only_known_rows() -> None:
    logits = torch.tensor([[2.0, -1.0, 0.0], [5.0, 5.0, 5.0]])
    owner = torch.tensor([[1.0, -1.0, 0.0], [-1.0, -1.0, -1.0]])
    expected = F.binary_cross_entropy_with_logits(logits[0], torch.tensor([1.0, 0.0, 0.5]))
    assert ownership_loss(logits, owner, torch.tensor([True, False])).item() == pytest.approx(expected.item())
    assert ownership_loss(logits, owner, torch.tensor([False, False])).item() == 0.0


def test_the_ownership_loss_falls_on_a_fixed_batch(go5) -> None:
    torch.manual_seed(0)
    model = create_model(go5, NetworkSpec(2, 16, ownership=True, global_pool=True), seed=0)
    states = go5.play_moves(go5.parse_moves("c3")).reshape(1, -1).repeat(8, axis=0)    # white to move
    owner = np.tile(go5.ownership(states[:1]) * -1, (8, 1)).astype(np.float32)            # black owns every point
    assert (owner == -1).all()
    batch = (go5.encode(states), np.full((8, go5.num_actions), 1 / go5.num_actions, np.float32),
             np.zeros(8, np.float32), owner, np.ones(8, bool))
    settings = TrainSettings(steps=40, batch_size=8, learning_rate=3e-3, weight_decay=0.0, ownership_weight=1.5)
    optimizer = make_optimizer(model, settings)
    records = [train_step(model, optimizer, batch, settings, step, "cpu") for step in range(40)]
    assert records[-1]["ownership_loss"] < 0.2 * records[0]["ownership_loss"]
    assert records[0]["loss"] == pytest.approx(records[0]["policy_loss"] + records[0]["value_loss"]
                                               + 1.5 * records[0]["ownership_loss"], rel=1e-5)


def test_a_go_generation_trains_the_ownership_head(tmp_path: Path, go5) -> None:
    config = load_config(PipelineConfig, "go-5x5", env=None,
                         overrides={**TINY_OVERRIDES, "game.ownership_head": True, "game.global_pool": True,
                                    "search.simulations": 2, "selfplay.games_per_job": 2, "train.min_steps": 2})
    layout = DataLayout(tmp_path / "data", "go-5x5")
    layout.data_id()
    context = WorkerContext(data_dir=layout.root)
    first = ensure_initial_model(layout, config.game, config.pipeline.seed)
    selfplay_job(selfplay_payload(layout, config, first, "gen1-sp0000").model_dump(mode="json"), context)
    shard = read_shard(layout.generation_shards_dir(1) / "gen1-sp0000.h5", go5)
    assert shard.ownership is not None and shard.ownership.shape == (2, 25)
    result = train_job(train_payload(layout, config, first, generation=1), context)
    record = ModelRegistry(layout.registry_dir).get(result["version"])
    assert record.training["ownership_loss"] == result["ownership_loss"] > 0
    spec = load_model(record.path).spec
    assert spec.ownership and spec.global_pool
