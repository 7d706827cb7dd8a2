"""Values of solved moves, shared by the games' perfect solvers and their users (shared.search.root_solver,
`bench tactics`): the side to move's view of the game-theoretic result after a move."""

LOSS, DRAW, WIN = -1, 0, 1
#: The entry of an action that is not a legal move.
ILLEGAL = -2
#: The entry of a move whose search ran past the solver's node budget.
UNKNOWN = -3
