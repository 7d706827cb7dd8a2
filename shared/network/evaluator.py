"""TorchEvaluator: the search's `Evaluator` callable backed by a PolicyValueNet.

    evaluator(states [M, S] int16) -> (logits [M, A] float32 numpy, values [M] float32 numpy in [-1, 1])

Values are from the point of view of the player to move in each state (the encoding is from the
side to move's view, so the network output needs no sign flip).

CPU: float32 inference under torch.inference_mode, channels-last memory layout (oneDNN's preferred
layout: 10-30% faster on one thread, same results to ~1e-7); self-play workers call
`configure_torch_threads(1)` so that N worker processes use N cores without oversubscription.
`use_bf16=True` on a CPU with AVX512-BF16/AMX doubles throughput at batch >= 64 (measured on the
development EPYC; slower at batch 1), but is off by default on CPU. `precision="auto"` decides per forward
batch bucket (shared.network.precision: bf16 on CUDA; on CPU bf16 only with native bf16, for networks of 48+
channels at batches of 4+ positions).
On CPU the evaluator also keeps freed heap memory in the process (`shared.network.host_memory`), so that the
activation buffers of one pass are not page-faulted in again by the next: 19-38% more self-play simulations/s
measured with a small network.
Every pass runs `inference_model`, a copy of the model with each batch norm folded into the convolution before it
(shared.network.folded: the same function up to float rounding, 9-25% faster on CPU); `model` stays the network
as given. Both are fixed at construction: a new model version gets a new evaluator. A CPU bf16 pass (without
torch.compile) runs `bf16_copy(inference_model)` on inputs cast to bf16: the outputs of bf16 autocast bit for bit,
without casting every weight again on every pass (about 6% faster with a 2x48 network at batch 64).
On CPU several threads may call one evaluator at once (services.inference's parallel mode: one pass per core,
one copy of the weights); the set-up of a first pass (auto's decision per batch bucket, the bf16 copy) is done by one of them.
CUDA: pinned host buffers + non_blocking copies, bf16 autocast by default; optional CUDA graphs
(`use_cuda_graphs=True`, one captured graph per padded batch size) or torch.compile
(`compile_model=True`). Both options are off by default and never required.
"""
from __future__ import annotations

import threading

import numpy as np
import torch

from shared.games.base import Game
from shared.network.folded import FoldedPolicyValueNet, bf16_copy
from shared.network.host_memory import retain_freed_memory
from shared.network.inputs import encode_inputs, input_planes
from shared.network.precision import batch_bucket, check_precision, resolve_precision
from shared.network.resnet import PolicyValueNet
from shared.network.spec import NetworkError


def configure_torch_threads(num_threads: int) -> None:
    """Set torch's intra-op threads (and inter-op threads when still allowed) to `num_threads`.

    Self-play workers on CPU use 1 thread each: the batched search already keeps one core busy,
    and several workers run side by side.
    """
    if num_threads < 1:
        raise NetworkError(f"configure_torch_threads: num_threads={num_threads} must be >= 1")
    torch.set_num_threads(num_threads)
    try:
        torch.set_num_interop_threads(num_threads)
    except RuntimeError:
        pass  # only settable once, before any inter-op work started; intra-op threads are what matter


def _padded_size(count: int, max_batch: int) -> int:
    """Smallest power of two >= count (capped at max_batch): the batch sizes CUDA graphs are captured for."""
    size = 1
    while size < count:
        size *= 2
    return min(size, max_batch)


class TorchEvaluator:
    """Callable `Evaluator` over game states; see the module docstring.

    model: a PolicyValueNet for `game` (moved to `device`, put in eval mode).
    use_bf16: None -> True on CUDA, False on CPU.  precision: "auto" | "fp32" | "bf16" (overrides use_bf16
    when given; auto is decided per forward batch bucket, see shared.network.precision).
    max_batch: largest forward batch (None -> 4096);
    larger requests are split into chunks.  channels_last: convert the model (in place) and the inputs
    to the channels-last memory layout (same math, faster convolutions).
    """

    def __init__(
        self,
        model: PolicyValueNet,
        game: Game,
        device: str | torch.device = "cpu",
        use_bf16: bool | None = None,
        max_batch: int | None = None,
        use_cuda_graphs: bool = False,
        compile_model: bool = False,
        channels_last: bool = True,
        precision: str | None = None,
    ) -> None:
        self.device = torch.device(device)
        self.is_cuda = self.device.type == "cuda"
        if self.is_cuda and not torch.cuda.is_available():
            raise NetworkError("TorchEvaluator: device 'cuda' requested but CUDA is not available; use device='cpu'")
        if use_cuda_graphs and not self.is_cuda:
            raise NetworkError("TorchEvaluator: use_cuda_graphs needs a CUDA device; drop the flag on CPU")
        #: the network's extra input planes (shared.network.inputs), encoded with every batch
        self.line_planes = model.spec.line_planes
        expected = (input_planes(game, self.line_planes), game.height, game.width, game.num_actions)
        actual = (model.num_planes, model.height, model.width, model.num_actions)
        if expected != actual:
            raise NetworkError(
                f"TorchEvaluator: model geometry (planes, H, W, actions)={actual} does not fit game "
                f"{game.name} {expected}; load or create the model for this game"
            )
        if not self.is_cuda:
            retain_freed_memory()          # the forward buffers stay mapped between passes (shared.network.host_memory)
        self.game = game
        self.channels_last = channels_last
        self.memory_format = torch.channels_last if channels_last else torch.contiguous_format
        self.model = model.to(self.device, memory_format=self.memory_format).eval()
        #: what the passes run: the model with its batch norms folded into the convolutions (shared.network.folded)
        self.inference_model = FoldedPolicyValueNet(self.model).to(self.device, memory_format=self.memory_format)
        if precision is None:
            precision = ("bf16" if self.is_cuda else "fp32") if use_bf16 is None else ("bf16" if use_bf16 else "fp32")
        self.precision = check_precision(precision)
        #: the precision of the latest forward pass (for auto: the decision at that batch bucket)
        self.use_bf16 = precision == "bf16" or (precision == "auto" and self.is_cuda)
        self._bucket_bf16: dict[int, bool] = {}
        self.max_batch = 4096 if max_batch is None else int(max_batch)
        if self.max_batch < 1:
            raise NetworkError(f"TorchEvaluator: max_batch={max_batch} must be >= 1")
        self.use_cuda_graphs = use_cuda_graphs
        self._forward = (torch.compile(self.inference_model, dynamic=True) if compile_model
                         else self.inference_model)
        #: CPU bf16 passes (without torch.compile) run the folded network with its weights cast to bf16 once (made
        #: at the first such pass; the same outputs bit for bit as bf16 autocast, which casts every weight again on
        #: every pass); elsewhere bf16 runs under autocast
        self._uses_bf16_copy = not self.is_cuda and not compile_model
        self._bf16_copy: torch.nn.Module | None = None
        #: guards the set-up done at a first pass (auto's decision per batch bucket, the bf16 copy), so that
        #: several threads may call the evaluator at once (services.inference's parallel mode, on CPU)
        self._setup_lock = threading.Lock()
        self._graphs: dict[int, tuple[torch.cuda.CUDAGraph, torch.Tensor, torch.Tensor, torch.Tensor]] = {}

    def __call__(self, states: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """states [M, S] int16 -> (logits [M, A] float32, values [M] float32 in [-1, 1], side to move)."""
        self._check_states(states)
        count = states.shape[0]
        if count <= self.max_batch:                                            # one pass: its outputs as they are
            return self.forward_planes(self.encode(states))
        logits = np.empty((count, self.game.num_actions), dtype=np.float32)  # [M, A] float32
        values = np.empty((count,), dtype=np.float32)                         # [M] float32
        for start in range(0, count, self.max_batch):
            stop = min(start + self.max_batch, count)
            planes = self.encode(states[start:stop])                           # [m, C, H, W] float32
            logits[start:stop], values[start:stop] = self.forward_planes(planes)
        return logits, values

    def encode(self, states: np.ndarray) -> np.ndarray:
        """The network's input planes of states [M, S] int16: [M, C, H, W] float32 (shared.network.inputs)."""
        return encode_inputs(self.game, states, self.line_planes)

    def _check_states(self, states: np.ndarray) -> None:
        if not isinstance(states, np.ndarray) or states.ndim != 2 or states.shape[1] != self.game.state_size:
            shape = getattr(states, "shape", type(states).__name__)
            raise NetworkError(
                f"TorchEvaluator for {self.game.name} expects states [M, {self.game.state_size}] int16, got {shape}"
            )

    @torch.inference_mode()
    def forward_planes(self, planes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Encoded planes [m, C, H, W] float32 (m <= max_batch) -> (logits [m, A], values [m]) float32 numpy."""
        inputs = torch.from_numpy(np.ascontiguousarray(planes, dtype=np.float32))
        bf16 = self.bf16_at(inputs.shape[0])
        self.use_bf16 = bf16
        if not self.is_cuda:
            # A bf16 pass of the bf16 copy gets bf16 inputs: cast, then the layout copy at half the bytes (measured
            # 12 us for both at batch 64 on 8x8, against 19 us for one combined `to(dtype, memory_format)`).
            dtype = torch.bfloat16 if bf16 and self._uses_bf16_copy else torch.float32
            logits, values = self._run_model(inputs.to(dtype).contiguous(memory_format=self.memory_format), bf16)
            return logits.float().numpy(), values.float().numpy()
        if self.use_cuda_graphs:
            logits, values = self._run_graph(inputs)
        else:
            device_inputs = inputs.pin_memory().to(self.device, non_blocking=True)
            logits, values = self._run_model(device_inputs.contiguous(memory_format=self.memory_format), bf16)
        return self._to_host(logits, values)

    def bf16_at(self, batch: int) -> bool:
        """Whether a forward pass of `batch` positions runs in bf16 (auto: decided once per batch bucket)."""
        if self.precision != "auto":
            return self.precision == "bf16"
        bucket = batch_bucket(min(batch, self.max_batch))
        if bucket not in self._bucket_bf16:
            with self._setup_lock:                  # decided once, by one thread
                if bucket not in self._bucket_bf16:
                    decision = resolve_precision("auto", self.device, self.inference_model, bucket) == "bf16"
                    self._bucket_bf16[bucket] = decision
        return self._bucket_bf16[bucket]

    def _run_model(self, inputs: torch.Tensor, bf16: bool | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        enabled = self.bf16_at(inputs.shape[0]) if bf16 is None else bf16
        if enabled and self._uses_bf16_copy:
            if self._bf16_copy is None:
                with self._setup_lock:
                    if self._bf16_copy is None:
                        self._bf16_copy = bf16_copy(self.inference_model)
            return self._bf16_copy(inputs.to(torch.bfloat16))          # no copy when already bf16
        with torch.autocast(device_type=self.device.type, dtype=torch.bfloat16, enabled=enabled):
            return self._forward(inputs)

    def _to_host(self, logits: torch.Tensor, values: torch.Tensor) -> tuple[np.ndarray, np.ndarray]:
        """Copy CUDA outputs into pinned host memory asynchronously, then wait once."""
        host_logits = torch.empty(logits.shape, dtype=torch.float32, pin_memory=True)
        host_values = torch.empty(values.shape, dtype=torch.float32, pin_memory=True)
        host_logits.copy_(logits, non_blocking=True)
        host_values.copy_(values, non_blocking=True)
        torch.cuda.current_stream(self.device).synchronize()
        return host_logits.numpy(), host_values.numpy()

    def _run_graph(self, inputs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Replay a CUDA graph captured for the padded batch size (capturing it on first use)."""
        count = inputs.shape[0]
        size = _padded_size(count, self.max_batch)
        if size not in self._graphs:
            self._graphs[size] = self._capture(size)
        graph, static_in, static_logits, static_values = self._graphs[size]
        static_in[:count].copy_(inputs.pin_memory(), non_blocking=True)
        static_in[count:].zero_()
        graph.replay()
        return static_logits[:count], static_values[:count]

    def _capture(self, size: int) -> tuple[torch.cuda.CUDAGraph, torch.Tensor, torch.Tensor, torch.Tensor]:
        """Warm up on a side stream, then capture one forward pass for batch `size`."""
        shape = (size, input_planes(self.game, self.line_planes), self.game.height, self.game.width)
        static_in = torch.zeros(shape, dtype=torch.float32, device=self.device).contiguous(
            memory_format=self.memory_format)
        side = torch.cuda.Stream(self.device)
        side.wait_stream(torch.cuda.current_stream(self.device))
        with torch.cuda.stream(side):
            for _ in range(3):
                self._run_model(static_in)
        torch.cuda.current_stream(self.device).wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            static_logits, static_values = self._run_model(static_in)
        return graph, static_in, static_logits, static_values
