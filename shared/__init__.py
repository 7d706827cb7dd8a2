"""zeroforge's library: games, batched search, players and matches, network, shards, registry, config, layout, stats.

The bottom layer: `services/` (job functions, the worker), `flows/` (Prefect) and `cli/` (the command and
other presentation) import from here; nothing here imports them. Each subpackage states its public names
in its own `__init__`:

    shared.games        make_game, make_game_from_params, GAME_NAMES, Game, GameError, GameFamily, family_of,
                        register_family (one package per game family: tictactoe, connect4, gomoku, othello, go)
    shared.search       BatchedMCTS, SearchConfig, SearchResult, Evaluator, choose_moves, play_selfplay_games,
                        SelfPlayConfig, opening_set
    shared.players      player (Player, RandomPlayer, MCTSPlayer, PureMCTSPlayer), arena (play_match),
                        spec (parse_player_spec, resolve_model, build_player), match (play_match_chunk,
                        evaluate_players), analysis (analyze_states), timed_analysis (timed_analysis,
                        analyze_move_strings), positions (position_from_moves, illegal_move_reason, parse_one_move)
    shared.network      PolicyValueNet, NetworkSpec, default_network_spec (the one network-size table),
                        create_model, save_model, load_model, TorchEvaluator; training (train_step, ...);
                        onnx_export (export_onnx)
    shared.shards       write_shard, read_shard, list_shards, load_replay_window, ShardError
    shared.registry     ModelRegistry (promote: the one promotion), ModelVersion, RegistryError
    shared.config       load_config, PipelineConfig (and the per-service configs), ConfigError
    shared.layout       DataLayout, RegistryLayout, JobIds: every path and job id
    shared.stats        evaluate_pairs (the one pair-score and W/D/L formula), decide_promotion, can_stop_early
    shared.atomic       atomic_output, fsync_dir

Imports inside functions are kept only where they keep torch (or matplotlib, rq, Prefect) out of commands
that do not need it; each such import is the first line of the function that needs the package.
"""
