"""Typed configuration: layering, validation messages, JSON round trips, per-game defaults, example file."""
from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

import pytest
from pydantic import ValidationError

from shared.config import (
    SECTIONS,
    SERVICE_CONFIGS,
    ConfigError,
    GatekeeperConfig,
    PipelineConfig,
    SelfPlayServiceConfig,
    TrainerConfig,
    game_defaults,
    load_config,
    parse_overrides,
)
from shared.config.example import render_example_toml
from shared.games import GAME_NAMES

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "infra" / "zeroforge.example.toml"


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "zeroforge.toml"
    path.write_text(text)
    return path


@pytest.mark.parametrize("game", GAME_NAMES)
def test_every_preset_game_has_valid_defaults(game):
    cfg = load_config(PipelineConfig, game, env=None)
    assert cfg.game.name == game
    assert cfg.gate.games % 2 == 0 and cfg.gate.jobs <= cfg.gate.openings
    assert 0 < cfg.search.dirichlet_alpha <= 1.0


def test_dirichlet_alpha_follows_ten_over_legal_moves():
    assert game_defaults("tictactoe")["search"]["dirichlet_alpha"] == 1.0
    assert game_defaults("connect4")["search"]["dirichlet_alpha"] == 1.0
    assert game_defaults("gomoku-15")["search"]["dirichlet_alpha"] == pytest.approx(0.05, abs=0.01)
    # boards above 11x11 take the Gumbel root in self-play (measured on gomoku-15); smaller ones keep PUCT's
    assert load_config(PipelineConfig, "gomoku-15", env=None).search.root == "gumbel"
    assert load_config(PipelineConfig, "gomoku-8x8-5", env=None).search.root == "puct"
    assert game_defaults("gomoku-6x6-4")["search"]["dirichlet_alpha"] == pytest.approx(0.33, abs=0.01)
    assert game_defaults("othello")["search"]["dirichlet_alpha"] == 0.3
    # generic gomoku sizes are derived from the area: a bigger board gets a smaller alpha
    assert game_defaults("gomoku-9x9-5")["search"]["dirichlet_alpha"] < game_defaults("gomoku-7x7-4")["search"][
        "dirichlet_alpha"
    ]


def test_tictactoe_defaults_are_small():
    cfg = load_config(PipelineConfig, "tictactoe", env=None)
    assert cfg.search.simulations <= 64 and cfg.gate.simulations <= 50
    assert cfg.selfplay.games_per_job * cfg.selfplay.jobs_per_generation <= 512
    assert cfg.gate.anchor == "minimax" and cfg.gate.games == 400 and cfg.pipeline.generations is not None
    assert load_config(PipelineConfig, "connect4", env=None).gate.anchor == "pure-mcts:1000"


def test_connect4_and_large_gomoku_boards_take_line_planes_by_default_and_a_flag_turns_them_off():
    """The connect4 preset's [game] part (BENCHMARKS "Line planes on Connect Four") and Gomoku's above 11x11
    ("Line planes on gomoku-15") merge with the network size; every other preset keeps them off."""
    from services.initial_model import configured_spec

    connect4 = load_config(PipelineConfig, "connect4", env=None)
    assert connect4.game.line_planes and (connect4.game.blocks, connect4.game.channels) == (4, 64)
    assert configured_spec(connect4.game).line_planes
    assert not load_config(PipelineConfig, "connect4", env=None, overrides={"game.line_planes": False}).game.line_planes
    assert [game for game in GAME_NAMES if load_config(PipelineConfig, game, env=None).game.line_planes] == \
        ["connect4", "gomoku-15"]
    for name, expected in (("gomoku-13x13-5", True), ("gomoku-11x11-5", False), ("gomoku-11x13-5", True)):
        assert load_config(PipelineConfig, name, env=None).game.line_planes is expected, name


def test_unknown_game_name_fails():
    with pytest.raises(ConfigError, match=r"game\.name: unknown game 'chess'.*known forms"):
        load_config(PipelineConfig, "chess", env=None)
    with pytest.raises(ConfigError, match=r"game\.name:.*out of range"):
        load_config(PipelineConfig, "gomoku-30x30-5", env=None)


def test_layer_precedence(tmp_path):
    file = _write(tmp_path, "[search]\nsimulations = 10\nc_puct = 2.5\n")
    env = {"ZEROFORGE_SEARCH__SIMULATIONS": "20", "ZEROFORGE_TRAIN__BATCH_SIZE": "64"}
    assert load_config(PipelineConfig, "tictactoe", None, None).search.simulations == \
        game_defaults("tictactoe")["search"]["simulations"]  # defaults
    assert load_config(PipelineConfig, "tictactoe", file, None).search.simulations == 10  # file
    cfg = load_config(PipelineConfig, "tictactoe", file, env)
    assert (cfg.search.simulations, cfg.search.c_puct, cfg.train.batch_size) == (20, 2.5, 64)  # env over file
    cfg = load_config(PipelineConfig, "tictactoe", file, env, {"search.simulations": 30})
    assert (cfg.search.simulations, cfg.search.c_puct) == (30, 2.5)  # override over env, the rest kept
    nested = load_config(PipelineConfig, "tictactoe", file, env, {"search": {"simulations": 31}})
    assert nested.search.simulations == 31


def test_bad_value_names_field_value_source_and_fix():
    with pytest.raises(ConfigError) as info:
        load_config(PipelineConfig, "tictactoe", env={"ZEROFORGE_SEARCH__SIMULATIONS": "0"})
    message = str(info.value)
    assert message.startswith("search.simulations: must be >= 1 (got '0' from environment variable")
    assert "ZEROFORGE_SEARCH__SIMULATIONS" in message and "--set search.simulations=..." in message


def test_all_problems_reported_together(tmp_path):
    file = _write(tmp_path, '[selfplay]\ndevice = "gpu"\n[gate]\ngames = 7\n')
    with pytest.raises(ConfigError) as info:
        load_config(PipelineConfig, "tictactoe", file, {}, {"train.batch_size": "many"})
    paths = sorted(problem.split(":")[0] for problem in info.value.problems)
    assert paths == ["gate.games", "selfplay.device", "train.batch_size"]
    assert f"of {file}" in str(info.value)  # the hint names the actual file


def test_unknown_keys_list_valid_ones(tmp_path):
    with pytest.raises(ConfigError, match=r"unknown key 'simulatons' in \[search\].*valid keys: simulations, c_puct"):
        load_config(PipelineConfig, "tictactoe", _write(tmp_path, "[search]\nsimulatons = 3\n"), None)
    with pytest.raises(ConfigError, match=r"unknown section \[serach\].*valid sections: game, search, selfplay"):
        load_config(PipelineConfig, "tictactoe", None, {"ZEROFORGE_SERACH__SIMULATIONS": "3"})
    with pytest.raises(ConfigError, match=r"top-level key 'simulations'.*must be inside a section"):
        load_config(PipelineConfig, "tictactoe", _write(tmp_path, "simulations = 3\n"), None)
    with pytest.raises(ConfigError, match=r"unknown key 'sims' in \[search\] \(--set search.sims\)"):
        load_config(PipelineConfig, "tictactoe", None, None, {"search.sims": 3})


def test_env_names_without_section_delimiter_are_ignored():
    env = {"ZEROFORGE_GAME": "connect4", "ZEROFORGE_DATA_DIR": "/x", "PATH": "/bin"}
    assert load_config(PipelineConfig, "tictactoe", env=env).game.name == "tictactoe"


def test_file_errors_are_config_errors(tmp_path):
    with pytest.raises(ConfigError, match="not found"):
        load_config(PipelineConfig, "tictactoe", tmp_path / "missing.toml", None)
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_config(PipelineConfig, "tictactoe", _write(tmp_path, "[search\n"), None)


def test_game_name_from_layers_and_conflicts(tmp_path):
    file = _write(tmp_path, '[game]\nname = "connect4"\n')
    assert load_config(PipelineConfig, None, file, None).search.simulations == \
        game_defaults("connect4")["search"]["simulations"]  # connect4's defaults
    with pytest.raises(ConfigError, match=r"'connect4' \(from \[game\] of .*\) conflicts with the requested game"):
        load_config(PipelineConfig, "tictactoe", file, None)
    with pytest.raises(ConfigError, match="no game given"):
        load_config(PipelineConfig, None, None, None)


@pytest.mark.parametrize(("value", "plies"), [("6-8", (6, 7, 8)), ("8, 6,7,6", (6, 7, 8)), ([5, 3], (3, 5)),
                                             ("none", None), ("4", (4,))])
def test_gate_opening_plies_forms(value, plies):
    """gate.opening_plies from a range, a comma list, a TOML list or "none": stored sorted, without repeats."""
    assert load_config(PipelineConfig, "gomoku-8x8-5", env=None,
                       overrides={"gate.opening_plies": value}).gate.opening_plies == plies
    env = {"ZEROFORGE_GATE__OPENING_PLIES": value} if isinstance(value, str) else {}
    if env:
        assert load_config(PipelineConfig, "gomoku-8x8-5", env=env).gate.opening_plies == plies


def test_none_strings_and_optional_fields():
    env = {"ZEROFORGE_PIPELINE__GENERATIONS": "none", "ZEROFORGE_GATE__ANCHOR": "None"}
    cfg = load_config(PipelineConfig, "tictactoe", env=env, overrides={"pipeline.data_dir": "~/zf"})
    assert cfg.pipeline.generations is None and cfg.gate.anchor is None
    assert cfg.pipeline.data_dir == Path.home() / "zf"


@pytest.mark.parametrize(
    ("overrides", "pattern"),
    [
        ({"selfplay.device": "cuda:1"}, None),
        ({"selfplay.device": "cuda"}, None),
        ({"selfplay.device": "tpu"}, r"selfplay\.device: device must be 'cpu', 'cuda' or 'cuda:N'"),
        ({"pipeline.redis_url": "localhost:6379"}, r"pipeline\.redis_url: redis_url must start with"),
        ({"gate.anchor": "minimax"}, None),
        ({"gate.anchor": "best"}, r"gate\.anchor: anchor 'best' is not a fixed player"),
        ({"gate.games": 20, "gate.jobs": 11}, r"gate: jobs \(11\) must be <= the number of openings"),
        ({"gate.promote_rule": "vibes"}, r"gate\.promote_rule: must be one of 'ci_low_above' or 'score_above'"),
        ({"gate.threshold": 1.0}, r"gate\.threshold: must be < 1"),
        ({"train.batch_size": 100_000}, r"train\.batch_size: must be <= 65536"),
        ({"pipeline.wait_timeout_s": 60}, r"pipeline: wait_timeout_s \(60\) must be >= the longest job timeout"),
        ({"search.dirichlet_epsilon": 1.5}, r"search\.dirichlet_epsilon: must be <= 1"),
        ({"selfplay.resign_threshold": -1.0}, r"selfplay\.resign_threshold: must be > -1"),
        ({"selfplay.resign_threshold": 0.1}, r"selfplay\.resign_threshold: must be < 0"),
        ({"selfplay.resign_threshold": "none"}, None),
        ({"selfplay.full_search_fraction": 0.0}, r"selfplay\.full_search_fraction: must be > 0"),
        ({"selfplay.fast_simulations": 65}, r"selfplay\.fast_simulations \(65\) must be <= search\.simulations \(64\)"),
        ({"selfplay.fast_simulations": 64, "selfplay.full_search_fraction": 0.25}, None),
        ({"selfplay.solved_policy_target": True, "search.solver": False},
         r"selfplay\.solved_policy_target needs the solver's proofs: set search\.solver = true"),
        ({"selfplay.solved_policy_target": True, "search.solver": True}, None),
        ({"train.value_target_mix": 1.5}, r"train\.value_target_mix: must be <= 1"),
        ({"train.value_cut_at_sampled_moves": True, "search.root": "gumbel"},
         r"value_cut_at_sampled_moves cuts at temperature moves of a \"puct\" root"),
        ({"train.value_cut_at_sampled_moves": True, "train.value_target_mix": 0.25}, None),
        ({"train.samples_per_position": 0}, r"train\.samples_per_position: must be > 0"),
        ({"gate.opening_plies": "8-6"}, r"gate\.opening_plies: '8-6' is an empty range; write it low-high"),
        ({"selfplay.random_opening_plies": "4-2"},
         r"selfplay\.random_opening_plies: '4-2' is an empty range; write it low-high"),
        ({"selfplay.random_opening_fraction": 0}, r"selfplay\.random_opening_fraction: must be > 0"),
        ({"selfplay.random_opening_plies": "2-4", "selfplay.random_opening_fraction": 0.5}, None),
        ({"gate.opening_plies": "six"}, r"gate\.opening_plies: 'six' is not a list of ply counts; write e\.g\. 6-8"),
        ({"gate.opening_plies": [0, 2]}, r"gate\.opening_plies: opening lengths must be 1 to 1000 plies"),
        ({"train.samples_per_position": 2, "train.min_steps": 1501}, r"min_steps \(1501\) must be <= steps_per_generation"),
    ],
)
def test_validators(overrides, pattern):
    if pattern is None:
        load_config(PipelineConfig, "tictactoe", env=None, overrides=overrides)
    else:
        with pytest.raises(ConfigError, match=pattern):
            load_config(PipelineConfig, "tictactoe", env=None, overrides=overrides)


def test_minimax_anchor_only_for_tictactoe():
    with pytest.raises(ConfigError, match=r'gate.anchor "minimax" exists only for tictactoe'):
        load_config(PipelineConfig, "connect4", env=None, overrides={"gate.anchor": "minimax"})


@pytest.mark.parametrize("cls", SERVICE_CONFIGS)
def test_json_round_trip_and_frozen(cls):
    cfg = load_config(cls, "connect4", env=None, overrides={"search.simulations": 77, "train.augment": "false"})
    data = json.loads(json.dumps(cfg.model_dump(mode="json")))
    assert set(data) == set(cls.model_fields) <= set(SECTIONS)
    assert cls.model_validate(data) == cfg
    with pytest.raises(ValidationError):
        cfg.game.__class__.model_validate({**data["game"], "colour": "red"})  # extra keys rejected
    with pytest.raises(ValidationError):
        cfg.game.blocks = 3  # frozen


def test_pipeline_config_builds_service_configs():
    cfg = load_config(PipelineConfig, "tictactoe", env=None, overrides={"gate.simulations": 17})
    assert cfg.trainer() == load_config(TrainerConfig, "tictactoe", env=None, overrides={"gate.simulations": 17})
    assert cfg.gatekeeper().gate.simulations == 17
    assert isinstance(cfg.selfplay_service(), SelfPlayServiceConfig)
    assert not hasattr(cfg.trainer(), "search")


def test_search_configs_match_the_search_package():
    from shared.search import SearchConfig
    from shared.search.selfplay import SelfPlayConfig

    cfg = load_config(SelfPlayServiceConfig, "tictactoe", env=None, overrides={"selfplay.max_moves": 9})
    search = cfg.search.search_config()
    assert isinstance(search, SearchConfig) and search.num_simulations == game_defaults("tictactoe")["search"]["simulations"]
    selfplay = cfg.selfplay_config()
    assert isinstance(selfplay, SelfPlayConfig) and selfplay.max_moves == 9 and selfplay.temperature_moves == 4
    gate = load_config(GatekeeperConfig, "tictactoe", env=None).match_search_config()
    assert gate.num_simulations == game_defaults("tictactoe")["gate"]["simulations"]
    assert gate.solver is True                                                   # matches always use the solver
    assert {k: v for k, v in vars(gate).items() if k not in ("num_simulations", "solver")} == \
           {k: v for k, v in vars(search).items() if k not in ("num_simulations", "solver")}   # one search


def test_parse_overrides():
    items = ["search.simulations=64", " gate.anchor = pure-mcts:50 ", "pipeline.redis_url=redis://h:1/0"]
    assert parse_overrides(items) == {
        "search.simulations": "64", "gate.anchor": "pure-mcts:50", "pipeline.redis_url": "redis://h:1/0",
    }
    cfg = load_config(PipelineConfig, "tictactoe", env=None, overrides=parse_overrides(items))
    assert (cfg.search.simulations, cfg.gate.anchor) == (64, "pure-mcts:50")
    with pytest.raises(ConfigError) as info:
        parse_overrides(["simulations=3", "search.simulations", "search.sims=3", "serach.simulations=3"])
    problems = info.value.problems
    assert len(problems) == 4
    assert "expected section.field=value" in problems[0] and "expected section.field=value" in problems[1]
    assert "unknown key 'sims'" in problems[2] and "unknown section [serach]" in problems[3]


def test_example_file_is_current_and_covers_every_field():
    text = EXAMPLE.read_text()
    assert text == render_example_toml(), "regenerate: .venv/bin/python -m shared.config.example > " + str(EXAMPLE)
    defaults = load_config(PipelineConfig, "tictactoe", None, None)
    assert load_config(PipelineConfig, "tictactoe", EXAMPLE, None) == defaults  # all keys commented out
    uncommented = re.sub(r"^# ([a-z_]+ = )", r"\1", text, flags=re.MULTILINE)  # every key, active
    data = tomllib.loads(uncommented)
    assert {s: set(t) for s, t in data.items()} == {s: set(m.model_fields) for s, m in SECTIONS.items()}
    assert PipelineConfig.model_validate(data) == defaults


def test_only_go_resigns_by_default_and_selfplay_config_carries_the_options():
    go = load_config(PipelineConfig, "go-9x9", env=None)
    assert go.selfplay.resign_threshold == -0.9 and go.selfplay.resign_disabled_fraction == 0.1
    for name in ("tictactoe", "connect4", "gomoku-15", "othello"):
        assert load_config(PipelineConfig, name, env=None).selfplay.resign_threshold is None
    cfg = load_config(PipelineConfig, "connect4", env=None, overrides={
        "selfplay.resign_threshold": -0.8, "selfplay.resign_disabled_fraction": 0.2,
        "selfplay.full_search_fraction": 0.25, "selfplay.fast_simulations": 10, "selfplay.solved_policy_target": True,
        "selfplay.random_opening_plies": "2-4", "selfplay.random_opening_fraction": 0.5})
    sp = cfg.selfplay_service().selfplay_config()
    assert (sp.resign_threshold, sp.resign_disabled_fraction, sp.full_search_fraction, sp.fast_simulations,
            sp.solved_policy_target) == (-0.8, 0.2, 0.25, 10, True)
    assert (sp.random_opening_plies, sp.random_opening_fraction) == ((2, 3, 4), 0.5)
    assert load_config(PipelineConfig, "connect4", env=None).selfplay_service().selfplay_config() \
        .fast_search_simulations == 16                              # 64 // 4
