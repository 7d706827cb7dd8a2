"""VCF ("victory by continuous fours") threat solver for freestyle Gomoku and other in-a-row games.

The attacker (the side to move) plays only fours: moves that leave n - 1 own stones and one empty cell in some
window of n cells. Each four forces the defender's only reply, blocking that five cell. The attacker wins when
a move makes n in a row, or makes two fours with different five cells at once (a "double four"; an open four
counts as one), which one block cannot stop. Search is exact within these rules:

- a five available to the attacker is played at once (depth 1);
- if the defender can make five (it has a four), the attacker must block that cell, and the block must itself
  be a four for the line to go on; two defender fives mean the attacker loses the race, so no VCF;
- a defender block that makes a defender four is answered as above (the attacker's next move must block it),
  and a block that makes two defender fives ends the line as failed.

So a reported VCF really wins: against every defender reply, the attacker either makes five at once or the
reply was the forced block and the sequence goes on (tests/search/test_vcf.py replays found sequences against
every legal reply with the real rules). Freestyle only: overlines win, no renju restrictions.

Depth is counted in attacker moves: depth 1 makes five now; depth k plays k fours, the last making five or a
double four (the five that follows a double four is not counted). The search is a depth-first search over the
attacker's fours, by iterative deepening unless `shortest=False` (so the VCF found is a shortest one), with a
transposition table of failed positions (keyed on the stones added since the root) and double fours tried
before single fours. Per-window stone counts are updated incrementally around each move
(`shared.games.gomoku.vcf_lines.ThreatBoard`): the four moves come from one vectorised pass over the window counts,
and the defender's counter-fours are looked for only in the windows through its block. A node budget bounds
the work: when it runs out the answer is UNKNOWN, never NONE.

    find_vcf(game, state) -> VcfResult                      # side to move attacks
    find_vcf_defence(game, state) -> VcfDefence             # side to move defends against the opponent's VCF
    vcf_first_moves(game, states) -> [B] int64 (-1: none)   # batched first moves for search code
"""
from __future__ import annotations

import enum
from dataclasses import dataclass

import numpy as np

from shared.games.base import F_DONE, F_PLAYER, Game
from shared.games.inarow import InARowGame
from shared.search.errors import SearchError
from shared.games.gomoku.vcf_lines import ATTACKER, DEFENDER, ThreatBoard, line_tables

#: Default depth limit, in attacker moves.
DEFAULT_MAX_DEPTH = 4
#: Default node budget of one VCF search (attacker positions expanded).
DEFAULT_MAX_NODES = 2000

NO_MOVE = -1


class VcfStatus(str, enum.Enum):
    """Outcome of one VCF search."""

    FOUND = "found"        # a VCF within max_depth: `moves` wins against every defence
    NONE = "none"          # proven: no VCF within max_depth (the whole tree was searched)
    UNKNOWN = "unknown"    # the node budget ran out before an answer


class DefenceStatus(str, enum.Enum):
    """Outcome of `find_vcf_defence`, from the point of view of the side to move (the defender)."""

    WIN_NOW = "win_now"          # the side to move makes n in a row at once (`winning_moves`)
    LOST = "lost"                # the opponent has two or more five cells and the side to move cannot win first
    NO_THREAT = "no_threat"      # the opponent has no four to block and no VCF within the budget
    DEFENDED = "defended"        # `defences` lists the moves proven to stop every opponent VCF
    NO_DEFENCE = "no_defence"    # the opponent has a VCF and no candidate move stops it
    UNKNOWN = "unknown"          # a budget ran out before any defence was proven (see `undecided`)


@dataclass(frozen=True)
class VcfResult:
    """A VCF search result. Cells are action indices (row * W + col).

    To play it out: on each turn, make five if you can, else play the next of `moves`; any defender reply other
    than the expected one leaves a five to make.

    moves    the attacker's moves, in order; the last makes n in a row or a double four (empty unless FOUND)
    replies  the defender's forced reply after each move but the last (len(moves) - 1 cells)
    finish   after a final double four: its five cells (the attacker makes five on whichever is left); else ()
    nodes    attacker positions expanded
    """

    status: VcfStatus
    moves: tuple[int, ...] = ()
    replies: tuple[int, ...] = ()
    finish: tuple[int, ...] = ()
    nodes: int = 0

    @property
    def found(self) -> bool:
        return self.status is VcfStatus.FOUND

    @property
    def first_move(self) -> int:
        """The first attacker move, or -1 when no VCF was found."""
        return self.moves[0] if self.moves else NO_MOVE

    @property
    def depth(self) -> int:
        """Number of attacker moves of the VCF (0 when none was found)."""
        return len(self.moves)

    @property
    def cells(self) -> tuple[int, ...]:
        """Every cell the VCF line uses: moves, forced replies and final five cells."""
        return self.moves + self.replies + self.finish


@dataclass(frozen=True)
class VcfDefence:
    """Result of `find_vcf_defence`. Cells are action indices.

    winning_moves  cells where the side to move makes n in a row at once
    must_block     the opponent's five cells (the side to move must block, or win first)
    threat         the opponent's VCF if it were to move (None when not searched: a win now or a four to block)
    defences       moves proven to stop every opponent VCF within the budget
    candidates     the moves that were checked, in order
    undecided      candidates whose check ran out of budget
    nodes          attacker positions expanded over all searches
    """

    status: DefenceStatus
    winning_moves: tuple[int, ...] = ()
    must_block: tuple[int, ...] = ()
    threat: VcfResult | None = None
    defences: tuple[int, ...] = ()
    candidates: tuple[int, ...] = ()
    undecided: tuple[int, ...] = ()
    nodes: int = 0


class _OutOfBudget(Exception):
    """Raised inside the search when the node budget is spent."""


class _VcfSearch:
    """One depth-first VCF search for the attacker (+1) of a ThreatBoard, run from the board as it stands."""

    def __init__(self, board: ThreatBoard, max_depth: int, max_nodes: int, shortest: bool = True) -> None:
        self.board = board
        self.max_depth = max_depth
        self.max_nodes = max_nodes
        self.shortest = shortest
        self.nodes = 0
        self.failed: dict[int, int] = {}        # position key -> largest depth proven to fail
        self.finish: tuple[int, ...] = ()

    def run(self) -> VcfResult:
        """Search with the attacker to move: -> VcfResult (the board is left as it was)."""
        fives = self.board.five_cells(ATTACKER)
        if fives.size:
            return VcfResult(VcfStatus.FOUND, moves=(int(fives[0]),), nodes=1)
        threats = self.board.five_cells(DEFENDER)
        if threats.size >= 2:
            return VcfResult(VcfStatus.NONE, nodes=1)
        forced = int(threats[0]) if threats.size else NO_MOVE
        depths = range(1, self.max_depth + 1) if self.shortest else (self.max_depth,)
        line = None
        try:
            for depth in depths:                  # iterative deepening: the first line found is a shortest one
                line = self._attack(depth, forced)
                if line is not None:
                    break
        except _OutOfBudget:
            return VcfResult(VcfStatus.UNKNOWN, nodes=self.max_nodes)
        if line is None:
            return VcfResult(VcfStatus.NONE, nodes=self.nodes)
        return VcfResult(VcfStatus.FOUND, moves=tuple(line[0::2]), replies=tuple(line[1::2]),
                         finish=self.finish, nodes=self.nodes)

    def _attack(self, remaining: int, forced: int) -> list[int] | None:
        """Attacker to move, no attacker five on the board, at most one defender five (`forced`, or -1).

        Returns the winning line [move, reply, move, ..., last move] or None when none exists within
        `remaining` attacker moves.
        """
        self.nodes += 1
        if self.nodes > self.max_nodes:
            raise _OutOfBudget
        key = self.board.key
        if self.failed.get(key, 0) >= remaining:
            return None
        fours = self._four_moves(forced)
        for move, partners in fours.items():
            if len(partners) >= 2:
                self.finish = tuple(sorted(partners))
                return [move]
        if remaining >= 2:
            for move in self._ordered(fours):
                line = self._after_four(move, next(iter(fours[move])), remaining)
                if line is not None:
                    return line
        self.failed[key] = remaining
        return None

    def _after_four(self, move: int, reply: int, remaining: int) -> list[int] | None:
        """Play the four `move` and the forced `reply`, search on, and take both back."""
        board = self.board
        board.play(move, ATTACKER)
        board.play(reply, DEFENDER)
        try:
            counter = board.five_cells_through(reply, DEFENDER)       # the block may make a defender four
            if counter.size >= 2:
                return None
            line = self._attack(remaining - 1, int(counter[0]) if counter.size else NO_MOVE)
            return None if line is None else [move, reply] + line
        finally:
            board.undo(reply, DEFENDER)
            board.undo(move, ATTACKER)

    def _four_moves(self, forced: int) -> dict[int, set[int]]:
        """The attacker's four moves -> the five cells each creates (only `forced` when it is set)."""
        moves, partners = self.board.four_pairs(ATTACKER)
        fours: dict[int, set[int]] = {}
        for move, partner in zip(moves.tolist(), partners.tolist()):
            if forced == NO_MOVE or move == forced:
                fours.setdefault(move, set()).add(partner)
        return fours

    def _ordered(self, fours: dict[int, set[int]]) -> list[int]:
        """Single-four moves, the ones on most live attacker lines first (ties: lower cell index)."""
        moves = np.fromiter(fours, dtype=np.int64, count=len(fours))
        score = self.board.potential(moves, ATTACKER)
        return moves[np.lexsort((moves, -score))].tolist()


# ----- input checks and setup ----------------------------------------------------------------------------------

def _check_game(game: Game) -> None:
    """SearchError for games that are not in-a-row games (the solver needs `n_in_row` and stone placement)."""
    if not isinstance(game, InARowGame):
        raise SearchError(f"the VCF solver is for Gomoku / in-a-row games (stones on empty cells, n in a row wins); "
                          f"got {getattr(game, 'name', type(game).__name__)!r}")


def _check_budget(max_depth: int, max_nodes: int) -> None:
    for label, value in (("max_depth", max_depth), ("max_nodes", max_nodes)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise SearchError(f"VCF {label} must be a positive integer, got {value!r}")


def _single_state(game: Game, state: np.ndarray) -> np.ndarray:
    """A state [S] (or [1, S]) -> [S] int16; SearchError on a wrong shape or a finished game."""
    state = np.asarray(state)
    if state.ndim == 2 and state.shape[0] == 1:
        state = state[0]
    if state.shape != (game.state_size,):
        raise SearchError(f"{game.name}: expected one state of shape [{game.state_size}], got {state.shape}; "
                          f"use vcf_first_moves for a batch")
    if state[game.num_cells + F_DONE] != 0:
        raise SearchError(f"{game.name}: the game in this position is over; there is nothing to search")
    if state[game.num_cells + F_PLAYER] not in (1, -1):
        raise SearchError(f"{game.name}: the player-to-move field must be +1 or -1, "
                          f"got {int(state[game.num_cells + F_PLAYER])}")
    return state


def _board_for(game: Game, state: np.ndarray, attacker: int) -> ThreatBoard:
    """ThreatBoard of a state [S] with `attacker` (+1 / -1, game colours) as the attacking side."""
    tables = line_tables(game.height, game.width, game.n_in_row)
    return ThreatBoard(tables, state[: game.num_cells], attacker)


# ----- public API ----------------------------------------------------------------------------------------------

def find_vcf(game: Game, state: np.ndarray, max_depth: int = DEFAULT_MAX_DEPTH,
             max_nodes: int = DEFAULT_MAX_NODES, shortest: bool = True) -> VcfResult:
    """Search a VCF for the side to move.

    game: an in-a-row game (Gomoku, tic-tac-toe); state: one position [S] int16 (or [1, S]), not finished.
    max_depth: most attacker moves (>= 1); max_nodes: most attacker positions expanded (>= 1), over all
    iterations. shortest: iterative deepening, so a FOUND line is a shortest one (about twice the work of a
    single depth-first pass, which returns the first VCF it meets within max_depth).
    Returns a VcfResult: FOUND with the sequence, NONE (proven none within max_depth) or UNKNOWN (budget spent).
    Raises SearchError for another game, a wrong shape, a finished game or a bad budget.
    """
    _check_game(game)
    _check_budget(max_depth, max_nodes)
    state = _single_state(game, state)
    board = _board_for(game, state, int(state[game.num_cells + F_PLAYER]))
    return _VcfSearch(board, int(max_depth), int(max_nodes), bool(shortest)).run()


def vcf_first_moves(game: Game, states: np.ndarray, max_depth: int = DEFAULT_MAX_DEPTH,
                    max_nodes: int = DEFAULT_MAX_NODES, shortest: bool = True) -> np.ndarray:
    """First move of a VCF for the side to move in each position: states [B, S] int16 -> [B] int64.

    -1 where no VCF was found within the budget (none, unknown, or the game is over). Each row is searched on
    its own with `max_depth` attacker moves and `max_nodes` positions; a row's move is the same as
    `find_vcf(game, row, max_depth, max_nodes, shortest).first_move`. shortest=False roughly halves the work.
    """
    _check_game(game)
    _check_budget(max_depth, max_nodes)
    states = np.asarray(states)
    if states.ndim != 2 or states.shape[1] != game.state_size:
        raise SearchError(f"{game.name}: expected states of shape [B, {game.state_size}], got {states.shape}")
    out = np.full(states.shape[0], NO_MOVE, dtype=np.int64)
    for row, state in enumerate(states):
        if state[game.num_cells + F_DONE] != 0:
            continue
        board = _board_for(game, state, int(state[game.num_cells + F_PLAYER]))
        out[row] = _VcfSearch(board, int(max_depth), int(max_nodes), bool(shortest)).run().first_move
    return out


def find_vcf_defence(game: Game, state: np.ndarray, max_depth: int = DEFAULT_MAX_DEPTH,
                     max_nodes: int = DEFAULT_MAX_NODES) -> VcfDefence:
    """Moves for the side to move that stop every VCF of the opponent (as if the opponent moved next).

    game: an in-a-row game; state: one position [S] int16 (or [1, S]), not finished; max_depth, max_nodes: the
    budget of EACH VCF search (one for the threat, one per candidate, so up to (candidates + 1) * max_nodes).
    Immediate needs come first: WIN_NOW when the side to move can make n in a row; a single opponent five cell
    is the only candidate (LOST when there are two or more). Otherwise the opponent's VCF is searched; if it
    has one, the candidates are the cells of that VCF line, the side to move's own four moves, and the cells
    that would turn one of the forced blocks of the line into a four of its own. A candidate is a defence when
    after it (and, if it makes a four, after the opponent's forced block) the opponent has no VCF within the
    budget. Raises SearchError like `find_vcf`.
    """
    _check_game(game)
    _check_budget(max_depth, max_nodes)
    state = _single_state(game, state)
    board = _board_for(game, state, -int(state[game.num_cells + F_PLAYER]))   # the opponent attacks
    budget = (int(max_depth), int(max_nodes))
    wins = board.five_cells(DEFENDER)
    if wins.size:
        return VcfDefence(DefenceStatus.WIN_NOW, winning_moves=_cells(wins))
    blocks = board.five_cells(ATTACKER)
    if blocks.size >= 2:
        return VcfDefence(DefenceStatus.LOST, must_block=_cells(blocks))
    if blocks.size == 1:
        return _check_candidates(board, _cells(blocks), budget, must_block=_cells(blocks), threat=None, nodes=0)
    threat = _VcfSearch(board, *budget).run()
    if threat.status is not VcfStatus.FOUND:
        status = DefenceStatus.NO_THREAT if threat.status is VcfStatus.NONE else DefenceStatus.UNKNOWN
        return VcfDefence(status, threat=threat, nodes=threat.nodes)
    candidates = _defence_candidates(board, threat)
    return _check_candidates(board, candidates, budget, must_block=(), threat=threat, nodes=threat.nodes)


# ----- defence helpers -----------------------------------------------------------------------------------------

def _cells(cells: np.ndarray) -> tuple[int, ...]:
    return tuple(int(c) for c in cells)


def _defence_candidates(board: ThreatBoard, threat: VcfResult) -> tuple[int, ...]:
    """Cells to try against the opponent's VCF `threat` (the board's attacker is the opponent), in order.

    The cells of the VCF line, then the defender's own four moves, then cells that make a forced block of the
    line a defender four (in a window through the block with n - 3 defender stones and no attacker stone).
    """
    order: list[int] = list(threat.cells)
    order += board.four_pairs(DEFENDER)[0].tolist()
    n = board.n
    for reply in threat.replies:
        ids = board.cell_windows[reply]
        ids = ids[(board.dfn[ids] == n - 3) & (board.att[ids] == 0)]
        cells = board.windows[ids].reshape(-1)
        order += cells[(board.board[cells] == 0) & (cells != reply)].tolist()
    seen: set[int] = set()
    return tuple(c for c in order if board.board[c] == 0 and not (c in seen or seen.add(c)))


def _defence_outcome(board: ThreatBoard, cell: int, budget: tuple[int, int]) -> VcfResult:
    """The opponent's VCF search after the defender plays `cell` (and, if that is a four, the forced block)."""
    board.play(cell, DEFENDER)
    try:
        own_fives = board.five_cells_through(cell, DEFENDER)
        if own_fives.size >= 2:                   # a double four (or a five): the opponent cannot win first
            return VcfResult(VcfStatus.NONE, nodes=0)
        if own_fives.size == 0:
            return _VcfSearch(board, *budget).run()
        block = int(own_fives[0])
        board.play(block, ATTACKER)               # forced; then the opponent is searched as if it moved again
        try:
            return _VcfSearch(board, *budget).run()
        finally:
            board.undo(block, ATTACKER)
    finally:
        board.undo(cell, DEFENDER)


def _check_candidates(board: ThreatBoard, candidates: tuple[int, ...], budget: tuple[int, int],
                      must_block: tuple[int, ...], threat: VcfResult | None, nodes: int) -> VcfDefence:
    """Run `_defence_outcome` for every candidate and sum up the result."""
    defences: list[int] = []
    undecided: list[int] = []
    for cell in candidates:
        outcome = _defence_outcome(board, cell, budget)
        nodes += outcome.nodes
        if outcome.status is VcfStatus.NONE:
            defences.append(cell)
        elif outcome.status is VcfStatus.UNKNOWN:
            undecided.append(cell)
    if defences:
        status = DefenceStatus.DEFENDED
    else:
        status = DefenceStatus.UNKNOWN if undecided else DefenceStatus.NO_DEFENCE
    return VcfDefence(status, must_block=must_block, threat=threat, defences=tuple(defences),
                      candidates=candidates, undecided=tuple(undecided), nodes=nodes)
