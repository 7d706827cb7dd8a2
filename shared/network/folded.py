"""FoldedPolicyValueNet: an inference-only copy of a PolicyValueNet with every batch norm folded into its conv.

In eval mode a batch norm after a bias-free convolution is an affine map per output channel,
y = gamma * (conv(x) - mean) / sqrt(var + eps) + beta, so it folds into the convolution: weights scaled by
gamma / sqrt(var + eps) per output channel and a bias beta - mean * gamma / sqrt(var + eps)
(`torch.nn.utils.fusion.fuse_conv_bn_eval`). The folded network computes the same function up to float rounding
(about 1e-7 on the logits in fp32; under bf16 autocast the rounding of a bf16 pass, ~3e-3) with one pass over
the activations fewer per layer, and under bf16 autocast no bf16 -> fp32 -> bf16 round trip around each batch
norm (which autocast runs in fp32). Measured 9-15% faster in fp32 and 19-25% in bf16 on CPU (BENCHMARKS.md,
"Batch norm folded into the convolutions").

A global-pooling block keeps its pooling step (`pool_bias`) between its two folded convolutions; an ownership
head is left out (it is a training target; inference never reads it).

The copy is made from the network's weights at construction: later changes to the source network (training,
load_state_dict) do not reach it; build a new one (the evaluators do, per model version).
"""
from __future__ import annotations

import copy

import torch
from torch import nn
from torch.nn import functional as F
from torch.nn.utils.fusion import fuse_conv_bn_eval

from shared.network.resnet import GlobalPoolBlock, PolicyValueNet, pool_bias
from shared.network.spec import NetworkError


class FoldedPolicyValueNet(nn.Module):
    """The function of `model` (a PolicyValueNet) with its batch norms folded: forward(x [N, C, H, W] float32) ->
    (logits [N, A] float32, value [N] float32 in [-1, 1], side to move), as PolicyValueNet.forward. Eval only.

    Keeps the source's geometry attributes (num_planes, height, width, num_actions) and spec.
    """

    def __init__(self, model: PolicyValueNet) -> None:
        super().__init__()
        if not isinstance(model, PolicyValueNet):
            raise NetworkError(f"FoldedPolicyValueNet folds a PolicyValueNet, got {type(model).__name__}")
        source = copy.deepcopy(model).eval()               # fuse_conv_bn_eval needs eval-mode modules
        self.num_planes, self.height, self.width = source.num_planes, source.height, source.width
        self.num_actions, self.spec = source.num_actions, source.spec
        self.stem = fuse_conv_bn_eval(source.stem[0], source.stem[1])
        # Each block: [conv1, conv2] folded, plus the pooling's linear layer in a GlobalPoolBlock.
        self.trunk = nn.ModuleList(nn.ModuleList([fuse_conv_bn_eval(block.conv1, block.bn1),
                                                  fuse_conv_bn_eval(block.conv2, block.bn2)]
                                                 + ([block.pool_fc] if isinstance(block, GlobalPoolBlock) else []))
                                   for block in source.trunk)
        self.policy_conv = fuse_conv_bn_eval(source.policy_conv, source.policy_bn)
        self.value_conv = fuse_conv_bn_eval(source.value_conv, source.value_bn)
        self.policy_fc, self.value_fc1, self.value_fc2 = source.policy_fc, source.value_fc1, source.value_fc2
        self.eval()
        self.requires_grad_(False)

    def train(self, mode: bool = True) -> FoldedPolicyValueNet:
        if mode:
            raise NetworkError("FoldedPolicyValueNet is for inference only; train the PolicyValueNet it was made from")
        return super().train(False)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """x [N, C, H, W] float32 -> (logits [N, A], value [N]); the same layers as PolicyValueNet.forward."""
        if x.dim() != 4 or tuple(x.shape[1:]) != (self.num_planes, self.height, self.width):
            raise NetworkError(
                f"FoldedPolicyValueNet expects input [N, {self.num_planes}, {self.height}, {self.width}], "
                f"got {list(x.shape)}; encode states with the same game the network was built for"
            )
        # In-place ReLUs: each acts on a tensor just made by the layer before it (one pass over memory, no new
        # buffer); the residual sum is a new tensor too, so `features` itself is never overwritten.
        features = F.relu(self.stem(x), inplace=True)
        for layers in self.trunk:
            inner = F.relu(layers[0](features), inplace=True)
            if len(layers) == 3:                                   # a GlobalPoolBlock: bias from the pooled channels
                inner = pool_bias(inner, layers[2].out_features, layers[2])
            features = F.relu(layers[1](inner) + features, inplace=True)
        logits = self.policy_fc(F.relu(self.policy_conv(features), inplace=True).flatten(1))      # [N, A]
        value = F.relu(self.value_conv(features), inplace=True)
        value = F.relu(self.value_fc1(value.flatten(1)), inplace=True)
        value = torch.tanh(self.value_fc2(value)).squeeze(1)                       # [N]
        return logits, value


def bf16_copy(model: nn.Module) -> nn.Module:
    """A copy of `model` (an inference network, e.g. a FoldedPolicyValueNet) with its weights and buffers cast to
    bf16 once: forward(x [N, C, H, W] bf16) -> its outputs in bf16.

    On CPU its outputs equal those of `model` under bf16 autocast bit for bit (autocast runs the convolutions
    and linear layers on bf16 copies of the weights and the rest in the input's dtype, bf16 here; checked in
    tests/network/test_folded.py), without casting every weight again on every pass.
    """
    return copy.deepcopy(model).to(torch.bfloat16)
