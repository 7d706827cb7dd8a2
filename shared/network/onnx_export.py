"""ONNX export of a policy-value network, with the metadata a user of the file needs.

    metadata = export_onnx(model_path, "connect4.onnx", game, version="000012")

The graph has one input and two outputs, all with a dynamic batch axis named "batch":

    planes  [batch, C, H, W] float32   game.encode(states): the side to move's view (see "encoding"), then for a
                                       network with line planes the two planes of shared.network.inputs
    logits  [batch, A]       float32   unnormalised move scores; softmax over the legal moves gives the prior
    value   [batch]          float32   expected result for the side to move, in [-1, 1]

`metadata_props` (all strings) carry: zeroforge_format, game, game_params (JSON), encoding (the game's
documented input planes), encoding_planes, input_shape and output_shapes (JSON), num_actions, version
(registry version, "shipped" or the file name), source_sha256 (sha256 of the source model file's bytes,
the registry's checksum), weights_sha256 (the model file's weights checksum), network (blocks, channels,
value_hidden as JSON) and exporter versions. It needs the optional packages of `zeroforge[onnx]`
(onnx, onnxscript; onnxruntime to run the file).
"""
from __future__ import annotations

import hashlib
import inspect
import json
import logging
import warnings
from pathlib import Path
from typing import Any

import torch

from shared.atomic import atomic_output
from shared.games.base import Game
from shared.network.inputs import encode_inputs, input_planes
from shared.network.spec import NetworkError

#: Identifies the layout of the exported graph (input and output names and meanings above).
ONNX_FORMAT = "zeroforge-policy-value/1"
#: Appended to "encoding" for a network with line planes (shared.network.inputs).
LINE_PLANES_TEXT = (" Then 2 line planes: 1 on the empty cells where the side to move, then the opponent, would "
                    "complete n in a row.")
#: Largest batch the exported graph declares (the dynamic axis' upper bound in torch.export).
MAX_BATCH = 65536


def file_sha256(path: Path) -> str:
    """sha256 hex digest of a file's bytes."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def encoding_text(game: Game) -> str:
    """The game's documented input planes, one line: the 'Encoding ...' paragraph of its module docstring,
    else the common encoding of shared.games.grid."""
    import sys

    from shared.games import grid

    for module in (sys.modules[type(game).__module__], grid):
        text = _encoding_paragraph(inspect.getdoc(module) or "")
        if text:
            return text
    return f"{game.num_planes} planes"


def _encoding_paragraph(doc: str) -> str:
    """The lines of `doc` from the first one whose label mentions the encoding up to a blank line or the next
    'Label:' line, joined into one line ('' when there is none)."""
    lines, found = [], False
    for line in doc.splitlines():
        if not found and "ncoding" in line.split(":")[0]:
            found = True
        elif found and (not line.strip() or (line[:1].isupper() and line.split(" ")[0].endswith(":"))):
            break
        if found:
            lines.append(line.strip())
    return " ".join(lines)


def _import_onnx():
    try:
        import onnx  # noqa: F401
        import onnxscript  # noqa: F401  (torch's exporter needs it)
    except ImportError as exc:
        raise NetworkError(f"ONNX export needs the optional packages onnx and onnxscript ({exc}); install them "
                           "with `pip install 'zeroforge[onnx]'`") from None
    return onnx


def export_onnx(model_path: Path, out_path: Path, game: Game, *, version: str) -> dict[str, str]:
    """Export the model file at `model_path` (for `game`) to ONNX at `out_path`, written atomically.

    Returns the metadata_props written (all strings). ModelFileError when the model file is damaged or for
    another game; NetworkError when the ONNX packages are missing or the export fails.
    """
    onnx = _import_onnx()
    from shared.network.modelfile import load_model

    model_path, out_path = Path(model_path), Path(out_path)
    loaded = load_model(model_path, device="cpu", expected_game=game)
    model = loaded.model.eval()
    example = torch.as_tensor(encode_inputs(game, game.initial_states(2), loaded.spec.line_planes))  # [2, C, H, W]
    batch = torch.export.Dim("batch", min=1, max=MAX_BATCH)
    quiet = logging.getLogger("torch.onnx")
    level = quiet.level
    quiet.setLevel(logging.ERROR)              # "torchvision is not installed" notes are not ours to show
    try:
        with warnings.catch_warnings():        # the exporter's own deprecation notes, not the user's concern
            warnings.simplefilter("ignore", FutureWarning)
            warnings.simplefilter("ignore", DeprecationWarning)
            program = torch.onnx.export(model, (example,), dynamo=True, input_names=["planes"],
                                        output_names=["logits", "value"], dynamic_shapes=({0: batch},),
                                        verbose=False)
    except Exception as exc:  # noqa: BLE001 - the exporter raises many kinds; all mean "export failed"
        raise NetworkError(f"ONNX export of {model_path} failed ({type(exc).__name__}: {str(exc)[:300]})") from None
    finally:
        quiet.setLevel(level)
    proto = program.model_proto
    metadata = onnx_metadata(game, loaded, model_path, version)
    del proto.metadata_props[:]
    for key, value in metadata.items():
        entry = proto.metadata_props.add()
        entry.key, entry.value = key, value
    proto.doc_string = f"zeroforge policy-value network for {game.name} ({version})"
    out_path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_output(out_path) as handle:
        handle.write(proto.SerializeToString())
    return metadata


def onnx_metadata(game: Game, loaded: Any, model_path: Path, version: str) -> dict[str, str]:
    """The metadata_props of an export (see the module docstring); every value a string."""
    import onnx

    planes = input_planes(game, loaded.spec.line_planes)
    shape = [planes, game.height, game.width]
    encoding = encoding_text(game) + (LINE_PLANES_TEXT if loaded.spec.line_planes else "")
    return {
        "zeroforge_format": ONNX_FORMAT,
        "game": game.name,
        "game_params": json.dumps(game.params(), sort_keys=True),
        "encoding": encoding,
        "encoding_planes": str(planes),
        "input_shape": json.dumps(["batch", *shape]),
        "input_dtype": "float32",
        "output_shapes": json.dumps({"logits": ["batch", game.num_actions], "value": ["batch"]}),
        "num_actions": str(game.num_actions),
        "version": version,
        "source_sha256": file_sha256(model_path),
        "weights_sha256": loaded.checksum,
        "network": json.dumps(loaded.spec.to_dict(), sort_keys=True),
        "exporter": f"torch {torch.__version__}, onnx {onnx.__version__}",
    }
