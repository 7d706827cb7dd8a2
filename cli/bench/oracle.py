"""`zeroforge bench oracle`: models scored side by side on one exact-label oracle set (the instrument of the
pipeline's per-generation oracle figures, shared.players.oracle), for comparing a new run's best with the shipped
model, or any versions, position by position.

    zeroforge bench oracle --game connect4 --model shipped --model best --positions 400 --seed 1000
    zeroforge bench oracle --game connect4 --model best --set-file DATA/games/connect4/reports/oracle-set-200.npz

The set comes from the game family's builder (the same positions for the same --positions and --seed), or from
--set-file: loaded when the file exists (a run's own set, an ablation's), else built and saved there for the next
call.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from shared.games.base import Game


class OracleBenchError(ValueError):
    """Bad input of `bench oracle` (a game without exact labels, a set file of another game); the message says
    what to do."""


def oracle_set_for(game: Game, positions: int, seed: int, set_file: Path | None, say: Callable[[str], None]):
    """The OracleSet to score on: set_file's when it exists (its own positions; `positions` and `seed` unused),
    else the family's builder's (`positions` positions drawn with `seed`), saved to set_file when given.
    OracleBenchError when the game's family has no exact labels or set_file does not hold a set of `game`."""
    from shared.games import family_of
    from shared.games.oracle_set import cached_oracle_set, load_oracle_set

    build = family_of(game).oracle_set
    if set_file is not None and set_file.exists():
        try:
            oracle = load_oracle_set(set_file, game)
        except (OSError, ValueError, KeyError) as exc:
            raise OracleBenchError(f"--set-file {set_file}: not a readable oracle set of {game.name} ({exc}); "
                                   "name a set saved by zeroforge (a run's reports/oracle-set-N.npz, an ablation's "
                                   "oracle-N-sS.npz) or a new path to build one there") from None
        say(f"oracle set loaded from {set_file}: {oracle.source}")
        return oracle
    if build is None:
        raise OracleBenchError(f"--game {game.name}: its family has no exact labels, so no oracle set; compare "
                               "models of it head to head with `zeroforge eval A B`")
    say(f"building the oracle set: {positions} positions of {game.name}, seed {seed} ...")
    if set_file is not None:
        oracle, seconds = cached_oracle_set(set_file, game, build, positions, seed)
        say(f"built in {seconds:.0f} s and saved to {set_file}")
        return oracle
    return build(game, positions, seed)


def _pct(figure: dict[str, Any] | None) -> str:
    if not figure:
        return "-"
    return f"{100 * figure['rate']:.1f}% [{100 * figure['ci_low']:.1f}, {100 * figure['ci_high']:.1f}]"


def _points(triple: list[float] | None) -> str:
    if not triple:
        return "-"
    mean, low, high = (100 * v for v in triple)
    return f"{mean:+.1f} [{low:+.1f}, {high:+.1f}]"


def format_oracle_report(report: dict[str, Any]) -> str:
    """The printed report of shared.players.oracle.compare_on_oracle: one row per model (outcome kept, and the
    optimal-move rates where the set knows exact scores), then the paired differences from the first model."""
    from cli.render import text_table

    sims = report["simulations"]
    names = [n for n in ("raw", "search", "raw_optimal", "search_optimal") if report["models"][0].get(n)]
    labels = {"raw": "raw policy", "search": f"{sims} simulations", "raw_optimal": "raw: optimal move",
              "search_optimal": f"{sims} sims: optimal move"}
    rows = [[m["model"], *[_pct(m[n]) for n in names], f"{m['seconds']:.1f}"] for m in report["models"]]
    lines = [f"{report['game']}: {report['source']}",
             f"outcome kept (a win stays a win, a draw a draw); 95% Wilson intervals; a random legal move keeps "
             f"{100 * report['models'][0]['random_move']:.1f}%",
             text_table(["model", *[labels[n] for n in names], "seconds"], rows)]
    if report["differences"]:
        rows = [[f"{d['model']} - {d['baseline']}", *[_points(d.get(n)) for n in names]]
                for d in report["differences"]]
        lines += ["", "differences, paired by position, in points (95% bootstrap intervals over positions):",
                  text_table(["models", *[labels[n] for n in names]], rows)]
    return "\n".join(lines)
