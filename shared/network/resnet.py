"""PolicyValueNet: the AlphaZero-style residual network shared by every game.

Layout (all convolutions without bias, followed by batch norm):

    stem     conv3x3(C_in -> ch) - BN - ReLU
    trunk    `blocks` x [conv3x3 - BN - ReLU - conv3x3 - BN, + skip, ReLU]
    policy   conv1x1(ch -> 2) - BN - ReLU - flatten - linear(2*H*W -> A)      -> logits [N, A]
    value    conv1x1(ch -> 1) - BN - ReLU - flatten - linear(H*W -> hidden) - ReLU - linear(hidden -> 1) - tanh
                                                                               -> value [N] in [-1, 1]

The policy head ends with a linear layer over the flattened features, so the action count need not
equal H*W (Connect Four has 7 column actions on a 6x7 board; Othello has H*W + 1 with the pass).
Values are from the point of view of the player to move, as the input planes are (game.encode).

Two optional parts (NetworkSpec.ownership, NetworkSpec.global_pool; KataGo's, Wu 2019, section 4):

    ownership    conv1x1(ch -> 1, with bias) - flatten                            -> ownership logits [N, H*W]
                 a training-only head: P(the side to move owns the cell at the end) = sigmoid(logit), so the
                 predicted ownership in [-1, 1] is tanh(logit / 2); `forward` leaves it out, `forward_train`
                 returns it (shared.network.training trains it against the game's final ownership).
    global pool  every third residual block (the 3rd, 6th, ...; the last one when there are fewer than 3) is a
                 GlobalPoolBlock: after its first conv-BN-ReLU, the last ch // 4 channels are pooled over the
                 board (mean and max), a linear layer turns the 2 * (ch // 4) numbers into one bias per
                 remaining channel, and the second conv reads only those biased channels. Whole-board facts
                 (a ko, who is ahead) reach every cell in one block instead of through many 3x3 convolutions.
"""
from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from shared.network.spec import NetworkError, NetworkSpec


class ResidualBlock(nn.Module):
    """Two conv3x3-BN layers with an identity skip: x [N, ch, H, W] -> [N, ch, H, W]."""

    def __init__(self, channels: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, kernel_size=3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(channels)
        self.conv2 = nn.Conv2d(channels, channels, kernel_size=3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return F.relu(out + x)


class GlobalPoolBlock(nn.Module):
    """A residual block with global pooling: x [N, ch, H, W] -> [N, ch, H, W] (module docstring).

    conv1-BN-ReLU gives ch channels; the last `pooled = ch // 4` are reduced to their board mean and max, a
    linear layer maps those 2 * pooled numbers to a bias for each of the other ch - pooled channels, and
    conv2-BN (ch - pooled -> ch) reads the biased channels; then the skip and a ReLU, as in ResidualBlock.
    """

    def __init__(self, channels: int) -> None:
        super().__init__()
        self.pooled = channels // 4
        self.regular = channels - self.pooled
        self.conv1 = nn.Conv2d(channels, channels, kernel_size=3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(channels)
        self.pool_fc = nn.Linear(2 * self.pooled, self.regular)
        self.conv2 = nn.Conv2d(self.regular, channels, kernel_size=3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.relu(self.bn2(self.conv2(pool_bias(F.relu(self.bn1(self.conv1(x))), self.regular, self.pool_fc)))
                      + x)


def pool_bias(features: torch.Tensor, regular: int, fc: nn.Linear) -> torch.Tensor:
    """The global-pooling step of a GlobalPoolBlock: features [N, ch, H, W] -> [N, regular, H, W], the first
    `regular` channels plus fc(mean and max over the board of the other channels) [N, regular] as a bias."""
    pooled = features[:, regular:]
    summary = torch.cat([pooled.mean(dim=(2, 3)), pooled.amax(dim=(2, 3))], dim=1)        # [N, 2 * pooled]
    return features[:, :regular] + fc(summary)[:, :, None, None]


def global_pool_blocks(blocks: int) -> set[int]:
    """Indices of the GlobalPoolBlocks among `blocks` residual blocks: every third (2, 5, ...), or the last one
    when there are fewer than three."""
    return set(range(2, blocks, 3)) or ({blocks - 1} if blocks else set())


class PolicyValueNet(nn.Module):
    """ResNet with a policy head (logits over A actions) and a value head (tanh scalar).

    forward(x [N, C, H, W] float32) -> (logits [N, A] float32, value [N] float32 in [-1, 1]).
    """

    def __init__(
        self,
        num_planes: int,
        height: int,
        width: int,
        num_actions: int,
        blocks: int,
        channels: int,
        value_hidden: int = 64,
        ownership: bool = False,
        global_pool: bool = False,
        line_planes: bool = False,
    ) -> None:
        super().__init__()
        for name, value in (("num_planes", num_planes), ("height", height), ("width", width),
                            ("num_actions", num_actions)):
            if not isinstance(value, int) or value < 1:
                raise NetworkError(f"PolicyValueNet: {name}={value!r} must be a positive integer")
        self.num_planes, self.height, self.width, self.num_actions = num_planes, height, width, num_actions
        self.spec = NetworkSpec(blocks, channels, value_hidden, ownership, global_pool, line_planes)
        cells = height * width
        self.stem = nn.Sequential(
            nn.Conv2d(num_planes, channels, kernel_size=3, padding=1, bias=False),
            nn.BatchNorm2d(channels),
            nn.ReLU(inplace=True),
        )
        pooling = global_pool_blocks(blocks) if global_pool else set()
        self.trunk = nn.Sequential(*[GlobalPoolBlock(channels) if i in pooling else ResidualBlock(channels)
                                     for i in range(blocks)])
        self.policy_conv = nn.Conv2d(channels, 2, kernel_size=1, bias=False)
        self.policy_bn = nn.BatchNorm2d(2)
        self.policy_fc = nn.Linear(2 * cells, num_actions)
        self.value_conv = nn.Conv2d(channels, 1, kernel_size=1, bias=False)
        self.value_bn = nn.BatchNorm2d(1)
        self.value_fc1 = nn.Linear(cells, value_hidden)
        self.value_fc2 = nn.Linear(value_hidden, 1)
        self.ownership_conv = nn.Conv2d(channels, 1, kernel_size=1, bias=True) if ownership else None

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """x [N, C, H, W] float32 -> (logits [N, A], value [N]); value is the side to move's expected result."""
        logits, value, _ = self._heads(x, ownership=False)
        return logits, value

    def forward_train(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
        """x [N, C, H, W] float32 -> (logits [N, A], value [N], ownership logits [N, H*W] from the side to move's
        view, or None without an ownership head)."""
        return self._heads(x, ownership=True)

    def _heads(self, x: torch.Tensor, ownership: bool) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
        if x.dim() != 4 or tuple(x.shape[1:]) != (self.num_planes, self.height, self.width):
            raise NetworkError(
                f"PolicyValueNet expects input [N, {self.num_planes}, {self.height}, {self.width}], "
                f"got {list(x.shape)}; encode states with the same game the network was built for"
            )
        features = self.trunk(self.stem(x))
        policy = F.relu(self.policy_bn(self.policy_conv(features)))
        logits = self.policy_fc(policy.flatten(1))                      # [N, A]
        value = F.relu(self.value_bn(self.value_conv(features)))
        value = F.relu(self.value_fc1(value.flatten(1)))
        value = torch.tanh(self.value_fc2(value)).squeeze(1)           # [N]
        owner = None
        if ownership and self.ownership_conv is not None:
            owner = self.ownership_conv(features).flatten(1)           # [N, H*W]
        return logits, value, owner

    def num_parameters(self) -> int:
        """Number of trainable parameters."""
        return sum(p.numel() for p in self.parameters())
