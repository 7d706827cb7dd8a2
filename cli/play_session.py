"""One game between a human and the network-guided search, as plain state transitions (no terminal I/O).

    session = PlaySession(game, evaluate, search=search, human_first=True)
    session.play_human("c3")            # GameError for an unreadable or illegal move; the state is unchanged
    analysis = session.play_ai()        # searches, plays the chosen move, returns the PositionAnalysis
    session.outcome_text()              # "you win" / "the AI wins" / "draw" once session.finished

The AI searches with `shared.players.analysis.analyze_states` (no noise, temperature 0), so hints and the AI's moves
come from the same search. Values are from the point of view of the player to move in the searched position.
"""
from __future__ import annotations

import numpy as np

from shared.players.analysis import DEFAULT_TOP_K, PositionAnalysis, analyze_states

from shared.games.base import F_WINNER, Game, GameError
from shared.search.mcts import Evaluator, SearchConfig


class PlaySession:
    """A game in progress: the current state, whose turn it is and the moves played so far."""

    def __init__(self, game: Game, evaluate: Evaluator, *, search: SearchConfig, human_first: bool,
                 top_k: int = DEFAULT_TOP_K, seed: int = 0) -> None:
        self.game, self.evaluate = game, evaluate
        self.search, self.top_k, self.seed = search, top_k, seed
        self.human_player = 1 if human_first else -1      # +1 = the first player's side
        self.state = game.initial_states(1)[0]            # [S] int16
        self.moves: list[int] = []

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
        self.state = self.game.play_moves(actions)[0]     # [S] int16
        self.moves = list(actions)

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
        action = self.game.parse_action(text.strip())
        if not (0 <= action < self.game.num_actions and self.game.legal_mask(self.state[None])[0, action]):
            raise GameError(f"{text.strip()} is not a legal move here; legal moves: {' '.join(self.legal_moves())}")
        self._play(action)
        return action

    def play_ai(self) -> PositionAnalysis:
        """Search, play the AI's chosen move and return the analysis (value from the AI's side)."""
        if self.finished or self.human_to_move:
            raise GameError("it is not the AI's turn")
        analysis = self.analyze()
        self._play(analysis.action)
        return analysis
