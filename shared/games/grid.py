"""`GridGame`: the parts of `Game` every zeroforge board game shares.

Subclasses supply the rules (`_play`, `legal_mask`), notation and where the last move's cell is;
this class supplies start states, field bookkeeping, the network encoding, symmetries, equality
and the text-board status line.

Common encoding (planes of [B, C, H, W] float32, from the side to move's point of view):
    0  own stones (the player to move)
    1  opponent stones
    2  last move: one-hot on the cell of the last stone played (all zero before the first move and after a pass)
    3  side to move: all ones when the first player is to move, all zeros when the second is
A game may append more planes (Othello: 4 = legal moves) by overriding `_fill_extra_planes`.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from shared.games.base import (
    F_DONE, F_LAST, F_PASSES, F_PLAYER, F_PLY, F_WINNER, NO_ACTION, STATE_DTYPE, Game, GameError,
)
from shared.games.compiled import borrowing_jit
from shared.games.notation import SYMBOLS
from shared.games.symmetry import GridSymmetries

BASE_PLANES = 4


class GridGame(Game):
    """A Game on an H x W grid whose actions are cells (plus maybe a pass) or, for Connect Four, columns."""

    family: str

    def __init__(self, name: str, height: int, width: int, num_actions: int, num_planes: int,
                 symmetry_group: str) -> None:
        self.name = name
        self.height = height
        self.width = width
        self.num_actions = num_actions
        self.num_planes = num_planes
        self._symmetries = GridSymmetries(height, width, symmetry_group)
        self.num_symmetries = self._symmetries.count
        self._action_maps = [self._build_action_map(k) for k in range(self.num_symmetries)]

    # ----- identity ------------------------------------------------------------------------
    def params(self) -> dict[str, Any]:
        return {"name": self.name, "family": self.family, "height": self.height, "width": self.width}

    def __eq__(self, other: object) -> bool:
        return isinstance(other, GridGame) and self.params() == other.params()

    def __hash__(self) -> int:
        return hash(tuple(sorted(self.params().items())))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"

    # ----- states ----------------------------------------------------------------------------
    def _initial_cells(self) -> np.ndarray:
        """Board of the start position: [H*W] int16 (empty unless overridden)."""
        return np.zeros(self.num_cells, dtype=STATE_DTYPE)

    def initial_states(self, batch: int) -> np.ndarray:
        states = np.zeros((int(batch), self.state_size), dtype=STATE_DTYPE)  # [B, S] int16
        states[:, : self.num_cells] = self._initial_cells()
        states[:, self.num_cells + F_PLAYER] = 1
        states[:, self.num_cells + F_LAST] = NO_ACTION
        return states

    def _check_states(self, states: np.ndarray) -> None:
        if states.ndim != 2 or states.shape[1] != self.state_size:
            raise GameError(f"{self.name}: expected states of shape [B, {self.state_size}], got {states.shape}")

    def step(self, states: np.ndarray, actions: np.ndarray) -> np.ndarray:
        """Play one legal action per state: states [B, S] int16, actions [B] int -> new states [B, S] int16.

        Rows that are already terminal are returned unchanged (their action is ignored), so a batch of
        games can be stepped together after some have finished. The input is never modified.
        """
        self._check_states(states)
        actions = np.asarray(actions, dtype=np.int64).reshape(-1)
        if actions.shape[0] != states.shape[0]:
            raise GameError(f"{self.name}: {actions.shape[0]} actions for {states.shape[0]} states")
        live = states[:, self.num_cells + F_DONE] == 0
        if live.all():
            return self._play(states, actions)
        new = states.copy()
        if live.any():
            new[live] = self._play(states[live], actions[live])
        return new

    def _play(self, states: np.ndarray, actions: np.ndarray) -> np.ndarray:
        """Rules of one move for non-terminal states and legal actions: [B, S] int16, [B] int64 -> new [B, S]."""
        raise NotImplementedError

    def _record_move(self, new: np.ndarray, actions: np.ndarray, done: np.ndarray, winner: np.ndarray) -> None:
        """Update the fields of `new` [B, S] after a move: last action, ply + 1, other player to move, result.

        done [B] bool; winner [B] int (+1 first player, -1 second, 0 draw/none), stored only where done.
        """
        base = self.num_cells
        new[:, base + F_LAST] = actions
        new[:, base + F_PLY] += 1
        new[:, base + F_PLAYER] = -new[:, base + F_PLAYER]  # the opponent moves next (even after the game ends)
        new[:, base + F_DONE] = done
        new[:, base + F_WINNER] = np.where(done, winner, 0)

    # ----- encoding ---------------------------------------------------------------------------
    def _last_move_cells(self, states: np.ndarray) -> np.ndarray:
        """Cell of the last stone played: [B, S] -> [B] int64, -1 before the first move or after a pass."""
        last = states[:, self.num_cells + F_LAST].astype(np.int64)
        return np.where((last >= 0) & (last < self.num_cells), last, -1)

    def _fill_extra_planes(self, states: np.ndarray, planes: np.ndarray) -> None:
        """Fill planes[:, BASE_PLANES:] ([B, C, H*W] float32) for games with more than the base planes."""

    def encode(self, states: np.ndarray) -> np.ndarray:
        """Input planes (see the module docstring): states [B, S] int16 -> [B, C, H, W] float32."""
        self._check_states(states)
        batch, cells_count = states.shape[0], self.num_cells
        extra = self.num_planes > BASE_PLANES
        planes = (np.zeros if extra else np.empty)((batch, self.num_planes, cells_count), np.float32)  # [B, C, H*W]
        _fill_base_planes(np.ascontiguousarray(states, STATE_DTYPE), cells_count + F_PLAYER,
                          np.ascontiguousarray(self._last_move_cells(states), np.int64), planes)
        if extra:
            self._fill_extra_planes(states, planes)
        return planes.reshape(batch, self.num_planes, self.height, self.width)

    # ----- symmetries -----------------------------------------------------------------------
    def _build_action_map(self, k: int) -> np.ndarray:
        """Action permutation of symmetry k: cells move with the board, any extra (pass) action maps to itself."""
        extra = np.arange(self.num_cells, self.num_actions, dtype=np.int64)
        out = np.concatenate([self._symmetries.cell_target[k], extra])
        out.setflags(write=False)
        return out

    def symmetry_action_map(self, k: int) -> np.ndarray:
        """[A] int64 (read-only): action a in a position is action map[a] in the position transformed by k."""
        return self._action_maps[self._symmetries.check_index(k)]

    def transform_planes(self, planes: np.ndarray, k: int) -> np.ndarray:
        """planes [B, C, H, W] (any dtype) -> transformed copy [B, C, H, W]."""
        return self._symmetries.apply(planes, k)

    def transform_states(self, states: np.ndarray, k: int) -> np.ndarray:
        """states [B, S] int16 -> new [B, S] int16 with the board cells and the last-move field transformed."""
        self._check_states(states)
        action_map = self.symmetry_action_map(k)
        out = states.copy()
        out[:, : self.num_cells] = self._symmetries.permute_cells(states[:, : self.num_cells], k)
        last = states[:, self.num_cells + F_LAST].astype(np.int64)
        out[:, self.num_cells + F_LAST] = np.where(last >= 0, action_map[np.maximum(last, 0)], last)
        return out

    # ----- text -------------------------------------------------------------------------------
    def _status_line(self, state: np.ndarray) -> str:
        """One line under a rendered board: who moves, or the result."""
        base = self.num_cells
        if state[base + F_DONE]:
            winner = int(state[base + F_WINNER])
            return "game over: draw" if winner == 0 else f"game over: {SYMBOLS[winner]} wins"
        last = int(state[base + F_LAST])
        last_text = "none" if last == NO_ACTION else self.action_to_str(last)
        passes = f", passes {int(state[base + F_PASSES])}" if state[base + F_PASSES] else ""
        return f"{SYMBOLS[int(state[base + F_PLAYER])]} to move (ply {int(state[base + F_PLY])}, last {last_text}{passes})"

    def _single_state(self, state: np.ndarray) -> np.ndarray:
        state = np.asarray(state)
        if state.ndim == 2 and state.shape[0] == 1:
            state = state[0]
        if state.shape != (self.state_size,):
            raise GameError(f"{self.name}: render takes one state of length {self.state_size}, got shape {state.shape}")
        return state


@borrowing_jit
def _fill_base_planes(states, player_field, last_cell, planes):
    """The common planes 0-3 of `GridGame.encode` into planes [B, C, H*W] float32 (every value of planes 0-3
    written): states [B, S] int16 (board cells first, the side to move in field `player_field`), last_cell [B]
    int64 (-1: no last stone)."""
    cells_count = planes.shape[2]
    for b in range(states.shape[0]):
        player = states[b, player_field]
        first = np.float32(player == 1)
        for c in range(cells_count):
            cell = states[b, c]
            planes[b, 0, c] = np.float32(cell == player)
            planes[b, 1, c] = np.float32(cell == -player)
            planes[b, 2, c] = np.float32(0.0)
            planes[b, 3, c] = first
        if last_cell[b] >= 0:
            planes[b, 2, last_cell[b]] = np.float32(1.0)
