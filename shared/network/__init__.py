"""The policy-value network: model, sizes, model files, training steps and the search evaluator.

Public API:
    PolicyValueNet, FoldedPolicyValueNet (its inference copy), NetworkSpec, default_network_spec, NetworkError
    create_model, save_model, load_model, model_file_info, LoadedModel, ModelFileError, weights_checksum
    TorchEvaluator, configure_torch_threads
    shared.network.training: TrainSettings, make_optimizer, sample_batch, train_step

The names are loaded on first use (PEP 562), so that `shared.network.spec` (the network-size table the config
reads) can be imported without importing torch.
"""
from __future__ import annotations

import importlib
from typing import Any

_HOMES = {
    "TorchEvaluator": "evaluator", "configure_torch_threads": "evaluator",
    "FORMAT_VERSION": "modelfile", "LoadedModel": "modelfile", "ModelFileError": "modelfile",
    "create_model": "modelfile", "load_model": "modelfile", "model_file_info": "modelfile",
    "save_model": "modelfile", "weights_checksum": "modelfile",
    "PolicyValueNet": "resnet", "FoldedPolicyValueNet": "folded",
    "NetworkError": "spec", "NetworkSpec": "spec", "default_network_spec": "spec",
}

__all__ = sorted(_HOMES)


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module 'shared.network' has no attribute {name!r}")
    return getattr(importlib.import_module(f"shared.network.{_HOMES[name]}"), name)
