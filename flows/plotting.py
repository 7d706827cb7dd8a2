"""What the plots of the flows share: a headless matplotlib figure, integer generation axes, atomic PNG files
and PNGs inlined in markdown artifacts (Prefect shows data-URI images)."""
from __future__ import annotations

import base64
from pathlib import Path

from shared.atomic import atomic_output


def new_figure(rows: int, cols: int, width: float, height: float):
    """(figure, axes) from matplotlib's Agg backend (no display needed); axes as plt.subplots returns them."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt.subplots(rows, cols, figsize=(width, height), dpi=100, squeeze=False)


def generation_axis(ax) -> None:
    """Label the x axis "generation" and put its ticks on whole numbers only (no 0.25, 0.5 ... ticks)."""
    from matplotlib.ticker import MaxNLocator

    ax.set_xlabel("generation")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True, min_n_ticks=1))
    ax.grid(alpha=0.3)


def save_png(fig, path: Path) -> Path:
    """Write `fig` as a PNG at `path` atomically, close it, and return `path`."""
    import matplotlib.pyplot as plt

    fig.tight_layout()
    with atomic_output(path) as handle:
        fig.savefig(handle, format="png")
    plt.close(fig)
    return path


def png_markdown(png: Path | None, alt: str) -> str:
    """Markdown showing the PNG at `png` inline (a base64 data URI) and its path; "" when there is no file."""
    if png is None or not Path(png).exists():
        return ""
    data = base64.b64encode(Path(png).read_bytes()).decode()
    return f"\n\n![{alt}](data:image/png;base64,{data})\n\n`{png}`"
