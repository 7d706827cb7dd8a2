"""Position analysis with the network-guided search: the best move, the value, the top moves and the
principal variation.

    model = choose_model(game, model_text, registry_dir)       # --model, else best (shipped when there is none)
    evaluate = load_network_evaluator(model.path, game)
    search = GatekeeperConfig(...).match_search_config(200)     # the players' one search configuration
    analyses = analyze_states(game, evaluate, states, search=search, top_k=5)   # states [B, S] int16

Every position is searched by ONE BatchedMCTS.search call over all valid positions at once (the batch
dimension), without root noise; the chosen move is the most visited one (temperature 0; ties go to the
higher Q, then the higher prior, then the lower action index, so the choice is deterministic and equals
the first entry of the top list). All values and Q are from the point of view of the player to move in the
analysed position.

Principal variation: from the root, follow the most visited child. The search API returns root statistics
only, so after the root search the tree is advanced down the chosen move (keeping that subtree, as tree reuse
does) and searched with ONE more simulation, whose result carries the subtree's child visits; this repeats
while the chosen child had at least `PV_MIN_VISITS` visits, up to `pv_depth` moves. The extra cost is one
simulation per PV move; the root statistics are those of the root search alone.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from shared.games.base import Game
from shared.players.positions import position_from_moves, side_names
from shared.players.spec import PlayerSpec, PlayerSpecError, ResolvedModel, parse_player_spec, resolve_model
from shared.search.mcts import BatchedMCTS
from shared.search.root_solver import root_solver_moves
from shared.search.types import Evaluator, SearchConfig

__all__ = ["AnalysisError", "MoveStat", "PositionAnalysis", "analyze_states",
           "choose_model", "choose_model_path", "format_analysis", "load_network_evaluator",
           "position_from_moves", "side_names"]

#: Simulations per analysed position when none are given (enough to find short tactics on the small boards).
DEFAULT_ANALYSIS_SIMULATIONS = 200
#: Moves listed in the "top" part of an analysis when none are asked for.
DEFAULT_TOP_K = 5
#: Longest principal variation reported.
DEFAULT_PV_DEPTH = 10
#: The PV stops at a move searched fewer times than this (its subtree says nothing more).
PV_MIN_VISITS = 2


class AnalysisError(ValueError):
    """The analysis cannot run (no model to use, bad settings); the message says what to do."""


@dataclass(frozen=True)
class MoveStat:
    """Search statistics of one root move; q from the point of view of the player to move at the root."""

    move: str            # the move in the game's notation
    visits: int          # root visit count of this move
    visit_share: float   # visits / all root child visits, in [0, 1]
    prior: float         # the network's prior probability (softmax over legal moves)
    q: float | None      # mean search value after this move, root player's view, in [-1, 1]; None if unvisited


@dataclass(frozen=True)
class PositionAnalysis:
    """The search's verdict on one position."""

    action: int              # chosen action index
    move: str                # chosen move in the game's notation
    value: float             # root search value, side to move, in [-1, 1]
    to_move: str             # "first" or "second"
    colour: str              # the side to move's colour: "X"/"O", or "black"/"white" in Othello
    top: list[MoveStat]      # the top moves by visits, most visited first
    pv: list[str]            # principal variation in the game's notation, starting with `move`
    pv_text: str             # the same as one move string (game.moves_to_str), e.g. "4453" or "h8 i9"

    def to_dict(self, moves_text: str, model: str | None = None) -> dict[str, Any]:
        """JSON-ready {"moves", "move", "value", "to_move", "colour", "pv", "top": [...], "model"}."""
        answer = {"moves": moves_text, "move": self.move, "value": round(self.value, 4), "to_move": self.to_move,
                  "colour": self.colour, "pv": self.pv_text,
                  "top": [{"move": s.move, "visits": s.visits, "visit_share": round(s.visit_share, 4),
                           "prior": round(s.prior, 4), "q": None if s.q is None else round(s.q, 4)}
                          for s in self.top]}
        if model is not None:
            answer["model"] = model
        return answer


# ----- model choice ----------------------------------------------------------------------------------------
def choose_model(game: Game, model_text: str | None, registry_dir: Path | None) -> ResolvedModel:
    """The model to analyse or play with: `model_text` (version, best, shipped or a file) when given, else
    `best`, which is the registry's best or, without one, the shipped model (see resolve_model; the note
    says so). PlayerSpecError / RegistryError say what is missing."""
    if model_text is None or not model_text.strip():
        spec = PlayerSpec("best")
    else:
        spec = parse_player_spec(model_text)
        if not spec.uses_network:
            raise PlayerSpecError(
                f"--model {model_text!r} is not a network; use best, shipped, a registry version or a model file"
            )
    return resolve_model(spec, game, registry_dir)


def choose_model_path(game: Game, model_text: str | None, registry_dir: Path | None) -> Path:
    """The model file of `choose_model`."""
    return choose_model(game, model_text, registry_dir).path


def load_network_evaluator(path: Path, game: Game, device: str = "cpu") -> Evaluator:
    """A search evaluator over the model file at `path` (ModelFileError if damaged or for another game)."""
    from shared.network import TorchEvaluator, load_model

    loaded = load_model(path, device=device, expected_game=game)
    return TorchEvaluator(loaded.model, game, device=device)


# ----- search ----------------------------------------------------------------------------------------------
def _ranked_actions(visits: np.ndarray, q: np.ndarray, prior: np.ndarray) -> np.ndarray:
    """Actions of one root by visits, then Q, then prior (all descending), then lower index: [A] int64."""
    order = np.lexsort((np.arange(visits.size), -prior, -q, -visits))   # last key is the primary key
    return order.astype(np.int64)


def _chosen_moves(game: Game, states: np.ndarray, result, rankings: list[list[int]], root_solver: bool,
                  simulations: int) -> list[int]:
    """The move of each root: a proven win if there is one, else the best-ranked move not proven to lose, else
    (all lost) the best-ranked move that does not lose at once (the rule of
    shared.search.action_selection.choose_moves, without its random tie-break), then, when root_solver is set,
    the game's root solver
    (shared.search.root_solver: VCF and quiet threats in Gomoku, exact endgames in Othello)."""
    chosen = []
    for row, ranked in enumerate(rankings):
        proven = result.proven[row]                                            # [A] int8, root player's view
        wins = [a for a in ranked if proven[a] > 0]
        safe = [a for a in ranked if proven[a] >= 0]
        resist = [a for a in ranked if not result.loses_at_once[row, a]]
        chosen.append((wins or safe or resist or ranked)[0])
    if not root_solver:
        return chosen
    return root_solver_moves(game, states, np.array(chosen, np.int64), result.visits, simulations).tolist()


def _best_action(legal: np.ndarray, visits: np.ndarray, q: np.ndarray, prior: np.ndarray) -> int:
    """The most visited legal action of one root (legal, visits, q, prior: [A]; ties as in _ranked_actions)."""
    return next(int(a) for a in _ranked_actions(visits, q, prior) if legal[a])


def _principal_variations(game: Game, mcts: BatchedMCTS, states: np.ndarray, first: list[int],
                          first_visits: list[int], depth: int) -> list[list[int]]:
    """Follow the most visited child from each root (see the module docstring): actions per state."""
    pvs = [[a] for a in first]
    current = states.copy()                                                    # [B, S] int16
    alive = np.array([v >= PV_MIN_VISITS for v in first_visits], bool)
    chosen = np.array(first, np.int64)
    for _ in range(depth - 1):
        slots = np.flatnonzero(alive)
        if slots.size == 0:
            break
        mcts.advance(chosen[slots], slots=slots)
        current[slots] = game.step(current[slots], chosen[slots])
        open_ = ~game.is_terminal(current[slots])
        alive[slots[~open_]] = False
        slots = slots[open_]
        if slots.size == 0:
            break
        result = mcts.search(current[slots], add_noise=False, num_simulations=1, slots=slots)
        legal = game.legal_mask(current[slots])
        for row, slot in enumerate(slots.tolist()):
            action = _best_action(legal[row], result.visits[row], result.q[row], result.prior[row])
            pvs[slot].append(action)
            chosen[slot] = action
            alive[slot] = result.visits[row, action] >= PV_MIN_VISITS
    return pvs


def analyze_states(game: Game, evaluate: Evaluator, states: np.ndarray, *, search: SearchConfig,
                   top_k: int = DEFAULT_TOP_K, seed: int = 0, pv_depth: int = DEFAULT_PV_DEPTH,
                   root_solver: bool = True) -> list[PositionAnalysis]:
    """Search non-terminal states [B, S] int16 together (one BatchedMCTS.search call with `search`, no noise,
    a fresh tree) -> one analysis each, with its principal variation (up to `pv_depth` moves). root_solver=False
    leaves out the game's root solver (shared.search.root_solver), so the move is the search's own."""
    if top_k < 1:
        raise AnalysisError(f"top_k ({top_k}) must be >= 1")
    states = np.asarray(states, dtype=np.int16).reshape(-1, game.state_size)   # [B, S] int16
    if states.shape[0] == 0:
        return []
    mcts = BatchedMCTS(game, evaluate, replace(search, reuse_tree=True), np.random.default_rng(seed))
    result = mcts.search(states, add_noise=False)
    legal = game.legal_mask(states)                                            # [B, A] bool
    rankings, tops = [], []
    for row in range(states.shape[0]):
        visits = result.visits[row]                                            # [A] float32
        ranked = [a for a in _ranked_actions(visits, result.q[row], result.prior[row]).tolist() if legal[row, a]]
        total = max(float(visits.sum()), 1.0)
        tops.append([MoveStat(game.action_to_str(a), int(visits[a]), float(visits[a]) / total,
                              float(result.prior[row, a]), float(result.q[row, a]) if visits[a] > 0 else None)
                     for a in ranked[:top_k]])
        rankings.append(ranked)
    first = _chosen_moves(game, states, result, rankings, root_solver, search.num_simulations)
    pvs = _principal_variations(game, mcts, states, first, [int(result.visits[r, a]) for r, a in enumerate(first)],
                                max(1, pv_depth))
    analyses = []
    for row in range(states.shape[0]):
        to_move, colour = side_names(game, states[row])
        pv = [game.action_to_str(a) for a in pvs[row]]
        analyses.append(PositionAnalysis(first[row], game.action_to_str(first[row]), float(result.root_value[row]),
                                         to_move, colour, tops[row], pv, game.moves_to_str(pvs[row])))
    return analyses


def format_analysis(game: Game, state: np.ndarray, analysis: PositionAnalysis, model: str | None = None) -> str:
    """Human-readable board [S] plus the chosen move, the value, the principal variation and the top moves."""
    lines = [game.render(state), f"best move for {analysis.colour}: {analysis.move}   value {analysis.value:+.3f}"
             + (f"   (model {model})" if model else ""),
             f"principal variation: {' '.join(analysis.pv)}",
             "  move  visits  share  prior       q"]
    for stat in analysis.top:
        q = "-" if stat.q is None else f"{stat.q:+.3f}"
        lines.append(f"  {stat.move:>4}  {stat.visits:6d}  {100 * stat.visit_share:4.1f}%  {stat.prior:.3f}  {q:>6}")
    return "\n".join(lines)
