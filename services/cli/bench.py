"""`zeroforge bench`: speed benchmarks (filled in by the network/bench work)."""
import click


@click.group()
def bench() -> None:
    """Speed benchmarks."""
