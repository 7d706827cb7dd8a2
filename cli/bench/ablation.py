"""`zeroforge bench ablation`: pipeline settings compared on the same wall-clock budget, several seeds per arm, scored
position by position on one exact-label oracle set.

    zeroforge bench ablation --game connect4 --out runs/c4-cont --max-hours 0.5 --seeds 0,1 \\
        --arm sync --arm "cont: pipeline.overlap_selfplay=true train.samples_per_position=13.3"

Running: each arm x seed is one `zeroforge run --game G --max-hours H --data-dir OUT/ARM-sSEED --set
pipeline.seed=SEED --set KEY=VALUE ...` (the arm's settings after the common --set ones), one after the other: side
by side, runs would share the cores and use each other's idle time. The order is seed by seed (every arm of seed 0,
then of seed 1), so a stopped ablation has balanced arms. A finished run leaves OUT/ARM-sSEED/ABLATION_DONE (its
command, settings, exit status and minutes) and is never run again; an unfinished one (stopped, crashed) is moved
aside to OUT/ARM-sSEED.partial-TIME and run again from the start, because a resumed run gets a new budget.

Scoring: one oracle set (the game family's exact labels: --positions positions built with --oracle-seed, cached in
OUT), on which every run's best model chooses a move by its raw policy and by a --sims-simulation search, the game's
default match search (shared.players.oracle.oracle_hits). An arm's rate pools its seeds: per position, the mean hit
over the arm's runs, then the mean over positions with a 95% bootstrap interval over positions (seeds fixed;
shared.stats.bootstrap_mean). Every other arm is compared with the first position by position (paired), with the
same kind of interval. Per run it reports generations, minutes, promotions, the self-play share of the
worker-seconds and the last anchor score. Written to OUT/ablation.json; OUT/curves.png draws each run's own
per-generation oracle figure (its run's set) over minutes.

From a trunk (--trunk DIR, `{seed}` in it standing for the seed, e.g. runs/trunk-s{seed}): each run's data directory
starts as a copy of that seed's trunk, a finished run's data directory (its shards, registry, curves), and the run
resumes it for --max-hours with the arm's settings. So a change meant for late training (a learning rate, a replay
window) is measured from where a long run already is, without paying for the first hours once per run; both arms of
a seed continue the same trunk. The run's table figures (generations, minutes, promotions, self-play share,
anchor) count the continued generations only; the curves keep the trunk's. The arms must keep the trunk's network
shape.

--set-file PATH scores the runs on a saved set instead (e.g. a run's strong self-play positions labelled by `bench
oracle --from-shards`), written to OUT/ablation-on-STEM.json: with --no-run, the same runs scored on a second set.

Head to head (--match-games N, the way for games without an oracle set, Go): for each arm after the first and
each seed, that arm's best model plays the baseline arm's best model of the same seed a paired match of N games
(the gate's openings, colours swapped; the game's match search at --sims simulations); the seeds' games are pooled
into one score with the gate's pair-level interval (shared.stats.evaluate_pairs).
"""
from __future__ import annotations

import json
import re
import shlex
import signal
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np

DONE_FILE = "ABLATION_DONE"
_ARM_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,31}$")


class AblationError(ValueError):
    """A bad ablation request (arm syntax, settings, an output directory of another ablation); says how to fix it."""


@dataclass(frozen=True)
class Arm:
    """One arm: a name (letters, digits, '_') and its `--set` items, e.g. ("pipeline.overlap_selfplay=true",)."""

    name: str
    settings: tuple[str, ...] = ()


@dataclass(frozen=True)
class Plan:
    """What an ablation runs: the game, the budget of each run, the seeds, the arms and the common settings."""

    game: str
    out: Path
    max_hours: float | None       # None: only scoring (--no-run)
    seeds: tuple[int, ...]
    arms: tuple[Arm, ...]
    common: tuple[str, ...] = ()
    workers: int | None = None
    trunk: str | None = None      # a data directory, "{seed}" standing for the seed

    def trunk_dir(self, seed: int) -> Path | None:
        """The data directory the runs of `seed` continue (None without a trunk)."""
        return None if self.trunk is None else Path(self.trunk.replace("{seed}", str(seed))).resolve()

    def run_dir(self, arm: Arm, seed: int) -> Path:
        """OUT/ARM-sSEED: the data directory of one run."""
        return self.out / f"{arm.name}-s{seed}"

    def settings(self, arm: Arm, seed: int) -> list[str]:
        """The run's --set items: the seed, the common settings, then the arm's (later ones win)."""
        return [f"pipeline.seed={seed}", *self.common, *arm.settings]

    def command(self, arm: Arm, seed: int) -> list[str]:
        """The `zeroforge run` command line of one run."""
        cmd = [sys.executable, "-m", "cli", "run", "--game", self.game, "--max-hours", f"{self.max_hours:g}",
               "--data-dir", str(self.run_dir(arm, seed))]
        if self.workers is not None:
            cmd += ["--workers", str(self.workers)]
        for item in self.settings(arm, seed):
            cmd += ["--set", item]
        return cmd

    def runs(self) -> list[tuple[Arm, int]]:
        """(arm, seed) in running order: seed by seed, the arms in their order."""
        return [(arm, seed) for seed in self.seeds for arm in self.arms]


def parse_arm(text: str) -> Arm:
    """'NAME' or 'NAME: KEY=VALUE KEY=VALUE ...' (shell-style quoting inside) -> Arm; AblationError when malformed."""
    name, colon, rest = text.partition(":")
    name = name.strip()
    if not _ARM_NAME.match(name):
        raise AblationError(f"--arm {text!r}: the name {name!r} must be 1-32 letters, digits or '_', starting with "
                            "a letter, e.g. --arm \"cont: pipeline.overlap_selfplay=true\"")
    try:
        items = tuple(shlex.split(rest)) if colon else ()
    except ValueError as exc:
        raise AblationError(f"--arm {text!r}: {exc}") from None
    return Arm(name, items)


def check_plan(plan: Plan) -> None:
    """Validate every run's config now (hours before it would start), the arm names and, when running, that the
    finished runs in OUT are of this plan's settings; AblationError naming the arm or run and the problem."""
    from shared.config import ConfigError, PipelineConfig, load_config, parse_overrides

    names = [arm.name for arm in plan.arms]
    if len(set(names)) != len(names) or not names:
        raise AblationError(f"give each --arm once, with distinct names (got {names})")
    if not plan.seeds or len(set(plan.seeds)) != len(plan.seeds):
        raise AblationError(f"--seeds needs distinct seeds, e.g. 0,1 (got {list(plan.seeds)})")
    for arm in plan.arms:
        try:
            load_config(PipelineConfig, plan.game, env=None,
                        overrides=parse_overrides(plan.settings(arm, plan.seeds[0])))
        except ConfigError as exc:
            raise AblationError(f"arm {arm.name}: {exc}") from None
    if plan.max_hours is not None and plan.trunk is not None:
        check_trunks(plan)
    for arm, seed in plan.runs() if plan.max_hours is not None else ():
        done = read_done(plan.run_dir(arm, seed))
        trunk = plan.trunk_dir(seed)
        wanted = (plan.settings(arm, seed), plan.max_hours, plan.workers, None if trunk is None else str(trunk))
        if done is not None and (done.settings, done.max_hours, done.workers, done.trunk) != wanted:
            raise AblationError(
                f"{plan.run_dir(arm, seed)} holds a finished run with settings {done.settings}, --max-hours "
                f"{done.max_hours:g}, --workers {done.workers}, trunk {done.trunk}; this ablation asks for "
                f"{wanted[0]}, {wanted[1]:g}, {wanted[2]}, {wanted[3]}: use another --out, or remove that directory")


def check_trunks(plan: Plan) -> None:
    """Each seed's trunk is a data directory holding a best model of the plan's game, and no run is using it; with
    several seeds the trunk names the seed. AblationError saying which and how to fix it."""
    from services.redis_server import RedisUnavailableError, ping_url, recorded_url
    from shared.layout import DataLayout, redis_url_file
    from shared.registry import ModelRegistry, RegistryError

    if len(plan.seeds) > 1 and "{seed}" not in plan.trunk:
        raise AblationError(f"--trunk {plan.trunk}: with several seeds each needs its own trunk; put {{seed}} in the "
                            "path, e.g. --trunk runs/trunk-s{seed} (a run of that pipeline seed)")
    for seed in plan.seeds:
        trunk = plan.trunk_dir(seed)
        layout = DataLayout(trunk, plan.game)
        try:
            best = ModelRegistry(layout.registry_dir).best() if layout.registry_dir.is_dir() else None
        except RegistryError as exc:
            raise AblationError(f"trunk {trunk}: {exc}") from None
        if best is None:
            raise AblationError(f"trunk {trunk} holds no trained {plan.game} model; make it with `zeroforge run "
                                f"--game {plan.game} --data-dir {trunk} --set pipeline.seed={seed} --max-hours H`")
        url = recorded_url(redis_url_file(trunk))
        if url is not None:
            try:
                ping_url(url, timeout=1.0)
            except RedisUnavailableError:
                continue            # a run killed outright left its record: nothing runs there
            raise AblationError(f"trunk {trunk} is in use by a running `zeroforge run`; let it finish first")


# ----- running ---------------------------------------------------------------------------------------------------
@dataclass
class RunRecord:
    """What ABLATION_DONE holds for a finished run."""

    arm: str
    seed: int
    settings: list[str]
    max_hours: float
    workers: int | None
    command: list[str]
    returncode: int
    minutes: float
    finished: str
    trunk: str | None = None          # the data directory the run continued
    trunk_generations: int = 0        # how many of its generations came with that copy


def read_done(run_dir: Path) -> RunRecord | None:
    """The run's ABLATION_DONE record, or None when it has none (not run, or not finished)."""
    path = run_dir / DONE_FILE
    if not path.exists():
        return None
    return RunRecord(**json.loads(path.read_text(encoding="utf-8")))


def _move_aside(run_dir: Path, say: Callable[[str], None]) -> None:
    target = run_dir.with_name(f"{run_dir.name}.partial-{time.strftime('%Y%m%dT%H%M%S')}")
    run_dir.rename(target)
    say(f"{run_dir.name}: an unfinished run is there; moved it to {target.name} and starting again "
        "(a resumed run would get a new budget)")


def run_one(plan: Plan, arm: Arm, seed: int, say: Callable[[str], None]) -> RunRecord:
    """Run (arm, seed) to its end unless ABLATION_DONE says it ran; its output goes to OUT/ARM-sSEED.log.

    KeyboardInterrupt (Ctrl-C) lets the run stop as `zeroforge run` does on Ctrl-C, then propagates; AblationError
    when the run fails. check_plan has made sure a finished run there is of the same settings."""
    run_dir = plan.run_dir(arm, seed)
    settings = plan.settings(arm, seed)
    done = read_done(run_dir)
    if done is not None:
        say(f"{run_dir.name}: finished before ({done.minutes:.1f} min), not run again")
        return done
    if run_dir.exists():
        _move_aside(run_dir, say)
    trunk = plan.trunk_dir(seed)
    trunk_generations = 0 if trunk is None else copy_trunk(plan, trunk, run_dir, say)
    command = plan.command(arm, seed)
    say(f"{run_dir.name}: running zeroforge {shlex.join(command[3:])}   (log: {run_dir.name}.log)")
    started = time.monotonic()
    with open(plan.out / f"{run_dir.name}.log", "w", encoding="utf-8") as log:
        child = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        try:
            returncode = child.wait()
        except KeyboardInterrupt:
            # The terminal's Ctrl-C reached the run too (one process group); give it time to stop cleanly.
            try:
                child.wait(timeout=120)
            except subprocess.TimeoutExpired:
                child.send_signal(signal.SIGTERM)
                child.wait()
            raise
    minutes = (time.monotonic() - started) / 60
    if returncode != 0:
        raise AblationError(f"{run_dir.name}: zeroforge run exited with {returncode} after {minutes:.1f} min; "
                            f"see {plan.out / (run_dir.name + '.log')}")
    record = RunRecord(arm.name, seed, settings, plan.max_hours, plan.workers, command, returncode, round(minutes, 2),
                       time.strftime("%Y-%m-%dT%H:%M:%S%z"), None if trunk is None else str(trunk), trunk_generations)
    (run_dir / DONE_FILE).write_text(json.dumps(asdict(record), indent=2) + "\n", encoding="utf-8")
    say(f"{run_dir.name}: finished in {minutes:.1f} min")
    return record


def copy_trunk(plan: Plan, trunk: Path, run_dir: Path, say: Callable[[str], None]) -> int:
    """Copy the trunk's data directory to `run_dir` (which must not exist), without its ablation record and its
    record of a private Redis; returns how many generations its metrics record."""
    import shutil

    from shared.curves.metrics import read_metrics
    from shared.layout import DataLayout, redis_url_file

    staging = run_dir.with_name(f"{run_dir.name}.copying")
    shutil.rmtree(staging, ignore_errors=True)
    shutil.copytree(trunk, staging, symlinks=True,
                    ignore=shutil.ignore_patterns(DONE_FILE, redis_url_file(trunk).name))
    staging.rename(run_dir)           # a stop during the copy leaves no half-copied run directory
    generations = len(read_metrics(DataLayout(run_dir, plan.game).metrics_path))
    say(f"{run_dir.name}: continues trunk {trunk} ({generations} generations)")
    return generations


# ----- scoring ---------------------------------------------------------------------------------------------------
@dataclass
class RunFigures:
    """One run's figures: from its metrics records and, with an oracle set, its best model's hits [N] bool."""

    arm: str
    seed: int
    best: str
    generations: int
    minutes: float
    promoted: int
    selfplay_share: float | None
    last_anchor: float | None
    curve: list[dict[str, float | None]] = field(default_factory=list)
    hits: dict[str, np.ndarray] = field(default_factory=dict)
    best_path: str = ""           # the best model's file


def run_figures(plan: Plan, arm: Arm, seed: int) -> RunFigures | None:
    """The figures of (arm, seed) from its data directory (None when it has no best model yet)."""
    from shared.curves.metrics import WORKER_ROLES, read_metrics
    from shared.layout import DataLayout
    from shared.registry import ModelRegistry

    layout = DataLayout(plan.run_dir(arm, seed), plan.game)
    best = ModelRegistry(layout.registry_dir).best() if layout.registry_dir.exists() else None
    if best is None:
        return None
    records = read_metrics(layout.metrics_path)
    done = read_done(plan.run_dir(arm, seed))
    own = records[done.trunk_generations:] if done is not None else records    # not the trunk's generations
    seconds = [r.generation_seconds or 0.0 for r in records]
    workers = [(r.worker_selfplay_s, sum(getattr(r, f"worker_{role}_s") or 0.0 for role in WORKER_ROLES))
               for r in own if r.worker_selfplay_s is not None]
    total_worker = sum(total for _, total in workers)
    anchors = [r.anchor_score for r in own if r.anchor_score is not None]
    elapsed = np.cumsum(seconds) / 60 if seconds else np.zeros(0)
    curve = [{"generation": r.generation, "minutes": round(float(m), 2), "raw": r.oracle_raw,
              "search": r.oracle_search} for r, m in zip(records, elapsed)]
    return RunFigures(arm.name, seed, best.version, len(own),
                      round(float(sum(r.generation_seconds or 0.0 for r in own)) / 60, 1), sum(r.promoted for r in own),
                      sum(s for s, _ in workers) / total_worker if total_worker else None,
                      anchors[-1] if anchors else None, curve, best_path=str(best.path))


def ablation_oracle_set(plan: Plan, positions: int, seed: int, say: Callable[[str], None],
                        set_file: Path | None = None):
    """The oracle set all runs are scored on: the saved set at `set_file` when given (e.g. strong self-play
    positions labelled by `bench oracle --from-shards`), else OUT/oracle-POSITIONS-sSEED.npz, built on first use;
    None when the game's family has no exact labels. AblationError when set_file is missing or holds no set of
    the plan's game."""
    from cli.bench.oracle import OracleBenchError, oracle_set_for
    from shared.games import family_of, make_game

    game = make_game(plan.game)
    if set_file is not None:
        if not set_file.is_file():
            raise AblationError(f"--set-file {set_file}: no such file; save a set there first, e.g. `zeroforge bench "
                                f"oracle --game {plan.game} --model best --from-shards SHARDS --set-file {set_file}`")
        try:
            return oracle_set_for(game, positions, seed, set_file, say)
        except OracleBenchError as exc:
            raise AblationError(str(exc)) from None
    if family_of(game).oracle_set is None or positions == 0:
        return None
    return oracle_set_for(game, positions, seed, plan.out / f"oracle-{positions}-s{seed}.npz", say)


def results_path(plan: Plan, set_file: Path | None) -> Path:
    """Where the scores go: OUT/ablation.json on the ablation's own set, OUT/ablation-on-STEM.json on a --set-file
    (so scoring the same runs on another set keeps the first set's figures)."""
    return plan.out / ("ablation.json" if set_file is None else f"ablation-on-{set_file.stem}.json")


def score_hits(plan: Plan, figures: RunFigures, oracle, simulations: int) -> None:
    """Fill figures.hits with the best model's oracle hits ({"raw", "search", ...} -> [N] bool)."""
    from shared.config import PipelineConfig, load_config
    from shared.games import make_game
    from shared.players.analysis import load_network_evaluator
    from shared.players.oracle import oracle_hits

    game = make_game(plan.game)
    search = load_config(PipelineConfig, plan.game, env=None).gatekeeper().match_search_config(simulations)
    evaluate = load_network_evaluator(Path(figures.best_path), game)
    figures.hits = oracle_hits(game, evaluate, oracle, search, seed=0)


def arm_summary(runs: list[RunFigures], arms: list[str], resamples: int = 4000) -> dict[str, Any]:
    """Per arm and figure: mean hit rate with its bootstrap interval over positions (each position's hit averaged
    over the arm's runs); for each arm after the first, its paired difference from the first arm."""
    from shared.stats import bootstrap_mean

    figures = sorted({name for run in runs for name in run.hits})
    out: dict[str, Any] = {"arms": {}, "differences": {}}
    per_position: dict[str, dict[str, np.ndarray]] = {}
    for arm in arms:
        mine = [run for run in runs if run.arm == arm and run.hits]
        if not mine:
            continue
        per_position[arm] = {name: np.mean([run.hits[name] for run in mine], axis=0) for name in figures}
        out["arms"][arm] = {"runs": len(mine), **{name: bootstrap_mean(values, resamples=resamples)
                                                  for name, values in per_position[arm].items()}}
    base = arms[0]
    for arm in arms[1:]:
        if base in per_position and arm in per_position:
            out["differences"][f"{arm} - {base}"] = {
                name: bootstrap_mean(per_position[arm][name] - per_position[base][name], resamples=resamples)
                for name in figures}
    return out


def head_to_head(plan: Plan, runs: list[RunFigures], games: int, simulations: int,
                 say: Callable[[str], None]) -> dict[str, Any]:
    """Per arm after the first: its best models against the baseline's, seed by seed (module docstring) ->
    {"ARM - BASE": {"games", "seeds", "score", "ci_low", "ci_high", "elo", "per_seed": {seed: score}}}."""
    from shared.config import PipelineConfig, load_config
    from shared.games import make_game
    from shared.players.match import paired_game_scores
    from shared.stats import evaluate_pairs

    game = make_game(plan.game)
    config = load_config(PipelineConfig, plan.game, env=None)
    search = config.gatekeeper().match_search_config(simulations)

    by_key = {(run.arm, run.seed): run for run in runs}
    base = plan.arms[0].name
    out: dict[str, Any] = {}
    for arm in plan.arms[1:]:
        pooled, per_seed = [], {}
        for seed in plan.seeds:
            mine, theirs = by_key.get((arm.name, seed)), by_key.get((base, seed))
            if mine is None or theirs is None:
                continue
            say(f"head to head, seed {seed}: {arm.name} ({mine.best}) against {base} ({theirs.best}), {games} games")
            scores = paired_game_scores(game, mine.best_path, theirs.best_path, games=games, search=search,
                                        jobs=config.gate.jobs, seed=seed, opening_seed=config.gate.opening_seed)
            per_seed[seed] = round(float(np.mean(scores)), 4)
            pooled.append(scores)
        if pooled:
            stats = evaluate_pairs(np.concatenate(pooled))
            out[f"{arm.name} - {base}"] = {"games": stats.games, "seeds": sorted(per_seed), "score": stats.score,
                                           "ci_low": stats.ci_low, "ci_high": stats.ci_high, "elo": stats.elo,
                                           "per_seed": per_seed}
    return out


def _pct(triple: tuple[float, float, float], signed: bool = False) -> str:
    mean, low, high = (100 * v for v in triple)
    if signed:
        return f"{mean:+.1f} [{low:+.1f}, {high:+.1f}]"
    return f"{mean:.1f}% [{low:.1f}, {high:.1f}]"


def format_report(plan: Plan, runs: list[RunFigures], summary: dict[str, Any] | None, positions: int,
                  simulations: int, matches: dict[str, Any] | None = None, set_name: str = "") -> str:
    """The printed report: the runs' table, then (with an oracle set of `positions` positions, `set_name` after
    the count, e.g. " (own-400.npz)") the arms' rates and differences, then the head-to-head matches (with
    --match-games)."""
    from cli.render import text_table

    budget = "as run" if plan.max_hours is None else f"{plan.max_hours:g} h per run"
    lines = [f"ablation of {plan.game}: arms {', '.join(a.name for a in plan.arms)}; seeds "
             f"{', '.join(map(str, plan.seeds))}; budget {budget}", ""]
    rows = []
    for run in runs:
        last = run.curve[-1] if run.curve else {}
        rows.append([f"{run.arm}-s{run.seed}", run.generations, f"{run.minutes:.1f}", run.promoted, run.best,
                     "-" if run.selfplay_share is None else f"{100 * run.selfplay_share:.0f}%",
                     "-" if last.get("raw") is None else f"{100 * last['raw']:.1f}%",
                     "-" if run.last_anchor is None else f"{run.last_anchor:.3f}"])
    lines.append(text_table(["run", "gens", "minutes", "promoted", "best", "self-play share",
                             "own-set raw (last gen)", "anchor (last)"], rows))
    if summary and summary["arms"]:
        names = [n for n in ("raw", "search", "raw_optimal", "search_optimal")
                 if any(n in arm for arm in summary["arms"].values())]
        labels = {"raw": "raw policy", "search": f"{simulations} simulations", "raw_optimal": "raw optimal",
                  "search_optimal": f"{simulations} sims optimal"}
        rows = [[arm, figures["runs"], *[_pct(figures[n]) for n in names]] for arm, figures in summary["arms"].items()]
        rows += [[label, "", *[_pct(diff[n], signed=True) for n in names]]
                 for label, diff in summary["differences"].items()]
        lines += ["", f"on one oracle set of {positions} positions{set_name} (outcome kept; 95% bootstrap intervals "
                  "over positions, each arm's runs pooled; differences paired by position, in points):",
                  text_table(["arm", "runs", *[labels[n] for n in names]], rows)]
    if matches:
        rows = [[pair, m["games"], f"{m['score']:.3f} [{m['ci_low']:.3f}, {m['ci_high']:.3f}]", f"{m['elo']:+.0f}",
                 ", ".join(f"s{seed} {score:.3f}" for seed, score in m["per_seed"].items())]
                for pair, m in matches.items()]
        lines += ["", f"head to head (best models of the same seed, paired openings, {simulations} simulations; "
                  "score of the first arm named, 95% pair-level interval):",
                  text_table(["match", "games", "score", "Elo", "per seed"], rows)]
    return "\n".join(lines)


def plot_curves(runs: list[RunFigures], path: Path) -> Path | None:
    """OUT/curves.png: each run's own oracle figures (raw policy, search) per generation over minutes; None when no
    run has them."""
    from flows.plotting import new_figure, save_png

    if not any(point.get("raw") is not None for run in runs for point in run.curve):
        return None
    fig, axes = new_figure(1, 2, 11, 4)
    arms = sorted({run.arm for run in runs})
    colours = {arm: f"C{i}" for i, arm in enumerate(arms)}
    for ax, key, title in ((axes[0][0], "raw", "raw policy keeps the outcome"),
                           (axes[0][1], "search", "small search keeps the outcome")):
        for run in runs:
            points = [(p["minutes"], p[key]) for p in run.curve if p.get(key) is not None]
            if points:
                x, y = zip(*points)
                ax.plot(x, y, marker="o", color=colours[run.arm], linestyle=("-", "--", ":", "-.")[run.seed % 4],
                        label=f"{run.arm} seed {run.seed}")
        ax.set_title(title)
        ax.set_xlabel("minutes")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    return save_png(fig, path)


def write_json(path: Path, plan: Plan, runs: list[RunFigures], summary: dict[str, Any] | None,
               positions: int, oracle_seed: int, simulations: int, matches: dict[str, Any] | None = None,
               set_file: Path | None = None) -> None:
    """OUT/ablation.json (results_path): the plan, the oracle set (built with `positions` and `oracle_seed`, or
    loaded from `set_file`), each run's figures (its per-position hits as 0/1 lists) and the summary."""
    from shared.atomic import atomic_output

    payload = {
        "game": plan.game, "max_hours": plan.max_hours, "seeds": list(plan.seeds), "common": list(plan.common),
        "arms": {arm.name: list(arm.settings) for arm in plan.arms},
        "oracle": ({"positions": positions, "seed": oracle_seed} if set_file is None else {"set_file": str(set_file)})
        | {"simulations": simulations},
        "runs": [{**{k: v for k, v in asdict(run).items() if k != "hits"},
                  "hits": {name: values.astype(int).tolist() for name, values in run.hits.items()}} for run in runs],
        "summary": summary,
        "head_to_head": matches or {},
    }
    with atomic_output(path) as handle:
        handle.write((json.dumps(payload, indent=1) + "\n").encode())


def score(plan: Plan, positions: int, oracle_seed: int, simulations: int, say: Callable[[str], None],
          match_games: int = 0, set_file: Path | None = None
          ) -> tuple[list[RunFigures], dict[str, Any] | None, dict[str, Any], str]:
    """Score every run of the plan that has a best model, on the ablation's oracle set or the saved one at
    `set_file` (ablation_oracle_set): (runs, arm summary or None without an oracle set, head-to-head results ({}
    without match_games), report)."""
    runs = [f for arm, seed in plan.runs() if (f := run_figures(plan, arm, seed)) is not None]
    if not runs:
        raise AblationError(f"no run under {plan.out} has a model yet; run the ablation first (without --no-run)")
    unfinished = [f"{r.arm}-s{r.seed}" for r in runs if read_done(plan.out / f"{r.arm}-s{r.seed}") is None]
    if unfinished:
        say(f"note: scoring runs without {DONE_FILE} (unfinished, or run outside this command): "
            f"{', '.join(unfinished)}")
    oracle = ablation_oracle_set(plan, positions, oracle_seed, say, set_file)
    summary = None
    if oracle is not None:
        for run in runs:
            score_hits(plan, run, oracle, simulations)
        summary = arm_summary(runs, [arm.name for arm in plan.arms])
    matches = head_to_head(plan, runs, match_games, simulations, say) if match_games else {}
    where = "" if set_file is None else f" ({set_file.name})"
    return runs, summary, matches, format_report(plan, runs, summary, len(oracle) if oracle is not None else 0,
                                                 simulations, matches, where)

