"""Terminal views of a shard for `zeroforge shards show`: summary, one game move by move, and one move's
root visit distribution as a heat map on the board (rich colour shading plus percentages, so it also
reads without colour; the played move is bracketed, Othello's pass share is printed separately).
"""
from __future__ import annotations

import string
from typing import Any, Sequence

import numpy as np
from rich.console import Group
from rich.text import Text

from shared.shards.reader import Shard
from shared.shards.schema import ShardError

_CELL_WIDTH = 5
_SUMMARY_GAMES = 50


def text_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """Plain aligned columns (numbers right-aligned), one header line: readable in any terminal and in logs."""
    cells = [[str(h) for h in headers]] + [["" if v is None else str(v) for v in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    numeric = [all(_looks_numeric(row[i]) for row in cells[1:]) and len(cells) > 1 for i in range(len(headers))]
    lines = []
    for row in cells:
        parts = [v.rjust(w) if num else v.ljust(w) for v, w, num in zip(row, widths, numeric)]
        lines.append("  ".join(parts).rstrip())
    return "\n".join(lines)


def _looks_numeric(text: str) -> bool:
    return text.replace(".", "", 1).replace("-", "", 1).replace("+", "", 1).isdigit() or text == ""


def result_text(winner: int) -> str:
    """+1 / -1 / 0 -> 'X wins' (first player) / 'O wins' (second player) / 'draw'."""
    return {1: "X wins", -1: "O wins", 0: "draw"}.get(int(winner), f"? ({winner})")


def shard_summary(shard: Shard) -> str:
    """Attributes, outcome counts and a table of games (first 50) with length and result."""
    lines = [f"shard {shard.path}"]
    lines += [f"  {key:<15} {value}" for key, value in shard.attrs.items()]
    winners = shard.game_results
    lines.append(
        f"results: X (first player) {int((winners == 1).sum())} wins, O {int((winners == -1).sum())} wins, "
        f"{int((winners == 0).sum())} draws; mean length {float(shard.games['length'].mean()):.1f}"
    )
    shown = shard.games[:_SUMMARY_GAMES]
    lines.append(text_table(["game", "length", "result"], [(int(g["game_id"]), int(g["length"]), result_text(g["winner"])) for g in shown]))
    if shard.num_games > len(shown):
        lines.append(f"... {shard.num_games - len(shown)} more games (see one with --game K)")
    return "\n".join(lines)


def replay_mismatch(game, shard: Shard, game_index: int) -> int | None:
    """Replay game `game_index` from the start with game.step; the first 0-based move whose stored state
    differs from the replayed one, or None when the whole game replays exactly."""
    states = shard.states[shard.game_rows(game_index)]
    current = game.initial_states(1)
    for ply, action in enumerate(shard.game_actions(game_index)):
        if not np.array_equal(current[0], states[ply]):
            return ply
        current = game.step(current, np.array([action]))
    return None


def game_listing(game, shard: Shard, game_index: int) -> str:
    """Game `game_index` move by move: number (1-based), side, move in the game's notation, root value
    (side to move), root visits, pi of the played move, and the best alternative by pi."""
    rows = shard.game_rows(game_index)
    moves, pi, states = shard.moves[rows], shard.pi[rows], shard.states[rows]
    to_move = game.to_play(states)
    table_rows = []
    for i, move in enumerate(moves):
        action = int(move["action"])
        top = int(np.argmax(pi[i]))
        table_rows.append((
            i + 1, "X" if to_move[i] == 1 else "O", game.action_to_str(action), f"{float(move['root_value']):+.3f}",
            int(move["visit_count"]), f"{100 * pi[i, action]:.1f}%", "" if top == action else f"{game.action_to_str(top)} {100 * pi[i, top]:.1f}%",
        ))
    winner = int(shard.games["winner"][game_index])
    mismatch = replay_mismatch(game, shard, game_index)
    check = "replays exactly" if mismatch is None else f"REPLAY MISMATCH at move {mismatch + 1} (stored state differs)"
    return "\n".join([
        f"game {game_index} of {shard.path.name}: {len(moves)} moves, {result_text(winner)} ({check})",
        "moves: " + game.moves_to_str(shard.game_actions(game_index)),
        "value = root search value for the side to move; pi = share of root visits",
        text_table(["#", "side", "move", "value", "visits", "pi", "top other"], table_rows),
    ])


def _percent(p: float) -> str:
    if p <= 0.0:
        return "·"
    pct = 100.0 * p
    return f"{pct:.0f}" if pct >= 9.95 else f"{pct:.1f}"


def _heat_style(p: float, top: float) -> str:
    """Background from dark blue (no visits) to orange-red (the most visited move)."""
    if p <= 0.0 or top <= 0.0:
        return ""
    t = min(1.0, p / top)
    red, green, blue = int(40 + 200 * t), int(40 + 70 * t), int(90 - 70 * t)
    return f"bold {'black' if t > 0.6 else 'white'} on rgb({red},{green},{blue})"


def _axis_labels(game) -> tuple[list[str], list[str]] | None:
    """Column letters and row numbers from the game's notation (e.g. 'a'..'h' and '8'..'1'), None if it has none."""
    cols, rows = [], []
    for c in range(game.width):
        text = game.action_to_str(c)
        cols.append(text.rstrip(string.digits))
    for r in range(game.height):
        text = game.action_to_str(r * game.width)
        rows.append(text[len(text.rstrip(string.digits)):])
    return (cols, rows) if all(cols) and all(rows) else None


def _cell(label: str, style: str, played: bool) -> Text:
    shown = f"[{label}]" if played else label
    return Text(shown.center(_CELL_WIDTH), style=style)


def _grid_heatmap(game, state: np.ndarray, pi: np.ndarray, played: int) -> Text:
    labels = _axis_labels(game)
    top = float(pi.max())
    out = Text()
    if labels:
        out.append("   " + "".join(c.center(_CELL_WIDTH) for c in labels[0]) + "\n")
    for r in range(game.height):
        out.append(f"{labels[1][r]:>2} " if labels else "   ")
        for c in range(game.width):
            a = r * game.width + c
            stone = int(state[a])
            if stone != 0:  # occupied: show the stone (X first player, O second), no visits possible
                out.append(_cell("X" if stone == 1 else "O", "dim", False))
            else:
                out.append(_cell(_percent(float(pi[a])), _heat_style(float(pi[a]), top), a == played))
        out.append("\n")
    return out


def _column_heatmap(game, pi: np.ndarray, played: int) -> Text:
    top = float(pi.max())
    out = Text("drop column:\n   ")
    for a in range(game.num_actions):
        out.append(game.action_to_str(a).center(_CELL_WIDTH))
    out.append("\n   ")
    for a in range(game.num_actions):
        out.append(_cell(_percent(float(pi[a])), _heat_style(float(pi[a]), top), a == played))
    out.append("\n")
    return out


def _top_moves(game, pi: np.ndarray, visit_count: int, count: int = 5) -> str:
    order = [int(a) for a in np.argsort(-pi, kind="stable")[:count] if pi[a] > 0]
    parts = [f"{game.action_to_str(a)} {100 * pi[a]:.1f}% (~{round(float(pi[a]) * visit_count)} visits)" for a in order]
    return "most visited: " + ", ".join(parts)


def move_view(game, shard: Shard, game_index: int, move: int) -> Group:
    """Move `move` (1-based, as numbered by game_listing) of game `game_index`: the board before the move
    (game.render) and the root visit distribution as a heat map; ShardError for a move out of range."""
    rows = shard.game_rows(game_index)
    length = rows.stop - rows.start
    if not 1 <= move <= length:
        raise ShardError(f"move {move} does not exist; game {game_index} has moves 1..{length}")
    row = rows.start + move - 1
    state, pi, info = shard.states[row], shard.pi[row], shard.moves[row]
    played = int(info["action"])
    side = "X" if game.to_play(state[None])[0] == 1 else "O"
    header = (f"game {game_index}, move {move}: {side} to move, played {game.action_to_str(played)}; root value "
              f"{float(info['root_value']):+.3f} (side to move), {int(info['visit_count'])} root visits")
    parts: list[Any] = [Text(header), Text(game.render(state)), Text("root visit share (%), played move in [ ]:")]
    cells = game.height * game.width
    if game.num_actions in (cells, cells + 1):
        parts.append(_grid_heatmap(game, state, pi, played))
        if game.num_actions == cells + 1:
            parts.append(Text(f"pass: {100 * float(pi[cells]):.1f}%" + ("  [played]" if played == cells else "")))
    elif game.num_actions == game.width:
        parts.append(_column_heatmap(game, pi, played))
    parts.append(Text(_top_moves(game, pi, int(info["visit_count"]))))
    return Group(*parts)
