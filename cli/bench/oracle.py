"""`zeroforge bench oracle`: models scored side by side on one exact-label oracle set (the instrument of the
pipeline's per-generation oracle figures, shared.players.oracle), for comparing a new run's best with the shipped
model, or any versions, position by position.

    zeroforge bench oracle --game connect4 --model shipped --model best --positions 400 --seed 1000
    zeroforge bench oracle --game connect4 --model best --set-file DATA/games/connect4/reports/oracle-set-200.npz
    zeroforge bench oracle --game connect4 --model best --from-shards DATA/games/connect4/shards/gen-000030
    zeroforge bench oracle --game othello --model shipped --model best --phase late-midgame --set-file late.npz

The set comes from the game family's builder (the same positions for the same --positions and --seed), or from
--set-file: loaded when the file exists (a run's own set, an ablation's), else built and saved there for the next
call. With --from-shards the positions are a run's own self-play positions, labelled the same way: a network that
keeps the outcome far more often there than on the builder's positions knows its own games better than the positions
other players reach. With --phase the family's further set is built instead of the pipeline's (Othello's
late-midgame positions, 17-22 empty squares, where the pipeline's set holds endgames).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from shared.games.base import Game


class OracleBenchError(ValueError):
    """Bad input of `bench oracle` (a game without exact labels, a set file of another game); the message says
    what to do."""


def oracle_set_for(game: Game, positions: int, seed: int, set_file: Path | None, say: Callable[[str], None],
                   from_shards: Path | None = None, phase: str | None = None):
    """The OracleSet to score on: set_file's when it exists (its own positions; `positions`, `seed` and `phase`
    unused), else up to `positions` labelled positions drawn with `seed`: by the family's builder (the builder of
    its further set `phase` when given, e.g. Othello's "late-midgame"), or from the self-play positions of the
    shards under `from_shards` (a shard file or a directory, e.g. a run's shards or one generation's) with the
    family's labeller; saved to set_file when given. OracleBenchError when the game's family has no exact labels
    (or none for given positions, or no set called `phase`), set_file does not hold a set of `game`, or
    `from_shards` holds no shard of `game`."""
    from shared.games import family_of
    from shared.games.oracle_set import cached_oracle_set, load_oracle_set, save_oracle_set

    family = family_of(game)
    build = _builder(game, family, phase, from_shards)
    if set_file is not None and set_file.exists():
        if from_shards is not None:
            raise OracleBenchError(f"--set-file {set_file} already exists, so --from-shards would not be used; name "
                                   "a new file to save the set built from the shards, or drop --from-shards")
        try:
            oracle = load_oracle_set(set_file, game)
        except (OSError, ValueError, KeyError) as exc:
            raise OracleBenchError(f"--set-file {set_file}: not a readable oracle set of {game.name} ({exc}); "
                                   "name a set saved by zeroforge (a run's reports/oracle-set-N.npz, an ablation's "
                                   "oracle-N-sS.npz) or a new path to build one there") from None
        say(f"oracle set loaded from {set_file}: {oracle.source}")
        return oracle
    if family.oracle_set is None:
        raise OracleBenchError(f"--game {game.name}: its family has no exact labels, so no oracle set; compare "
                               "models of it head to head with `zeroforge eval A B`")
    if from_shards is not None:
        oracle = _set_from_shards(game, family, from_shards, positions, seed, say)
    else:
        say(f"building the {phase + ' ' if phase else ''}oracle set: {positions} positions of {game.name}, "
            f"seed {seed} ...")
        if set_file is not None:
            oracle, seconds = cached_oracle_set(set_file, game, build, positions, seed)
            say(f"built in {seconds:.0f} s and saved to {set_file}")
            return oracle
        oracle = build(game, positions, seed)
    if set_file is not None:
        save_oracle_set(set_file, oracle)
        say(f"saved to {set_file}")
    return oracle


def _builder(game: Game, family, phase: str | None, from_shards: Path | None):
    """The family's set builder (game, count, seed) -> OracleSet: its further set `phase`'s when given, else the
    pipeline's (None when it has none: oracle_set_for says so); OracleBenchError for a phase it does not have."""
    if phase is None or family.oracle_set is None:
        return family.oracle_set
    if not family.oracle_phases:
        raise OracleBenchError(f"--phase {phase}: {game.name} has only the pipeline's oracle set; drop --phase")
    if phase not in family.oracle_phases:
        raise OracleBenchError(f"--phase {phase}: {game.name} has no such oracle set; choose one of "
                               f"{', '.join(sorted(family.oracle_phases))}, or drop --phase for the pipeline's")
    if from_shards is not None:
        raise OracleBenchError(f"--phase {phase} draws its own positions, so --from-shards would not be used; "
                               "drop one of them")
    return family.oracle_phases[phase]


def _set_from_shards(game: Game, family, path: Path, positions: int, seed: int, say: Callable[[str], None]):
    """The family's labels on up to `positions` of the self-play positions in the shards at `path`
    (oracle_set_for); OracleBenchError when there is nothing to label."""
    import numpy as np

    from shared.shards import ShardError, read_shard, scan_shards

    if family.oracle_set_from_positions is None:
        raise OracleBenchError(f"--from-shards: {game.name}'s oracle labels come with their own positions (its "
                               "tactics are built by the labeller), so given positions cannot be labelled; drop "
                               "--from-shards")
    if path.is_file():
        paths = [path]
    else:
        scan = scan_shards(path)
        for damaged in scan.damaged:
            say(f"note: skipping the damaged shard {damaged.path}: {damaged.problem}")
        paths = [info.path for info in scan.infos]
    if not paths:
        raise OracleBenchError(f"--from-shards {path}: no shard files there; name a run's shards directory "
                               f"(DATA/games/{game.name}/shards), one generation's directory in it, or a shard file")
    states = []
    for shard_path in paths:
        try:
            states.append(read_shard(shard_path, game).states)
        except ShardError as exc:
            raise OracleBenchError(f"--from-shards: {exc}; name the shards of a {game.name} run") from None
    states = np.concatenate(states)
    say(f"labelling up to {positions} of the {states.shape[0]} positions of {len(paths)} shard(s) under {path}, "
        f"seed {seed} ...")
    oracle = family.oracle_set_from_positions(game, states, positions, seed)
    if len(oracle) == 0:
        raise OracleBenchError(f"--from-shards {path}: none of its positions could be labelled ({oracle.source}); "
                               "name shards with longer games")
    say(f"oracle set: {oracle.source}")
    return oracle


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
    optimal-move rates where the set knows exact scores), the same split by kind of position where the set has
    kinds (Gomoku's win in 1, must block, VCF, VCF defence), then the paired differences from the first model."""
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
    if any(m.get("kinds") for m in report["models"]):
        rows = [[m["model"], k["kind"], str(k["positions"]), _pct(k["raw"]), _pct(k["search"])]
                for m in report["models"] for k in m["kinds"]]
        lines += ["", "by kind of position:",
                  text_table(["model", "kind", "positions", labels["raw"], labels["search"]], rows)]
    if report["differences"]:
        rows = [[f"{d['model']} - {d['baseline']}", *[_points(d.get(n)) for n in names]]
                for d in report["differences"]]
        lines += ["", "differences, paired by position, in points (95% bootstrap intervals over positions):",
                  text_table(["models", *[labels[n] for n in names]], rows)]
    return "\n".join(lines)
