"""The threat solver at the root of a move choice: VCF attack and VCF defence for in-a-row games (Gomoku).

A pure AlphaZero misses deep forced wins (a chain of fours, each forcing the only reply). `vcf_root_moves`
corrects the moves a search chose, position by position:
- attack: when the side to move has a VCF within the budget, its first move (a proven win) is played;
- defence: when the opponent would have a VCF and the chosen move is not one of the moves proven to stop
  it, the most visited proven defence is played instead (when a defence exists).
Other games pass through unchanged. Called through shared.search.root_solver, the one entry point of the root
solvers of all games.
"""
from __future__ import annotations

import numpy as np

from shared.games.base import Game
from shared.games.inarow import InARowGame
from shared.search.vcf import DefenceStatus, find_vcf, find_vcf_defence

#: Budget of each VCF search at the root: attack chains of up to 4 fours, 2000 positions per search.
ROOT_VCF_DEPTH = 4
ROOT_VCF_NODES = 2000


def uses_threat_solver(game: Game) -> bool:
    """True for Gomoku (any size). Tic-tac-toe is an in-a-row game too, but on 3x3 a VCF search is a full
    solution of the game, which would hide what the network has learnt from every match."""
    return isinstance(game, InARowGame) and game.params().get("family") == "gomoku"


def vcf_root_moves(game: Game, states: np.ndarray, actions: np.ndarray, visits: np.ndarray) -> np.ndarray:
    """The moves to play: states [B, S] int16 (non-terminal), the search's choices actions [B] int64 and its
    root visit counts visits [B, A] float32 -> actions [B] int64, with VCF wins and VCF defences applied."""
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
    return actions
