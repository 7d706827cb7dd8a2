"""Position analysis with the network-guided search: the best move, the value and the top moves.

    path = choose_model_path(game, model_text, registry_dir)      # --model, else registry best, else shipped
    evaluate = load_network_evaluator(path, game)
    search = GatekeeperConfig(...).match_search_config(200)     # the players' one search configuration
    results = analyze_move_strings(game, evaluate, ["1 4 2 5", "zz", ""], search=search, top_k=5)

Every position is searched by ONE BatchedMCTS.search call over all valid positions at once (the batch
dimension), without root noise; the chosen move is the most visited one (temperature 0; ties go to the
higher Q, then the higher prior, then the lower action index, so the choice is deterministic and equals
the first entry of the top list). All values and Q are from the point of view of the player to move in the
analysed position.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from shared.games.base import F_PLAYER, Game, GameError
from shared.layout import shipped_model_path
from shared.players.spec import PlayerSpec, PlayerSpecError, parse_player_spec, resolve_model_path
from shared.registry import ModelRegistry
from shared.search.mcts import BatchedMCTS, Evaluator, SearchConfig

#: Simulations per analysed position when none are given (enough to find short tactics on the small boards).
DEFAULT_ANALYSIS_SIMULATIONS = 200
#: Moves listed in the "top" part of an analysis when none are asked for.
DEFAULT_TOP_K = 5


class AnalysisError(ValueError):
    """The analysis cannot run (no model to use, bad settings); the message says what to do."""


@dataclass(frozen=True)
class MoveStat:
    """Search statistics of one root move; q from the point of view of the player to move at the root."""

    move: str        # the move in the game's notation
    visits: float    # share of the root's child visits, in [0, 1]
    prior: float     # the network's prior probability (softmax over legal moves)
    q: float         # mean search value after this move, root player's view, in [-1, 1] (0 if unvisited)
    count: int       # raw visit count


@dataclass(frozen=True)
class PositionAnalysis:
    """The search's verdict on one position."""

    action: int              # chosen action index
    move: str                # chosen move in the game's notation
    value: float             # root search value, side to move, in [-1, 1]
    to_move: str             # "first" or "second"
    colour: str              # the side to move's colour: "X"/"O", or "black"/"white" in Othello
    top: list[MoveStat]      # the top moves by visits, most visited first

    def to_dict(self, moves_text: str) -> dict[str, Any]:
        """JSON-ready {"moves", "move", "value", "to_move", "colour", "top": [...]} (action index left out)."""
        return {"moves": moves_text, "move": self.move, "value": round(self.value, 4), "to_move": self.to_move,
                "colour": self.colour, "top": [_rounded(asdict(stat)) for stat in self.top]}


def _rounded(stat: dict[str, Any]) -> dict[str, Any]:
    return {key: round(value, 4) if isinstance(value, float) else value for key, value in stat.items()}


# ----- model choice ----------------------------------------------------------------------------------------
def default_model_spec(game: Game, registry_dir: Path | None) -> PlayerSpec:
    """The model to use when none is named: the registry's best, else the shipped model; AnalysisError if neither."""
    if registry_dir is not None and Path(registry_dir).is_dir():
        if ModelRegistry(Path(registry_dir)).best_version() is not None:
            return PlayerSpec("best")
    if shipped_model_path(game.name).is_file():
        return PlayerSpec("shipped")
    where = f" (no promoted model in {registry_dir})" if registry_dir is not None else ""
    raise AnalysisError(
        f"no model for {game.name}{where} and no shipped model; train one with `zeroforge run --game {game.name}` "
        "or pass --model (a registry version, best, shipped or a model file)"
    )


def choose_model_path(game: Game, model_text: str | None, registry_dir: Path | None) -> Path:
    """The model file to analyse or play with: `model_text` (version, best, shipped or a file) when given,
    else `default_model_spec`. PlayerSpecError / AnalysisError / RegistryError say what is missing."""
    if model_text is None or not model_text.strip():
        spec = default_model_spec(game, registry_dir)
    else:
        spec = parse_player_spec(model_text)
        if not spec.uses_network:
            raise PlayerSpecError(
                f"--model {model_text!r} is not a network; use best, shipped, a registry version or a model file"
            )
    return resolve_model_path(spec, game, registry_dir)


def load_network_evaluator(path: Path, game: Game, device: str = "cpu") -> Evaluator:
    """A search evaluator over the model file at `path` (ModelFileError if damaged or for another game)."""
    from shared.network import TorchEvaluator, load_model

    loaded = load_model(path, device=device, expected_game=game)
    return TorchEvaluator(loaded.model, game, device=device)


# ----- positions -------------------------------------------------------------------------------------------
def position_from_moves(game: Game, moves_text: str) -> np.ndarray:
    """The position after `moves_text` (game notation, from the start) -> state [S] int16.

    GameError when a move is unparsable or illegal, or when the game is already over after the moves.
    """
    state = game.play_moves(game.parse_moves(moves_text))        # [1, S] int16
    if game.is_terminal(state)[0]:
        raise GameError(f"the game is already over after {moves_text!r}; there is nothing to analyse")
    return state[0]


def side_names(game: Game, state: np.ndarray) -> tuple[str, str]:
    """("first"|"second", colour) of the side to move in state [S]; colours X/O, black/white in Othello."""
    first = int(state[game.num_cells + F_PLAYER]) == 1
    if game.name.startswith("othello"):
        colour = "black" if first else "white"
    else:
        colour = "X" if first else "O"
    return ("first" if first else "second"), colour


# ----- search ----------------------------------------------------------------------------------------------
def _ranked_actions(visits: np.ndarray, q: np.ndarray, prior: np.ndarray) -> np.ndarray:
    """Actions of one root by visits, then Q, then prior (all descending), then lower index: [A] int64."""
    order = np.lexsort((np.arange(visits.size), -prior, -q, -visits))   # last key is the primary key
    return order.astype(np.int64)


def analyze_states(game: Game, evaluate: Evaluator, states: np.ndarray, *, search: SearchConfig,
                   top_k: int = DEFAULT_TOP_K, seed: int = 0) -> list[PositionAnalysis]:
    """Search non-terminal states [B, S] int16 together (one BatchedMCTS.search call with `search`, no noise,
    no tree reuse) -> one analysis each."""
    if top_k < 1:
        raise AnalysisError(f"top_k ({top_k}) must be >= 1")
    states = np.asarray(states, dtype=np.int16).reshape(-1, game.state_size)   # [B, S] int16
    if states.shape[0] == 0:
        return []
    config = replace(search, reuse_tree=False)
    result = BatchedMCTS(game, evaluate, config, np.random.default_rng(seed)).search(states, add_noise=False)
    legal = game.legal_mask(states)                                            # [B, A] bool
    analyses = []
    for row in range(states.shape[0]):
        visits = result.visits[row]                                            # [A] float32
        ranked = [a for a in _ranked_actions(visits, result.q[row], result.prior[row]).tolist() if legal[row, a]]
        total = max(float(visits.sum()), 1.0)
        top = [MoveStat(game.action_to_str(a), float(visits[a]) / total, float(result.prior[row, a]),
                        float(result.q[row, a]), int(visits[a])) for a in ranked[:top_k]]
        to_move, colour = side_names(game, states[row])
        analyses.append(PositionAnalysis(ranked[0], game.action_to_str(ranked[0]), float(result.root_value[row]),
                                         to_move, colour, top))
    return analyses


def analyze_move_strings(game: Game, evaluate: Evaluator, move_strings: list[str], *, search: SearchConfig,
                         top_k: int = DEFAULT_TOP_K, seed: int = 0) -> list[dict[str, Any]]:
    """One JSON-ready dict per move string, in order: the analysis, or {"moves", "error"} for a string that
    cannot be parsed or played or whose game is over. All valid positions are searched in one batch."""
    answers: list[dict[str, Any] | None] = [None] * len(move_strings)
    valid_rows, valid_states = [], []
    for row, text in enumerate(move_strings):
        try:
            valid_states.append(position_from_moves(game, text))
            valid_rows.append(row)
        except GameError as exc:
            answers[row] = {"moves": text, "error": " ".join(str(exc).split())}
    if valid_states:
        analyses = analyze_states(game, evaluate, np.stack(valid_states), search=search, top_k=top_k, seed=seed)
        for row, analysis in zip(valid_rows, analyses):
            answers[row] = analysis.to_dict(move_strings[row])
    return answers


def format_analysis(game: Game, state: np.ndarray, analysis: PositionAnalysis) -> str:
    """Human-readable board [S] plus the chosen move, the value and the top moves, one per line."""
    lines = [game.render(state), f"best move for {analysis.colour}: {analysis.move}   value {analysis.value:+.3f}"]
    lines += [f"  {stat.move:>5}  {100 * stat.visits:5.1f}%  prior {stat.prior:.3f}  q {stat.q:+.3f}"
              for stat in analysis.top]
    return "\n".join(lines)
