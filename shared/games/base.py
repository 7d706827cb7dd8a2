"""The one interface every game implements: batched, pure functions over compact numpy states.

State layout (shared by all games, so the search can store any game's states in one array):

    states: np.ndarray [B, S] int16, S = H * W + NUM_FIELDS (+ a game's documented extra data, see below)
    states[:, :H*W]            board cells, row-major, row 0 at the TOP of the board;
                               +1 = a stone/disc/mark of the FIRST player, -1 = the second player's, 0 = empty
    states[:, H*W + F_PLAYER]  player to move: +1 (first player) or -1 (second player)
    states[:, H*W + F_LAST]    last action played (NO_ACTION = -1 before the first move)
    states[:, H*W + F_PLY]     number of actions played so far (passes included)
    states[:, H*W + F_DONE]    1 when the game is over, else 0
    states[:, H*W + F_WINNER]  when done: +1 first player won, -1 second player won, 0 draw
    states[:, H*W + F_PASSES]  consecutive passes (Othello, Go; always 0 elsewhere)
    states[:, H*W + NUM_FIELDS:]  extra data of games that need more than the board (Go: previous boards and
                               superko keys, see shared/games/go/rules.py); absent (S = H*W + NUM_FIELDS) for the others

Invariants every game keeps (the conformance tests check them):
- `legal_mask(states).shape == (B, num_actions)`; a non-terminal state has at least one legal action;
  a terminal state has none.
- `step` never mutates its input; it returns a new [B, S] int16 array.  It assumes the actions are
  legal (callers in the hot path know they are); `check_actions` validates with a clear error.
- Values and results are always from the point of view of the player to move in the given state.
- A symmetry maps legal actions to legal actions and winning actions to winning actions.
"""
from __future__ import annotations

import abc
from typing import Any

import numpy as np

NO_ACTION = -1

F_PLAYER, F_LAST, F_PLY, F_DONE, F_WINNER, F_PASSES = range(6)
NUM_FIELDS = 6

STATE_DTYPE = np.int16


class GameError(ValueError):
    """Bad input for a game (an illegal or unparsable move, a wrong board size); the message says what and how to fix it."""


class Game(abc.ABC):
    """A two-player, zero-sum, perfect-information board game on an H x W grid, operating on batches."""

    #: Preset or canonical name, e.g. "tictactoe", "connect4", "gomoku-15", "gomoku-8x8-5", "othello-6x6".
    name: str
    #: Board height and width.
    height: int
    width: int
    #: Number of actions A (board cells, plus one pass action for Othello and Go).
    num_actions: int
    #: Number of input planes C of `encode`.
    num_planes: int
    #: Number of symmetries (8 for square boards with the dihedral group, 2 for Connect Four); index 0 is identity.
    num_symmetries: int

    @property
    def num_cells(self) -> int:
        return self.height * self.width

    @property
    def state_size(self) -> int:
        """S, the length of one state row (games with extra data after the fields override this)."""
        return self.height * self.width + NUM_FIELDS

    # ----- description -------------------------------------------------------------------
    @abc.abstractmethod
    def params(self) -> dict[str, Any]:
        """JSON-serialisable parameters that identify the game exactly (stored in model files and shards).

        Always contains "name"; e.g. {"name": "gomoku-8x8-5", "family": "gomoku", "height": 8, "width": 8, "n_in_row": 5}.
        """

    # ----- rules (batched) ---------------------------------------------------------------
    @abc.abstractmethod
    def initial_states(self, batch: int) -> np.ndarray:
        """Return `batch` start positions: [batch, S] int16."""

    @abc.abstractmethod
    def legal_mask(self, states: np.ndarray) -> np.ndarray:
        """Legal actions: states [B, S] int16 -> [B, A] bool (True = legal; all False when terminal)."""

    def search_mask(self, states: np.ndarray) -> np.ndarray:
        """The moves a search expands: states [B, S] int16 -> [B, A] bool, a subset of `legal_mask` that keeps at
        least one move of every live state: the legal moves, unless a game leaves out moves that a search should
        not spend its simulations on (Go: a pass while some point is still open)."""
        return self.legal_mask(states)

    @abc.abstractmethod
    def step(self, states: np.ndarray, actions: np.ndarray) -> np.ndarray:
        """Play one legal action in each state: states [B, S] int16, actions [B] int -> new states [B, S] int16."""

    def step_stored(self, store: np.ndarray, slots: np.ndarray, parents: np.ndarray, children: np.ndarray,
                    actions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """`step` on positions kept in a store (the search's tree): store [T, N, S] int16; slots, parents, children,
        actions [K] int64. Plays actions[k] in store[slots[k], parents[k]] and writes the new position to
        store[slots[k], children[k]] (another row; the parent rows are not changed).

        Returns (terminal [K] bool, value [K] float32): `is_terminal` and `terminal_value` of the new positions
        (value for the NEW position's side to move). Generic default: gather, `step`, scatter; games with
        compiled rules override it with one pass that gives the same positions.
        """
        new = self.step(store[slots, parents], actions)
        store[slots, children] = new
        return self.is_terminal(new), self.terminal_value(new)

    def is_terminal(self, states: np.ndarray) -> np.ndarray:
        """states [B, S] int16 -> [B] bool."""
        return states[:, self.num_cells + F_DONE] != 0

    def terminal_value(self, states: np.ndarray) -> np.ndarray:
        """Result of finished games from the point of view of the player to move: [B, S] -> [B] float32 in {-1, 0, +1}.

        Meaningless (0) for states that are not terminal. Sign: winner * player_to_move.
        """
        base = self.num_cells
        done = states[:, base + F_DONE] != 0
        value = states[:, base + F_WINNER].astype(np.float32) * states[:, base + F_PLAYER].astype(np.float32)
        return np.where(done, value, np.float32(0.0)).astype(np.float32)

    # ----- territory (an auxiliary training target) -----------------------------------------
    #: True for games whose final positions say who owns each cell (Go's area scoring): `ownership` is defined
    #: and self-play records it per game, for a network's ownership head (shared.network.resnet).
    has_ownership: bool = False

    def ownership(self, states: np.ndarray) -> np.ndarray:
        """Who owns each cell of each position under the game's scoring: states [B, S] int16 -> [B, H*W] int8,
        +1 the first player, -1 the second, 0 no one (absolute colours, not the side to move's view).

        Only games with `has_ownership` define it; the others raise GameError.
        """
        raise GameError(f"{self.name} has no territory to own; the ownership target is for Go")

    # ----- tactics (used by the search's solver) -------------------------------------------
    #: True when `move_outcomes` is cheap enough to call at every node the search expands (about as cheap as
    #: `step`); the generic default is not, so the search then asks only at its roots.
    fast_move_outcomes: bool = False

    def winning_moves(self, states: np.ndarray) -> np.ndarray:
        """Legal actions that end the game at once with a win for the side to move: [B, S] int16 -> [B, A] bool.

        Generic default: steps every legal action (exact for any game; a game may override it with a faster
        exact method). All False for terminal states.
        """
        out = np.zeros((states.shape[0], self.num_actions), dtype=bool)
        rows, actions = np.nonzero(self.legal_mask(states))
        if rows.size:
            children = self.step(states[rows], actions)
            # Sign flip: the child's value is from the opponent's view, so -1 there is a win for the mover here.
            out[rows, actions] = self.is_terminal(children) & (self.terminal_value(children) < 0)
        return out

    def move_outcomes(self, states: np.ndarray) -> np.ndarray:
        """What each legal action leads to at once, for the side to move: [B, S] int16 -> [B, A] int8.

        +1: the action wins at once (every such action is marked: this is `winning_moves`).
        -1: the action does not end the game and the opponent can then win at once (every -1 is exact, but a
            game may leave such actions at 0 when finding them is expensive; the generic default marks none).
         0: anything else, and illegal actions.
        """
        return self.winning_moves(states).astype(np.int8)

    def to_play(self, states: np.ndarray) -> np.ndarray:
        """Player to move: [B, S] -> [B] int16, +1 first player, -1 second player."""
        return states[:, self.num_cells + F_PLAYER]

    def check_actions(self, states: np.ndarray, actions: np.ndarray) -> None:
        """Raise GameError naming the first illegal action in the batch (for untrusted input, not the hot path)."""
        actions = np.asarray(actions)
        mask = self.legal_mask(states)
        for i, a in enumerate(actions.tolist()):
            if not (0 <= a < self.num_actions) or not mask[i, a]:
                raise GameError(
                    f"{self.name}: action {a} ({self.action_to_str(a) if 0 <= a < self.num_actions else 'out of range'}) "
                    f"is not legal in position {i}; legal: {[self.action_to_str(x) for x in np.flatnonzero(mask[i])]}"
                )

    # ----- network input -----------------------------------------------------------------
    @abc.abstractmethod
    def encode(self, states: np.ndarray) -> np.ndarray:
        """Network input planes from the side to move's point of view: [B, S] int16 -> [B, C, H, W] float32."""

    # ----- symmetries --------------------------------------------------------------------
    @abc.abstractmethod
    def symmetry_action_map(self, k: int) -> np.ndarray:
        """Permutation for symmetry k: [A] int64, action a in a position is action map[a] in the transformed position."""

    @abc.abstractmethod
    def transform_planes(self, planes: np.ndarray, k: int) -> np.ndarray:
        """Apply symmetry k to input planes [B, C, H, W] -> [B, C, H, W] (same dtype)."""

    def transform_policy(self, policy: np.ndarray, k: int) -> np.ndarray:
        """Apply symmetry k to policy targets [B, A] -> [B, A]: out[:, map[a]] = policy[:, a]."""
        out = np.empty_like(policy)
        out[:, self.symmetry_action_map(k)] = policy
        return out

    @abc.abstractmethod
    def transform_states(self, states: np.ndarray, k: int) -> np.ndarray:
        """Apply symmetry k to states [B, S] -> [B, S] (board cells and the last-move field)."""

    # ----- notation ----------------------------------------------------------------------
    @abc.abstractmethod
    def action_to_str(self, action: int) -> str:
        """One action in the game's notation (see the module docstring of each game)."""

    @abc.abstractmethod
    def parse_action(self, text: str) -> int:
        """One move in the game's notation -> action index; GameError naming the problem if unparsable."""

    @abc.abstractmethod
    def parse_moves(self, text: str) -> list[int]:
        """A whole move sequence in the game's notation (e.g. "4453" for Connect Four, "h8 i9" for Gomoku) -> actions.

        Only parses; use `play_moves` to also check legality."""

    def moves_to_str(self, actions: list[int]) -> str:
        """Inverse of parse_moves."""
        return " ".join(self.action_to_str(a) for a in actions)

    def play_moves(self, actions: list[int]) -> np.ndarray:
        """Play a sequence from the start, checking each move: -> [1, S] int16; GameError on an illegal move."""
        state = self.initial_states(1)
        for ply, a in enumerate(actions):
            if self.is_terminal(state)[0]:
                raise GameError(f"{self.name}: move {ply + 1} ({self.action_to_str(a)}) comes after the game ended")
            try:
                self.check_actions(state, np.array([a]))
            except GameError as exc:
                raise GameError(f"move {ply + 1}: {exc}") from None
            state = self.step(state, np.array([a]))
        return state

    @abc.abstractmethod
    def render(self, state: np.ndarray, highlight_last: bool = True) -> str:
        """A single state [S] -> a multi-line text board with coordinates on the edges, the last move marked."""
