"""A per-worker-process cache of loaded models, so consecutive jobs with the same version skip the load."""
from __future__ import annotations

from collections import OrderedDict
from pathlib import Path

from shared.games import Game
from shared.network.evaluator import TorchEvaluator
from shared.network.modelfile import load_model

_CACHE: "OrderedDict[tuple[str, str, str, str | None], object]" = OrderedDict()
_MAX_ENTRIES = 4


def cached_evaluator(path: Path, game: Game, device: str, checksum: str | None = None,
                     precision: str | None = None):
    """A TorchEvaluator for the model file at `path` on `device`, loaded once per (file, checksum, device,
    precision); precision: auto | fp32 | bf16 | None (the evaluator's default), see shared.network.precision.

    Returns the Evaluator callable: states [M, S] int16 -> (logits [M, A] float32, values [M] float32).
    """
    key = (str(Path(path).resolve()), checksum or "", device, precision)
    if key in _CACHE:
        _CACHE.move_to_end(key)
        return _CACHE[key]
    loaded = load_model(path, device=device, expected_game=game)
    evaluator = TorchEvaluator(loaded.model, game, device=device, precision=precision)
    _CACHE[key] = evaluator
    while len(_CACHE) > _MAX_ENTRIES:
        _CACHE.popitem(last=False)
    return evaluator
