"""Typed, frozen configuration of every zeroforge service.

    from shared.config import PipelineConfig, load_config
    cfg = load_config(PipelineConfig, "tictactoe", Path("zeroforge.toml"), os.environ, {"search.simulations": 64})
    cfg.trainer()                                          # the sections a training job needs (TrainerConfig)
    cfg.search.search_config(simulations=64)               # the one SearchConfig of every network player

See loader.py for the layer order and infra/zeroforge.example.toml for every field.
"""
from shared.config.defaults import game_defaults
from shared.config.errors import ConfigError
from shared.config.loader import ENV_PREFIX, load_config, parse_overrides
from shared.config.sections import (
    GameSection,
    GateSection,
    PipelineSection,
    SearchSection,
    SelfPlaySection,
    TrainSection,
)
from shared.config.services import (
    SECTIONS,
    SERVICE_CONFIGS,
    GatekeeperConfig,
    PipelineConfig,
    SelfPlayServiceConfig,
    ServiceConfig,
    TrainerConfig,
)

__all__ = [
    "ENV_PREFIX",
    "SECTIONS",
    "SERVICE_CONFIGS",
    "ConfigError",
    "GameSection",
    "GateSection",
    "GatekeeperConfig",
    "PipelineConfig",
    "PipelineSection",
    "SearchSection",
    "SelfPlaySection",
    "SelfPlayServiceConfig",
    "ServiceConfig",
    "TrainSection",
    "TrainerConfig",
    "game_defaults",
    "load_config",
    "parse_overrides",
]
