"""zeroforge's common library: games, batched search, network, shard format, registry, config and statistics.

`services/` and `flows/` import from here; nothing here imports them.  Each subpackage states its public
names in its own `__init__` (imported on demand, so that code without torch stays light):

    shared.games        make_game, make_game_from_params, GAME_NAMES, Game, GameError
    shared.search       BatchedMCTS, SearchConfig, play_selfplay_games, SelfPlayConfig, play_match, opening_set,
                        MCTSPlayer, PureMCTSPlayer, RandomPlayer, MinimaxPlayer
    shared.network      PolicyValueNet, NetworkSpec, create_model, save_model, load_model, TorchEvaluator
    shared.shards       write_shard, read_shard, list_shards, load_replay_window, ShardError
    shared.registry     ModelRegistry, ModelVersion, RegistryError
    shared.config       load_config, PipelineConfig (and the per-service configs), ConfigError
    shared.layout       DataLayout, default_data_root
    shared.stats        paired_evaluation, decide_promotion, can_stop_early, elo_from_score
    shared.network.training     TrainSettings, sample_batch, train_step
    shared.players.spec  parse_player_spec, build_player
    shared.players.analysis     analyze_states, analyze_move_strings
    shared.atomic       atomic_output, fsync_dir
"""
