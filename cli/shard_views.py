"""One move of a stored game for `zeroforge shards show --index K --move M` and `--replay`: the board before
the move (the last move in [ ], as everywhere), the root visit distribution as a heat map (rich colour shading
plus percentages, so it also reads without colour; the PLAYED move is marked with *), the search value and z,
and the final position after the last move (M = moves + 1).

Move M (1-based) is played in the position after M-1 moves; the header says both, so "move 3" is never
printed next to "ply 2".
"""
from __future__ import annotations

import string
from typing import Any

import numpy as np
from rich.console import Group
from rich.text import Text

from cli.render import PRIOR_NOT_STORED, result_text
from shared.shards.reader import Shard
from shared.shards.schema import ShardError

_CELL_WIDTH = 5
_TOP_MOVES = 5


def _percent(p: float) -> str:
    if p <= 0.0:
        return "·"
    pct = 100.0 * p
    return f"{pct:.0f}" if pct >= 9.95 else f"{pct:.1f}"


def _heat_style(p: float, top: float) -> str:
    """Background from dark blue (few visits) to orange-red (the most visited move)."""
    if p <= 0.0 or top <= 0.0:
        return ""
    t = min(1.0, p / top)
    red, green, blue = int(40 + 200 * t), int(40 + 70 * t), int(90 - 70 * t)
    return f"bold {'black' if t > 0.6 else 'white'} on rgb({red},{green},{blue})"


def _axis_labels(game) -> tuple[list[str], list[str]] | None:
    """Column letters and row numbers from the game's notation (e.g. 'a'..'h' and '8'..'1'), None if it has none."""
    cols, rows = [], []
    for c in range(game.width):
        cols.append(game.action_to_str(c).rstrip(string.digits))
    for r in range(game.height):
        text = game.action_to_str(r * game.width)
        rows.append(text[len(text.rstrip(string.digits)):])
    return (cols, rows) if all(cols) and all(rows) else None


def _cell(label: str, style: str, played: bool) -> Text:
    return Text((f"*{label}" if played else label).center(_CELL_WIDTH), style=style)


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


def _top_moves(game, pi: np.ndarray, visit_count: int) -> list[dict[str, Any]]:
    """The most visited moves: move, visit share and the visit count it stands for (share x root visits)."""
    order = [int(a) for a in np.argsort(-pi, kind="stable")[:_TOP_MOVES] if pi[a] > 0]
    return [{"move": game.action_to_str(a), "visit_share": round(float(pi[a]), 4),
             "visits": int(round(float(pi[a]) * visit_count)), "prior": None} for a in order]


def _board(game, state: np.ndarray) -> str:
    """game.render without its status line (the header says who moves and how many moves were played)."""
    return "\n".join(game.render(state).splitlines()[:-1])


def _final_state(game, shard: Shard, game_index: int) -> np.ndarray:
    """The position after the last move of game `game_index`: [S] int16."""
    rows = shard.game_rows(game_index)
    last = rows.stop - 1
    return game.step(shard.states[last][None], np.array([int(shard.moves["action"][last])], np.int64))[0]


def _check_move(shard: Shard, game_index: int, move: int) -> tuple[slice, int]:
    rows = shard.game_rows(game_index)
    length = rows.stop - rows.start
    if not 1 <= move <= length + 1:
        raise ShardError(f"move {move} does not exist; game {game_index} has moves 1..{length} "
                         f"(and {length + 1} for the final position)")
    return rows, length


def move_json(game, shard: Shard, game_index: int, move: int) -> dict[str, Any]:
    """Move `move` of game `game_index` as JSON (board as text); `move` = length + 1 is the final position.
    moves_played: the plies played before it (the row's true ply: playout caps and random openings leave plies
    without rows)."""
    rows, length = _check_move(shard, game_index, move)
    winner = int(shard.games["winner"][game_index])
    if move == length + 1:
        final = _final_state(game, shard, game_index)
        return {"index": game_index, "move_number": move, "final": True,
                "moves_played": int(shard.game_info["plies"][game_index]),
                "board": _board(game, final), "winner": winner, "result": result_text(winner)}
    row = rows.start + move - 1
    state, pi, info = shard.states[row], shard.pi[row], shard.moves[row]
    played = int(info["action"])
    return {"index": game_index, "move_number": move, "final": False, "moves_played": int(info["move_number"]),
            "side": "X" if game.to_play(state[None])[0] == 1 else "O", "played": game.action_to_str(played),
            "search_value": round(float(info["root_value"]), 4), "z": round(float(shard.z[row]), 4),
            "root_visits": int(info["visit_count"]), "played_visit_share": round(float(pi[played]), 4),
            "top": _top_moves(game, pi, int(info["visit_count"])), "prior": None, "prior_note": PRIOR_NOT_STORED,
            "visit_share": {game.action_to_str(a): round(float(pi[a]), 4) for a in np.flatnonzero(pi > 0).tolist()},
            "board": _board(game, state), "result": result_text(winner)}


def move_view(game, shard: Shard, game_index: int, move: int) -> Group:
    """Move `move` (1-based, as numbered by the game listing) of game `game_index`: the board before the move
    and the root visit distribution as a heat map; move = length + 1 shows the final position."""
    data = move_json(game, shard, game_index, move)
    if data["final"]:
        header = (f"game {game_index}, final position after move {data['moves_played']}: {data['result']}")
        return Group(Text(header), Text(data["board"]))
    row = shard.game_rows(game_index).start + move - 1
    state, pi = shard.states[row], shard.pi[row]
    played = int(shard.moves["action"][row])
    header = (f"game {game_index}, move {move} ({data['moves_played']} moves played): {data['side']} to move, played "
              f"{data['played']}; search value {data['search_value']:+.3f}, z {data['z']:+.0f} (both for "
              f"{data['side']}); {data['root_visits']} root visits")
    parts: list[Any] = [Text(header), Text(data["board"]),
                        Text("root visit share (%), the played move marked *  ([ ] on the board = the last move):")]
    cells = game.height * game.width
    if game.num_actions in (cells, cells + 1):
        parts.append(_grid_heatmap(game, state, pi, played))
        if game.num_actions == cells + 1:
            parts.append(Text(f"pass: {100 * float(pi[cells]):.1f}%" + ("  *played" if played == cells else "")))
    elif game.num_actions == game.width:
        parts.append(_column_heatmap(game, pi, played))
    top = ", ".join(f"{t['move']} {100 * t['visit_share']:.1f}% (~{t['visits']} visits)" for t in data["top"])
    parts.append(Text(f"most visited (visit share, visits; prior -): {top}"))
    parts.append(Text(PRIOR_NOT_STORED))
    return Group(*parts)


def replay(game, shard: Shard, game_index: int, show, wait) -> None:
    """Show every move of game `game_index` and then the final position, calling `show(group)` for each and
    `wait()` between them (wait returns False to stop early)."""
    length = int(shard.games["length"][game_index])
    for move in range(1, length + 2):
        show(move_view(game, shard, game_index, move))
        if move <= length and not wait():
            return
