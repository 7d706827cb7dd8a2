"""The threat solver at the root of a move choice: VCF attack and VCF defence for in-a-row games (Gomoku).

A pure AlphaZero misses deep forced wins (a chain of fours, each forcing the only reply). `vcf_root_moves`
corrects the moves a search chose, position by position:
- attack: when the side to move has a VCF within the budget, its first move (a proven win) is played;
- defence: when the opponent would have a VCF and the chosen move is not one of the moves proven to stop
  it, the most visited proven defence is played instead (when a defence exists);
- quiet threats (one move deeper, a VCT of a single quiet move): when the opponent has no VCF now but has a
  quiet move (an open three, a three-four, ...) after which it would have a VCF that the side to move cannot
  stop, the chosen move is checked: if the opponent still has such a move after it, the most visited of the
  other candidate moves that leaves none is played instead (when one exists within the candidates tried).
Other games pass through unchanged. This is the Gomoku family's root solver (`GameFamily.root_solver`), run
through shared.search.root_solver, the one entry point of the root solvers of all games.
"""
from __future__ import annotations

import numpy as np

from shared.games.base import F_PLAYER, Game
from shared.games.inarow import InARowGame
from shared.games.gomoku.vcf import DefenceStatus, find_vcf, find_vcf_defence
from shared.games.gomoku.vcf_lines import line_tables

#: Budget of each VCF search at the root: attack chains of up to 4 fours, 2000 positions per search.
ROOT_VCF_DEPTH = 4
ROOT_VCF_NODES = 2000
#: Budget of each VCF search of the quiet-threat check (one per opponent move tried, and per defence candidate).
QUIET_VCF_DEPTH = 3
QUIET_VCF_NODES = 300
#: Moves of the side to move tried against a quiet threat, besides the search's choice: up to this many of the
#: threat cells and as many of the most visited moves.
QUIET_CANDIDATES = 8
#: The quiet-threat check runs for searches of at least this many simulations: it costs a median 9-15 ms per
#: position on 8x8-5 and 15x15 and 75 ms on 6x6-4 (BENCHMARKS.md), about what a search of this size costs, so
#: the small searches of the gates and of self-play keep their speed.
QUIET_MIN_SIMULATIONS = 200


def uses_threat_solver(game: Game) -> bool:
    """True for Gomoku (any size). Tic-tac-toe is an in-a-row game too, but on 3x3 a VCF search is a full
    solution of the game, which would hide what the network has learnt from every match."""
    return isinstance(game, InARowGame) and game.params().get("family") == "gomoku"


def vcf_root_moves(game: Game, states: np.ndarray, actions: np.ndarray, visits: np.ndarray,
                   simulations: int | None = None) -> np.ndarray:
    """The moves to play: states [B, S] int16 (non-terminal), the search's choices actions [B] int64 and its
    root visit counts visits [B, A] float32 -> actions [B] int64, with VCF wins and VCF defences applied, and
    the quiet-threat check when the search ran `simulations` >= QUIET_MIN_SIMULATIONS (None: not checked)."""
    quiet = simulations is not None and simulations >= QUIET_MIN_SIMULATIONS
    actions = np.asarray(actions, np.int64).copy()
    if not uses_threat_solver(game):
        return actions
    for row in range(states.shape[0]):
        attack = find_vcf(game, states[row], ROOT_VCF_DEPTH, ROOT_VCF_NODES)
        if attack.found:
            actions[row] = attack.first_move
            continue
        defence = find_vcf_defence(game, states[row], ROOT_VCF_DEPTH, ROOT_VCF_NODES)
        if defence.status is DefenceStatus.DEFENDED and int(actions[row]) not in defence.defences:
            options = np.array(defence.defences, np.int64)
            actions[row] = options[np.argmax(visits[row, options])]
        elif quiet and defence.status is DefenceStatus.NO_THREAT:
            actions[row] = quiet_threat_move(game, states[row], int(actions[row]), visits[row])
    return actions


def quiet_threat_cells(game: InARowGame, state: np.ndarray) -> list[int]:
    """The opponent's quiet threats in a position [S] int16 whose side to move has no opponent VCF to stop: the
    empty cells r such that, if the opponent could play r now (as if the side to move passed), it would have a
    VCF that the side to move cannot stop (`find_vcf_defence` LOST or NO_DEFENCE). Only cells that give the
    opponent a new four move are tried: in a window of n cells through r with n - 3 opponent stones and none of
    the side to move. -> cell indices, ascending."""
    cells = state[: game.num_cells]
    mover = int(state[game.num_cells + F_PLAYER])
    windows = line_tables(game.height, game.width, game.n_in_row).windows       # [Nw, n] cell indices
    stones = cells[windows]
    live = ((stones == -mover).sum(axis=1) >= game.n_in_row - 3) & ((stones == mover).sum(axis=1) == 0)
    tried = np.unique(windows[live].reshape(-1))
    passed = state.copy()
    passed[game.num_cells + F_PLAYER] = -mover                                  # the side to move passes
    return [r for r in tried[cells[tried] == 0].tolist() if _opponent_wins_after(game, passed, r)]


def _opponent_wins_after(game: InARowGame, state: np.ndarray, cell: int) -> bool:
    """Whether the opponent, to move in `state` [S] int16, wins by playing `cell`: it finishes the game, or the
    side to move then cannot stop the opponent's VCF (`find_vcf_defence` LOST or NO_DEFENCE)."""
    after = game.step(state[None], np.array([cell]))[0]
    if game.is_terminal(after[None])[0]:
        return True
    status = find_vcf_defence(game, after, QUIET_VCF_DEPTH, QUIET_VCF_NODES).status
    return status in (DefenceStatus.LOST, DefenceStatus.NO_DEFENCE)


def _refuted(game: InARowGame, state: np.ndarray, move: int, threats: list[int]) -> bool:
    """Whether, after the side to move plays `move`, one of the opponent's quiet threats still wins: the opponent
    plays it and the side to move cannot stop the VCF that follows (nor win first)."""
    after = game.step(state[None], np.array([move]))[0]
    if game.is_terminal(after[None])[0]:
        return False                                                            # the move wins at once
    return any(_opponent_wins_after(game, after, r) for r in threats if r != move)


def quiet_threat_move(game: InARowGame, state: np.ndarray, action: int, visits: np.ndarray) -> int:
    """The move to play against the opponent's quiet threats (module docstring): state [S] int16, the search's
    choice `action` and its root visits [A] float32 -> an action. A stone of the side to move never helps the
    opponent, so the threats after any move are among those of the position (`quiet_threat_cells`): only they
    are checked. Unchanged when there is no threat, when the search's choice leaves none, or when no other
    candidate (the threat cells, the most visited moves) does."""
    threats = quiet_threat_cells(game, state)
    if not threats or not _refuted(game, state, action, threats):
        return action
    legal = game.legal_mask(state[None])[0]
    by_visits = [int(a) for a in np.argsort(-visits, kind="stable") if legal[a] and visits[a] > 0]
    # The threat cells themselves (the direct blocks) and the search's most visited moves, at most
    # QUIET_CANDIDATES of each; the most visited move that leaves no threat wins (ties: the lower cell).
    candidates = set(threats[:QUIET_CANDIDATES]) | set(by_visits[:QUIET_CANDIDATES])
    candidates.discard(action)
    safe = [move for move in sorted(candidates) if not _refuted(game, state, move, threats)]
    return max(safe, key=lambda move: (visits[move], -move)) if safe else action
