"""Training math: sample augmented batches from a replay window and take optimiser steps.

Loss = policy cross-entropy  -sum_a pi(a) log softmax(logits)(a)
     + value_weight * (v - t)^2              (v and t from the side to move's point of view)
     + ownership_weight * mean over cells of BCE(sigmoid(u), (1 + o) / 2)
                                             (networks with an ownership head, rows whose game was counted out:
                                              u the head's logit, o in {-1, 0, +1} the final owner seen from the
                                              side to move; `ownership_loss`)
and weight decay through the optimiser (decoupled for AdamW, L2 for SGD). The value target t is the game
result z, or with [train] value_target_mix q > 0 the blend (1 - q) * z + q * root_value (`value_targets`).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F

from shared.games import Game
from shared.network.inputs import encode_inputs


@dataclass(frozen=True)
class TrainSettings:
    """What one training run needs to know (built from the trainer's config section)."""

    steps: int
    batch_size: int
    learning_rate: float
    weight_decay: float
    optimizer: str = "adamw"        # "adamw" or "sgd" (momentum 0.9, nesterov)
    value_weight: float = 1.0
    augment: bool = True
    lr_final_fraction: float = 0.1  # cosine decay from learning_rate to learning_rate * this over `steps`
    grad_clip: float = 5.0
    ownership_weight: float = 1.5   # weight of the ownership loss (networks with an ownership head)


def value_targets(z: np.ndarray, root_value: np.ndarray, mix: float) -> np.ndarray:
    """Value targets (1 - mix) * z + mix * root_value: z [N] float32 (the game's result) and root_value [N]
    float32 (the self-play search value at that position), both from the side to move at the position, so no
    sign flip; returns [N] float32 in [-1, 1]. mix 0 returns z itself (training as without mixing)."""
    if not 0.0 <= mix <= 1.0:
        raise ValueError(f"value_target_mix must be in [0, 1], got {mix}")
    if mix == 0.0:
        return z
    blended = (1.0 - mix) * np.asarray(z, np.float64) + mix * np.asarray(root_value, np.float64)
    return np.clip(blended, -1.0, 1.0).astype(np.float32)


def steps_for_new_positions(new_positions: int, samples_per_position: float | None, batch_size: int,
                            min_steps: int, max_steps: int) -> int:
    """Optimiser steps of one generation: max_steps when samples_per_position is None, else
    ceil(samples_per_position * new_positions / batch_size) clamped to [min_steps, max_steps] (max_steps wins
    if min_steps > max_steps). new_positions: positions in the generation's new shards (>= 0)."""
    if samples_per_position is None:
        return max_steps
    if new_positions < 0 or batch_size < 1:
        raise ValueError(f"new_positions must be >= 0 and batch_size >= 1, got {new_positions} and {batch_size}")
    wanted = math.ceil(samples_per_position * new_positions / batch_size)
    return int(min(max_steps, max(min_steps, wanted)))


def sample_batch(
    game: Game, states: np.ndarray, pi: np.ndarray, z: np.ndarray, batch_size: int, rng: np.random.Generator,
    augment: bool, ownership: np.ndarray | None = None, ownership_known: np.ndarray | None = None,
    line_planes: bool = False,
) -> tuple[np.ndarray, ...]:
    """Draw a random batch and apply one random symmetry per sample.

    states [N, S] int16, pi [N, A] float32, z [N] float32 -> planes [n, C, H, W] float32, pi [n, A] float32,
    z [n] float32 with n = batch_size.  Planes and policy targets are transformed together.
    With ownership [N, H*W] int8 and ownership_known [N] bool (shared.shards.ReplayWindow) two more arrays come
    back: ownership [n, H*W] float32 (transformed with the planes) and known [n] bool. line_planes: the planes of a
    network with line planes (shared.network.inputs; C grows by 2).
    """
    idx = rng.integers(0, states.shape[0], size=batch_size)
    planes = encode_inputs(game, states[idx], line_planes)   # [n, C, H, W] float32
    targets = pi[idx].astype(np.float32)       # [n, A] float32
    owner = None if ownership is None else ownership[idx].astype(np.float32).reshape(-1, 1, game.height, game.width)
    if augment and game.num_symmetries > 1:
        ks = rng.integers(0, game.num_symmetries, size=batch_size)
        for k in range(1, game.num_symmetries):
            sel = np.flatnonzero(ks == k)
            if sel.size:
                planes[sel] = game.transform_planes(planes[sel], k)
                targets[sel] = game.transform_policy(targets[sel], k)
                if owner is not None:
                    owner[sel] = game.transform_planes(owner[sel], k)
    if owner is None:
        return planes, targets, z[idx].astype(np.float32)
    return planes, targets, z[idx].astype(np.float32), owner.reshape(batch_size, -1), ownership_known[idx].copy()


def make_optimizer(model: torch.nn.Module, settings: TrainSettings) -> torch.optim.Optimizer:
    """The optimiser the settings name; weight decay is not applied to biases and batch-norm weights."""
    decay, no_decay = [], []
    for name, param in model.named_parameters():
        (no_decay if param.ndim <= 1 else decay).append(param)
    groups = [{"params": decay, "weight_decay": settings.weight_decay}, {"params": no_decay, "weight_decay": 0.0}]
    if settings.optimizer == "sgd":
        return torch.optim.SGD(groups, lr=settings.learning_rate, momentum=0.9, nesterov=True)
    if settings.optimizer == "adamw":
        return torch.optim.AdamW(groups, lr=settings.learning_rate)
    raise ValueError(f"unknown optimizer {settings.optimizer!r}; use adamw or sgd")


def learning_rate_at(step: int, settings: TrainSettings) -> float:
    """Cosine schedule from learning_rate down to learning_rate * lr_final_fraction at the last step."""
    progress = min(1.0, step / max(1, settings.steps - 1))
    floor = settings.learning_rate * settings.lr_final_fraction
    return floor + 0.5 * (settings.learning_rate - floor) * (1.0 + math.cos(math.pi * progress))


def policy_value_losses(logits: torch.Tensor, value: torch.Tensor, pi: torch.Tensor,
                        z: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(policy cross-entropy, value MSE): logits [n, A], value [n], pi [n, A], z [n] (side to move)."""
    policy_loss = -(pi * F.log_softmax(logits.float(), dim=1)).sum(dim=1).mean()
    return policy_loss, F.mse_loss(value.float(), z)


def losses(model: torch.nn.Module, planes: torch.Tensor, pi: torch.Tensor, z: torch.Tensor, value_weight: float):
    """(total, policy cross-entropy, value MSE) for one batch; tensors on the model's device."""
    logits, value = model(planes)
    policy_loss, value_loss = policy_value_losses(logits, value, pi, z)
    return policy_loss + value_weight * value_loss, policy_loss, value_loss


def ownership_loss(logits: torch.Tensor, owner: torch.Tensor, known: torch.Tensor) -> torch.Tensor:
    """Mean over the rows with known[n] of the mean over cells of the binary cross-entropy between sigmoid(logits)
    and (1 + owner) / 2: logits [n, H*W] (ownership head), owner [n, H*W] float32 in {-1, 0, +1} (side to move's
    view), known [n] bool. 0 when no row is known."""
    if not bool(known.any()):
        return logits.float().sum() * 0.0          # keeps the graph (and the head's gradients) defined
    per_row = F.binary_cross_entropy_with_logits(logits.float()[known], (1.0 + owner[known]) / 2.0,
                                                 reduction="none").mean(dim=1)
    return per_row.mean()


def train_step(
    model: torch.nn.Module,
    optimizer: torch.optim.Optimizer,
    batch: tuple[np.ndarray, np.ndarray, np.ndarray],
    settings: TrainSettings,
    step: int,
    device: str,
) -> dict[str, float]:
    """One optimiser step on a sampled batch (sample_batch's 3 arrays, or 5 with ownership targets); returns
    {"loss", "policy_loss", "value_loss", "lr", "grad_norm"} plus "ownership_loss" when the batch has ownership
    targets and the model an ownership head (grad_norm: the total L2 norm of the gradients before clipping to
    settings.grad_clip)."""
    model.train()
    lr = learning_rate_at(step, settings)
    for group in optimizer.param_groups:
        group["lr"] = lr
    tensors = [torch.from_numpy(a).to(device) for a in batch]
    planes, pi, z = tensors[:3]
    use_bf16 = device.startswith("cuda")
    with torch.autocast(device_type="cuda", dtype=torch.bfloat16, enabled=use_bf16):
        if len(tensors) == 5 and getattr(model, "ownership_conv", None) is not None:
            logits, value, owner_logits = model.forward_train(planes)
            policy_loss, value_loss = policy_value_losses(logits, value, pi, z)
            owner_loss = ownership_loss(owner_logits, tensors[3], tensors[4])
            total = policy_loss + settings.value_weight * value_loss + settings.ownership_weight * owner_loss
        else:
            total, policy_loss, value_loss = losses(model, planes, pi, z, settings.value_weight)
            owner_loss = None
    optimizer.zero_grad(set_to_none=True)
    total.backward()
    grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), settings.grad_clip)
    optimizer.step()
    record = {"loss": total.item(), "policy_loss": policy_loss.item(), "value_loss": value_loss.item(), "lr": lr,
              "grad_norm": grad_norm.item()}
    if owner_loss is not None:
        record["ownership_loss"] = owner_loss.item()
    return record
