"""A deliberately plain, one-board Go referee for the tests: lists, flood fills and a set of seen boards.

It shares no code with shared/games/go.py (no numpy, no hashes: superko compares whole boards), so the
batched implementation can be checked against it move by move. Same conventions: cells row-major with
row 0 at the top, +1 black, -1 white, 0 empty; action N*N = pass.
"""
from __future__ import annotations


class ReferenceGo:
    """One game of Go with CGOS rules (suicide illegal, positional superko, area scoring, 2 passes end)."""

    def __init__(self, size: int, komi: float = 7.5, board: list[int] | None = None, to_move: int = 1) -> None:
        self.size = size
        self.komi = komi
        self.board = [0] * (size * size) if board is None else [int(v) for v in board]
        self.to_move = to_move
        self.passes = 0
        self.moves = 0
        self.seen = {tuple(self.board)}
        self.over = False

    def neighbours(self, cell: int) -> list[int]:
        row, col = divmod(cell, self.size)
        out = []
        if row > 0:
            out.append(cell - self.size)
        if row < self.size - 1:
            out.append(cell + self.size)
        if col > 0:
            out.append(cell - 1)
        if col < self.size - 1:
            out.append(cell + 1)
        return out

    def group(self, board: list[int], cell: int) -> tuple[set[int], set[int]]:
        """(stones of the group at `cell`, its liberties)."""
        colour = board[cell]
        stones, liberties, todo = {cell}, set(), [cell]
        while todo:
            here = todo.pop()
            for other in self.neighbours(here):
                if board[other] == 0:
                    liberties.add(other)
                elif board[other] == colour and other not in stones:
                    stones.add(other)
                    todo.append(other)
        return stones, liberties

    def result_of(self, cell: int) -> list[int] | None:
        """The board after the player to move plays `cell`, or None if it is occupied or suicide."""
        if self.board[cell] != 0:
            return None
        board = list(self.board)
        board[cell] = self.to_move
        for other in self.neighbours(cell):
            if board[other] == -self.to_move:
                stones, liberties = self.group(board, other)
                if not liberties:
                    for stone in stones:
                        board[stone] = 0
        if not self.group(board, cell)[1]:
            return None
        return board

    def legal_actions(self) -> list[int]:
        """Every legal action (pass included) in increasing order; [] once the game is over."""
        if self.over:
            return []
        legal = []
        for cell in range(self.size * self.size):
            board = self.result_of(cell)
            if board is not None and tuple(board) not in self.seen:
                legal.append(cell)
        return legal + [self.size * self.size]

    def play(self, action: int) -> None:
        assert action in self.legal_actions(), action
        if action == self.size * self.size:
            self.passes += 1
        else:
            self.board = self.result_of(action)
            self.seen.add(tuple(self.board))
            self.passes = 0
        self.moves += 1
        self.to_move = -self.to_move
        self.over = self.passes >= 2 or self.moves >= 2 * self.size * self.size

    def ownership(self) -> list[int]:
        """Owner of each point: its stone's colour, or for an empty point the only colour its region touches
        (+1 black, -1 white, 0 no one)."""
        owner = list(self.board)
        done: set[int] = set()
        for start in range(len(self.board)):
            if self.board[start] != 0 or start in done:
                continue
            region, touches, todo = {start}, set(), [start]
            while todo:
                here = todo.pop()
                for other in self.neighbours(here):
                    if self.board[other] == 0 and other not in region:
                        region.add(other)
                        todo.append(other)
                    elif self.board[other] != 0:
                        touches.add(self.board[other])
            done |= region
            if len(touches) == 1:
                for cell in region:
                    owner[cell] = next(iter(touches))
        return owner

    def score(self) -> float:
        """Black area - white area - komi (empty regions count for the only colour they touch)."""
        owner = self.ownership()
        return owner.count(1) - owner.count(-1) - self.komi
