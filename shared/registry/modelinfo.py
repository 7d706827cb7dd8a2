"""What the registry records about a model file: its game and architecture, read from the file itself.

shared.network.modelfile.model_file_info (torch) is imported lazily, only while registering, so listing
and inspecting the registry never needs torch. Without it, the caller's game/architecture are stored.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from shared.registry.files import RegistryError


def _read_model_file_info(path: Path) -> dict[str, Any] | None:
    """model_file_info(path) as a dict, None when the network package cannot be imported here."""
    try:
        from shared.network.modelfile import model_file_info
    except ImportError:
        return None
    try:
        return dict(model_file_info(path))
    except ValueError as exc:  # ModelFileError is a ValueError (NetworkError)
        raise RegistryError(f"cannot register {path}: {exc}") from None
    except OSError as exc:
        raise RegistryError(f"cannot read model file {path}: {exc}") from None


def describe_model_file(path: Path, game: str | None, architecture: dict[str, Any] | None) -> tuple[str | None, dict | None]:
    """(game name, architecture dict) for `path`: from the file's metadata when readable, else the given values.

    RegistryError when the file is damaged or its game disagrees with an explicitly given `game`.
    """
    info = _read_model_file_info(Path(path))
    if info is None:
        return game, architecture
    params = info.get("game") or {}
    file_game = params.get("name") if isinstance(params, dict) else None
    if game and file_game and game != file_game:
        raise RegistryError(f"model file {path} is for game {file_game!r}, not {game!r}")
    file_architecture = {
        "spec": info.get("spec"),
        "geometry": info.get("geometry"),
        "num_parameters": info.get("num_parameters"),
        "weights_checksum": info.get("checksum"),
    }
    return file_game or game, file_architecture
