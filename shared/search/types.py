"""The search's types: its settings (`SearchConfig`), its answer (`SearchResult`) and what it calls to value
positions (`Evaluator`). Every module of the search and its users take them from here.

Values are from the point of view of the player to move at the position they describe.
"""
from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Protocol

import numpy as np

from shared.search.errors import SearchError


class Evaluator(Protocol):
    """What the search calls to value new positions: a function or any object with this `__call__`."""

    def __call__(self, states: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """states [M, S] int16, all non-terminal -> (logits [M, A] float32, one per action, the search takes the
        softmax over the legal ones; values [M] float32 in [-1, 1], for each position's side to move).

        The search checks the shapes and raises EvaluatorError on non-finite values; values outside [-1, 1] are
        clipped."""


#: The root rules of SearchConfig.root.
ROOT_RULES = ("puct", "gumbel")


@dataclass(frozen=True)
class SearchConfig:
    """Search parameters (see the module docstrings of shared.search.mcts and shared.search.puct for their exact
    meaning). Bad values raise SearchError naming each of them."""

    num_simulations: int = 100
    c_puct: float = 1.5
    fpu_reduction: float = 0.25      # unvisited child Q = parent's own mean value - fpu_reduction, clipped to [-1, 1]
    dirichlet_alpha: float = 0.3
    dirichlet_epsilon: float = 0.25
    leaves_per_step: int = 1         # leaves selected per tree per evaluator call (virtual loss)
    virtual_loss: float = 1.0
    reuse_tree: bool = True
    solver: bool = True              # prove wins/losses (MCTS-solver) and take/avoid them; see shared.search.mcts
    #: the root rule: "puct" (PUCT with Dirichlet noise; the caller chooses the move from the visits) or "gumbel"
    #: (Gumbel AlphaZero's root: sequential halving, the search chooses the move and the training policy; see
    #: shared.search.gumbel). The interior is PUCT either way.
    root: str = "puct"
    gumbel_considered: int = 16      # actions considered at a Gumbel root (sequential halving's m)
    gumbel_c_visit: float = 50.0     # sigma(q) = (gumbel_c_visit + max N) * gumbel_c_scale * q
    gumbel_c_scale: float = 0.1      # mctx's default (SearchSection.gumbel_c_scale says why)

    def __post_init__(self) -> None:
        problems = []
        if self.num_simulations < 1:
            problems.append(f"num_simulations must be >= 1 (got {self.num_simulations})")
        if not self.c_puct > 0:
            problems.append(f"c_puct must be > 0 (got {self.c_puct})")
        if not self.dirichlet_alpha > 0:
            problems.append(f"dirichlet_alpha must be > 0 (got {self.dirichlet_alpha})")
        if not 0.0 <= self.dirichlet_epsilon <= 1.0:
            problems.append(f"dirichlet_epsilon must be in [0, 1] (got {self.dirichlet_epsilon})")
        if self.leaves_per_step < 1:
            problems.append(f"leaves_per_step must be >= 1 (got {self.leaves_per_step})")
        if not self.virtual_loss >= 0:
            problems.append(f"virtual_loss must be >= 0 (got {self.virtual_loss})")
        if self.root not in ROOT_RULES:
            problems.append(f"root must be one of {', '.join(ROOT_RULES)} (got {self.root!r})")
        if self.gumbel_considered < 1:
            problems.append(f"gumbel_considered must be >= 1 (got {self.gumbel_considered})")
        if not (np.isfinite(self.gumbel_c_visit) and self.gumbel_c_visit >= 0):
            problems.append(f"gumbel_c_visit must be finite and >= 0 (got {self.gumbel_c_visit})")
        if not (np.isfinite(self.gumbel_c_scale) and self.gumbel_c_scale > 0):
            problems.append(f"gumbel_c_scale must be finite and > 0 (got {self.gumbel_c_scale})")
        if not np.isfinite(self.fpu_reduction):
            problems.append(f"fpu_reduction must be finite (got {self.fpu_reduction})")
        if problems:
            raise SearchError("invalid SearchConfig: " + "; ".join(problems))


@dataclass
class SearchResult:
    """Root statistics after a search, one row per searched state."""

    visits: np.ndarray       # [B, A] float32 root child visit counts (reused visits included)
    root_value: np.ndarray   # [B] float32 mean search value of the root, side to move
    q: np.ndarray            # [B, A] float32 child Q from the root player's view (0 for unvisited children)
    prior: np.ndarray        # [B, A] float32 root prior actually used (after noise), 0 for illegal actions
    #: [B, A] int8 solver result of each root action for the root player: +1 proven win, -1 proven loss, 0 unknown
    #: (all 0 without the solver, or when built without it)
    proven: np.ndarray | None = None
    #: [B] int8 solver result of the root position for its side to move: +1 won, -1 lost, 0 unknown
    proven_value: np.ndarray | None = None
    #: [B, A] bool, only at roots proven lost: the moves after which the opponent wins at once (the game's
    #: `move_outcomes` -1); all False elsewhere. Lets a lost player resist longest (block what it can).
    loses_at_once: np.ndarray | None = None
    #: [B, A] float32 the training policy: the normalised visits (PUCT root; 0 for a row without visits) or the
    #: Gumbel root's improved policy (shared.search.gumbel)
    policy: np.ndarray | None = None
    #: [B] int64 the move the search chose itself (Gumbel root), -1 where the caller chooses (choose_moves)
    chosen: np.ndarray | None = None

    def __post_init__(self) -> None:
        if self.proven is None:
            self.proven = np.zeros(self.visits.shape, np.int8)
        if self.proven_value is None:
            self.proven_value = np.zeros(self.visits.shape[:1], np.int8)
        if self.loses_at_once is None:
            self.loses_at_once = np.zeros(self.visits.shape, bool)
        if self.policy is None:
            totals = self.visits.sum(axis=1)
            self.policy = np.divide(self.visits, totals[:, None], out=np.zeros(self.visits.shape, np.float32),
                                    where=totals[:, None] > 0).astype(np.float32, copy=False)
        if self.chosen is None:
            self.chosen = np.full(self.visits.shape[:1], -1, np.int64)

    def rows(self, which: np.ndarray) -> SearchResult:
        """The result of the rows `which` (a [B] bool mask or indices): every field indexed by it."""
        return SearchResult(**{f.name: getattr(self, f.name)[which] for f in fields(self)})
