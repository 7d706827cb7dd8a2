"""Training curves: the per-run metrics file (one JSON line per generation) and TensorBoard event files."""
from shared.curves.events import TENSORBOARD_HINT, ScalarWriter, tensorboard_installed
from shared.curves.metrics import ElapsedHours, GenerationMetrics, append_metrics, elapsed_hours, read_metrics

__all__ = ["TENSORBOARD_HINT", "ElapsedHours", "GenerationMetrics", "ScalarWriter", "append_metrics", "elapsed_hours",
           "read_metrics", "tensorboard_installed"]
