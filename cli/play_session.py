"""One game between a human and the network-guided search, as plain state transitions (no terminal I/O).

    session = PlaySession(game, evaluate, search=search, human_first=True)
    session.play_human("c3")            # GameError for an unreadable or illegal move; the state is unchanged
    analysis = session.play_ai()        # searches, plays the chosen move, returns the PositionAnalysis
    session.undo()                      # takes back your last move and the AI's reply
    session.outcome_text()              # "you win" / "the AI wins" / "draw" once session.finished

The AI searches with `shared.players.analysis.analyze_states` (no noise, temperature 0), so hints and the AI's moves
come from the same search. Values are from the point of view of the player to move in the searched position.
"""
from __future__ import annotations

import numpy as np

from shared.players.analysis import DEFAULT_TOP_K, PositionAnalysis, analyze_states
from shared.players.positions import illegal_move_reason, parse_one_move, play_actions

from shared.games.base import F_WINNER, Game, GameError
from shared.search.types import Evaluator, SearchConfig


class PlaySession:
    """A game in progress: the current state, whose turn it is and the moves played so far."""

    def __init__(self, game: Game, evaluate: Evaluator, *, search: SearchConfig, human_first: bool,
                 top_k: int = DEFAULT_TOP_K, seed: int = 0) -> None:
        self.game, self.evaluate = game, evaluate
        self.search, self.top_k, self.seed = search, top_k, seed
        self.human_player = 1 if human_first else -1      # +1 = the first player's side
        self.state = game.initial_states(1)[0]            # [S] int16
        self.moves: list[int] = []
        self.start_length = 0                              # moves given with --moves (undo stops there)

    # ----- queries ---------------------------------------------------------------------------------------
    @property
    def finished(self) -> bool:
        return bool(self.game.is_terminal(self.state[None])[0])

    @property
    def human_to_move(self) -> bool:
        return not self.finished and int(self.game.to_play(self.state[None])[0]) == self.human_player

    def legal_moves(self) -> list[str]:
        """The legal moves of the side to move, in the game's notation."""
        legal = self.game.legal_mask(self.state[None])[0]
        return [self.game.action_to_str(a) for a in np.flatnonzero(legal).tolist()]

    def forced_pass(self) -> int | None:
        """The pass action when passing is the only legal move (Othello), else None."""
        legal = np.flatnonzero(self.game.legal_mask(self.state[None])[0])
        # Board cells are actions 0..num_cells-1; an action beyond them is a pass.
        if legal.size == 1 and int(legal[0]) >= self.game.num_cells:
            return int(legal[0])
        return None

    def analyze(self) -> PositionAnalysis:
        """Search the current (unfinished) position: the best move, the value for the side to move, top moves."""
        if self.finished:
            raise GameError("the game is over; there is no position left to analyse")
        return analyze_states(self.game, self.evaluate, self.state[None], search=self.search,
                              top_k=self.top_k, seed=self.seed + len(self.moves))[0]

    def outcome_text(self) -> str:
        """'you win', 'the AI wins' or 'draw' for a finished game."""
        if not self.finished:
            raise GameError("the game is not over yet")
        winner = int(self.state[self.game.num_cells + F_WINNER])   # +1 first player, -1 second, 0 draw
        if winner == 0:
            return "draw"
        return "you win" if winner == self.human_player else "the AI wins"

    def start_from(self, moves_text: str) -> None:
        """Continue from the position after `moves_text` (game notation; GameError if unreadable or illegal)."""
        actions = self.game.parse_moves(moves_text)
        self.state = play_actions(self.game, actions)     # [S] int16
        self.moves = list(actions)
        self.start_length = len(actions)

    def undo(self) -> list[int]:
        """Take back the human's last move and every move after it (the AI's reply); returns the removed
        actions. GameError when the human has no move to take back (since the start or --moves)."""
        for length in range(len(self.moves) - 1, self.start_length - 1, -1):
            before = play_actions(self.game, self.moves[:length])          # [S] int16
            if int(self.game.to_play(before[None])[0]) == self.human_player:
                removed = self.moves[length:]
                self.state, self.moves = before, self.moves[:length]
                return removed
        raise GameError("there is no move of yours to take back")

    # ----- moves -----------------------------------------------------------------------------------------
    def _play(self, action: int) -> None:
        self.state = self.game.step(self.state[None], np.array([action], np.int64))[0]
        self.moves.append(action)

    def play_human(self, text: str) -> int:
        """Play the human's move given in the game's notation; returns the action.

        GameError (state unchanged) when it is not the human's turn or the move is unreadable or illegal.
        """
        if not self.human_to_move:
            raise GameError("it is not your turn")
        action = parse_one_move(self.game, text)
        if not self.game.legal_mask(self.state[None])[0, action]:
            raise GameError(illegal_move_reason(self.game, self.state, action, len(self.moves)))
        self._play(action)
        return action

    def play_ai(self) -> PositionAnalysis:
        """Search, play the AI's chosen move and return the analysis (value from the AI's side)."""
        if self.finished or self.human_to_move:
            raise GameError("it is not the AI's turn")
        analysis = self.analyze()
        self._play(analysis.action)
        return analysis
