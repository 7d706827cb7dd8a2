"""`zeroforge pbrain`: a Gomoku engine that speaks the Gomocup (Piskvork) protocol on stdin/stdout.

    zeroforge pbrain --game gomoku-15 --model 000012 --sims 800

Commands (one per line, case-insensitive) and answers:

    START N           OK, or ERROR when the board is not the model's (a gomoku-15 model plays 15x15 only)
    RECTSTART W,H     OK for the model's board, else ERROR
    RESTART           OK (a new game on the same board)
    BEGIN             the brain plays first: "x,y"
    TURN x,y          the opponent played x,y: the brain answers "x,y"
    BOARD ... DONE    a whole position, lines "x,y,f" (f 1 = own stone, 2 = opponent's, 3 = a continuous-game
                      marker, ignored) in any order: the brain answers "x,y"
    PLAY x,y          the manager makes the brain play x,y: answered "x,y"
    TAKEBACK x,y      OK (the stone is removed)
    INFO key value    no answer; timeout_turn, timeout_match, time_left (ms) cap the search, see
                      shared.players.gomocup_time; max_memory, game_type, rule, folder are noted (rules other than
                      freestyle get a MESSAGE: zeroforge plays freestyle, five or more in a row wins)
    ABOUT             name="zeroforge", version="...", author="...", country="..."
    END               exit
    anything else     UNKNOWN ...; a request that cannot be carried out: ERROR message

Coordinates are 0-based, x = column from the left, y = row from the top. After each move the brain sends a
MESSAGE line with the simulations, time and value of its search. The board is shared.players.gomocup_board; the
search is shared.players.timed_analysis (slices sized to the time budget, at most --sims simulations) over the
game's one search configuration (`game_config(game).match_search_config(sims)`), no noise.
"""
from __future__ import annotations

import sys
from importlib.metadata import PackageNotFoundError, version as package_version
from pathlib import Path
from typing import Callable, Iterator, TextIO

import click
import numpy as np

from shared.games.family import engine_protocol, speaks
from shared.players.gomocup_board import OPPONENT, OWN, GomocupBoard, GomocupBoardError
from shared.players.gomocup_time import GomocupLimits
from shared.players.timed_analysis import TimedAnalysis

_FREESTYLE_RULES = (0, 2)          # freestyle, and freestyle as a continuous game


class BrainError(ValueError):
    """A request that cannot be carried out: malformed coordinates, no game started, a board of another size."""


def _coords(text: str, count: int = 2) -> list[int]:
    parts = [p.strip() for p in text.split(",")]
    if len(parts) != count or not all(p.lstrip("-").isdigit() for p in parts):
        raise BrainError(f"expected {count} comma-separated numbers, got {text.strip()!r}")
    return [int(p) for p in parts]


class Protocol:
    """One Gomocup session: reads commands from `lines`, writes answers with `say` (one line each).

    `think(state [S] int16, seconds or None) -> TimedAnalysis` is the brain's search of the position within the
    move's time budget (None: no time limit)."""

    def __init__(self, game, think: Callable[[np.ndarray, float | None], TimedAnalysis] | None,
                 say: Callable[[str], None], load_error: str | None):
        self.game, self.think, self.say, self.load_error = game, think, say, load_error
        self.board: GomocupBoard | None = None
        self.limits = GomocupLimits()

    # ----- helpers -------------------------------------------------------------------------------------------
    def _started(self) -> GomocupBoard:
        if self.board is None:
            raise BrainError("no game: send START first")
        return self.board

    def _move(self, board: GomocupBoard) -> None:
        state = board.state()
        budget = self.limits.move_budget(board.empty_cells)
        timed = self.think(state, budget)
        analysis = timed.analyses[0]
        x, y = board.place_action(analysis.action, OWN)
        self.say(f"{x},{y}")
        budget_text = "no time limit" if budget is None else f"budget {1000 * budget:.0f} ms"
        self.say(f"MESSAGE zeroforge: {timed.simulations} simulations in {1000 * timed.seconds:.0f} ms "
                 f"({budget_text}), value {analysis.value:+.2f}")

    def _size_error(self, width: int, height: int) -> str:
        g = self.game
        hint = ("start it with --game gomoku-20x20-5 and a model for that board (none is shipped)"
                if (width, height) == (20, 20) else f"start it with --game gomoku-{height}x{width}-5 and a model for that board")
        return (f"unsupported board {width}x{height}: this brain plays {g.name} ({g.width}x{g.height}) with a network "
                f"made for that board; {hint}")

    def _start(self, width: int, height: int) -> None:
        if self.load_error is not None:
            raise BrainError(self.load_error)
        if (width, height) != (self.game.width, self.game.height):
            raise BrainError(self._size_error(width, height))
        self.board = GomocupBoard(self.game)     # INFO may come before START: the limits sent are kept
        self.say("OK")

    def _info(self, rest: str) -> None:
        key, _, value = rest.strip().partition(" ")
        key, value = key.lower(), value.strip()
        try:
            self.limits.note(key, value)
        except ValueError:
            self.say(f"ERROR INFO {key} needs an integer, got {value!r}")
            return
        if key == "rule" and int(value) not in _FREESTYLE_RULES:
            self.say(f"MESSAGE zeroforge plays freestyle gomoku only (five or more in a row wins); rule {value} "
                     "is played as freestyle")

    def _board(self, lines: Iterator[str]) -> None:
        board = self._started()
        board.reset()
        problem = None
        for raw in lines:
            line = raw.strip()
            if line.upper() == "DONE":
                break
            if not line:
                continue
            try:
                x, y, field = _coords(line, 3)
                if field in (OWN, OPPONENT):
                    board.place(x, y, field)
                elif field != 3:
                    raise BrainError(f"field {field} in {line!r} is not 1 (own), 2 (opponent) or 3")
            except (BrainError, GomocupBoardError) as exc:
                problem = problem or str(exc)
        if problem is not None:
            raise BrainError(f"BOARD: {problem}")
        self._move(board)

    # ----- the loop ------------------------------------------------------------------------------------------
    def handle(self, line: str, lines: Iterator[str]) -> bool:
        """Answer one command; False after END."""
        command, _, rest = line.strip().partition(" ")
        command = command.upper()
        try:
            if command == "END":
                return False
            if command == "START":
                size = rest.strip()
                if not size.isdigit():
                    raise BrainError(f"START needs a board size, got {size!r}")
                self._start(int(size), int(size))
            elif command == "RECTSTART":
                width, height = _coords(rest)
                self._start(width, height)
            elif command == "RESTART":
                self._started().reset()
                self.say("OK")
            elif command == "BEGIN":
                board = self._started()
                if board.stones:
                    raise BrainError("BEGIN on a board that is not empty; send RESTART or BOARD")
                self._move(board)
            elif command == "TURN":
                board = self._started()
                x, y = _coords(rest)
                board.place(x, y, OPPONENT)
                self._move(board)
            elif command == "PLAY":
                board = self._started()
                x, y = _coords(rest)
                board.place(x, y, OWN)
                self.say(f"{x},{y}")
            elif command == "BOARD":
                self._board(lines)
            elif command == "TAKEBACK":
                x, y = _coords(rest)
                self._started().take_back(x, y)
                self.say("OK")
            elif command == "INFO":
                self._info(rest)
            elif command == "ABOUT":
                self.say(_about())
            elif command:
                self.say(f"UNKNOWN command {command}")
        except (BrainError, GomocupBoardError) as exc:
            self.say(f"ERROR {' '.join(str(exc).split())}")
        return True

    def run(self, stream: TextIO) -> None:
        lines = iter(stream.readline, "")
        for line in lines:
            if not self.handle(line, lines):
                return


def _about() -> str:
    try:
        ours = package_version("zeroforge")
    except PackageNotFoundError:
        ours = "dev"
    return f'name="zeroforge", version="{ours}", author="zeroforge", country="-", www="-"'


def _say(text: str) -> None:
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


@click.command("pbrain")
@click.option("--game", "game_name", default=engine_protocol("pbrain").default_game, show_default=True,
              help=engine_protocol("pbrain").game_help)
@click.option("--model", "model_text", default=None, metavar="MODEL",
              help="best, shipped, a registry version (e.g. 000012) or a model file "
                   "[default: the registry's best, else the shipped model].")
@click.option("--sims", type=click.IntRange(1, 1_000_000), default=800, show_default=True,
              help="Most simulations per move; the time limits sent with INFO cap the search below this.")
@click.option("--config", "config_file", type=click.Path(path_type=Path, dir_okay=False), default=None,
              help="TOML config whose [search] settings the brain uses [default: the game's defaults].")
@click.option("--data-dir", type=click.Path(path_type=Path, file_okay=False), default=None,
              help="Data root holding the registry (default: $ZEROFORGE_DATA_DIR, else ./zeroforge-data).")
@click.option("--device", default="cpu", show_default=True, help="Torch device: cpu, cuda or cuda:N.")
@click.option("--threads", type=click.IntRange(min=1), default=1, show_default=True,
              help="Torch threads on CPU (one keeps move times steady on a shared machine).")
def pbrain(game_name: str, model_text: str | None, sims: int, config_file: Path | None, data_dir: Path | None,
           device: str, threads: int) -> None:
    """Play Gomoku as a Gomocup (Piskvork) brain on stdin/stdout: START, BEGIN, TURN, BOARD, INFO, TAKEBACK,
    RESTART, ABOUT, END (freestyle rules; x,y coordinates from the top left, 0-based)."""
    from cli.play_common import checked_device, fail, game_and_registry, game_config, user_errors

    device = checked_device(device)
    with user_errors():
        game, registry_dir = game_and_registry(game_name, data_dir)
        if not speaks(game, "pbrain"):
            fail(f"pbrain plays Gomoku only; {game.name} is not a Gomoku board (try --game gomoku-15)")
        config = game_config(game.name, config_file)
    think, load_error = None, None
    try:
        from shared.network import configure_torch_threads

        configure_torch_threads(threads)
        think = _network_think(game, model_text, registry_dir, device, config.match_search_config(sims))
    except Exception as exc:  # noqa: BLE001 - any failure is reported through the protocol (ERROR on START)
        load_error = " ".join(str(exc).split())
        click.echo(f"error: {load_error}", err=True)
    Protocol(game, think, _say, load_error).run(sys.stdin)


def _network_think(game, model_text, registry_dir, device, search):
    """think(state [S] int16, seconds or None) -> TimedAnalysis: the timed analysis with the model's network and
    the SearchConfig `search` (its simulations are the node budget)."""
    from shared.players.analysis import choose_model, load_network_evaluator
    from shared.players.timed_analysis import timed_analysis, warm_up

    model = choose_model(game, model_text, registry_dir)
    if model.note:
        click.echo(f"note: {model.note}", err=True)
    evaluate = load_network_evaluator(model.path, game, device)

    def think(state: np.ndarray, seconds: float | None) -> TimedAnalysis:
        return timed_analysis(game, evaluate, state[None], search=search, seconds=seconds, top_k=1, pv_depth=1)

    warm_up(game, evaluate, search)         # the first searches are slow; not on the clock
    return think
