"""Batched PUCT Monte Carlo tree search over many games at once (AlphaZero style), with an MCTS-solver.

The trees of all games live in one `TreeStorage` (arrays, batch first; numba kernels do the per-node work, see
shared.search.jit for the compile cache). One search step runs, for
`leaves_per_step` rounds, SELECT (a compiled descent of every searched tree, virtual loss keeps the rounds
apart, new children are created on the way) and the game's `step_stored` for the new leaves (their positions
written straight into the tree; compiled for Connect Four and the in-a-row games); then EVALUATE (ONE
evaluator call for all new non-terminal leaves of all trees), EXPAND (priors, and with the solver the game's
move outcomes) and BACK UP (a compiled walk up every path, then proven results are propagated).

Batch subsets: every tree lives in a "slot". `search(states, ..., slots=idx)` searches the trees of slots `idx`
(one state per slot) and leaves the other slots untouched; `advance(actions, slots=idx)` moves those trees down
the played actions. With `slots=None` the states fill slots 0..B-1. A self-play loop keeps slot g for game g and
passes the indices of the unfinished games.

Tree reuse: `advance` keeps the played child's subtree as the slot's new tree (the other nodes go to the slot's
free list, see shared.search.reuse). The next `search` reuses it when the given state equals the stored root and
the subtree leaves room for the new simulations (capacity 1 + 2 * num_simulations nodes, or 1 + num_simulations
without reuse); otherwise that slot starts fresh.
Each search adds `num_simulations` new simulations on top of the reused visits.

Solver (SearchConfig.solver, on by default; rules in shared.search.backup and shared.search.puct): the game's
`move_outcomes` marks, at every root and, for games with `fast_move_outcomes`, at every expanded node, the moves
that win at once (+1) and those after which the opponent wins at once (-1); terminal nodes are proven by their
result; proofs propagate up the tree; selection takes proven wins and avoids proven losses. The result reports
them (SearchResult.proven, proven_value) for `shared.search.action_selection.choose_moves`; at roots proven lost
the result also marks the moves that lose at once (SearchResult.loses_at_once), so that a lost player still
blocks what it can.

Gumbel root (SearchConfig.root = "gumbel", shared.search.gumbel): the root action of each simulation is forced
by sequential halving over the considered actions (a per-tree input of the compiled descent), the interior stays
PUCT; the search itself then chooses the move and the training policy (SearchResult.chosen, .policy). Tree
reuse works with it: the halving counts only the visits of the current search, completed Q uses all of them.

The search's types (SearchConfig, SearchResult, Evaluator) are in shared.search.types.
"""
from __future__ import annotations

import numpy as np

from shared.games.base import Game
from shared.search.backup import backup_step
from shared.search.errors import EvaluatorError, SearchError
from shared.search.gumbel import GumbelRoot
from shared.search.priors import dirichlet_noise
from shared.search.puct import LEAF_NEW, LEAF_PENDING, Selection, select_leaves
from shared.search.reuse import keep_subtrees
from shared.search.tree import ROOT, TreeStorage
from shared.search.types import Evaluator, SearchConfig, SearchResult


class BatchedMCTS:
    """PUCT search for a batch of games sharing one evaluator; see the module docstring for slots and reuse."""

    def __init__(self, game: Game, evaluate: Evaluator, config: SearchConfig, rng: np.random.Generator) -> None:
        self.game, self.config, self.rng = game, config, rng
        self._evaluate_fn = evaluate
        self._tree: TreeStorage | None = None
        #: evaluator calls and positions evaluated so far (for benchmarks and tests)
        self.evaluator_calls = 0
        self.evaluated_positions = 0

    # ----- public API ------------------------------------------------------------------------------------
    def search(self, states: np.ndarray, add_noise: bool, num_simulations: int | None = None,
               slots: np.ndarray | None = None) -> SearchResult:
        """Search non-terminal states [B, S] int16 (tree slots `slots` [B] distinct ints, default 0..B-1).

        add_noise mixes Dirichlet noise into the root priors (legal moves only); with config.root "gumbel" it
        draws the Gumbel noise instead (no Dirichlet noise) and the result also holds the search's own move
        (SearchResult.chosen) and training policy (SearchResult.policy), see shared.search.gumbel. Runs
        `num_simulations` (default config.num_simulations) new simulations per tree and returns the root statistics.
        """
        states = self._check_states(states)
        sims = self.config.num_simulations if num_simulations is None else int(num_simulations)
        if sims < 1:
            raise SearchError(f"num_simulations must be >= 1 (got {sims})")
        slots = self._check_slots(slots, states.shape[0])
        if states.shape[0] == 0:
            empty = np.zeros((0, self.game.num_actions), np.float32)
            return SearchResult(empty, np.zeros(0, np.float32), empty.copy(), empty.copy())
        self._ensure_storage(int(slots.max()) + 1, sims)
        self._prepare_roots(slots, states, sims)
        gumbel = None
        if self.config.root == "gumbel":
            self._set_root_priors(slots, add_noise=False)                  # the Gumbel noise is the exploration
            gumbel = GumbelRoot.start(self._tree, slots, sims, self.config, self.rng if add_noise else None)
        else:
            self._set_root_priors(slots, add_noise)
        done, per_step = 0, self.config.leaves_per_step
        while done < sims:
            rounds = min(per_step, sims - done)
            forced = None if gumbel is None else gumbel.forced_actions(self._tree, slots, done, rounds)
            self._run_step(slots, rounds, forced)
            done += rounds
        result = self._result(slots)
        lost = result.proven_value == -1
        if lost.any():
            result.loses_at_once[lost] = self.game.move_outcomes(states[lost]) == -1
        if gumbel is not None:
            gumbel.finish(result)
        return result

    def reserve(self, num_slots: int, num_simulations: int | None = None) -> None:
        """Allocate room for `num_slots` trees of searches with `num_simulations` (default config's) up front.

        Searches of slot subsets with different simulation counts (playout caps) then never reallocate (a
        reallocation forgets every tree). The storage is exactly what a first search of all slots allocates.
        """
        sims = self.config.num_simulations if num_simulations is None else int(num_simulations)
        if num_slots < 1 or sims < 1:
            raise SearchError(f"reserve: num_slots and num_simulations must be >= 1 (got {num_slots}, {sims})")
        self._ensure_storage(int(num_slots), sims)

    def advance(self, actions: np.ndarray, slots: np.ndarray | None = None) -> None:
        """Play actions [B] in the trees of `slots` [B] (default 0..B-1): keep each chosen child's subtree."""
        actions = np.asarray(actions, np.int64).reshape(-1)
        slots = self._check_slots(slots, actions.shape[0])
        if self._tree is None or actions.shape[0] == 0:
            return
        if ((actions < 0) | (actions >= self.game.num_actions)).any():
            raise SearchError(f"advance: actions must be in [0, {self.game.num_actions}), got {actions}")
        inside = slots < self._tree.num_slots
        slots, actions = slots[inside], actions[inside]
        if not self.config.reuse_tree:
            self._tree.invalidate(slots)
            return
        keep_subtrees(self._tree, slots, actions)

    def reset(self) -> None:
        """Forget every tree (the storage is kept)."""
        if self._tree is not None:
            self._tree.invalidate(np.arange(self._tree.num_slots))

    # ----- checks and storage ----------------------------------------------------------------------------
    def _check_states(self, states: np.ndarray) -> np.ndarray:
        states = np.asarray(states)
        if states.ndim != 2 or states.shape[1] != self.game.state_size:
            raise SearchError(f"{self.game.name}: states must be [B, {self.game.state_size}] int16, got shape "
                              f"{states.shape}; build them with game.initial_states / game.step")
        if states.shape[0] and self.game.is_terminal(states).any():
            bad = np.flatnonzero(self.game.is_terminal(states)).tolist()
            raise SearchError(f"cannot search finished games (rows {bad}); search only the unfinished ones")
        return states.astype(np.int16, copy=False)

    @staticmethod
    def _check_slots(slots: np.ndarray | None, count: int) -> np.ndarray:
        if slots is None:
            return np.arange(count, dtype=np.int64)
        slots = np.asarray(slots, np.int64).reshape(-1)
        if slots.shape[0] != count:
            raise SearchError(f"slots must have one entry per state ({count}), got {slots.shape[0]}")
        if count and (slots.min() < 0 or np.unique(slots).shape[0] != count):
            raise SearchError(f"slots must be distinct non-negative tree indices, got {slots.tolist()}")
        return slots

    def _ensure_storage(self, num_slots: int, sims: int) -> None:
        """(Re)allocate when more slots or more nodes are needed; a reallocation forgets every tree."""
        tree = self._tree
        if tree is not None and tree.num_slots >= num_slots and tree.capacity >= 1 + sims:
            return
        reuse_room = sims if self.config.reuse_tree else 0
        capacity = max(1 + sims + reuse_room, tree.capacity if tree is not None else 0)
        slots = max(num_slots, tree.num_slots if tree is not None else 0)
        self._tree = TreeStorage(slots, capacity, self.game.num_actions, self.game.state_size)

    def _evaluate(self, states: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Call the evaluator on [M, S] int16 and validate: -> logits [M, A] float32, values [M] float32 in [-1, 1]."""
        logits, values = self._evaluate_fn(states)
        logits, values = np.asarray(logits, np.float32), np.asarray(values, np.float32)
        count, num_actions = states.shape[0], self.game.num_actions
        if logits.shape != (count, num_actions) or values.shape != (count,):
            raise EvaluatorError(f"evaluator returned logits {logits.shape} and values {values.shape} for {count} "
                                 f"states; expected ({count}, {num_actions}) and ({count},)")
        low, high = (values.min(), values.max()) if count else (0.0, 0.0)   # NaN and +-inf show in one of the two
        if not (np.isfinite(low) and np.isfinite(high)):
            raise EvaluatorError("evaluator returned non-finite values; values must be finite, in [-1, 1]")
        self.evaluator_calls += 1
        self.evaluated_positions += count
        if low < -1.0 or high > 1.0:
            values = np.clip(values, np.float32(-1.0), np.float32(1.0))
        return logits, values

    # ----- search internals ------------------------------------------------------------------------------
    def _prepare_roots(self, slots: np.ndarray, states: np.ndarray, sims: int) -> None:
        """Reuse trees whose stored root equals the state and that have room; start (and evaluate) the rest.

        With the solver, fresh roots get the game's move outcomes; reused roots of games whose outcomes are
        not computed at every expansion get them now (merged with what the tree has proven).
        """
        tree, solver = self._tree, self.config.solver
        reuse = tree.valid[slots] & (tree.num_nodes[slots] + sims <= tree.capacity) & self.config.reuse_tree
        if reuse.any():
            reuse[reuse] = (tree.node_states[slots[reuse], ROOT] == states[reuse]).all(axis=1)
        if solver and not self.game.fast_move_outcomes and reuse.any():
            self._merge_root_outcomes(slots[reuse], self.game.move_outcomes(states[reuse]))
        fresh_slots, fresh_states = slots[~reuse], states[~reuse]
        if fresh_slots.size == 0:
            return
        tree.init_roots(fresh_slots, fresh_states)
        logits, values = self._evaluate(fresh_states)
        legal = self.game.search_mask(fresh_states)
        outcomes = self.game.move_outcomes(fresh_states) if solver else None
        tree.expand(fresh_slots, np.full(fresh_slots.size, ROOT), logits, legal, outcomes)
        tree.nodes["visits"][fresh_slots, ROOT] = 1
        tree.nodes["value_sum"][fresh_slots, ROOT] = values                # side to move at the root
        tree.root_prior_clean[fresh_slots] = tree.root_prior(fresh_slots)   # = masked_softmax(logits, legal)
        tree.valid[fresh_slots] = True

    def _merge_root_outcomes(self, slots: np.ndarray, outcomes: np.ndarray) -> None:
        """Add move outcomes [K, A] int8 to the roots of `slots` [K] where nothing is proven yet; re-prove the roots."""
        tree = self._tree
        known = tree.edge_proven[slots, ROOT]
        legal = np.isfinite(tree.prior[slots, ROOT])
        merged = np.where(known != 0, known, outcomes * legal).astype(np.int8)
        tree.edge_proven[slots, ROOT] = merged
        tree.nodes["edges_proven"][slots, ROOT] = (merged != 0).any(axis=1)
        proven = np.where((merged == 1).any(axis=1), 1, np.where(((merged == -1) | ~legal).all(axis=1), -1, 0))
        tree.nodes["proven"][slots, ROOT] = proven.astype(np.int8)

    def _set_root_priors(self, slots: np.ndarray, add_noise: bool) -> None:
        """Restore the clean root priors, then mix in fresh Dirichlet noise on legal moves when asked."""
        tree = self._tree
        legal = np.isfinite(tree.prior[slots, ROOT])
        prior = tree.root_prior_clean[slots]
        if add_noise:
            eps = np.float32(self.config.dirichlet_epsilon)
            noise = dirichlet_noise(legal, self.config.dirichlet_alpha, self.rng)
            prior = (np.float32(1.0) - eps) * prior + eps * noise
        tree.set_root_prior(slots, np.where(legal, prior, np.float32(-np.inf)).astype(np.float32))

    def _run_step(self, slots: np.ndarray, rounds: int, forced: np.ndarray | None = None) -> None:
        """One search step: select `rounds` leaves per tree, evaluate the new ones in one call, expand, back up.
        forced [rounds, K] int32: each round's root action per tree (-1 = PUCT's choice; None = PUCT everywhere)."""
        config, count = self.config, slots.shape[0]
        leaf_values = np.empty(rounds * count, np.float32)    # leaf's side to move
        collided = np.empty(rounds * count, bool)
        selections: list[Selection] = []
        pending: list[tuple[np.ndarray, ...]] = []
        for k in range(rounds):
            # 1. SELECT one leaf per tree (creating new children, adding virtual loss) ...
            sel = select_leaves(self._tree, slots, config.c_puct, config.fpu_reduction, config.virtual_loss,
                                config.solver, None if forced is None else forced[k])
            ids = slice(k * count, (k + 1) * count)
            leaf_values[ids] = sel.leaf_value                  # exact for terminal and proven leaves
            collided[ids] = sel.leaf_kind == LEAF_PENDING
            # ... and compute the new children's positions (game.step).
            new_leaves = self._create_leaves(slots, sel, k * count, leaf_values)
            if new_leaves is not None:
                pending.append(new_leaves)
            selections.append(sel)
        if pending:
            # 2. EVALUATE all new non-terminal leaves in one call, 3. EXPAND them.
            self._evaluate_and_expand(leaf_values, *(column[0] if len(column) == 1 else np.concatenate(column)
                                                     for column in zip(*pending)))
        # 4. BACK UP every path, then propagate proven results.
        backup_step(self._tree, slots, selections, leaf_values, collided, config.virtual_loss, config.solver)

    def _create_leaves(self, slots: np.ndarray, sel: Selection, offset: int,
                       leaf_values: np.ndarray) -> tuple[np.ndarray, ...] | None:
        """Compute the positions of the children the selection created (one `game.step_stored` for all of them,
        written into the tree).

        Terminal ones get their exact value in leaf_values[offset + r] (game.terminal_value, side to move at the
        leaf). Returns (slots, nodes, ids) of the new non-terminal leaves, or None.
        """
        rows = np.flatnonzero(sel.leaf_kind == LEAF_NEW)
        if rows.size == 0:
            return None
        new_slots, nodes = slots[rows], sel.leaf_child[rows]
        terminal, terminal_value = self._tree.play_leaves(self.game, new_slots, sel.leaf_parent[rows], nodes,
                                                          sel.leaf_action[rows], self.config.solver)
        ids = rows + offset
        leaf_values[ids] = terminal_value                                # side to move in the child
        if terminal.all():
            return None
        live = ~terminal
        return new_slots[live], nodes[live], ids[live]

    def _evaluate_and_expand(self, leaf_values: np.ndarray, slots: np.ndarray, nodes: np.ndarray,
                             ids: np.ndarray) -> None:
        """Evaluate new leaves (one evaluator call), expand them (priors; with the solver, the game's move outcomes
        when cheap) and put their values in leaf_values[ids]: the network's, or the exact +-1 of a proven leaf."""
        states = self._tree.states_of(slots, nodes)
        logits, values = self._evaluate(states)
        legal = self.game.search_mask(states)
        solver = self.config.solver and self.game.fast_move_outcomes
        outcomes = self.game.move_outcomes(states) if solver else None
        proven = self._tree.expand(slots, nodes, logits, legal, outcomes)      # priors: masked_softmax(logits)
        # proven is from the leaf's side to move, like the network value.
        leaf_values[ids] = np.where(proven != 0, proven.astype(np.float32), values) if solver else values

    def _result(self, slots: np.ndarray) -> SearchResult:
        visits, q, prior, proven, root_value, proven_value = self._tree.root_statistics(slots)
        return SearchResult(visits, root_value, q, prior, proven=proven, proven_value=proven_value)
