"""Go on an N x N board (N = 5..19), rules as on computer-Go servers (CGOS): "go-9x9", "go-{N}x{N}".

Rules: Black (+1, the first player, 'X') moves first, White (-1, 'O') second. A stone is placed on an empty
point; opponent groups left without liberties are removed, then the mover's own group must have a liberty
(suicide is illegal). Positional superko: a move may not recreate any earlier whole-board position (with
either player to move). Passing is always legal while the game is on; two passes in a row end the game,
and so does the length cap of 2*N*N moves (passes included). Area scoring: each side's stones plus the
empty regions that border only that side (regions touching both, as in seki, count for neither); komi
(default 7.5, any multiple of 0.5) goes to White. Winner by the sign of black area - white area - komi
(0 with an integer komi is a draw). `Go.area_score` gives that score for any position (for GTP final_score,
with `score_text` writing "B+3.5"); `Go.states_from_boards` starts games from set-up positions (handicap).

Actions: cell index row * N + col (row 0 at the TOP), and N*N = pass (A = N*N + 1).
Notation (GTP): column letters A-T skipping I from the left, row numbers 1..N from the BOTTOM, "pass";
"E5" is the centre of 9x9. Parsing is case-insensitive; move lists are space- or comma-separated.

State row (all int16, S = `state_size`, NN = N*N, L = 2*NN + 1 positions):

    [0, NN)                      board cells (as in shared.games.base)
    [NN, NN + 6)                 the common fields F_PLAYER .. F_PASSES (F_PASSES = consecutive passes, 0..2)
    [HIST, HIST + 7*NN)          HIST = NN + 6: the 7 previous boards [7, NN], newest first: block i is the board
                                 before the last i + 1 moves (all zero before the start; a pass repeats a board)
    [KEYS, KEYS + 5*L)           KEYS = HIST + 7*NN: superko keys [L, 5] of the positions after 0, 1, .., ply
                                 moves (entries after `ply` are zero): words 0..3 = C, a uint64 split into 16-bit
                                 words (least significant first, bits reinterpreted as int16), word 4 = M, an
                                 8-bit mask (see `shared.games.go.board`)

So S = NN + 6 + 7*NN + 5*(2*NN + 1) (1469 for 9x9, 6509 for 19x19).

Encoding (17 planes, side to move's view, as in AlphaGo Zero): planes 2i and 2i + 1 are the stones of the
player to move and of the opponent i moves ago (i = 0..7; zero before the start), plane 16 is all ones when
Black is to move.
Symmetries: the 8 of the square; pass maps to itself. `transform_states` moves the board, the 7 history
boards and the last move, and transforms the superko keys exactly (the key of a transformed position follows
from the old key), so a transformed state plays exactly like the original.
"""
from __future__ import annotations

import math
import re
from typing import Any

import numpy as np

from shared.games.go import board as go_board
from shared.games.go import playout as go_playout
from shared.games.base import F_DONE, F_PASSES, F_PLAYER, F_PLY, F_WINNER, NUM_FIELDS, STATE_DTYPE, GameError
from shared.games.grid import GridGame
from shared.games.notation import render_grid, split_tokens

MIN_SIZE, MAX_SIZE = 5, 19
DEFAULT_KOMI = 7.5
HISTORY = 7
NUM_PLANES = 2 * (HISTORY + 1) + 1
KEY_WORDS = 5
PASS_TEXT = "pass"
#: GTP column letters: A..T without I.
GTP_COLUMNS = "ABCDEFGHJKLMNOPQRST"
SIZE_RULES = f"square boards 'go-{{N}}x{{N}}' with N in {MIN_SIZE}..{MAX_SIZE} (e.g. 'go-9x9', 'go-19x19')"
_GTP_SQUARE = re.compile(r"([A-HJ-Z])([0-9]{1,2})")


def go_name(size: int) -> str:
    """Canonical name of the N x N game, e.g. "go-9x9"."""
    return f"go-{size}x{size}"


def check_komi(komi: Any) -> float:
    """Komi as a float; GameError unless it is a finite number that is a multiple of 0.5."""
    if isinstance(komi, bool) or not isinstance(komi, (int, float, np.integer, np.floating)):
        raise GameError(f"go komi must be a number that is a multiple of 0.5 (e.g. 7.5), got {komi!r}")
    value = float(komi)
    if not math.isfinite(value) or value * 2 != round(value * 2) or abs(value) > 1000:
        raise GameError(f"go komi {komi!r} is not allowed: use a multiple of 0.5 between -1000 and 1000 (e.g. 7.5)")
    return value


class Go(GridGame):
    """Go with CGOS rules on the batched state layout described in the module docstring."""

    family = "go"

    def __init__(self, size: int = 9, komi: float = DEFAULT_KOMI) -> None:
        if isinstance(size, bool) or not isinstance(size, (int, np.integer)) or not MIN_SIZE <= size <= MAX_SIZE:
            raise GameError(f"go board size {size!r} is out of range: {SIZE_RULES}")
        size = int(size)
        self.komi = check_komi(komi)
        super().__init__(go_name(size), size, size, num_actions=size * size + 1, num_planes=NUM_PLANES,
                         symmetry_group="dihedral")
        self.pass_action = size * size
        self.max_moves = 2 * size * size
        self.num_positions = self.max_moves + 1
        self.hist_offset = self.num_cells + NUM_FIELDS
        self.keys_offset = self.hist_offset + HISTORY * self.num_cells
        self._tables = go_board.tables(size)

    def params(self) -> dict[str, Any]:
        return {**super().params(), "komi": self.komi}

    def __repr__(self) -> str:
        return f"Go({self.name!r}, komi={self.komi:g})"

    @property
    def state_size(self) -> int:
        """S = N*N + 6 fields + 7 history boards + 5 words of superko key per position (see the module docstring)."""
        return self.keys_offset + KEY_WORDS * self.num_positions

    # ----- state blocks ------------------------------------------------------------------------------
    def _history(self, states: np.ndarray) -> np.ndarray:
        """The 7 previous boards: states [B, S] -> view [B, 7, N*N] int16 (newest first)."""
        return states[:, self.hist_offset: self.keys_offset].reshape(-1, HISTORY, self.num_cells)

    def _key_block(self, states: np.ndarray) -> np.ndarray:
        """Superko keys of all positions: states [B, S] -> view [B, L, 5] int16."""
        return states[:, self.keys_offset:].reshape(-1, self.num_positions, KEY_WORDS)

    def stored_keys(self, states: np.ndarray, count: int | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Stored superko keys: states [B, S] -> (C [B, K] uint64, M [B, K] int64, valid [B, K] bool).

        Entry j is the position after j moves; valid marks j <= ply (the positions played so far).
        K = `count` (default: all L entries; callers may pass max(ply) + 1)."""
        count = self.num_positions if count is None else count
        block = self._key_block(states)[:, :count]
        valid = np.arange(count)[None, :] <= states[:, self.num_cells + F_PLY, None]
        return go_board.hash_from_words(block[:, :, :4]), block[:, :, 4].astype(np.int64) & 0xFF, valid

    def initial_states(self, batch: int) -> np.ndarray:
        """`batch` empty boards, Black to move: [batch, S] int16 (key of the empty board stored as entry 0)."""
        states = super().initial_states(batch)
        smallest, mask = go_board.position_keys(states[:1, : self.num_cells], self._tables)
        block = self._key_block(states)
        block[:, 0, :4] = go_board.words_from_hash(smallest)
        block[:, 0, 4] = mask
        return states

    def states_from_boards(self, boards: np.ndarray, to_move: Any = 1) -> np.ndarray:
        """Set-up positions (handicap stones, problems, tests) as fresh games: boards [B, N*N] or [B, N, N] with
        values -1/0/+1 (row 0 at the top), to_move +1/-1 or [B] of them -> states [B, S] int16 at ply 0 with the
        given board as the first position of the superko history (no previous boards).

        GameError if a value is not -1, 0 or +1, the shape is wrong, or a group has no liberty."""
        boards = np.asarray(boards)
        nn = self.num_cells
        if boards.ndim == 3 and boards.shape[1:] == (self.height, self.width):
            boards = boards.reshape(boards.shape[0], nn)
        if boards.ndim != 2 or boards.shape[1] != nn:
            raise GameError(f"{self.name}: boards must have shape [B, {nn}] or [B, {self.height}, {self.width}], "
                            f"got {boards.shape}")
        if boards.size and not np.isin(boards, (-1, 0, 1)).all():
            raise GameError(f"{self.name}: board values must be +1 (black), -1 (white) or 0 (empty)")
        players = np.broadcast_to(np.asarray(to_move), (boards.shape[0],))
        if not np.isin(players, (-1, 1)).all():
            raise GameError(f"{self.name}: to_move must be +1 (black) or -1 (white), got {to_move!r}")
        cells = boards.astype(STATE_DTYPE)
        _, liberties = go_board.group_liberties(cells, self._tables)
        dead = np.flatnonzero(((cells != 0) & (liberties == 0)).any(axis=1))
        if dead.size:
            raise GameError(f"{self.name}: board {int(dead[0])} has a group without liberties; remove it first")
        states = self.initial_states(boards.shape[0])
        states[:, :nn] = cells
        states[:, nn + F_PLAYER] = players
        smallest, mask = go_board.position_keys(cells, self._tables)
        block = self._key_block(states)
        block[:, 0, :4] = go_board.words_from_hash(smallest)
        block[:, 0, 4] = mask
        return states

    # ----- rules -------------------------------------------------------------------------------------
    def _non_suicide(self, cells: np.ndarray, player: np.ndarray, liberties: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Placements that are not suicide: cells [B, N*N] int16, player [B], liberties [B, N*N]
        -> (legal [B, N*N] bool: empty, and a liberty, a safe friendly group or a capture next to it;
            capturing [B, N*N] bool: the stone would capture)."""
        nbr = self._tables.nbr
        around = np.take(go_board.padded(cells, go_board.OFF_BOARD), nbr, axis=1)            # [B, NN, 4]
        around_libs = np.take(go_board.padded(liberties, 0), nbr, axis=1)
        colour = player.astype(np.int16)[:, None, None]
        captures = (around == -colour) & (around_libs == 1)
        breathes = (around == 0) | ((around == colour) & (around_libs >= 2))
        capturing = captures[:, :, 0] | captures[:, :, 1] | captures[:, :, 2] | captures[:, :, 3]
        legal = breathes[:, :, 0] | breathes[:, :, 1] | breathes[:, :, 2] | breathes[:, :, 3] | capturing
        return legal & (cells == 0), capturing

    def _place(self, cells: np.ndarray, player: np.ndarray, cell: np.ndarray, labels: np.ndarray,
               liberties: np.ndarray) -> np.ndarray:
        """Boards after one legal placement each: cells [K, N*N] int16, player [K], cell [K] int64, labels and
        liberties [K, N*N] of cells (`group_liberties`) -> new [K, N*N] int16 (stone placed, captures removed)."""
        rows = np.arange(cells.shape[0])[:, None]
        nbr = self._tables.nbr[cell]                                                            # [K, 4]
        around = go_board.padded(cells, go_board.OFF_BOARD)[rows, nbr]
        in_atari = go_board.padded(liberties, 0)[rows, nbr] == 1
        captured = (around == -player.astype(np.int16)[:, None]) & in_atari
        removed = np.where(captured, go_board.padded(labels, 0)[rows, nbr], -1)                # [K, 4] group labels
        gone = labels == removed[:, 0:1]
        for d in range(1, 4):
            gone |= labels == removed[:, d: d + 1]
        after = np.where(gone, 0, cells).astype(cells.dtype)
        after[rows[:, 0], cell] = player
        return after

    def winning_moves(self, states: np.ndarray) -> np.ndarray:
        """Legal actions that end the game at once with a win for the side to move: [B, S] int16 -> [B, A] bool.

        Exact and cheap: a Go game ends only by a second pass in a row or at the length cap, so only those
        rows are stepped (the pass after a pass; every legal move at the cap), never the whole board.
        """
        self._check_states(states)
        nn = self.num_cells
        out = np.zeros((states.shape[0], self.num_actions), dtype=bool)
        live = states[:, nn + F_DONE] == 0
        at_cap = live & (states[:, nn + F_PLY].astype(np.int64) + 1 >= self.max_moves)
        after_pass = live & ~at_cap & (states[:, nn + F_PASSES] >= 1)
        rows, actions = np.nonzero(self.legal_mask(states[at_cap]))
        rows = np.concatenate([np.flatnonzero(at_cap)[rows], np.flatnonzero(after_pass)])
        actions = np.concatenate([actions, np.full(int(after_pass.sum()), self.pass_action)])
        if rows.size:
            children = self.step(states[rows], actions)
            # Sign flip: a child's value is from the opponent's view, so -1 there is a win for the mover here.
            out[rows, actions] = self.is_terminal(children) & (self.terminal_value(children) < 0)
        return out

    def legal_mask(self, states: np.ndarray) -> np.ndarray:
        """states [B, S] int16 -> [B, N*N + 1] bool: empty points that are neither suicide nor a superko
        repetition, and pass (always legal while the game is on); all False for finished games."""
        self._check_states(states)
        nn = self.num_cells
        live = states[:, nn + F_DONE] == 0
        mask = np.zeros((states.shape[0], self.num_actions), dtype=bool)
        mask[:, self.pass_action] = live
        rows = np.flatnonzero(live)
        if rows.size:
            mask[rows, :nn] = self._placing_moves(states[rows])
        return mask

    def search_mask(self, states: np.ndarray) -> np.ndarray:
        """The moves a search expands: states [B, S] int16 -> [B, N*N + 1] bool, `legal_mask` without the pass
        while a stone can be placed and either some empty point belongs to no one (an empty region that borders
        both colours, or neither: the open board) or the mover has no stone on the board (after one black stone
        the whole board is Black's), unless the opponent has just passed or the move is the last before the
        length cap. Under area scoring an open point is worth a point to whoever fills it, so an early pass only
        gives the opponent a free move; a weak network with a small search otherwise passes in the opening (as
        White, whom komi makes the winner of a count of the empty board) and loses every game it plays as White.
        Once the board is divided into each side's regions, passing is open again and ends the game the usual
        way. The MCTS-solver's proofs are over the moves the search expands."""
        mask = self.legal_mask(states)
        nn = self.num_cells
        may_drop = (mask[:, self.pass_action] & (states[:, nn + F_PASSES] == 0)
                    & (states[:, nn + F_PLY].astype(np.int64) + 1 < self.max_moves) & mask[:, :nn].any(axis=1))
        rows = np.flatnonzero(may_drop)
        if rows.size:
            cells = states[rows, :nn]
            unowned = ((go_board.ownership(cells, self._tables) == 0) & (cells == 0)).any(axis=1)
            no_stone = ~(cells == states[rows, nn + F_PLAYER, None]).any(axis=1)
            mask[rows[unowned | no_stone], self.pass_action] = False
        return mask

    def _placing_moves(self, states: np.ndarray) -> np.ndarray:
        """Legal stone placements of live states: [B, S] int16 -> [B, N*N] bool (suicide and superko excluded)."""
        t, nn = self._tables, self.num_cells
        cells = states[:, :nn]
        player = states[:, nn + F_PLAYER]
        labels, liberties = go_board.group_liberties(cells, t)
        legal, capturing = self._non_suicide(cells, player, liberties)
        repeats = np.zeros_like(legal)
        count = int(states[:, nn + F_PLY].max()) + 1
        known, masks, valid = self.stored_keys(states, count)                              # [B, K]
        image = t.lowest_bit[masks]                                                          # [B, K] an image reaching C
        # A move that captures nothing adds one stone: the image hash of the result is the parent's image hash
        # XOR one key, so an earlier position it would recreate is found by looking that key up.
        parent_hashes = go_board.image_hashes(cells, t)                                      # [B, 8] uint64
        wanted = known ^ np.take_along_axis(parent_hashes, image, axis=1)                    # [B, K] key to add
        found, colour, where = go_board.find_keys(wanted, t)
        board, entry = np.nonzero(found & valid & (colour == player[:, None]))
        if board.size:
            repeats[board, t.cell_source[image[board, entry], where[board, entry]]] = True
        repeats &= ~capturing
        # A capturing move: the image hashes of the result also lose the captured groups; compare them with
        # every earlier key.
        board, cell = np.nonzero(legal & capturing)
        if board.size:
            hashes = self._hashes_after_capture(cells, player, labels, liberties, parent_hashes, board, cell)
            same = (np.take_along_axis(hashes, image[board], axis=1) == known[board]) & valid[board]
            hit = same.any(axis=1)
            repeats[board[hit], cell[hit]] = True
        return legal & ~repeats

    def _hashes_after_capture(self, cells: np.ndarray, player: np.ndarray, labels: np.ndarray, liberties: np.ndarray,
                              parent_hashes: np.ndarray, board: np.ndarray, cell: np.ndarray) -> np.ndarray:
        """Image hashes of the positions after capturing moves, without building the boards.

        cells [B, N*N] int16, player [B], labels/liberties [B, N*N] (`group_liberties`), parent_hashes [B, 8]
        uint64, board/cell [K] int64 (legal capturing moves) -> [K, 8] uint64: the parent's hashes XOR the new
        stone's key XOR the keys of every stone of each (distinct) opponent group in atari next to the move."""
        t, nn = self._tables, self.num_cells
        nbr = t.nbr[cell]                                                                         # [K, 4]
        rows = board[:, None]
        around = go_board.padded(cells, go_board.OFF_BOARD)[rows, nbr]
        in_atari = go_board.padded(liberties, 0)[rows, nbr] == 1
        taken = np.where((around == -player[board, None]) & in_atari, go_board.padded(labels, 0)[rows, nbr], 0)
        for d in range(1, 4):                                                                     # each group once
            for e in range(d):
                taken[:, d] = np.where(taken[:, d] == taken[:, e], 0, taken[:, d])
        # XOR of the image keys of each group in atari (labels are unique over the batch)
        stone_board, stone_cell = np.nonzero((liberties == 1) & (cells != 0))
        stone_label = labels[stone_board, stone_cell]
        order = np.argsort(stone_label, kind="stable")
        stone_label = stone_label[order]
        keys = t.flat_image_keys[(cells[stone_board, stone_cell].astype(np.int64)[order] + 1) * nn
                                 + stone_cell[order]]                                            # [n, 8]
        starts = np.flatnonzero(np.r_[True, stone_label[1:] != stone_label[:-1]])
        group_hashes = np.zeros((starts.size + 1, 8), dtype=np.uint64)                           # row 0: no group
        group_hashes[1:] = np.bitwise_xor.reduceat(keys, starts, axis=0)
        row_of = np.zeros(int(labels.max()) + 1, dtype=np.int64)
        row_of[stone_label[starts]] = np.arange(1, starts.size + 1)
        hashes = parent_hashes[board] ^ t.flat_image_keys[(player[board].astype(np.int64) + 1) * nn + cell]
        for d in range(4):
            hashes ^= group_hashes[row_of[taken[:, d]]]
        return hashes

    def _play(self, states: np.ndarray, actions: np.ndarray) -> np.ndarray:
        """One move for live states and legal actions: [B, S] int16, [B] int64 -> new [B, S] int16."""
        t, nn = self._tables, self.num_cells
        new = states.copy()
        cells = states[:, :nn]
        player = states[:, nn + F_PLAYER]
        ply = states[:, nn + F_PLY].astype(np.int64)
        placing = np.flatnonzero(actions != self.pass_action)
        if placing.size:
            sub = cells[placing]
            labels, liberties = go_board.group_liberties(sub, t)
            new[placing, :nn] = self._place(sub, player[placing], actions[placing], labels, liberties)
        history = self._history(new)
        history[:, 1:] = self._history(states)[:, :-1]
        history[:, 0] = cells
        smallest, mask = go_board.position_keys(new[:, :nn], t)
        block = self._key_block(new)
        rows = np.arange(states.shape[0])
        block[rows, ply + 1, :4] = go_board.words_from_hash(smallest)
        block[rows, ply + 1, 4] = mask
        passes = np.where(actions == self.pass_action, states[:, nn + F_PASSES] + 1, 0)
        done = (passes >= 2) | (ply + 1 >= self.max_moves)
        winner = np.zeros(states.shape[0], dtype=np.int64)
        if done.any():
            winner[done] = np.sign(self.area_score(new[done]))
        self._record_move(new, actions, done, winner)
        new[:, nn + F_PASSES] = passes
        return new

    has_ownership = True

    def ownership(self, states: np.ndarray) -> np.ndarray:
        """Area-scoring owner of each point (its stone's colour, or the only colour its empty region borders):
        states [B, S] int16 -> [B, N*N] int8, +1 black, -1 white, 0 no one (seki, dame)."""
        states = np.asarray(states)
        if states.ndim != 2 or states.shape[1] < self.num_cells:
            raise GameError(f"{self.name}: ownership takes states [B, {self.state_size}], got shape {states.shape}")
        return go_board.ownership(states[:, : self.num_cells], self._tables)

    def area_score(self, states: np.ndarray) -> np.ndarray:
        """Area score from Black's point of view, komi included: states [B, S] int16 -> [B] float32.

        Black's stones and empty regions bordering only black, minus the same for White, minus komi."""
        states = np.asarray(states)
        if states.ndim != 2 or states.shape[1] < self.num_cells:
            raise GameError(f"{self.name}: area_score takes states [B, {self.state_size}], got shape {states.shape}")
        counts = go_board.area(states[:, : self.num_cells], self._tables)
        return (counts[:, 0] - counts[:, 1] - self.komi).astype(np.float32)

    def playout_winners(self, states: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Winner of one light random playout from each state (`shared.games.go.playout`: no eye filling, simple
        ko, area score with komi): states [M, S] int16 -> [M] int64 (+1 black, -1 white, 0 a draw). A finished
        state gives its recorded winner."""
        self._check_states(states)
        nn = self.num_cells
        scores = go_playout.random_playout_scores(
            states[:, :nn], self.to_play(states), states[:, nn + F_PASSES], states[:, nn + F_PLY],
            self._tables.nbr, self.max_moves, self.komi, int(rng.integers(2**31)))
        done = states[:, nn + F_DONE] != 0
        return np.where(done, states[:, nn + F_WINNER], np.sign(scores)).astype(np.int64)

    # ----- encoding and symmetries ----------------------------------------------------------------------
    def encode(self, states: np.ndarray) -> np.ndarray:
        """17 planes (module docstring): states [B, S] int16 -> [B, 17, N, N] float32."""
        self._check_states(states)
        nn = self.num_cells
        boards = np.concatenate([states[:, None, :nn], self._history(states)], axis=1)      # [B, 8, NN]
        player = states[:, nn + F_PLAYER][:, None, None]
        planes = np.empty((states.shape[0], NUM_PLANES, nn), dtype=np.float32)
        planes[:, 0:16:2] = boards == player
        planes[:, 1:16:2] = boards == -player
        planes[:, 16] = player[:, :, 0] == 1
        return planes.reshape(states.shape[0], NUM_PLANES, self.height, self.width)

    def transform_states(self, states: np.ndarray, k: int) -> np.ndarray:
        """states [B, S] int16 -> new [B, S] int16 under symmetry k: board, history boards, last move and the
        superko keys (C unchanged, the image masks permuted), so legality and results are transformed exactly."""
        out = super().transform_states(states, k)
        source = self._tables.cell_source[k]
        self._history(out)[:] = self._history(states)[:, :, source]
        masks = self._key_block(states)[:, :, 4].astype(np.int64) & 0xFF
        self._key_block(out)[:, :, 4] = self._tables.mask_transform[k][masks]
        return out

    # ----- notation ------------------------------------------------------------------------------------
    def action_to_str(self, action: int) -> str:
        """Cell index -> GTP vertex such as "E5" (rows from the bottom, no letter I); N*N -> "pass"."""
        action = int(action)
        if action == self.pass_action:
            return PASS_TEXT
        if not 0 <= action < self.num_cells:
            raise GameError(f"{self.name} action {action} out of range 0..{self.pass_action} ({self.pass_action} = pass)")
        row, col = divmod(action, self.width)
        return f"{GTP_COLUMNS[col]}{self.height - row}"

    def parse_action(self, text: str) -> int:
        """A GTP vertex ("E5", "e5") or "pass" (any case) -> action index; GameError naming the problem."""
        if not isinstance(text, str):
            raise GameError(f"expected a move string, got {type(text).__name__}")
        token = text.strip().upper()
        if token == PASS_TEXT.upper():
            return self.pass_action
        match = _GTP_SQUARE.fullmatch(token)
        if match:
            col = GTP_COLUMNS.find(match.group(1))
            number = int(match.group(2))
            if 0 <= col < self.width and 1 <= number <= self.height:
                return (self.height - number) * self.width + col
        letters = GTP_COLUMNS[: self.width]
        hint = " (GTP skips the letter I)" if token.startswith("I") else ""
        raise GameError(f"{text.strip()!r} is not a point of a {self.height}x{self.width} go board{hint}: "
                        f"columns {letters[0]}-{letters[-1]} without I, rows 1-{self.height} from the bottom "
                        f"(e.g. '{self.action_to_str(self.num_cells // 2)}'), or 'pass'")

    def parse_moves(self, text: str) -> list[int]:
        """Space- or comma-separated GTP vertices and passes ("E5 D4, pass") -> actions."""
        return [self.parse_action(token) for token in split_tokens(text)]

    def render(self, state: np.ndarray, highlight_last: bool = True) -> str:
        """One state [S] -> text board (X black, O white), GTP columns and rows (1 at the bottom), last stone in []."""
        state = self._single_state(state)
        last_cell = int(self._last_move_cells(state[None, :])[0]) if highlight_last else -1
        cells = state[: self.num_cells].reshape(self.height, self.width)
        col_labels = list(GTP_COLUMNS[: self.width])
        row_labels = [str(self.height - r) for r in range(self.height)]
        lines = render_grid(cells, last_cell, col_labels, row_labels)
        score = float(self.area_score(state[None, :])[0])
        lines.append(f"komi {self.komi:g}; area score now {score_text(score)}")
        return "\n".join(lines + [self._status_line(state)])


def score_text(score: float) -> str:
    """Black-view score -> "B+3.5", "W+0.5" or "0" (a draw)."""
    if score == 0:
        return "0"
    return f"{'B' if score > 0 else 'W'}+{abs(score):g}"

