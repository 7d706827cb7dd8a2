"""Othello (Reversi) on 8x8 ("othello") or 6x6 ("othello-6x6").

Board cells as in `shared.games.base`, row 0 at the TOP; black = first player = +1 ('X'), white = -1 ('O').
Start: the four centre squares, white on d4 and e5, black on d5 and e4 (8x8; the same pattern on 6x6),
black to move. A move places a disc that outflanks at least one straight line (8 directions) of opponent
discs ending in an own disc; all outflanked discs flip.
Actions: cell index row * W + col (0..H*W-1), and H*W = pass. Pass is legal ONLY when the player to move
has no other move (and the game is not over). The game ends as soon as neither side can move (full board,
one colour wiped out, or both blocked); the winner has more discs, equal counts are a draw.
Notation: column letter a-h from the left and row number 1-8 from the TOP ("f5 d6 c3"), black first;
a pass is written "pass". Move lists may be space-separated or concatenated ("f5d6c3").
Encoding (5 planes, side to move's view): 0 own discs, 1 opponent discs, 2 last disc placed (one-hot; zero
before the first move and after a pass), 3 side to move (ones when black is to move), 4 legal moves.
Symmetries: the 8 of the square (the start position is symmetric under 4 of them).
"""
from __future__ import annotations

import re

import numpy as np

from shared.games.othello import playout as othello_playout
from shared.games.base import F_DONE, F_PASSES, F_PLAYER, F_WINNER, STATE_DTYPE, GameError
from shared.games.grid import BASE_PLANES, GridGame
from shared.games.notation import COLUMN_LETTERS, parse_square, render_grid, split_tokens, square_name

#: The 8 (row step, column step) directions along which discs can be outflanked.
DIRECTIONS = tuple((dr, dc) for dr in (-1, 0, 1) for dc in (-1, 0, 1) if (dr, dc) != (0, 0))
PASS_TEXT = "pass"
SIZES = (6, 8)


def shift_towards(boards: np.ndarray, d_row: int, d_col: int) -> np.ndarray:
    """out[:, r, c] = boards[:, r + d_row, c + d_col] (False/0 where that is off the board). [B, H, W] -> same."""
    height, width = boards.shape[1:]
    out = np.zeros_like(boards)
    out[:, max(0, -d_row): height - max(0, d_row), max(0, -d_col): width - max(0, d_col)] = \
        boards[:, max(0, d_row): height + min(0, d_row), max(0, d_col): width + min(0, d_col)]
    return out


def flanking_moves(own: np.ndarray, opp: np.ndarray) -> np.ndarray:
    """Empty cells where the owner of `own` may play: own, opp [B, H, W] bool -> [B, H, W] bool.

    For each direction d, `run` marks opponent discs from which a line of opponent discs continues along d
    and ends in an own disc; an empty cell whose neighbour along d is in `run` outflanks that line.
    """
    empty = ~(own | opp)
    moves = np.zeros_like(own)
    longest_run = max(own.shape[1:]) - 2
    for d_row, d_col in DIRECTIONS:
        run = opp & shift_towards(own, d_row, d_col)
        for _ in range(longest_run - 1):
            run |= opp & shift_towards(run, d_row, d_col)
        moves |= empty & shift_towards(run, d_row, d_col)
    return moves


def place_and_flip(cells: np.ndarray, cell_index: np.ndarray, player: np.ndarray, height: int, width: int) -> None:
    """Place `player`'s disc on `cell_index` and flip every outflanked line, in place.

    cells [B, H*W] int16 (modified); cell_index [B] int64 legal moves; player [B] int16 (+1/-1).
    """
    batch = np.arange(cells.shape[0])
    rows, cols = cell_index // width, cell_index % width
    steps = np.arange(1, max(height, width), dtype=np.int64)[None, :]           # [1, K]
    colour = player.astype(np.int64)[:, None]                                  # [B, 1]
    for d_row, d_col in DIRECTIONS:
        r, c = rows[:, None] + d_row * steps, cols[:, None] + d_col * steps     # [B, K]
        inside = (r >= 0) & (r < height) & (c >= 0) & (c < width)
        flat = np.where(inside, r * width + c, 0)
        values = np.where(inside, cells[batch[:, None], flat], 0)             # [B, K], 0 off the board
        opp_run = np.cumprod(values == -colour, axis=1).astype(bool)          # leading opponent discs
        run_length = opp_run.sum(axis=1)
        after_run = values[batch, np.minimum(run_length, steps.shape[1] - 1)]
        closed = (run_length > 0) & (run_length < steps.shape[1]) & (after_run == colour[:, 0])
        flip_b, flip_k = np.nonzero(opp_run & closed[:, None])
        cells[flip_b, flat[flip_b, flip_k]] = player[flip_b]
    cells[batch, cell_index] = player


class Othello(GridGame):
    """Othello on the batched state layout of `shared.games.base` (action H*W = pass)."""

    family = "othello"

    def __init__(self, size: int = 8) -> None:
        if size not in SIZES:
            raise GameError(f"othello board size {size!r} is not supported: use 8 ('othello') or 6 ('othello-6x6')")
        name = "othello" if size == 8 else f"othello-{size}x{size}"
        super().__init__(name, size, size, num_actions=size * size + 1, num_planes=BASE_PLANES + 1,
                         symmetry_group="dihedral")
        self.pass_action = size * size

    def _initial_cells(self) -> np.ndarray:
        half = self.height // 2
        board = np.zeros((self.height, self.width), dtype=STATE_DTYPE)
        board[half - 1, half - 1] = board[half, half] = -1  # white: d4, e5 on 8x8
        board[half, half - 1] = board[half - 1, half] = 1   # black: d5, e4 on 8x8
        return board.reshape(-1)

    # ----- rules ---------------------------------------------------------------------------------
    def _moves_for(self, cells: np.ndarray, player: np.ndarray) -> np.ndarray:
        """Placing moves of `player`: cells [B, H*W] int16, player [B] -> [B, H*W] bool."""
        boards = cells.reshape(-1, self.height, self.width)
        colour = player.reshape(-1, 1, 1)
        return flanking_moves(boards == colour, boards == -colour).reshape(cells.shape[0], -1)

    def legal_mask(self, states: np.ndarray) -> np.ndarray:
        """states [B, S] int16 -> [B, H*W + 1] bool: placing moves, or only the pass when there is none."""
        self._check_states(states)
        base = self.num_cells
        live = states[:, base + F_DONE] == 0
        moves = self._moves_for(states[:, :base], states[:, base + F_PLAYER]) & live[:, None]
        must_pass = live & ~moves.any(axis=1)
        return np.concatenate([moves, must_pass[:, None]], axis=1)

    def _play(self, states: np.ndarray, actions: np.ndarray) -> np.ndarray:
        base = self.num_cells
        new = states.copy()
        mover = states[:, base + F_PLAYER]
        is_pass = actions == self.pass_action
        placing = np.flatnonzero(~is_pass)
        if placing.size:
            cells = new[placing, :base]
            place_and_flip(cells, actions[placing], mover[placing], self.height, self.width)
            new[placing, :base] = cells
        passes = np.where(is_pass, states[:, base + F_PASSES] + 1, 0)
        opponent_can_move = self._moves_for(new[:, :base], -mover).any(axis=1)
        mover_can_move = np.zeros_like(opponent_can_move)
        stuck = np.flatnonzero(~opponent_can_move)
        if stuck.size:
            mover_can_move[stuck] = self._moves_for(new[stuck, :base], mover[stuck]).any(axis=1)
        done = ~(opponent_can_move | mover_can_move) | (passes >= 2)
        winner = np.sign(new[:, :base].sum(axis=1))  # more discs wins: +1 black, -1 white, 0 equal
        self._record_move(new, actions, done, winner)
        new[:, base + F_PASSES] = passes
        return new

    def playout_winners(self, states: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Winner of one uniformly random playout from each state (`shared.games.othello.playout`, the same rules and
        move distribution as `RolloutEvaluator.random_playouts`): states [M, S] int16 -> [M] int64 (+1 black, -1 white,
        0 a draw; the first player's view, not the mover's). A finished state gives its recorded winner."""
        self._check_states(states)
        base = self.num_cells
        winners = states[:, base + F_WINNER].astype(np.int64)
        live = np.flatnonzero(states[:, base + F_DONE] == 0)
        if live.size:
            winners[live] = othello_playout.random_playout_winners(
                states[live, :base], states[live, base + F_PLAYER], states[live, base + F_PASSES],
                self.height, self.width, int(rng.integers(2**31)))
        return winners

    def _fill_extra_planes(self, states: np.ndarray, planes: np.ndarray) -> None:
        """Plane 4: the legal placing moves of the side to move (all zero when it must pass or the game is over)."""
        planes[:, BASE_PLANES] = self.legal_mask(states)[:, : self.num_cells]

    # ----- notation ------------------------------------------------------------------------------
    def action_to_str(self, action: int) -> str:
        """Cell index -> "f5" (rows from the top); H*W -> "pass"."""
        action = int(action)
        if action == self.pass_action:
            return PASS_TEXT
        if not 0 <= action < self.num_cells:
            raise GameError(f"{self.name} action {action} out of range 0..{self.pass_action} ({self.pass_action} = pass)")
        return square_name(action // self.width, action % self.width, self.height, rows_from_bottom=False)

    def parse_action(self, text: str) -> int:
        token = str(text).strip().lower()
        if token == PASS_TEXT:
            return self.pass_action
        try:
            return parse_square(token, self.height, self.width, rows_from_bottom=False)
        except GameError as exc:
            raise GameError(f"{exc}; or 'pass'") from None

    def parse_moves(self, text: str) -> list[int]:
        """Space-separated ("f5 d6 c3") or concatenated ("f5d6c3") squares and "pass" -> actions."""
        squares = f"[a-{COLUMN_LETTERS[self.width - 1]}][1-{self.height}]|{PASS_TEXT}"
        actions = []
        for token in split_tokens(text):
            pieces = re.findall(squares, token.lower())
            if len(pieces) > 1 and "".join(pieces) == token.lower():
                actions.extend(self.parse_action(piece) for piece in pieces)
            else:
                actions.append(self.parse_action(token))
        return actions

    def render(self, state: np.ndarray, highlight_last: bool = True) -> str:
        """One state [S] -> text board (X black, O white), columns a-h, rows 1-8 from the top, last disc in []."""
        state = self._single_state(state)
        last_cell = int(self._last_move_cells(state[None, :])[0]) if highlight_last else -1
        cells = state[: self.num_cells].reshape(self.height, self.width)
        col_labels = list(COLUMN_LETTERS[: self.width])
        row_labels = [str(r + 1) for r in range(self.height)]
        lines = render_grid(cells, last_cell, col_labels, row_labels)
        black, white = int((cells == 1).sum()), int((cells == -1).sum())
        lines.append(f"discs: X (black) {black}, O (white) {white}")
        return "\n".join(lines + [self._status_line(state)])

