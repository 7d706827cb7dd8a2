"""Plain-text views for the CLI: aligned tables, and a shard's summary and one game move by move (for
`zeroforge shards show`; the board and heat-map views of one move live in cli.shard_views).

Move numbers are 1-based: move M is played in the position after M-1 moves ("before move M").
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from shared.shards.reader import Shard

#: Games listed by the shard summary unless --all is given.
SUMMARY_GAMES = 50
#: What `shards show` says instead of a prior: format v1 stores the root visit distribution, not the prior.
PRIOR_NOT_STORED = ("prior: not stored in this shard (the shard format keeps the root visit shares pi, the root value "
                    "and the visit count per move, not the network's prior)")


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


def shard_summary(shard: Shard, all_games: bool = False) -> str:
    """Attributes, outcome counts and a table of games (the first SUMMARY_GAMES unless `all_games`)."""
    lines = [f"shard {shard.path}"]
    lines += [f"  {key:<15} {value}" for key, value in shard.attrs.items()]
    winners = shard.game_results
    lines.append(
        f"results: X (first player) {int((winners == 1).sum())} wins, O {int((winners == -1).sum())} wins, "
        f"{int((winners == 0).sum())} draws; mean length {float(shard.games['length'].mean()):.1f}"
    )
    shown = shard.games if all_games else shard.games[:SUMMARY_GAMES]
    info = shard.game_info
    capped = bool((shard.games["length"] < info["plies"]).any())
    headers = ["index", "moves", "result"] + (["plies"] if capped else [])
    rows = [[i, int(g["length"]), _result_with_end(g["winner"], info[i])] + ([int(info["plies"][i])] if capped else [])
            for i, g in enumerate(shown)]
    if capped:
        lines.append("playout caps or random openings: moves = the recorded (full-search) positions, plies = the "
                     "moves played")
    lines.append(text_table(headers, rows))
    if shard.num_games > len(shown):
        lines.append(f"... {shard.num_games - len(shown)} more games: --all lists them; --index K shows game K")
    return "\n".join(lines)


def summary_json(shard: Shard) -> dict[str, Any]:
    """The summary as JSON: path, attributes, result counts and every game (index, moves, winner, result)."""
    winners = shard.game_results
    return {"path": str(shard.path), "attrs": shard.attrs,
            "results": {"first_player_wins": int((winners == 1).sum()), "second_player_wins": int((winners == -1).sum()),
                        "draws": int((winners == 0).sum())},
            "games": [{"index": i, "moves": int(g["length"]), "plies": int(shard.game_info["plies"][i]),
                       "resigned": bool(shard.game_info["resigned"][i]), "winner": int(g["winner"]),
                       "result": _result_with_end(g["winner"], shard.game_info[i])}
                      for i, g in enumerate(shard.games)]}


def _result_with_end(winner: int, info) -> str:
    """result_text, plus ' (O resigned)' / ' (X resigned)' for a game that ended by a resignation."""
    if not info["resigned"]:
        return result_text(winner)
    return f"{result_text(winner)} ({'O' if int(winner) == 1 else 'X'} resigned)"


def replay_mismatch(game, shard: Shard, game_index: int) -> int | None:
    """Replay game `game_index` from the start with game.step; the first 0-based move whose stored state
    differs from the replayed one, or None when the whole game replays exactly. A game recorded with playout
    caps (fewer rows than plies, see `recorded_part`) is checked only up to its first skipped ply."""
    rows = shard.game_rows(game_index)
    numbers = shard.moves["move_number"][rows]
    states = shard.states[rows][: int(np.sum(numbers == np.arange(numbers.shape[0])))]
    current = game.initial_states(1)
    for ply, action in enumerate(shard.game_actions(game_index)[: states.shape[0]]):
        if not np.array_equal(current[0], states[ply]):
            return ply
        current = game.step(current, np.array([action]))
    return None


def game_moves(game, shard: Shard, game_index: int) -> list[dict[str, Any]]:
    """One dict per move of game `game_index`: move number (1-based), side, move (notation), search value
    (root value, side to move), z (the game's result for the side to move), root visits, the played move's
    visit share and the most visited move with its share."""
    rows = shard.game_rows(game_index)
    moves, pi, states, z = shard.moves[rows], shard.pi[rows], shard.states[rows], shard.z[rows]
    to_move = game.to_play(states)
    out = []
    for i, move in enumerate(moves):
        action, top = int(move["action"]), int(np.argmax(pi[i]))
        out.append({"move_number": i + 1, "side": "X" if to_move[i] == 1 else "O", "move": game.action_to_str(action),
                    "search_value": round(float(move["root_value"]), 4), "z": round(float(z[i]), 4),
                    "root_visits": int(move["visit_count"]), "visit_share": round(float(pi[i, action]), 4),
                    "most_visited": game.action_to_str(top), "most_visited_share": round(float(pi[i, top]), 4)})
    return out


def game_json(game, shard: Shard, game_index: int) -> dict[str, Any]:
    """Game `game_index` as JSON: result, moves in notation, the replay check and game_moves; prior is null
    (not stored, see PRIOR_NOT_STORED); ownership: ownership_rows (null for games without territory)."""
    winner = int(shard.games["winner"][game_index])
    mismatch = replay_mismatch(game, shard, game_index)
    return {"path": str(shard.path), "index": game_index, "winner": winner, "result": result_text(winner),
            "moves": game.moves_to_str(shard.game_actions(game_index)), "replays_exactly": mismatch is None,
            "replay_mismatch_move": None if mismatch is None else mismatch + 1,
            "prior": None, "prior_note": PRIOR_NOT_STORED, "per_move": game_moves(game, shard, game_index),
            "ownership": ownership_rows(game, shard, game_index)}


def recorded_part(shard: Shard, game_index: int) -> str:
    """'' when every ply of the game has its row; else '; 7 of 20 plies recorded (playout caps or a random
    opening; ...)'."""
    length, plies = int(shard.games["length"][game_index]), int(shard.game_info["plies"][game_index])
    if length == plies:
        return ""
    return (f"; {length} of {plies} plies recorded (playout caps or a random opening; the replay check stops at "
            "the first skipped ply; rows are numbered by recorded position)")


def ownership_rows(game, shard: Shard, game_index: int) -> list[str] | None:
    """Who owns each point at the end of game `game_index` (the shard's ownership dataset: Go), one string per board
    row from the top: 'X' the first player (black), 'O' the second, '.' no one; None when the shard has none."""
    if shard.ownership is None:
        return None
    owner = shard.ownership[game_index].reshape(game.height, game.width)
    return ["".join({1: "X", -1: "O"}.get(int(v), ".") for v in row) for row in owner]


def _ownership_text(game, shard: Shard, game_index: int) -> list[str]:
    rows = ownership_rows(game, shard, game_index)
    if rows is None:
        return []
    owner = shard.ownership[game_index]
    why = "; resigned: not counted, not trained on" if shard.game_info["resigned"][game_index] else ""
    return [f"owners at the end (the ownership head's target{why}): X {int((owner == 1).sum())}, "
            f"O {int((owner == -1).sum())}, no one {int((owner == 0).sum())}", *("  " + row for row in rows)]


def game_listing(game, shard: Shard, game_index: int) -> str:
    """Game `game_index` move by move: number (1-based), side, move in the game's notation, the search value
    and z (both for the side to move), root visits, the played move's visit share and the most visited
    other move."""
    table_rows = [(m["move_number"], m["side"], m["move"], f"{m['search_value']:+.3f}", f"{m['z']:+.0f}",
                   m["root_visits"], f"{100 * m['visit_share']:.1f}%",
                   "" if m["most_visited"] == m["move"] else f"{m['most_visited']} {100 * m['most_visited_share']:.1f}%")
                  for m in game_moves(game, shard, game_index)]
    winner = int(shard.games["winner"][game_index])
    mismatch = replay_mismatch(game, shard, game_index)
    check = "replays exactly" if mismatch is None else f"REPLAY MISMATCH at move {mismatch + 1} (stored state differs)"
    check += recorded_part(shard, game_index)
    return "\n".join([
        f"game {game_index} of {shard.path.name}: {len(table_rows)} moves, {result_text(winner)} ({check})",
        "moves: " + game.moves_to_str(shard.game_actions(game_index)),
        "value = the root search value and z = the game's result, both for the side to move; share = the "
        "played move's share of the root visits",
        PRIOR_NOT_STORED,
        text_table(["#", "side", "move", "value", "z", "visits", "share", "most visited other"], table_rows),
        *_ownership_text(game, shard, game_index),
    ])
