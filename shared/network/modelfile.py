"""Model files: one torch file per network, safe to load, verified, written atomically.

A model file is `torch.save` of a plain dict (no pickled classes, so `torch.load(weights_only=True)`
can read it without running any code):

    {
      "format_version": 1,
      "game":       game.params(),                  # identifies game and board size exactly
      "spec":       {"blocks", "channels", "value_hidden"}   # + "ownership", "global_pool", "line_planes" when on
      "geometry":   {"num_planes", "height", "width", "num_actions"},   # network input/output shape (inputs.py)
      "state_dict": {name: tensor},                 # CPU tensors
      "metadata":   {...},                          # JSON-compatible (generation, training info, ...)
      "checksum":   "<sha256 hex>",                 # over the tensors, see `weights_checksum`
    }

Every failure to load (missing, truncated, damaged, needs pickle code, checksum mismatch, other
game or board size, weights that do not fit) raises `ModelFileError` naming the file, the problem,
and what to do.
"""
from __future__ import annotations

import hashlib
import json
import pickle
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from shared.atomic import atomic_output

from shared.games import make_game_from_params
from shared.games.base import Game
from shared.network.inputs import check_line_planes, input_planes
from shared.network.resnet import PolicyValueNet
from shared.network.spec import NetworkError, NetworkSpec, default_network_spec

FORMAT_VERSION = 1
_REQUIRED_KEYS = ("format_version", "game", "spec", "geometry", "state_dict", "metadata", "checksum")


class ModelFileError(NetworkError):
    """A model file cannot be written or loaded; the message names the file, the problem and the fix."""


@dataclass
class LoadedModel:
    """Result of `load_model`: the network (eval mode, on the requested device) and what describes it."""

    model: PolicyValueNet
    game: Game
    spec: NetworkSpec
    metadata: dict[str, Any]
    checksum: str
    path: Path


def weights_checksum(state_dict: dict[str, torch.Tensor]) -> str:
    """sha256 hex digest over all tensors in name order: name, dtype, shape and raw bytes of each."""
    digest = hashlib.sha256()
    for name in sorted(state_dict):
        tensor = state_dict[name].detach().to("cpu").contiguous()
        header = f"{name}\0{tensor.dtype}\0{tuple(tensor.shape)}\0{tensor.numel() * tensor.element_size()}\0"
        digest.update(header.encode("utf-8"))
        digest.update(tensor.reshape(-1).view(torch.uint8).numpy())
    return digest.hexdigest()


def create_model(game: Game, spec: NetworkSpec | None = None, seed: int = 0) -> PolicyValueNet:
    """A freshly initialised PolicyValueNet for `game` (default spec for the game if None).

    The same seed gives the same weights; the global torch RNG state is left untouched.
    """
    spec = spec if spec is not None else default_network_spec(game.name)
    if spec.ownership and not game.has_ownership:
        raise NetworkError(f"{game.name} has no territory, so a network for it cannot have an ownership head; "
                           "set game.ownership_head = false (it is for Go)")
    if spec.line_planes:
        check_line_planes(game)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = PolicyValueNet(input_planes(game, spec.line_planes), game.height, game.width, game.num_actions,
                               spec.blocks, spec.channels, spec.value_hidden, spec.ownership, spec.global_pool,
                               spec.line_planes)
    return model.eval()


def _geometry(game: Game, spec: NetworkSpec) -> dict[str, int]:
    return {"num_planes": input_planes(game, spec.line_planes), "height": game.height, "width": game.width,
            "num_actions": game.num_actions}


def _normalise_json(value: Any, what: str, path: Path) -> Any:
    """JSON round trip: plain dict/list/str/number/bool/None that weights_only loading accepts."""
    try:
        return json.loads(json.dumps(value))
    except (TypeError, ValueError) as exc:
        raise ModelFileError(
            f"cannot save model file {path}: {what} is not JSON-compatible ({exc}); "
            f"store only dicts, lists, strings, numbers, booleans and None"
        ) from None


def save_model(path: str | Path, model: PolicyValueNet, game: Game, metadata: dict[str, Any] | None = None) -> str:
    """Write `model` for `game` to `path` atomically (temp file in the same dir, fsync, os.replace).

    Returns the weights checksum (sha256 hex). ModelFileError if the model does not fit the game.
    """
    path = Path(path)
    model = getattr(model, "_orig_mod", model)  # unwrap torch.compile
    geometry = _geometry(game, model.spec)
    model_geometry = {k: getattr(model, k) for k in geometry}
    if model_geometry != geometry:
        raise ModelFileError(
            f"cannot save model file {path}: the network has geometry {model_geometry} but game "
            f"{game.name} needs {geometry}; build the model with create_model(game, spec)"
        )
    state_dict = {name: t.detach().to("cpu").clone().contiguous() for name, t in model.state_dict().items()}
    checksum = weights_checksum(state_dict)
    payload = {
        "format_version": FORMAT_VERSION,
        "game": _normalise_json(game.params(), "game.params()", path),
        "spec": model.spec.to_dict(),
        "geometry": geometry,
        "state_dict": state_dict,
        "metadata": _normalise_json(metadata or {}, "metadata", path),
        "checksum": checksum,
    }
    _atomic_torch_save(payload, path)
    return checksum


def _atomic_torch_save(payload: dict[str, Any], path: Path) -> None:
    """torch.save through shared.atomic.atomic_output (readers never see half a file)."""
    with atomic_output(path) as handle:
        torch.save(payload, handle)


def _torch_load_plain(path: Path) -> Any:
    """torch.load with weights_only=True, turning every failure into a ModelFileError."""
    if not path.is_file():
        raise ModelFileError(f"model file {path} does not exist (or is not a file); check the path or the registry entry")
    try:
        return torch.load(path, map_location="cpu", weights_only=True)
    except pickle.UnpicklingError as exc:
        if "weights only" in str(exc).lower() or "weights_only" in str(exc).lower():
            raise ModelFileError(
                f"model file {path} contains pickled Python objects that need code to load; refusing to run "
                f"it. Only load files written by shared.network.modelfile.save_model (re-export it from a "
                f"trusted source)"
            ) from None
        raise ModelFileError(f"model file {path} is damaged ({exc}); re-copy it or restore it from the registry") from None
    except Exception as exc:  # torch raises RuntimeError, EOFError, OSError, ... for damaged zips
        raise ModelFileError(
            f"model file {path} is damaged or truncated ({type(exc).__name__}: {str(exc)[:200]}); "
            f"re-copy it or restore it from the registry"
        ) from None


def _read_payload(path: Path, verify: bool = True) -> dict[str, Any]:
    """Load and validate the dict structure (and the checksum when verify)."""
    payload = _torch_load_plain(path)
    if not isinstance(payload, dict) or any(key not in payload for key in _REQUIRED_KEYS):
        found = sorted(payload) if isinstance(payload, dict) else type(payload).__name__
        raise ModelFileError(
            f"{path} is not a zeroforge model file (expected keys {list(_REQUIRED_KEYS)}, found {found}); "
            f"write model files with shared.network.modelfile.save_model"
        )
    if payload["format_version"] != FORMAT_VERSION:
        raise ModelFileError(
            f"model file {path} has format version {payload['format_version']!r}, this code reads "
            f"{FORMAT_VERSION}; convert it or use a matching zeroforge version"
        )
    state_dict = payload["state_dict"]
    if not isinstance(state_dict, dict) or not all(isinstance(t, torch.Tensor) for t in state_dict.values()):
        raise ModelFileError(f"model file {path}: 'state_dict' is not a dict of tensors; the file is damaged")
    if verify:
        actual = weights_checksum(state_dict)
        if actual != payload["checksum"]:
            raise ModelFileError(
                f"model file {path} failed its checksum (stored {str(payload['checksum'])[:16]}..., weights hash "
                f"to {actual[:16]}...): the weights are damaged; re-copy the file or restore it from the registry"
            )
    return payload


def _check_game(path: Path, stored: dict[str, Any], expected_game: Game) -> None:
    """ModelFileError if the file's game params differ from expected_game.params()."""
    wanted = json.loads(json.dumps(expected_game.params()))
    if stored != wanted:
        raise ModelFileError(
            f"model file {path} is for game {stored.get('name', '?')} {stored}, but {wanted.get('name')} "
            f"{wanted} was requested; use a model trained for {wanted.get('name')} "
            f"(or select game {stored.get('name', '?')})"
        )


def load_model(path: str | Path, device: str | torch.device = "cpu", expected_game: Game | None = None) -> LoadedModel:
    """Load a verified model file into a PolicyValueNet in eval mode on `device`.

    expected_game: if given, the file must be for exactly this game (same params, e.g. board size).
    Raises ModelFileError for any problem (see module docstring); never executes pickled code.
    """
    path = Path(path)
    payload = _read_payload(path)
    if expected_game is not None:
        _check_game(path, payload["game"], expected_game)
        game = expected_game
    else:
        game = _game_from_params(path, payload["game"])
    try:
        spec = NetworkSpec.from_dict(payload["spec"])
    except NetworkError as exc:
        raise ModelFileError(f"model file {path} has a bad network spec: {exc}") from None
    try:
        geometry = _geometry(game, spec)
        model = create_model(game, spec, seed=0)
    except NetworkError as exc:
        raise ModelFileError(f"model file {path} asks for a network its game cannot have: {exc}") from None
    if payload["geometry"] != geometry:
        raise ModelFileError(
            f"model file {path} has network geometry {payload['geometry']} but game {game.name} now encodes "
            f"{geometry} (the game's input planes changed); retrain or use a matching zeroforge version"
        )
    try:
        model.load_state_dict(payload["state_dict"], strict=True)
    except RuntimeError as exc:
        raise ModelFileError(
            f"model file {path}: weights do not fit a {spec} network for {game.name} ({str(exc)[:300]}); "
            f"the file is damaged or was written by an incompatible version"
        ) from None
    model.to(device).eval()
    return LoadedModel(model=model, game=game, spec=spec, metadata=payload["metadata"],
                       checksum=payload["checksum"], path=path)


def _game_from_params(path: Path, params: dict[str, Any]) -> Game:
    try:
        return make_game_from_params(params)
    except ValueError as exc:  # GameError is a ValueError
        raise ModelFileError(f"model file {path} names a game this code cannot build ({params}): {exc}") from None


def model_file_info(path: str | Path, verify: bool = True) -> dict[str, Any]:
    """Describe a model file without building the network.

    Returns {"path", "format_version", "game" (params), "spec", "geometry", "metadata", "checksum",
    "num_parameters", "size_bytes"}. The checksum is verified unless verify=False.
    """
    path = Path(path)
    payload = _read_payload(path, verify=verify)
    num_parameters = sum(t.numel() for name, t in payload["state_dict"].items()
                         if not name.endswith(("running_mean", "running_var", "num_batches_tracked")))
    return {
        "path": str(path),
        "format_version": payload["format_version"],
        "game": payload["game"],
        "spec": payload["spec"],
        "geometry": payload["geometry"],
        "metadata": payload["metadata"],
        "checksum": payload["checksum"],
        "num_parameters": int(num_parameters),
        "size_bytes": path.stat().st_size,
    }
