"""`zeroforge gtp`: a Go engine speaking GTP version 2 on stdin/stdout (for GoGui, Sabaki, twogtp, CGOS clients).

    zeroforge gtp --game go-9x9                        # the registry's best go-9x9 model, else the shipped one
    zeroforge gtp --game go-9x9 --model 000012 --sims 800 --resign-threshold -0.9

Commands: protocol_version name version known_command list_commands quit boardsize clear_board komi play
genmove undo showboard final_score time_settings time_left. Answers are `=[id] result` or `?[id] message`,
each followed by an empty line; an id in front of a command is echoed. Input is cleaned as GTP 2 asks (control
characters dropped, tabs made spaces, `#` comments removed, empty lines ignored). A malformed or unknown command,
or an illegal move, gets a `?` answer; nothing a controller sends stops the engine but `quit` or the end of input.

Rules are zeroforge's Go rules (shared.games.go.rules: area scoring, positional superko); `komi` changes the komi of the
game (the network, trained with another komi, is kept). `boardsize` accepts only the model's size. `play` and
`genmove` accept either colour at any time: a move by the side not to move is played as if the other side had
been to move (no pass is inserted). After two passes (the game is over for zeroforge) play may go on, as
controllers do for a clean-up; only the move cap of 2*N*N moves is final.

genmove searches with the game's one search configuration (`cli.play_common.game_config(game)
.match_search_config(--sims)`) through shared.players.timed_analysis, without noise, and plays the most visited move.
It answers `pass` at once when the opponent has just passed and the position's area score already wins
(passing then ends the game with that score), and `resign` when the search value for the engine is below
--resign-threshold after the first quarter of the board's points worth of moves. `final_score` is the area
score of the current position (every stone counts as alive, as on CGOS), "B+3.5", "W+0.5" or "0".

Time: with `time_settings` (and `time_left`, which controllers send before each move), each genmove gets a share
of the remaining time (shared.players.gtp_time: the main time over the moves still expected, or the byo-yomi
period over its stones, less a safety margin) and searches in slices sized to fit it, at most --sims simulations
(shared.players.timed_analysis). Without time settings (or with `time_settings 0 1 0`, GTP's "no limit") every
move gets --sims simulations.
"""
from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Callable

import click
import numpy as np

from cli.play_common import (
    checked_device, config_file_option, data_dir_option, device_option, fail, game_and_registry, game_config,
    model_option, user_errors,
)
from shared.games import family_of, make_game_from_params
from shared.games.base import F_DONE, F_PASSES, F_PLAYER, F_PLY, F_WINNER, GameError
from shared.games.family import engine_protocol, speaks
from shared.players.analysis import DEFAULT_ANALYSIS_SIMULATIONS
from shared.players.gtp_time import GtpTimeControl
from shared.players.timed_analysis import TimedAnalysis, timed_analysis

#: The resignation threshold when none is given: the search value (engine's view, in [-1, 1]) below which it resigns.
DEFAULT_RESIGN_THRESHOLD = -0.95

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


class GtpFailure(Exception):
    """A command that fails: the message is the text of the `?` answer."""


def clean_line(line: str) -> str:
    """A raw input line cleaned as GTP 2 section 3.1 asks: control characters but tab and newline removed, tabs made
    spaces, everything from `#` on dropped, surrounding white space stripped ("" = a line to ignore)."""
    line = _CONTROL.sub("", line).replace("\t", " ")
    return line.split("#", 1)[0].strip()


def package_version() -> str:
    """zeroforge's installed version ("unknown" when the package metadata is missing)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("zeroforge")
    except PackageNotFoundError:
        return "unknown"


class GtpEngine:
    """The GTP command set over one Go game: `handle(line)` returns the whole answer text (None for lines GTP
    ignores) and never raises for anything a controller sends; `quit_requested` is set by `quit`."""

    def __init__(self, game, evaluate, *, search, resign_threshold: float = DEFAULT_RESIGN_THRESHOLD,
                 seed: int = 0, clock: Callable[[], float] = time.monotonic) -> None:
        if not speaks(game, "gtp"):
            raise GameError(f"zeroforge gtp plays Go only (go-9x9, go-NxN), not {game.name}")
        self.game, self.evaluate, self.search = game, evaluate, search
        self.resign_threshold, self.seed, self.clock = float(resign_threshold), int(seed), clock
        self.time = GtpTimeControl()
        self.quit_requested = False
        self.last_search: TimedAnalysis | None = None      # the timed analysis of the last genmove that searched
        self.states = [game.initial_states(1)[0]]          # [S] int16 each: the start and every position since
        self.handlers: dict[str, Callable[[list[str]], str]] = {
            "protocol_version": lambda args: "2",
            "name": lambda args: "zeroforge",
            "version": lambda args: package_version(),
            "known_command": self._known_command,
            "list_commands": lambda args: "\n".join(sorted(self.handlers)),
            "quit": self._quit,
            "boardsize": self._boardsize,
            "clear_board": self._clear_board,
            "komi": self._komi,
            "play": self._play,
            "genmove": self._genmove,
            "undo": self._undo,
            "showboard": lambda args: "\n" + self.game.render(self.state),
            "final_score": self._final_score,
            "time_settings": self._time_settings,
            "time_left": self._time_left,
        }

    @property
    def state(self) -> np.ndarray:
        """The current position [S] int16."""
        return self.states[-1]

    # ----- the protocol --------------------------------------------------------------------------------------
    def handle(self, line: str) -> str | None:
        """One input line -> the answer ("=id result\\n\\n" or "?id message\\n\\n"), None for an empty line."""
        line = clean_line(line)
        if not line:
            return None
        words = line.split()
        command_id = ""
        if words[0].isdigit():
            command_id = words.pop(0)
            if not words:
                return f"?{command_id} missing command\n\n"
        name, args = words[0], words[1:]
        handler = self.handlers.get(name)
        if handler is None:
            return f"?{command_id} unknown command\n\n"
        try:
            result = handler(args)
        except GtpFailure as exc:
            return f"?{command_id} {exc}\n\n"
        except Exception as exc:        # a controller must get an answer, whatever went wrong
            return f"?{command_id} internal error: {' '.join(str(exc).split()) or type(exc).__name__}\n\n"
        return f"={command_id} {result}\n\n"

    # ----- argument parsing ----------------------------------------------------------------------------------
    @staticmethod
    def _arguments(args: list[str], count: int, usage: str) -> list[str]:
        if len(args) != count:
            raise GtpFailure(f"syntax error: expected {usage}")
        return args

    @staticmethod
    def _colour(text: str) -> int:
        colour = {"b": 1, "black": 1, "w": -1, "white": -1}.get(text.lower())
        if colour is None:
            raise GtpFailure(f"syntax error: invalid color {text!r} (b, w, black or white)")
        return colour

    @staticmethod
    def _number(text: str, kind: type, what: str):
        try:
            value = kind(text)
        except ValueError:
            expected = "an integer" if kind is int else "a number"
            raise GtpFailure(f"syntax error: {what} {text!r} is not {expected}") from None
        if not np.isfinite(value) or value < 0:
            raise GtpFailure(f"syntax error: {what} must be a finite number >= 0")
        return value

    # ----- commands ------------------------------------------------------------------------------------------
    def _known_command(self, args: list[str]) -> str:
        (name,) = self._arguments(args, 1, "known_command COMMAND")
        return "true" if name in self.handlers else "false"

    def _quit(self, args: list[str]) -> str:
        self.quit_requested = True
        return ""

    def _boardsize(self, args: list[str]) -> str:
        (text,) = self._arguments(args, 1, "boardsize SIZE")
        size = self._number(text, int, "board size")
        if size != self.game.height:
            raise GtpFailure("unacceptable size")
        return self._clear_board([])

    def _clear_board(self, args: list[str]) -> str:
        self.states = [self.game.initial_states(1)[0]]
        return ""

    def _komi(self, args: list[str]) -> str:
        (text,) = self._arguments(args, 1, "komi KOMI")
        try:
            komi = float(text)
        except ValueError:
            raise GtpFailure(f"syntax error: komi {text!r} is not a number") from None
        try:
            self.game = make_game_from_params({**self.game.params(), "komi": komi})
        except GameError as exc:
            raise GtpFailure(f"syntax error: {exc}") from None
        return ""

    def _playable(self, colour: int) -> np.ndarray | None:
        """The current position made ready for a move of `colour` (see the module docstring), None after the
        move cap."""
        state = self.state.copy()
        nn = self.game.num_cells
        if state[nn + F_DONE]:
            if int(state[nn + F_PLY]) >= self.game.max_moves:
                return None
            state[nn + F_DONE] = state[nn + F_WINNER] = state[nn + F_PASSES] = 0     # a clean-up after two passes
        state[nn + F_PLAYER] = colour
        return state

    def _push(self, state: np.ndarray, action: int) -> None:
        self.states.append(self.game.step(state[None], np.array([action], np.int64))[0])

    def _play(self, args: list[str]) -> str:
        colour_text, vertex = self._arguments(args, 2, "play COLOR VERTEX")
        colour = self._colour(colour_text)
        try:
            action = self.game.parse_action(vertex)
        except GameError as exc:
            raise GtpFailure(f"syntax error: {' '.join(str(exc).split())}") from None
        state = self._playable(colour)
        if state is None or not self.game.legal_mask(state[None])[0, action]:
            raise GtpFailure("illegal move")
        self._push(state, action)
        return ""

    def _genmove(self, args: list[str]) -> str:
        (colour_text,) = self._arguments(args, 1, "genmove COLOR")
        colour = self._colour(colour_text)
        state = self._playable(colour)
        if state is None:
            return "pass"                                   # the move cap is reached: the game is over
        start = self.clock()
        try:
            move = self._choose(state, colour)
        finally:
            self.time.spend(colour, self.clock() - start)
        if move is None:
            return "resign"
        self._push(state, move)
        return self.game.action_to_str(move)

    def _choose(self, state: np.ndarray, colour: int) -> int | None:
        """The engine's move in `state` (None: resign)."""
        nn = self.game.num_cells
        if int(state[nn + F_PASSES]) == 1 and colour * float(self.game.area_score(state[None])[0]) > 0:
            return self.game.pass_action                   # passing ends the game, and wins it
        moves_left = int(np.count_nonzero(state[:nn] == 0)) // 2
        budget = self.time.budget(colour, moves_left)
        analysis = self._search(state, budget)
        if analysis.value < self.resign_threshold and int(state[nn + F_PLY]) >= nn // 4:
            return None
        return analysis.action

    def _search(self, state: np.ndarray, budget: float | None):
        """The search's analysis of `state`: --sims simulations, or as many as fit in `budget` seconds."""
        self.last_search = timed_analysis(self.game, self.evaluate, state[None], search=self.search, seconds=budget,
                                          seed=self.seed + len(self.states), clock=self.clock)
        return self.last_search.analyses[0]

    def _undo(self, args: list[str]) -> str:
        if len(self.states) <= 1:
            raise GtpFailure("cannot undo")
        self.states.pop()
        return ""

    def _final_score(self, args: list[str]) -> str:
        score_text = family_of(self.game).protocols["gtp"].helpers["score_text"]
        return score_text(float(self.game.area_score(self.state[None])[0]))

    def _time_settings(self, args: list[str]) -> str:
        main, byo_time, byo_stones = self._arguments(args, 3, "time_settings MAIN_TIME BYO_YOMI_TIME BYO_YOMI_STONES")
        self.time.settings(self._number(main, float, "main time"), self._number(byo_time, float, "byo-yomi time"),
                           self._number(byo_stones, int, "byo-yomi stones"))
        return ""

    def _time_left(self, args: list[str]) -> str:
        colour_text, seconds, stones = self._arguments(args, 3, "time_left COLOR TIME STONES")
        self.time.time_left(self._colour(colour_text), self._number(seconds, float, "time"),
                            self._number(stones, int, "stones"))
        return ""


def serve(engine: GtpEngine, stdin, stdout) -> None:
    """Answer every line of `stdin` on `stdout` (flushed after each answer) until `quit` or the end of input."""
    for line in iter(stdin.readline, ""):
        answer = engine.handle(line)
        if answer is None:
            continue
        stdout.write(answer)
        stdout.flush()
        if engine.quit_requested:
            return


@click.command("gtp")
@click.option("--game", "game_name", default=engine_protocol("gtp").default_game, show_default=True,
              help=engine_protocol("gtp").game_help)
@model_option
@click.option("--sims", type=click.IntRange(1, 100_000), default=DEFAULT_ANALYSIS_SIMULATIONS, show_default=True,
              help="Search simulations per move (fewer when the time settings leave less time).")
@click.option("--resign-threshold", type=click.FloatRange(-1.0, 1.0), default=DEFAULT_RESIGN_THRESHOLD,
              show_default=True, help="Resign when the search value for the engine is below this (-1: never).")
@config_file_option
@data_dir_option
@device_option
def gtp(game_name: str, model_text: str | None, sims: int, resign_threshold: float, config_file: Path | None,
        data_dir: Path | None, device: str) -> None:
    """Play Go as a GTP version 2 engine on stdin/stdout (for GoGui, Sabaki, twogtp or a CGOS client)."""
    from shared.players.analysis import choose_model_path, load_network_evaluator

    device = checked_device(device)
    with user_errors():
        game, registry_dir = game_and_registry(game_name, data_dir)
        if not speaks(game, "gtp"):
            fail(f"zeroforge gtp plays Go only; use --game go-9x9 (or go-NxN), not {game.name}")
        search = game_config(game.name, config_file).match_search_config(sims)
        path = choose_model_path(game, model_text, registry_dir)
        evaluate = load_network_evaluator(path, game, device)
        engine = GtpEngine(game, evaluate, search=search, resign_threshold=resign_threshold)
    click.echo(f"zeroforge gtp: {game.name}, model {path}, {sims} simulations per move", err=True)
    serve(engine, click.get_text_stream("stdin"), click.get_text_stream("stdout"))
