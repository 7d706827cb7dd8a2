"""The policy-value network: model, sizes, model files and the search evaluator (the only torch code in `shared`).

Public API:
    PolicyValueNet, NetworkSpec, default_network_spec, NetworkError
    create_model, save_model, load_model, model_file_info, LoadedModel, ModelFileError, weights_checksum
    TorchEvaluator, configure_torch_threads
The self-play speed benchmark lives in `shared.network.bench` (imported on demand, it needs shared.search).
"""
from shared.network.evaluator import TorchEvaluator, configure_torch_threads
from shared.network.modelfile import (
    FORMAT_VERSION,
    LoadedModel,
    ModelFileError,
    create_model,
    load_model,
    model_file_info,
    save_model,
    weights_checksum,
)
from shared.network.resnet import PolicyValueNet
from shared.network.spec import GOMOKU_15_GPU_SPEC, NetworkError, NetworkSpec, default_network_spec

__all__ = [
    "FORMAT_VERSION", "GOMOKU_15_GPU_SPEC", "LoadedModel", "ModelFileError", "NetworkError", "NetworkSpec",
    "PolicyValueNet", "TorchEvaluator", "configure_torch_threads", "create_model", "default_network_spec",
    "load_model", "model_file_info", "save_model", "weights_checksum",
]
