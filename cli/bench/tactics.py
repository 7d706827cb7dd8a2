"""`zeroforge bench tactics --game connect4`: how often a model's search keeps a position's game-theoretic outcome,
on positions labelled by the perfect solver (shared.games.connect4.solver).

Positions: random games (uniform legal moves, never a move that ends the game) stopped after a ply count drawn
uniformly from [min_plies, max_plies]; a position is kept when the solver settles every legal move within its
node budget and the side to move is not lost (some move draws or wins). The model plays each kept position as
`analyze` does (the match players' search: no noise, MCTS-solver on, `sims` simulations, all positions in one
batched search). A move keeps the outcome when its solved value equals the position's best value (a win stays a
win, a draw a draw). Reported with 95% Wilson intervals: over all kept positions, over the critical ones (where
some legal move would lose the outcome), per outcome (won / drawn positions), and the rate of a uniformly random
legal move on the same positions.

`zeroforge bench tactics --game othello` (or othello-6x6): the same on endgames labelled by the exact endgame solver
(shared.games.othello.solver): random games stopped once the number of empty squares drawn uniformly from
[min_empties, max_empties] is reached.

Games with a solver at the root of the players (Gomoku's VCF, Othello's endgame solver, Connect Four's solver in
searches of 200 simulations or more: shared.search.root_solver) report each model twice: as `analyze` plays (root
solver on) and by its search alone (root solver off), since where the root solver settles a position, the first
figure measures the solver more than the network.

`zeroforge bench tactics --game gomoku-15` (any in-a-row game): positions labelled by the rules alone
(`Game.move_outcomes`) from batches of random games whose moves never win at once (so threats pile up): "win in 1"
positions (the side to move can complete its line; a move keeps it when it does) and "must block" positions (no win
for the side to move, and some moves but not all let the opponent win at once; a move keeps it when it does not).
With `--vcf`, VCF attack and VCF defence positions instead (cli.bench.vcf_tactics).
"""
from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from typing import Any, Callable

import numpy as np
from scipy.stats import binomtest

from shared.games.base import F_PLY, Game
from shared.games.inarow import InARowGame
from shared.games import family_of
from shared.search.root_solver import uses_root_solver
from shared.search.solved import ILLEGAL, UNKNOWN


@dataclass(frozen=True)
class Rate:
    """k of n, with the 95% Wilson interval of k / n."""

    hits: int
    total: int
    rate: float
    ci_low: float
    ci_high: float


def rate(hits: int, total: int) -> Rate:
    """Rate of `hits` out of `total` with its 95% Wilson interval (all NaN when total is 0)."""
    if total == 0:
        return Rate(0, 0, float("nan"), float("nan"), float("nan"))
    interval = binomtest(hits, total).proportion_ci(confidence_level=0.95, method="wilson")
    return Rate(hits, total, hits / total, float(interval.low), float(interval.high))


def random_position(game: Game, rng: np.random.Generator, plies: int) -> np.ndarray:
    """A non-terminal position after `plies` uniformly random moves that do not end the game (a game in which
    every move would end it starts over): [S] int16."""
    state = game.initial_states(1)
    while int(state[0, game.num_cells + F_PLY]) < plies:
        legal = np.flatnonzero(game.legal_mask(state)[0])
        children = game.step(np.repeat(state, legal.size, axis=0), legal)
        open_ = np.flatnonzero(~game.is_terminal(children))
        state = children[[rng.choice(open_)]] if open_.size else game.initial_states(1)
    return state[0]


def random_endgame(game: Game, rng: np.random.Generator, empties: int) -> np.ndarray:
    """A live position reached by uniformly random moves, the first with at most `empties` empty squares (a game
    that ends before starts over): [S] int16."""
    while True:
        state = game.initial_states(1)
        while not game.is_terminal(state)[0]:
            if np.count_nonzero(state[0, : game.num_cells] == 0) <= empties:
                return state[0]
            state = game.step(state, np.array([rng.choice(np.flatnonzero(game.legal_mask(state)[0]))]))


def labelled_positions(game: Game, count: int, draw: Callable[[], np.ndarray],
                       label: Callable[[np.ndarray], np.ndarray]) -> tuple[np.ndarray, np.ndarray, int, int]:
    """Sample positions with `draw()` ([S] int16) until `count` are kept (module docstring), or 50 * count were
    sampled; `label(state)` gives the solver's value of every action ([A] int64).

    Returns (states [N, S] int16, values [N, A] int64 from the solver: 1 win, 0 draw, -1 loss, -2 illegal,
    positions sampled, positions skipped over the node budget)."""
    states, values = [], []
    sampled = skipped = 0
    while len(states) < count and sampled < 50 * count:
        sampled += 1
        state = draw()
        moves = label(state)
        if np.any(moves == UNKNOWN):
            skipped += 1
        elif moves.max() >= 0:
            states.append(state)
            values.append(moves)
    return (np.array(states, np.int16).reshape(-1, game.state_size),
            np.array(values, np.int64).reshape(-1, game.num_actions), sampled, skipped)


def keep_report(values: np.ndarray, chosen: np.ndarray) -> dict[str, Any]:
    """Rates of keeping the outcome: values [N, A] int64 (solver values), chosen [N] int64 actions -> dict of
    Rate dicts: "all", "critical" (some legal move loses the outcome), "won", "drawn"."""
    best = values.max(axis=1)                                            # [N]: 1 won, 0 drawn (lost ones excluded)
    kept = values[np.arange(values.shape[0]), chosen] == best            # [N] bool
    return {name: asdict(rate(int(kept[rows].sum()), int(rows.sum())))
            for name, rows in (("all", np.ones_like(kept)), ("critical", critical_rows(values)), ("won", best == 1),
                               ("drawn", best == 0))}


def critical_rows(values: np.ndarray) -> np.ndarray:
    """values [N, A] int64 -> [N] bool: some legal move of the position loses its solved outcome."""
    return ((values != ILLEGAL) & (values < values.max(axis=1, keepdims=True))).any(axis=1)


def random_move_rates(values: np.ndarray) -> dict[str, float]:
    """Expected keep rate of a uniformly random legal move over all positions and over the critical ones."""
    legal = values != ILLEGAL
    share = (values == values.max(axis=1, keepdims=True)).sum(axis=1) / np.maximum(legal.sum(axis=1), 1)
    critical = critical_rows(values)
    return {"random_move": float(share.mean()) if share.size else float("nan"),
            "random_move_critical": float(share[critical].mean()) if critical.any() else float("nan")}


def model_reports(game: Game, models: list[tuple[str, Any]], states: np.ndarray, search, seed: int,
                  score: Callable[[np.ndarray], dict[str, Any]]) -> list[dict[str, Any]]:
    """Let each model (models: (label, evaluator) pairs) choose a move in every state [N, S] int16 with one batched
    search as `analyze` does (SearchConfig `search`), and score the chosen actions [N] int64 with `score` -> one
    dict per model and root solver setting (on, then off, for games with one; shared.search.root_solver): its
    label, "root_solver" (bool), the score's entries and the search time."""
    from shared.players.analysis import analyze_states

    reports = []
    for label, evaluate in models:
        for root_solver in (True, False) if uses_root_solver(game, search.num_simulations) else (False,):
            started = time.perf_counter()
            chosen = np.array([a.action for a in analyze_states(game, evaluate, states, search=search, pv_depth=1,
                                                                seed=seed, root_solver=root_solver)], np.int64)
            reports.append({"model": label, "root_solver": root_solver, **score(chosen),
                            "search_seconds": round(time.perf_counter() - started, 3)})
    return reports


def model_title(report: dict[str, Any], model: dict[str, Any]) -> str:
    """"<game>: <model> at <n> simulations", with how it chose its moves where the game has a root solver."""
    how = ""
    if any(m["root_solver"] for m in report["models"]):          # the game has a root solver: both settings ran
        how = " (with the root solver, as analyze plays)" if model["root_solver"] else " (its search alone)"
    return f"{report['game']}: {model['model']}{how} at {report['simulations']} simulations"


def rate_text(r: dict[str, Any]) -> str:
    """A Rate dict as "hits/total  rate%  [low, high]"."""
    return f"{r['hits']:>5}/{r['total']:<5} {100 * r['rate']:6.1f}%  [{100 * r['ci_low']:.1f}, {100 * r['ci_high']:.1f}]"


def solved_tactics(game: Game, models: list[tuple[str, Any]], search, *, positions: int, seed: int,
                   span: tuple[int, int], max_nodes: int) -> dict[str, Any]:
    """Sample and label `positions` positions once (Connect Four: after span = (min, max) random plies; Othello:
    with span = (min, max) empty squares), let each model's search (models: (label, evaluator) pairs; SearchConfig
    `search`) choose a move in each, and report per model the keep rates (keep_report, under "models") with the
    random move's rates and the sampling and timing facts."""
    rng = np.random.default_rng(seed)
    low, high = span
    family = family_of(game)
    label, span_key = family.tactics_solver(game, max_nodes), family.tactics_span
    if span_key == "plies":
        draw = lambda: random_position(game, rng, int(rng.integers(low, high + 1)))  # noqa: E731
    else:
        draw = lambda: random_endgame(game, rng, int(rng.integers(low, high + 1)))  # noqa: E731
    started = time.perf_counter()
    states, values, sampled, skipped = labelled_positions(game, positions, draw, label)
    report = {"game": game.name, "positions": int(states.shape[0]), "sampled": sampled,
              "skipped_over_budget": skipped, span_key: [low, high], "simulations": search.num_simulations,
              "seed": seed, "max_nodes": max_nodes, **random_move_rates(values),
              "solve_seconds": round(time.perf_counter() - started, 3)}
    report["models"] = model_reports(game, models, states, search, seed, lambda chosen: keep_report(values, chosen))
    return report


def format_tactics(report: dict[str, Any]) -> str:
    """The report of solved_tactics as a few lines of text."""
    def line(model: dict[str, Any], name: str, label: str) -> str:
        r = model[name]
        if r["total"] == 0:
            return f"  {label:<22} -"
        return f"  {label:<22} {rate_text(r)}"

    lines = []
    for model in report["models"]:
        lines += [f"{model_title(report, model)} keeps the solved outcome in ({model['search_seconds']:.1f} s of "
                  "search)",
                  line(model, "all", "all positions"), line(model, "critical", "critical positions"),
                  line(model, "won", "won positions"), line(model, "drawn", "drawn positions")]
    span = (f"after {report['plies'][0]}-{report['plies'][1]} random plies" if "plies" in report
            else f"with {report['empties'][0]}-{report['empties'][1]} empty squares")
    return "\n".join(lines + [
        f"a random legal move: {100 * report['random_move']:.1f}% (critical: "
        f"{100 * report['random_move_critical']:.1f}%)",
        f"positions: {report['positions']} kept of {report['sampled']} sampled {span} "
        f"({report['skipped_over_budget']} over the solver's budget of {report['max_nodes']:,} nodes); solving "
        f"{report['solve_seconds']:.1f} s",
    ])


#: Kinds of rule-labelled positions, in report order.
LINE_KINDS = ("win_in_1", "must_block")


def line_tactic_positions(game: InARowGame, count: int, rng: np.random.Generator, games: int = 64,
                          take: float = 0.25) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """`count` positions of each kind in LINE_KINDS (module docstring) from `games` random games played together;
    each qualifying position is taken with probability `take` (so consecutive positions of one game rarely both).

    Returns (states [N, S] int16, kinds [N] int64 (index into LINE_KINDS), outcomes [N, A] int8 of
    `game.move_outcomes`, with illegal actions set to -2)."""
    found: dict[int, list[tuple[np.ndarray, np.ndarray]]] = {0: [], 1: []}
    states = game.initial_states(games)
    while min(len(v) for v in found.values()) < count:
        legal = game.legal_mask(states)                                        # [G, A] bool
        outcomes = np.where(legal, game.move_outcomes(states), -2).astype(np.int8)
        win = (outcomes == 1).any(axis=1)
        block = ~win & (outcomes == -1).any(axis=1) & (outcomes == 0).any(axis=1)
        for kind, rows in ((0, win), (1, block)):
            for row in np.flatnonzero(rows & (rng.random(games) < take)):
                if len(found[kind]) < count:
                    found[kind].append((states[row].copy(), outcomes[row]))
        playable = legal & (outcomes != 1)                                      # never end the game by a win
        actions = np.array([rng.choice(np.flatnonzero(p)) if p.any() else -1 for p in playable], np.int64)
        stuck = actions < 0
        actions[stuck] = 0
        states = np.where(stuck[:, None], game.initial_states(games), states)
        states[~stuck] = game.step(states[~stuck], actions[~stuck])
        over = game.is_terminal(states)                                         # a full board
        states[over] = game.initial_states(int(over.sum()))
    rows = [(state, kind, outcome) for kind in (0, 1) for state, outcome in found[kind]]
    return (np.stack([r[0] for r in rows]), np.array([r[1] for r in rows], np.int64),
            np.stack([r[2] for r in rows]))


def line_keep_report(kinds: np.ndarray, outcomes: np.ndarray, chosen: np.ndarray) -> dict[str, Any]:
    """Per kind, how often the chosen move does what the position asks: kinds [N] int64, outcomes [N, A] int8
    (as from line_tactic_positions), chosen [N] int64 -> {kind name: Rate dict}."""
    picked = outcomes[np.arange(kinds.size), chosen]
    good = np.where(kinds == 0, picked == 1, picked == 0)
    return {name: asdict(rate(int(good[kinds == k].sum()), int((kinds == k).sum()))) for k, name in enumerate(LINE_KINDS)}


def line_random_rates(kinds: np.ndarray, outcomes: np.ndarray) -> dict[str, float]:
    """Expected rate of a uniformly random legal move per kind."""
    legal = (outcomes != -2).sum(axis=1)
    good = np.where(kinds == 0, (outcomes == 1).sum(axis=1), (outcomes == 0).sum(axis=1)) / np.maximum(legal, 1)
    return {f"random_move_{name}": float(good[kinds == k].mean()) for k, name in enumerate(LINE_KINDS)}


def line_tactics(game: InARowGame, models: list[tuple[str, Any]], search, *, positions: int,
                 seed: int) -> dict[str, Any]:
    """`positions` positions of each kind (line_tactic_positions), searched by each model (models: (label,
    evaluator) pairs; SearchConfig `search`) in one batch -> per model the rates of line_keep_report (under
    "models"), the random move's rates, and timing facts."""
    rng = np.random.default_rng(seed)
    started = time.perf_counter()
    states, kinds, outcomes = line_tactic_positions(game, positions, rng)
    report = {"game": game.name, "positions": int(states.shape[0]), "simulations": search.num_simulations,
              "seed": seed, **line_random_rates(kinds, outcomes),
              "sample_seconds": round(time.perf_counter() - started, 3)}
    report["models"] = model_reports(game, models, states, search, seed,
                                     lambda chosen: line_keep_report(kinds, outcomes, chosen))
    return report


def kind_rate_lines(report: dict[str, Any], kinds: tuple[str, ...]) -> list[str]:
    """Per model of a report, a title line and one line per kind of position: its rate next to a random move's."""
    lines = []
    for model in report["models"]:
        lines.append(f"{model_title(report, model)} ({model['search_seconds']:.1f} s of search)")
        for name in kinds:
            r = model[name]
            random = report["random_move_" + name]
            lines.append(f"  {name.replace('_', ' '):<12} {rate_text(r) if r['total'] else '-'}   a random move: "
                         + (f"{100 * random:.1f}%" if random == random else "-"))
    return lines


def format_line_tactics(report: dict[str, Any]) -> str:
    """The report of line_tactics as a few lines of text."""
    return "\n".join(kind_rate_lines(report, LINE_KINDS))
