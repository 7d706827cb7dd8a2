"""Trainer service: read the replay window, train the best model further, register a candidate.

`train_job` is the rq job and what `zeroforge train` runs by hand.  It is idempotent and resumable:
- if a candidate for (generation, parent) is already registered, it returns that candidate;
- it checkpoints model + optimiser + step every `train.checkpoint_every` steps (atomically), and a
  restarted job for the same generation resumes from the checkpoint instead of starting over.
With `train.samples_per_position` the step count follows the generation's new positions (counted from the
attributes of that generation's shards, which do not change once self-play is done, so a resumed job computes
the same count); with `train.value_target_mix` the value targets blend z with the stored root values, and with
`train.value_cut_at_sampled_moves` z gives way to the search value at the first sampled move after a position.
"""
from __future__ import annotations

import copy
import logging
import time
from pathlib import Path

import numpy as np
import torch

from services.payloads import PayloadError, TrainPayload, TrainResult, WorkerContext
from services.progress import job_reporter
from services.training_curves import StepCurves, steps_before
from shared.atomic import atomic_output
from shared.config import TrainSection
from shared.games import Game, make_game
from shared.network.modelfile import load_model, save_model
from shared.network.training import (TrainSettings, make_optimizer, sample_batch, steps_for_new_positions, train_step,
                                     value_targets)
from shared.registry import ModelRegistry
from shared.shards import generation_positions, load_replay_window
from shared.shards.merge import merge_duplicate_positions

log = logging.getLogger(__name__)


class TrainingDataError(RuntimeError):
    """The replay window holds no usable positions (no self-play yet, or every shard was damaged)."""


def train_settings(t: TrainSection, new_positions: int = 0) -> TrainSettings:
    """TrainSettings from a [train] section; steps from new_positions (this generation's positions) when
    samples_per_position is set (shared.network.training.steps_for_new_positions), else steps_per_generation."""
    return TrainSettings(
        steps=steps_for_new_positions(new_positions, t.samples_per_position, t.batch_size, t.min_steps,
                                      t.steps_per_generation),
        batch_size=t.batch_size,
        learning_rate=t.learning_rate,
        weight_decay=t.weight_decay,
        optimizer=t.optimizer,
        value_weight=t.value_weight,
        augment=t.augment,
        lr_final_fraction=t.lr_final_fraction,
        grad_clip=t.grad_clip,
        ownership_weight=t.ownership_weight,
    )


def _save_checkpoint(path: Path, model, optimizer, step: int, history: list[dict[str, float]]) -> None:
    """Atomic checkpoint (temp file + fsync + os.replace): a killed trainer never leaves half a checkpoint."""
    payload = {"model": model.state_dict(), "optimizer": optimizer.state_dict(), "step": step, "history": history}
    with atomic_output(path) as handle:
        torch.save(payload, handle)


def _load_checkpoint(path: Path, model, optimizer, steps: int) -> tuple[int, list[dict[str, float]]]:
    """Restore model and optimiser from `path`; returns (step, loss history).

    An unreadable or inconsistent checkpoint is ignored with a warning: the model and optimiser are left
    (or put back) exactly as they were, i.e. the parent model and a fresh optimiser, and training starts over.
    """
    model_before = {k: v.clone() for k, v in model.state_dict().items()}
    optimizer_before = copy.deepcopy(optimizer.state_dict())
    try:
        payload = torch.load(path, map_location="cpu", weights_only=True)
        step, history = int(payload["step"]), list(payload["history"])
        if not 0 <= step <= steps or len(history) != step:
            raise ValueError(f"step {step} with {len(history)} loss records does not fit a run of {steps} steps")
        model.load_state_dict(payload["model"])
        optimizer.load_state_dict(payload["optimizer"])
        return step, history
    except Exception as exc:  # a damaged checkpoint costs progress, never the job
        log.warning("ignoring unreadable checkpoint %s (%s); training from the parent model", path, exc)
        model.load_state_dict(model_before)  # undo a partial load
        optimizer.load_state_dict(optimizer_before)
        return 0, []


def _existing_candidate(registry: ModelRegistry, generation: int, parent: str):
    for version in registry.list():
        if version.generation == generation and version.parent == parent and version.version != parent:
            return version
    return None


def _train_loop(game: Game, loaded, window, settings: TrainSettings, ckpt: Path, every: int, seed: int, device: str,
                value_mix: float = 0.0, on_checkpoint=None, progress=None):
    """Train to settings.steps from the checkpoint (if any); returns (model on CPU, per-step history).

    value_mix: q of value_targets (0: the game results z, or the window's cut_value when it has them).
    on_checkpoint(history, start, stop), when given, is called after each checkpoint with the steps
    history[start:stop] taken since the previous one (so a resumed job never reports a step twice).
    progress(steps done, steps, loss=...), when given, is called after each step (services.progress)."""
    model = loaded.model.to(device)
    optimizer = make_optimizer(model, settings)
    step, history = (_load_checkpoint(ckpt, model, optimizer, settings.steps) if ckpt.exists() else (0, []))
    reported = step
    rng = np.random.default_rng([seed, step])
    results = window.z if window.cut_value is None else window.cut_value   # [N] float32, side to move
    targets = value_targets(results, window.root_value, value_mix)
    # Ownership targets: loaded with the window only for a network with an ownership head (train_job).
    owner = ({"ownership": window.ownership, "ownership_known": window.ownership_known}
             if window.ownership is not None else {})
    while step < settings.steps:
        batch = sample_batch(game, window.states, window.pi, targets, settings.batch_size, rng, settings.augment,
                             line_planes=model.spec.line_planes, **owner)
        history.append(train_step(model, optimizer, batch, settings, step, device))
        step += 1
        if progress is not None:
            progress(step, settings.steps, loss=history[-1]["loss"])
        if step % every == 0 or step == settings.steps:
            _save_checkpoint(ckpt, model, optimizer, step, history)
            if on_checkpoint is not None:
                on_checkpoint(history, reported, step)
                reported = step
    return model.eval().to("cpu"), history


#: The losses reported are means over this many steps at the end (and, for first_loss, at the start) of a job.
LOSS_SPAN = 50


def _loss_span(history: list[dict[str, float]]) -> int:
    """Steps averaged for the first and last losses: LOSS_SPAN, at most a quarter of the job, so that the first and
    the last loss of a short job are means over different steps."""
    return min(LOSS_SPAN, max(1, len(history) // 4))


def _mean(history: list[dict[str, float]], key: str, last: int) -> float:
    tail = history[-last:] if history else []
    return round(float(np.mean([h[key] for h in tail])), 5) if tail else float("nan")


def train_job(payload: dict, worker: WorkerContext) -> dict:
    """Train `parent_version` on the replay window and register the result as a candidate of `generation`.

    payload: a TrainPayload as a JSON dict. Returns a TrainResult as a JSON dict (version, parent, generation,
    steps, positions, shards, bad_shards, losses, seconds, device).
    """
    if worker.store is not None:
        raise PayloadError("training runs where the pipeline's data directory is (it reads the replay window and "
                           "registers the candidate there); this worker holds a store replica: give it "
                           "--queues selfplay,eval")
    job = TrainPayload.model_validate(payload)
    cfg, generation, parent_version = job.config, job.generation, job.parent_version
    game = make_game(cfg.game.name)
    layout = worker.layout(game.name, job.data_id)
    registry = ModelRegistry(layout.registry_dir)
    ckpt = layout.checkpoint_path(generation, parent_version)
    out = layout.candidate_path(generation, parent_version)
    done = _existing_candidate(registry, generation, parent_version)
    if done is not None:  # a previous run registered it (perhaps killed before cleaning up its files)
        ckpt.unlink(missing_ok=True)
        out.unlink(missing_ok=True)
        return TrainResult(version=done.version, parent=parent_version, generation=generation, reused=True,
                           **done.training).model_dump(mode="json")
    parent = registry.verify(parent_version)
    loaded = load_model(parent.path, device="cpu", expected_game=game)
    window = load_replay_window(layout.shards_dir, layout.quarantine_dir, game, cfg.train.replay_window_positions,
                                cfg.train.replay_window_generations, up_to_generation=generation,
                                ownership=loaded.spec.ownership, cut_values=cfg.train.value_cut_at_sampled_moves)
    if window.states.shape[0] == 0:
        raise TrainingDataError(f"no self-play positions under {layout.shards_dir} (bad shards: {window.bad_shards}); "
                                "run self-play for this generation first")
    rows = int(window.states.shape[0])
    if cfg.train.merge_duplicate_positions:
        window = merge_duplicate_positions(window)
    new_positions = generation_positions(layout.generation_shards_dir(generation), generation)
    settings = train_settings(cfg.train, new_positions)
    start = time.perf_counter()
    curves = StepCurves(layout.tensorboard_run_dir, steps_before(registry, generation))
    threads = torch.get_num_threads()
    try:
        if cfg.train.torch_threads is not None:      # at least that many, for this job only; restored below
            torch.set_num_threads(max(threads, cfg.train.torch_threads))
        model, history = _train_loop(game, loaded, window, settings, ckpt, cfg.train.checkpoint_every, job.seed,
                                     worker.device, cfg.train.value_target_mix, on_checkpoint=curves.write,
                                     progress=job_reporter("train", "steps"))
    finally:
        torch.set_num_threads(threads)
        curves.close()
    span = _loss_span(history)
    training = {
        "steps": settings.steps,
        "new_positions": new_positions,
        "batch_size": settings.batch_size,
        "positions": int(window.states.shape[0]),
        "shards": [Path(s).name for s in window.shard_names],
        "bad_shards": [str(s) for s in window.bad_shards],
        "loss": _mean(history, "loss", span),
        "policy_loss": _mean(history, "policy_loss", span),
        "value_loss": _mean(history, "value_loss", span),
        **({"ownership_loss": _mean(history, "ownership_loss", span)} if "ownership_loss" in history[-1] else {}),
        **({"value_targets_cut": round(float(np.mean(window.cut_value != window.z)), 4)}
           if window.cut_value is not None else {}),
        **({"duplicates_merged": rows - int(window.states.shape[0])} if cfg.train.merge_duplicate_positions else {}),
        "first_loss": _mean(history[:span], "loss", span),
        "seconds": round(time.perf_counter() - start, 2),
        "device": worker.device,
    }
    save_model(out, model, game, {"generation": generation, "parent": parent_version, "training": training})
    version = registry.register(out, parent=parent_version, generation=generation, training=training, once=True)
    out.unlink(missing_ok=True)
    ckpt.unlink(missing_ok=True)
    return TrainResult(version=version.version, parent=parent_version, generation=generation, reused=False,
                       **training).model_dump(mode="json")
