"""Position averaging: one row per distinct state of a replay window, its rows' targets averaged.

Self-play repeats positions: in a Connect Four window of 100,000 rows near 47% of the rows repeat a state
(nearly every row of the first plies, a third of the rows after 12-24 plies). Each repeat is a sample of the same
position with its own game result and search; trained row by row, a position weighs as often as it was reached
and learns a noisy target per draw. Merging (train.merge_duplicate_positions) trains each distinct state once
per draw, towards the mean of its targets.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from shared.shards.replay import ReplayWindow


def merge_duplicate_positions(window: ReplayWindow) -> ReplayWindow:
    """The window with its repeated states merged: one row per distinct state (equal state arrays, so the same
    board with a different history stays apart).

    window: a ReplayWindow of N rows (states [N, S] int16, pi [N, A] float32, z / root_value / cut_value [N]
    float32, generation [N] int32, ownership [N, H*W] int8 and ownership_known [N] bool when present).
    Returns a ReplayWindow of M <= N rows: pi, z, root_value and cut_value are the means over the state's rows
    (float32; a mean of distributions is a distribution); generation, ownership and ownership_known are those of
    the state's newest row (ownership is one game's count, -1/0/+1 per cell, so it is not averaged). Rows are in
    the order of each state's newest row, oldest first as in a loaded window; shard_names and bad_shards are kept.
    """
    n = window.states.shape[0]
    if n == 0:
        return window
    _, group = np.unique(window.states, axis=0, return_inverse=True)
    group = group.reshape(-1)                                   # [N] the distinct state of each row
    by_group = np.argsort(group, kind="stable")                 # rows grouped, each group's rows in window order
    starts = np.flatnonzero(np.r_[True, np.diff(group[by_group]) != 0])
    counts = np.diff(np.r_[starts, n])                          # [M] rows per distinct state
    newest = by_group[starts + counts - 1]                      # [M] each state's last (newest) row
    order = np.argsort(newest, kind="stable")                   # distinct states by their newest row

    def mean(values: np.ndarray | None) -> np.ndarray | None:
        if values is None:
            return None
        sums = np.add.reduceat(values[by_group].astype(np.float64), starts, axis=0)
        means = sums / counts.reshape((-1,) + (1,) * (values.ndim - 1))
        return means[order].astype(np.float32)

    rows = newest[order]

    def newest_of(values: np.ndarray | None) -> np.ndarray | None:
        return None if values is None else values[rows]

    return replace(window, states=window.states[rows], pi=mean(window.pi), z=mean(window.z),
                   generation=window.generation[rows], root_value=mean(window.root_value),
                   ownership=newest_of(window.ownership), ownership_known=newest_of(window.ownership_known),
                   cut_value=mean(window.cut_value))
