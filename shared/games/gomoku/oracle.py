"""The oracle set of in-a-row games (shared.games.oracle_set): win-in-1 and must-block positions labelled by the
rules (shared.games.inarow_tactics), VCF and VCF-defence positions labelled by brute force (shared.games.vcf_labels).
"""
from __future__ import annotations

import numpy as np

from shared.games.base import Game
from shared.games.inarow_tactics import LINE_KINDS, line_tactic_positions
from shared.games.oracle_set import OracleSet
from shared.games.vcf_labels import VCF_KINDS, vcf_tactic_positions

#: Longest time spent looking for VCF positions (boards too small for them yield few or none).
ORACLE_VCF_SECONDS = 30.0


def oracle_set(game: Game, count: int, seed: int) -> OracleSet:
    """About `count` positions: a quarter of each line kind (win in 1: a move keeps the win when it wins at once;
    must block: when it does not let the opponent win at once) and up to a quarter of each VCF kind (a move keeps
    the VCF when it starts one; it keeps a defended position when the opponent has no VCF after it). Each position's
    kind is kept (OracleSet.kinds: LINE_KINDS then VCF_KINDS), so a report can say which tactics a network lacks."""
    rng = np.random.default_rng(seed)
    line_states, kinds, outcomes = line_tactic_positions(game, max(1, count // 4), rng)
    keeps = np.where((kinds == 0)[:, None], outcomes == 1, outcomes == 0)      # [N, A] bool; illegal are -2
    vcf_states, vcf_kinds, good, _ = vcf_tactic_positions(game, max(1, count // 4), rng, max_seconds=ORACLE_VCF_SECONDS)
    states = np.concatenate([line_states, vcf_states.reshape(-1, game.state_size)]).astype(np.int16)
    keeps = np.concatenate([keeps, good.reshape(-1, game.num_actions)])
    position_kinds = np.concatenate([kinds, len(LINE_KINDS) + np.asarray(vcf_kinds, np.int64).reshape(-1)])
    return OracleSet(states, keeps, None, f"{line_states.shape[0]} win-in-1 and must-block positions and "
                                          f"{vcf_states.shape[0]} VCF and VCF-defence positions",
                     position_kinds.astype(np.int8), LINE_KINDS + VCF_KINDS)
