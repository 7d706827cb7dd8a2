"""GNU Go as a yardstick player for Go ("gnugo:LEVEL"), played over GTP.

    with GnuGoPlayer(make_game("go-9x9"), level=1) as player:
        result = play_match(game, player, other, openings)

Each GNU Go process is started as `gnugo --mode gtp --level L --chinese-rules --positional-superko
--capture-all-dead --komi K --boardsize N` (komi and size from the game), so it plays under zeroforge's Go
rules: area scoring, positional superko, and every dead stone captured before it passes (with area scoring
and no dead-stone agreement, dead stones left on the board count as alive).

How the player learns each game's moves. The arena hands a player a batch of states from many games and no
move lists, and a Go state carries only the last 7 boards. The player keeps a *record* per game it is playing:
the zeroforge state its GTP board is in (after its own move) and the GTP `play` commands that rebuild that
board from an empty one. A requested state s is matched to a record

  - whose state is s itself (asked again), or
  - whose state, after s's last move (the state's F_LAST field), is exactly s (the whole state row compared,
    superko keys included): the usual case, the opponent replied to our move; that move is sent with `play`.

A state no record matches starts a new record. Its moves are rebuilt exactly from the history boards when the
game is at most 8 plies old and started from the empty board (the arena's openings are 2 plies), checked by
replaying them with zeroforge's rules; otherwise the stones of the board are placed one by one (a legal board
can always be set up that way: no placement captures or is suicide), which loses only the superko history: if
GNU Go then answers a move that zeroforge's rules refuse, it is taken back and the player passes.

Processes are pooled (one per game of the current call, at most `max_processes`): a record not loaded in any
process is replayed into a free one (`clear_board` + its commands). A process that dies is restarted and its
record replayed, once per command. Every read from a process has a deadline. `reset()` and `close()` stop every
process; the player is also a context manager, and a finaliser stops the processes of a player that is garbage
collected or alive at interpreter exit.

GNU Go's `resign` answer is played as a pass (the Player protocol has no resignation).
"""
from __future__ import annotations

import os
import select
import shutil
import subprocess
import time
import weakref
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from shared.games.base import F_LAST, F_PLAYER, F_PLY, GameError
from shared.games.go.rules import HISTORY, Go

MIN_LEVEL, MAX_LEVEL = 0, 10
#: Where Debian and Ubuntu install the binary (often not on PATH).
DEBIAN_GNUGO = Path("/usr/games/gnugo")
INSTALL_HINT = "install it with `apt-get install gnugo` (Debian and Ubuntu put it in /usr/games)"
#: Seconds allowed for a process to start and answer its first command, and for any command but genmove.
COMMAND_TIMEOUT = 20.0
#: Seconds allowed for one genmove (level 10 on 19x19 takes a few seconds on a slow core).
DEFAULT_MOVE_TIMEOUT = 120.0
#: GNU Go processes one player keeps at most (a few MB of memory each).
DEFAULT_MAX_PROCESSES = 128
#: Records (games) kept at most per process allowed; older unloaded ones are forgotten.
RECORDS_PER_PROCESS = 4
#: Seconds a process gets to quit after `quit` before it is killed.
QUIT_GRACE = 2.0


class GnuGoError(OSError):
    """GNU Go is missing, failed to start, died twice on one command, timed out or answered nonsense.

    An OSError because the failure is about an external program (the commands report OSErrors as one line)."""


class GnuGoCrashed(GnuGoError):
    """The process ended (end of its output or a broken pipe); the player restarts it."""


class GtpRefused(Exception):
    """The engine answered `? message` (kept in `args[0]`)."""


def find_gnugo(executable: str | os.PathLike | None = None) -> str:
    """The GNU Go binary: `executable` when given, else `gnugo` on PATH, else /usr/games/gnugo; GnuGoError
    saying how to install it when there is none."""
    if executable is not None:
        path = shutil.which(str(executable))
        if path is None:
            raise GnuGoError(f"GNU Go executable {str(executable)!r} not found or not executable; {INSTALL_HINT}")
        return path
    path = shutil.which("gnugo")
    if path is not None:
        return path
    if DEBIAN_GNUGO.is_file() and os.access(DEBIAN_GNUGO, os.X_OK):
        return str(DEBIAN_GNUGO)
    raise GnuGoError(f"GNU Go is not installed (no `gnugo` on PATH or in /usr/games); {INSTALL_HINT}")


def gnugo_command(executable: str, level: int, size: int, komi: float) -> list[str]:
    """The argv of one GNU Go GTP process playing zeroforge's Go rules (see the module docstring)."""
    return [executable, "--mode", "gtp", "--level", str(level), "--chinese-rules", "--positional-superko",
            "--capture-all-dead", "--komi", f"{komi:g}", "--boardsize", str(size)]


class GtpProcess:
    """A GTP engine subprocess: commands are written to its stdin, answers read from its stdout with deadlines.

    `command` sends one command and returns the answer's text (GtpRefused for `? ...`); `send` and `receive`
    split that, so many processes can think at once. GnuGoCrashed when the process has ended, GnuGoError when an
    answer does not come in time (the process is then killed)."""

    def __init__(self, argv: list[str], *, timeout: float = COMMAND_TIMEOUT) -> None:
        self.argv = list(argv)
        try:
            self._proc = subprocess.Popen(self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                          stderr=subprocess.DEVNULL, bufsize=0)
        except OSError as exc:
            raise GnuGoError(f"cannot start {self.argv[0]}: {exc}") from None
        self._buffer = b""
        self._pending = 0
        try:
            self.command("protocol_version", timeout)
        except (GnuGoError, GtpRefused) as exc:
            self.close()
            raise GnuGoError(f"{self.argv[0]} did not start as a GTP engine: {exc}") from None

    @property
    def alive(self) -> bool:
        return self._proc.poll() is None

    @property
    def pid(self) -> int:
        return self._proc.pid

    def send(self, command: str) -> None:
        """Write one command line (no id); its answer is read later by `receive`."""
        try:
            self._proc.stdin.write(command.encode("ascii") + b"\n")
        except (BrokenPipeError, ConnectionResetError, ValueError):    # ValueError: stdin already closed
            raise GnuGoCrashed(f"{self.argv[0]} (pid {self._proc.pid}) has stopped") from None
        self._pending += 1

    def receive(self, timeout: float) -> str:
        """The answer to the oldest command sent and not yet received: its text after '= ' (GtpRefused for '?')."""
        if self._pending <= 0:
            raise GnuGoError("no GTP command is waiting for an answer")
        deadline = time.monotonic() + timeout
        while b"\n\n" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                self.kill()
                raise GnuGoError(f"{self.argv[0]} (pid {self._proc.pid}) did not answer within {timeout:g} s; "
                                 "it was stopped")
            ready, _, _ = select.select([self._proc.stdout], [], [], left)
            if not ready:
                continue
            chunk = os.read(self._proc.stdout.fileno(), 65536)
            if not chunk:
                self.kill()
                raise GnuGoCrashed(f"{self.argv[0]} (pid {self._proc.pid}) has stopped")
            self._buffer += chunk.replace(b"\r", b"")
        answer, self._buffer = self._buffer.split(b"\n\n", 1)
        self._pending -= 1
        text = answer.decode("utf-8", "replace").lstrip("\n")
        if text[:1] not in ("=", "?"):
            self.kill()
            raise GnuGoError(f"{self.argv[0]} answered {text[:60]!r}, which is not a GTP answer")
        body = text[1:].lstrip("0123456789")                     # no ids are sent, but tolerate them
        body = body[1:] if body[:1] == " " else body
        if text[0] == "?":
            raise GtpRefused(body.strip())
        return body

    def command(self, command: str, timeout: float = COMMAND_TIMEOUT) -> str:
        """Send one command and wait for its answer (see `receive`)."""
        self.send(command)
        return self.receive(timeout)

    def kill(self) -> None:
        """Stop the process at once and reap it."""
        if self._proc.poll() is None:
            self._proc.kill()
        self._finish()

    def close(self) -> None:
        """Ask the engine to quit; kill it when it does not within QUIT_GRACE seconds."""
        if self._proc.poll() is None:
            try:
                self._proc.stdin.write(b"quit\n")
                self._proc.stdin.flush()
                self._proc.wait(QUIT_GRACE)
            except (OSError, ValueError, subprocess.TimeoutExpired):
                self._proc.kill()
        self._finish()

    def _finish(self) -> None:
        try:
            self._proc.wait(QUIT_GRACE)
        except subprocess.TimeoutExpired:     # pragma: no cover - a killed process is reaped at once
            pass
        for stream in (self._proc.stdin, self._proc.stdout):
            try:
                stream.close()
            except OSError:
                pass
        self._pending = 0


@dataclass(eq=False)
class _Record:
    """One game as its GTP board holds it: the zeroforge state [S] int16 and the plays rebuilding it."""

    state: np.ndarray
    commands: list[str]
    used: int = 0


@dataclass(eq=False)
class _Engine:
    """One pooled process and the record whose board it holds (None: free)."""

    process: GtpProcess
    record: _Record | None = None
    used: int = 0
    loaded: int = 0                    # how many of record.commands the process has played


def _stop_all(engines: list[_Engine]) -> None:
    """Stop every process of a player (its finaliser and `close`)."""
    while engines:
        engines.pop().process.close()


class GnuGoPlayer:
    """GNU Go at level 0..10 as a batched Player (see the module docstring for how games are tracked)."""

    def __init__(self, game: Go, level: int, *, seed: int = 0, executable: str | os.PathLike | None = None,
                 move_timeout: float = DEFAULT_MOVE_TIMEOUT, max_processes: int = DEFAULT_MAX_PROCESSES,
                 name: str | None = None) -> None:
        if not isinstance(game, Go):
            raise GameError(f"GNU Go plays only Go (go-9x9, go-NxN), not {getattr(game, 'name', game)!r}")
        if isinstance(level, bool) or not isinstance(level, (int, np.integer)) or not MIN_LEVEL <= level <= MAX_LEVEL:
            raise GameError(f"GNU Go level must be an integer from {MIN_LEVEL} to {MAX_LEVEL}, got {level!r}")
        if max_processes < 1 or not move_timeout > 0:
            raise ValueError("max_processes must be >= 1 and move_timeout > 0")
        self.game, self.level, self.seed = game, int(level), int(seed)
        self.name = name or f"gnugo:{self.level}"
        self.move_timeout, self.max_processes = float(move_timeout), int(max_processes)
        self.executable = find_gnugo(executable)
        self.argv = gnugo_command(self.executable, self.level, game.height, game.komi)
        self._engines: list[_Engine] = []
        self._index: dict[tuple[int, bytes], list[_Record]] = {}
        self._tick = 0
        self._finalizer = weakref.finalize(self, _stop_all, self._engines)

    # ----- Player protocol -------------------------------------------------------------------------------
    def select_actions(self, states: np.ndarray) -> np.ndarray:
        """states [B, S] int16, all non-terminal Go positions -> GNU Go's moves [B] int64 (N*N = pass)."""
        states = np.asarray(states, dtype=np.int16).reshape(-1, self.game.state_size)
        if states.shape[0] and self.game.is_terminal(states).any():
            raise GameError("GNU Go was asked to move in a finished game")
        actions = np.empty(states.shape[0], np.int64)
        try:
            for start in range(0, states.shape[0], self.max_processes):
                chunk = states[start: start + self.max_processes]
                actions[start: start + self.max_processes] = self._select_chunk(chunk)
        except BaseException:
            self.reset()              # a failed batch leaves no process behind and no half-updated game
            raise
        return actions

    def reset(self) -> None:
        """Stop every process and forget every game (called at the start of a match)."""
        _stop_all(self._engines)
        self._index.clear()

    def close(self) -> None:
        """Stop every process (the player can still be used: processes start again when needed)."""
        self.reset()

    def __enter__(self) -> "GnuGoPlayer":
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    @property
    def process_ids(self) -> list[int]:
        """Pids of the running GNU Go processes (for tests and diagnostics)."""
        return [engine.process.pid for engine in self._engines if engine.process.alive]

    # ----- one batch ---------------------------------------------------------------------------------------
    def _select_chunk(self, states: np.ndarray) -> np.ndarray:
        """Moves for at most max_processes states, each on its own process, genmoves sent to all at once."""
        self._tick += 1
        claimed: set[int] = set()
        engines: list[_Engine] = []
        for state in states:
            record, opponent_move = self._find_record(state, claimed)
            if record is None:
                record = _Record(state.copy(), self._rebuild_commands(state))
            else:
                self._unindex(record)
                if opponent_move is not None:
                    record.commands.append(opponent_move)
                record.state = state.copy()
            record.used = self._tick
            claimed.add(id(record))
            engines.append(self._load(record))
        colours = ["black" if int(s[self.game.num_cells + F_PLAYER]) == 1 else "white" for s in states]
        answers = self._genmoves(engines, colours)
        actions = np.empty(states.shape[0], np.int64)
        legal = self.game.legal_mask(states)
        for row, (engine, colour, answer) in enumerate(zip(engines, colours, answers)):
            actions[row] = self._accept(engine, colour, answer, legal[row])
        after = self.game.step(states, actions)
        finished = self.game.is_terminal(after)
        for engine, state, done in zip(engines, after, finished):
            record = engine.record
            record.state = state.copy()
            if done:                                     # the game is over: nothing more will be asked
                engine.record = None
            else:
                self._index.setdefault(self._key(state), []).append(record)
        self._forget_old_records()
        return actions

    def _genmoves(self, engines: list[_Engine], colours: list[str]) -> list[str]:
        """Send every genmove, then collect the answers (the processes think in parallel)."""
        sent = []
        for engine, colour in zip(engines, colours):
            try:
                engine.process.send(f"genmove {colour}")
                sent.append(True)
            except GnuGoCrashed:
                sent.append(False)
        answers = []
        for engine, colour, ok in zip(engines, colours, sent):
            try:
                if not ok:
                    raise GnuGoCrashed("not sent")
                answers.append(engine.process.receive(self.move_timeout))
            except GnuGoCrashed:
                answers.append(self._run(engine, f"genmove {colour}", self.move_timeout))
            except GtpRefused as exc:
                raise GnuGoError(f"GNU Go refused genmove {colour}: {exc}") from None
        return answers

    def _accept(self, engine: _Engine, colour: str, answer: str, legal: np.ndarray) -> int:
        """GNU Go's answer -> a legal action, recorded in the engine's record (see the module docstring).

        `resign` leaves GNU Go's board unchanged and is played as a pass; a move zeroforge's rules refuse (only
        possible after a set-up without the superko history) is taken back with `undo` and replaced by a pass."""
        text = answer.strip()
        if text.lower() == "resign":
            action = self.game.pass_action
            self._run(engine, f"play {colour} pass")
        else:
            try:
                action = self.game.parse_action(text)
            except GameError:
                raise GnuGoError(f"GNU Go answered genmove with {text!r}, which is not a move") from None
            if not legal[action]:
                try:
                    engine.process.command("undo")
                except GnuGoCrashed:
                    self._restart(engine)                 # the replayed board is the one before the genmove
                except GtpRefused as exc:
                    raise GnuGoError(f"GNU Go refused to take back its move {text}: {exc}") from None
                action = self.game.pass_action
                self._run(engine, f"play {colour} pass")
        engine.record.commands.append(f"play {colour} {self.game.action_to_str(action)}")
        engine.loaded = len(engine.record.commands)
        return int(action)

    # ----- records -----------------------------------------------------------------------------------------
    def _key(self, state: np.ndarray) -> tuple[int, bytes]:
        return int(state[self.game.num_cells + F_PLY]), state[: self.game.num_cells].tobytes()

    def _unindex(self, record: _Record) -> None:
        key = self._key(record.state)
        bucket = self._index.get(key, [])
        if record in bucket:
            bucket.remove(record)
        if not bucket:
            self._index.pop(key, None)

    def _find_record(self, state: np.ndarray, claimed: set[int]) -> tuple[_Record | None, str | None]:
        """(record, play command of the opponent's move or None) for the record `state` continues; (None, None)."""
        nn = self.game.num_cells
        ply = int(state[nn + F_PLY])
        for record in self._index.get(self._key(state), []):
            if id(record) not in claimed and np.array_equal(record.state, state):
                return record, None
        last = int(state[nn + F_LAST])
        if ply < 1 or not 0 <= last < self.game.num_actions:
            return None, None
        before = state[self.game.hist_offset: self.game.hist_offset + nn]        # the board before the last move
        for record in self._index.get((ply - 1, before.tobytes()), []):
            if id(record) in claimed or not self.game.legal_mask(record.state[None])[0, last]:
                continue
            if np.array_equal(self.game.step(record.state[None], np.array([last]))[0], state):
                colour = "white" if int(state[nn + F_PLAYER]) == 1 else "black"
                return record, f"play {colour} {self.game.action_to_str(last)}"
        return None, None

    def _forget_old_records(self) -> None:
        """Keep at most RECORDS_PER_PROCESS * max_processes records: drop the least recently used unloaded ones."""
        records = [r for bucket in self._index.values() for r in bucket]
        excess = len(records) - RECORDS_PER_PROCESS * self.max_processes
        if excess <= 0:
            return
        loaded = {id(e.record) for e in self._engines if e.record is not None}
        for record in sorted((r for r in records if id(r) not in loaded), key=lambda r: r.used)[:excess]:
            self._unindex(record)

    def _rebuild_commands(self, state: np.ndarray) -> list[str]:
        """GTP plays that rebuild `state`'s board from an empty one: its moves when they can be recovered
        exactly, else its stones one by one (see the module docstring)."""
        nn = self.game.num_cells
        moves = self._moves_from_history(state)
        if moves is not None:
            return [f"play {'black' if colour == 1 else 'white'} {self.game.action_to_str(a)}" for colour, a in moves]
        cells = state[:nn]
        return [f"play {'black' if cells[c] == 1 else 'white'} {self.game.action_to_str(c)}"
                for c in np.flatnonzero(cells).tolist()]

    def _moves_from_history(self, state: np.ndarray) -> list[tuple[int, int]] | None:
        """[(colour, action)] of every move of a game at most HISTORY + 1 plies old that started on the empty
        board, recovered from the history boards and checked by replaying them; None when that is not possible."""
        game, nn = self.game, self.game.num_cells
        ply = int(state[nn + F_PLY])
        if ply > HISTORY + 1:
            return None
        history = state[game.hist_offset: game.keys_offset].reshape(HISTORY, nn)
        boards = [np.zeros(nn, np.int16)] + [history[ply - 1 - p] for p in range(1, ply)] + [state[:nn]]
        to_move = int(state[nn + F_PLAYER])
        moves = []
        for p in range(ply):
            colour = to_move * (-1) ** (ply - p)
            added = np.flatnonzero((boards[p] == 0) & (boards[p + 1] == colour))
            if added.size == 1:
                moves.append((colour, int(added[0])))
            elif added.size == 0 and np.array_equal(boards[p], boards[p + 1]):
                moves.append((colour, game.pass_action))
            else:
                return None
        first = moves[0][0] if moves else to_move
        replay = game.initial_states(1) if first == 1 else game.states_from_boards(np.zeros((1, nn)), -1)
        for _, action in moves:
            if not game.legal_mask(replay)[0, action]:
                return None
            replay = game.step(replay, np.array([action]))
        return moves if np.array_equal(replay[0], state) else None

    # ----- processes ---------------------------------------------------------------------------------------
    def _start(self) -> GtpProcess:
        process = GtpProcess(self.argv)
        try:
            process.command(f"set_random_seed {self.seed}")
        except GtpRefused:
            pass                                          # an engine without the command plays deterministically
        return process

    def _load(self, record: _Record) -> _Engine:
        """The engine holding `record`'s board: the one that has it, else a free, new or least recently used one
        (not used for another state of this call), brought up to date by replaying the record's plays."""
        engine = next((e for e in self._engines if e.record is record), None)
        if engine is None:
            busy = {id(e) for e in self._engines if e.used == self._tick}
            free = [e for e in self._engines if e.record is None and id(e) not in busy]
            if free:
                engine = free[0]
            elif len(self._engines) < self.max_processes:
                engine = _Engine(self._start())
                self._engines.append(engine)
            else:
                engine = min((e for e in self._engines if id(e) not in busy), key=lambda e: e.used)
            engine.record, engine.loaded = record, 0
            self._run(engine, "clear_board")
        engine.used = self._tick
        self._catch_up(engine)
        return engine

    def _catch_up(self, engine: _Engine) -> None:
        """Play the record's commands the process has not played yet (all sent, then all answers read)."""
        record = engine.record
        todo = record.commands[engine.loaded:]
        if not todo:
            return
        try:
            for command in todo:
                engine.process.send(command)
            for command in todo:
                try:
                    engine.process.receive(COMMAND_TIMEOUT)
                except GtpRefused as exc:
                    for _ in range(todo.index(command) + 1, len(todo)):   # drain the answers still coming
                        try:
                            engine.process.receive(COMMAND_TIMEOUT)
                        except GtpRefused:
                            pass
                    raise GnuGoError(f"GNU Go refused {command!r} while replaying a game: {exc}") from None
        except GnuGoCrashed:
            self._restart(engine)
            return
        engine.loaded = len(record.commands)

    def _restart(self, engine: _Engine) -> None:
        """Replace a stopped process and replay its record (GnuGoError if the new one fails too)."""
        engine.process.kill()
        engine.process = self._start()
        engine.loaded = 0
        try:
            engine.process.command("clear_board")
            for command in engine.record.commands if engine.record is not None else []:
                engine.process.command(command)
        except GtpRefused as exc:
            raise GnuGoError(f"GNU Go refused a move while replaying a game after a restart: {exc}") from None
        engine.loaded = len(engine.record.commands) if engine.record is not None else 0

    def _run(self, engine: _Engine, command: str, timeout: float = COMMAND_TIMEOUT) -> str:
        """One command on an engine; a stopped process is restarted (record replayed) and the command retried
        once. GtpRefused becomes GnuGoError: the player only sends commands that must succeed."""
        for attempt in (0, 1):
            try:
                return engine.process.command(command, timeout)
            except GnuGoCrashed:
                if attempt:
                    raise
                self._restart(engine)
            except GtpRefused as exc:
                raise GnuGoError(f"GNU Go refused {command!r}: {exc}") from None
        raise AssertionError("unreachable")
