"""Players and the matches between them. Built on shared.search (which never imports this package).

    player      Player (the protocol: select_actions(states [B, S] int16) -> actions [B] int64, reset),
                RandomPlayer, MCTSPlayer, PureMCTSPlayer, PURE_MCTS_SEARCH
    arena       play_match(game, player_a, player_b, openings) -> MatchResult (MatchGame per game)
    spec        parse_player_spec, resolve_model, build_player: a player from its text spec
    match       play_match_chunk, evaluate_players: paired matches between two specs
    analysis    analyze_states: one batched search of positions, with the root solvers and the principal variation
    timed_analysis  timed_analysis, analyze_move_strings: the engines' search within a node and time budget
    positions   position_from_moves, illegal_move_reason, parse_one_move

Import the names from their modules (this package imports nothing, so that `shared.players.player` does not
pull in the registry or the network).
"""
