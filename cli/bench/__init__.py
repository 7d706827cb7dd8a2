"""`zeroforge bench`: speed benchmarks, and a tactics check against a perfect solver.

    zeroforge bench selfplay --game connect4 --games 128 --sims 32 --moves 8 [--overlap both] [--json]
    zeroforge bench shared --game connect4 --games 64 --processes 2   (one network for N search processes)
    zeroforge bench tactics --game connect4 --sims 200 --positions 500  (solved outcomes kept: shared.players.tactics)
    zeroforge bench tactics --game othello --empties 10-16               (solved endgames)
    zeroforge bench oracle --game connect4 --model shipped --model best  (raw policy on exact labels, paired)
    zeroforge bench ablation --game connect4 --out DIR --max-hours 0.5 --seeds 0,1 --arm base --arm "b: KEY=VALUE"
                                                                         (same-budget runs, scored on exact labels)

The logic lives in cli.bench.selfplay; this module parses options and prints.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from cli.play_common import config_file_option, data_dir_option, device_option, game_option


@click.group()
def bench() -> None:
    """Speed benchmarks, and a tactics check against a perfect solver."""


@bench.command("selfplay")
@click.option("--game", "game_name", required=True, help="Game name, e.g. tictactoe, connect4, gomoku-15, othello.")
@click.option("--games", type=click.IntRange(1, 100_000), default=64, show_default=True,
              help="Games searched together (the batch B).")
@click.option("--sims", type=click.IntRange(1, 100_000), default=32, show_default=True, help="Simulations per move.")
@click.option("--moves", type=click.IntRange(1, 10_000), default=8, show_default=True,
              help="Moves played per game in the batched run.")
@click.option("--device", default="cpu", show_default=True, help="Torch device: cpu, cuda or cuda:N.")
@click.option("--leaves-per-step", type=click.IntRange(1, 64), default=1, show_default=True,
              help="Leaves selected per tree per network call (virtual loss).")
@click.option("--sequential-moves", type=click.IntRange(1, 10_000), default=None,
              help="Moves of the one-game sequential run [default: min(moves, 16)].")
@click.option("--blocks", type=click.IntRange(0, 40), default=None,
              help="Override the game's default residual blocks (the pipeline's size, shared/network/spec.py).")
@click.option("--channels", type=click.IntRange(1, 512), default=None, help="Override the default channel width.")
@click.option("--global-pool", is_flag=True, help="Global-pooling blocks in the network (game.global_pool).")
@click.option("--line-planes", is_flag=True,
              help="The two winning-cell input planes (game.line_planes; in-a-row games).")
@click.option("--threads", type=click.IntRange(1, 256), default=1, show_default=True,
              help="Torch threads on CPU (self-play workers use 1).")
@click.option("--precision", type=click.Choice(["auto", "fp32", "bf16"]), default="auto", show_default=True,
              help="Network precision (auto: bf16 on CUDA; on CPU bf16 only with native bf16 (AVX512-BF16/AMX) "
                   "for networks of 48+ channels at batches of 4+ positions).")
@click.option("--overlap", type=click.Choice(["off", "on", "both"]), default="off", show_default=True,
              help="Two game groups alternate between search and network (both: measure off and on in one run).")
@click.option("--cuda-graphs", is_flag=True, help="Replay captured CUDA graphs (CUDA only).")
@click.option("--compile", "compile_model", is_flag=True, help="torch.compile the network (slow start).")
@click.option("--forward-seconds", type=click.FloatRange(0.0, 600.0), default=1.5, show_default=True,
              help="Minimum timed duration of the forward-pass measurement.")
@click.option("--seed", type=click.IntRange(0, 2**31), default=0, show_default=True,
              help="Seed of the network's weights, the sampled positions and the self-play randomness.")
@click.option("--json", "as_json", is_flag=True, help="Also print the figures as one JSON object on the last line.")
def selfplay(game_name: str, games: int, sims: int, moves: int, device: str, leaves_per_step: int,
             sequential_moves: int | None, blocks: int | None, channels: int | None, global_pool: bool,
             line_planes: bool, threads: int, precision: str, overlap: str, cuda_graphs: bool, compile_model: bool,
             forward_seconds: float, seed: int, as_json: bool) -> None:
    """Measure network throughput, batched self-play speed and the speedup over one-game-at-a-time search."""
    from cli.bench.selfplay import BenchSettings, format_report, run_benchmark, with_spec
    from shared.games.base import GameError
    from shared.network.spec import NetworkError, default_network_spec

    if device != "cpu":
        from cli.play_common import checked_device

        device = checked_device(device)
    try:
        settings = BenchSettings(game=game_name, games=games, sims=sims, moves=moves, device=device,
                                 spec=default_network_spec(game_name), leaves_per_step=leaves_per_step,
                                 sequential_moves=sequential_moves, seed=seed, torch_threads=threads,
                                 forward_seconds=forward_seconds,
                                 precision=precision, overlap=overlap,
                                 cuda_graphs=cuda_graphs, compile_model=compile_model)
        settings = with_spec(settings, blocks, channels, global_pool, line_planes)
        result = run_benchmark(settings, log=lambda line: click.echo(line, err=True))
    except (NetworkError, GameError) as exc:  # bad settings, unknown game name
        raise click.UsageError(str(exc)) from None
    click.echo(format_report(result))
    if as_json:
        click.echo(json.dumps(result, sort_keys=True))


@bench.command("search")
@click.option("--game", "game_name", required=True, help="Game name, e.g. tictactoe, connect4, gomoku-15, othello.")
@click.option("--games", type=click.IntRange(1, 100_000), default=1024, show_default=True,
              help="Games searched together (the batch B).")
@click.option("--sims", type=click.IntRange(1, 100_000), default=32, show_default=True, help="Simulations per move.")
@click.option("--moves", type=click.IntRange(1, 1000), default=8, show_default=True, help="Moves played per game.")
@click.option("--leaves-per-step", type=click.IntRange(1, 64), default=1, show_default=True,
              help="Leaves selected per tree per evaluator call (virtual loss).")
@click.option("--no-solver", is_flag=True, help="Switch the search's proven-result solver off.")
@click.option("--seed", type=click.IntRange(0, 2**31), default=0, show_default=True,
              help="Seed of the table evaluator and the moves.")
@click.option("--cpu-time", is_flag=True,
              help="Time with this thread's CPU time instead of the wall clock (steadier on a loaded machine).")
@click.option("--repeat", "repeats", type=click.IntRange(1, 100), default=1, show_default=True,
              help="Play the same moves this many times and report the median run (single runs vary on shared "
                   "machines).")
@click.option("--phases", is_flag=True,
              help="Print the CPU time of each phase of a search step instead (select, leaf positions, evaluate + "
                   "expand, backup, ...; leaves per step 1).")
@click.option("--json", "as_json", is_flag=True, help="Print the figures as one JSON object.")
def search(game_name: str, games: int, sims: int, moves: int, leaves_per_step: int, no_solver: bool, seed: int,
           cpu_time: bool, repeats: int, phases: bool, as_json: bool) -> None:
    """Time the batched search alone (a table evaluator stands in for the network): simulations/s, ms/step."""
    from cli.bench.search import benchmark_search
    from cli.play_common import user_errors

    if phases:
        from cli.bench.search_phases import format_phases, phase_times

        with user_errors():
            times = phase_times(game_name, games=games, sims=sims, moves=moves, solver=not no_solver, seed=seed)
        click.echo(json.dumps(times) if as_json else format_phases(times))
        return
    with user_errors():
        report = benchmark_search(game_name, games=games, sims=sims, moves=moves, leaves_per_step=leaves_per_step,
                                  solver=not no_solver, seed=seed, cpu_time=cpu_time, repeats=repeats)
    if as_json:
        click.echo(json.dumps(report))
        return
    click.echo(f"{report['game']} B={report['games']} sims={report['sims']} solver={report['solver']}: "
               f"{report['simulations_per_s']:,.0f} simulations/s, {report['ms_per_step']:.2f} ms/step "
               f"({report['clock']} time) "
               f"(table evaluator {report['evaluator_ms_per_step']:.2f} ms/step; first-call compile "
               f"{report['compile_s']:.1f} s)")
    if repeats > 1:
        runs = report["runs_simulations_per_s"]
        click.echo(f"median of {repeats} runs; runs {min(runs):,.0f} to {max(runs):,.0f} simulations/s")


@bench.command("shared")
@click.option("--game", "game_name", required=True, help="Game name, e.g. connect4, gomoku-8x8-5.")
@click.option("--games", type=click.IntRange(1, 100_000), default=64, show_default=True,
              help="Games in all (split over the processes).")
@click.option("--sims", type=click.IntRange(1, 100_000), default=32, show_default=True, help="Simulations per move.")
@click.option("--moves", type=click.IntRange(1, 10_000), default=8, show_default=True, help="Moves per game (cap).")
@click.option("--processes", type=click.IntRange(1, 64), default=2, show_default=True, help="Search processes.")
@click.option("--blocks", type=click.IntRange(0, 40), default=None, help="Override the default residual blocks.")
@click.option("--channels", type=click.IntRange(1, 512), default=None, help="Override the default channel width.")
@click.option("--precision", type=click.Choice(["auto", "fp32", "bf16"]), default="fp32", show_default=True,
              help="Network precision of both modes.")
@click.option("--device", default="cpu", show_default=True,
              help="Torch device of the networks: cpu, cuda or cuda:N (the shared mode is then the GPU worker's).")
@click.option("--seed", type=click.IntRange(0, 2**31), default=0, show_default=True, help="Weights and game seeds.")
@click.option("--json", "as_json", is_flag=True, help="Also print the figures as one JSON object.")
def shared(game_name: str, games: int, sims: int, moves: int, processes: int, blocks: int | None,
           channels: int | None, precision: str, device: str, seed: int, as_json: bool) -> None:
    """N search processes sharing ONE network (inference server) vs N processes with a network copy each."""
    from cli.bench.shared import format_shared_report, run_shared_benchmark
    from cli.play_common import checked_device, user_errors
    from shared.network.spec import NetworkSpec, default_network_spec

    device = checked_device(device)
    with user_errors():
        base = default_network_spec(game_name)
        spec = NetworkSpec(blocks if blocks is not None else base.blocks,
                           channels if channels is not None else base.channels, base.value_hidden)
        report = run_shared_benchmark(game_name, games, sims, moves, processes, spec=spec, precision=precision,
                                      seed=seed, device=device)
    click.echo(format_shared_report(report))
    if as_json:
        click.echo(json.dumps(report, sort_keys=True))


def _network_models(game, model_texts: tuple[str, ...], registry_dir: Path, device: str) -> list[tuple[str, Any]]:
    """(label, evaluator) per --model (the registry's best, else the shipped model, when none is given); each
    resolution's note (e.g. best falling back to shipped) on stderr."""
    from shared.players.analysis import choose_model, load_network_evaluator

    models = []
    for text in model_texts or (None,):
        model = choose_model(game, text, registry_dir)
        if model.note:
            click.echo(f"note: {model.note}", err=True)
        models.append((model.label, load_network_evaluator(model.path, game, device)))
    return models


@bench.command("oracle")
@game_option
@click.option("--model", "model_texts", multiple=True, metavar="MODEL",
              help="best, shipped, a registry version (e.g. 000012) or a model file; repeat it to compare models "
                   "position by position, each with the first [default: the registry's best if there is one, else "
                   "the shipped model].")
@click.option("--positions", type=click.IntRange(1, 100_000), default=400, show_default=True,
              help="Labelled positions of the set (when it is built, not loaded from --set-file).")
@click.option("--seed", type=click.IntRange(0, 2**31), default=1000, show_default=True,
              help="Seed the set is drawn with (choose one no run trained with, so no run saw its openings).")
@click.option("--sims", type=click.IntRange(1, 100_000), default=16, show_default=True,
              help="Simulations of the small search scored next to the raw policy (the match search, no root "
                   "solver).")
@click.option("--set-file", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Oracle set file (.npz): scored on when it exists (a run's reports/oracle-set-N.npz, an "
                   "ablation's oracle-N-sS.npz), else built with --positions and --seed and saved there.")
@click.option("--from-shards", type=click.Path(path_type=Path), default=None, metavar="PATH",
              help="Build the set from the self-play positions of these shards (a run's shards directory, one "
                   "generation's, or a shard file), labelled as the game's own set is: how well the models know the "
                   "run's own games. Connect Four, Othello and tic-tac-toe.")
@click.option("--phase", default=None, metavar="NAME",
              help="Build a further set of the game's instead of the pipeline's: Othello's late-midgame (random "
                   "positions with 17-22 empty squares; about 25 minutes of one core for 400, so save it with "
                   "--set-file).")
@config_file_option
@data_dir_option
@device_option
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead of the tables.")
def oracle(game_name: str, model_texts: tuple[str, ...], positions: int, seed: int, sims: int,
           set_file: Path | None, from_shards: Path | None, phase: str | None, config_file: Path | None,
           data_dir: Path | None, device: str, as_json: bool) -> None:
    """Score models on one exact-label oracle set: how often each one's raw policy (no search) and its small
    search keep the solved outcome (and play an optimal move, where the labels have exact scores), 95% Wilson
    intervals, and each model after the first compared with the first position by position (paired, 95% bootstrap
    intervals). The labels: Connect Four's solver on positions from strong play, Othello's exact endgame solver,
    tic-tac-toe's minimax, Gomoku's win-in-1, must-block, VCF and VCF-defence positions. Go has none."""
    from cli.bench.oracle import OracleBenchError, format_oracle_report, oracle_set_for
    from cli.play_common import checked_device, fail, game_and_registry, game_config, user_errors
    from shared.players.oracle import compare_on_oracle

    device = checked_device(device)
    with user_errors():
        game, registry_dir = game_and_registry(game_name, data_dir)
        search = game_config(game.name, config_file).match_search_config(sims)
        models = _network_models(game, model_texts, registry_dir, device)
        try:
            oracle_set = oracle_set_for(game, positions, seed, set_file, lambda line: click.echo(line, err=True),
                                        from_shards, phase)
        except OracleBenchError as exc:
            fail(exc)
        report = compare_on_oracle(game, models, oracle_set, search, seed=seed)
    click.echo(json.dumps(report, sort_keys=True) if as_json else format_oracle_report(report))


@bench.command("tactics")
@game_option
@click.option("--model", "model_texts", multiple=True, metavar="MODEL",
              help="best, shipped, a registry version (e.g. 000012) or a model file; repeat it to compare models on "
                   "the same positions [default: the registry's best if there is one, else the shipped model].")
@click.option("--sims", type=click.IntRange(1, 100_000), default=200, show_default=True,
              help="Search simulations per position.")
@click.option("--positions", type=click.IntRange(1, 100_000), default=500, show_default=True,
              help="Positions to play: Connect Four and Othello, solver-labelled ones not lost for the side to move; "
                   "in-a-row games, this many of each kind (win in 1, must block; with --vcf: VCF, VCF defence).")
@click.option("--plies", default="6-30", show_default=True, metavar="LO-HI",
              help="Connect Four: random moves before a position, drawn uniformly from LO..HI.")
@click.option("--empties", default="10-16", show_default=True, metavar="LO-HI",
              help="Othello: empty squares of a position, drawn uniformly from LO..HI.")
@click.option("--max-nodes", type=click.IntRange(1, 10**10), default=5_000_000, show_default=True,
              help="Connect Four and Othello: solver node budget per position; a position over it is skipped (and "
                   "counted).")
@click.option("--vcf", is_flag=True,
              help="In-a-row games: VCF positions instead (the side to move wins by continuous fours within 4 "
                   "attacker moves, or must stop the opponent's), labelled by brute force over the rules.")
@click.option("--seed", type=click.IntRange(0, 2**31), default=0, show_default=True,
              help="Seed of the positions and of the search.")
@config_file_option
@data_dir_option
@device_option
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead of the text.")
def tactics(game_name: str, model_texts: tuple[str, ...], sims: int, positions: int, plies: str, empties: str,
            max_nodes: int, vcf: bool, seed: int, config_file: Path | None, data_dir: Path | None, device: str,
            as_json: bool) -> None:
    """How often a model's search keeps what a position offers, next to a random move on the same positions.

    Connect Four and Othello: the solved outcome (win stays win, draw stays draw) on random positions labelled by a
    perfect solver (Othello: endgames). In-a-row games (tictactoe, gomoku-*): win in 1 and must block, labelled by
    the rules; with --vcf, VCF attack and VCF defence, labelled by brute force. Where the game has a solver at the
    root of the players (Gomoku, Othello; Connect Four from 200 simulations), each model is measured with it and
    by its search alone."""
    from cli.bench.tactics import format_line_tactics, format_tactics, format_vcf_tactics
    from shared.players.tactics import line_tactics, solved_tactics, vcf_tactics
    from shared.games.inarow import InARowGame
    from cli.play_common import checked_device, fail, game_and_registry, game_config, user_errors
    from shared.games import family_of

    device = checked_device(device)
    with user_errors():
        game, registry_dir = game_and_registry(game_name, data_dir)
        solved = family_of(game).tactics_solver is not None
        by_empties = solved and family_of(game).tactics_span == "empties"
        if not solved and not isinstance(game, InARowGame):
            fail(f"--game {game.name}: bench tactics measures Connect Four and Othello (perfect solvers) and the "
                 "in-a-row games (tictactoe, gomoku-*: win in 1 and must block)")
        if vcf and not isinstance(game, InARowGame):
            fail(f"--vcf: VCF positions are for in-a-row games (gomoku-*, tictactoe), not {game.name}")
        if by_empties:
            span = _span_option("--empties", empties, 1, game.num_cells - 4, "empty squares",
                                f"an {game.name} position has at most {game.num_cells - 4} empty squares")
        else:
            span = _span_option("--plies", plies, 0, 40, "ply counts", "a Connect Four game has at most 42 plies")
        search = game_config(game.name, config_file).match_search_config(sims)
        models = _network_models(game, model_texts, registry_dir, device)
        if solved:
            report = solved_tactics(game, models, search, positions=positions, seed=seed, span=span,
                                    max_nodes=max_nodes)
        elif vcf:
            report = vcf_tactics(game, models, search, positions=positions, seed=seed)
        else:
            report = line_tactics(game, models, search, positions=positions, seed=seed)
    text = (format_tactics(report) if solved else format_vcf_tactics(report) if vcf
            else format_line_tactics(report))
    click.echo(json.dumps(report, sort_keys=True) if as_json else text)


def _span_option(name: str, text: str, lowest: int, highest: int, what: str, why: str) -> tuple[int, int]:
    """An option's "LO-HI" text -> (LO, HI), or a usage error naming the option (lowest <= LO <= HI <= highest)."""
    from cli.play_common import fail

    try:
        low, high = (int(part) for part in text.split("-"))
    except ValueError:
        fail(f"{name} {text!r}: give two {what} as LO-HI, e.g. {lowest + 6}-{max(lowest + 6, highest - 10)}")
    if not lowest <= low <= high <= highest:
        fail(f"{name} {text!r}: need {lowest} <= LO <= HI <= {highest} ({why})")
    return low, high


@bench.command("ablation")
@click.option("--game", "game_name", required=True, help="Game name, e.g. connect4, gomoku-8x8-5, othello.")
@click.option("--out", type=click.Path(path_type=Path, file_okay=False), required=True,
              help="Directory of the ablation: one data directory per run (ARM-sSEED), their logs, the oracle set, "
                   "ablation.json and curves.png. Run the same command again to go on after a stop.")
@click.option("--arm", "arm_texts", multiple=True, required=True, metavar='"NAME[: KEY=VALUE ...]"',
              help="One arm: a name and its --set items, e.g. --arm base --arm \"cont: "
                   "pipeline.overlap_selfplay=true\" (repeatable; the first arm is the baseline).")
@click.option("--seeds", default="0,1", show_default=True, help="Pipeline seeds, one run per arm and seed.")
@click.option("--max-hours", type=click.FloatRange(0, 100_000, min_open=True), default=None,
              help="Wall-clock budget of each run (zeroforge run --max-hours); required unless --no-run.")
@click.option("--set", "common", multiple=True, metavar="SECTION.FIELD=VALUE",
              help="A setting of every run, before the arm's own (repeatable).")
@click.option("--workers", type=click.IntRange(0, 256), default=None,
              help="Local workers of each run (zeroforge run --workers; default: its own).")
@click.option("--trunk", default=None, metavar="DIR",
              help="Start each run as a copy of this finished run's data directory ({seed} in it stands for the "
                   "seed, e.g. runs/trunk-s{seed}) and continue it for --max-hours: changes for late training "
                   "measured without repaying the first hours.")
@click.option("--positions", type=click.IntRange(0, 100_000), default=400, show_default=True,
              help="Positions of the oracle set every run's best model is scored on (0: no oracle scoring).")
@click.option("--oracle-seed", type=click.IntRange(0, 2**31), default=1000, show_default=True,
              help="Seed of that set (other than the runs' seeds, so no run trained on its positions' openings).")
@click.option("--set-file", type=click.Path(path_type=Path, dir_okay=False), default=None,
              help="Score on this saved oracle set instead (e.g. strong self-play positions saved by `bench oracle "
                   "--from-shards`); written to OUT/ablation-on-STEM.json, so ablation.json keeps the first set's.")
@click.option("--sims", type=click.IntRange(1, 100_000), default=16, show_default=True,
              help="Simulations of the small search scored next to the raw policy.")
@click.option("--match-games", type=click.IntRange(0, 100_000), default=0, show_default=True,
              help="Also play each arm's best models against the baseline's of the same seed, this many paired "
                   "games per seed (even; the way to compare arms of Go, which has no oracle set).")
@click.option("--no-run", is_flag=True, help="Only score the runs already in --out (finished or not).")
@click.option("--json", "as_json", is_flag=True, help="Print ablation.json's summary as JSON instead of the tables.")
def ablation(game_name: str, out: Path, arm_texts: tuple[str, ...], seeds: str, max_hours: float | None,
             common: tuple[str, ...], workers: int | None, trunk: str | None, positions: int, oracle_seed: int,
             set_file: Path | None, sims: int, match_games: int, no_run: bool, as_json: bool) -> None:
    """Compare pipeline settings on the same budget: each arm x seed is one `zeroforge run`, one after the other,
    then every run's best model is scored on one exact-label oracle set, with intervals (cli/bench/ablation.py)."""
    from cli.bench.ablation import (AblationError, Plan, check_plan, parse_arm, plot_curves, results_path, run_one,
                                    score, write_json)
    from cli.play_common import fail

    def say(text: str) -> None:
        click.echo(text, err=as_json)

    try:
        seed_list = tuple(int(s) for s in seeds.split(",") if s.strip())
    except ValueError:
        fail(f"--seeds {seeds!r}: give integers separated by commas, e.g. 0,1")
    if max_hours is None and not no_run:
        fail("--max-hours is required to run the arms (each run's wall-clock budget); or pass --no-run to score")
    try:
        plan = Plan(game_name, out.resolve(), None if no_run else max_hours, seed_list,
                    tuple(parse_arm(t) for t in arm_texts), tuple(common), workers, trunk)
        check_plan(plan)
        plan.out.mkdir(parents=True, exist_ok=True)
        if not no_run:
            for arm, seed in plan.runs():
                run_one(plan, arm, seed, say)
        if match_games % 2:
            fail(f"--match-games {match_games}: give an even number (each opening is played twice, colours swapped)")
        runs, summary, matches, report = score(plan, positions, oracle_seed, sims, say, match_games, set_file)
    except AblationError as exc:
        fail(str(exc))
    except KeyboardInterrupt:
        fail("stopped; run the same command to go on (the interrupted run starts again from the beginning)")
    saved = results_path(plan, set_file)
    write_json(saved, plan, runs, summary, positions, oracle_seed, sims, matches, set_file)
    png = plot_curves(runs, plan.out / "curves.png")
    if as_json:
        click.echo(json.dumps({"summary": summary, "head_to_head": matches}, indent=1))
        return
    click.echo(report)
    click.echo(f"\nwritten: {saved}" + (f", {png}" if png else ""))
