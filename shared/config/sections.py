"""The config sections ([game], [search], [selfplay], [train], [gate], [pipeline]).

Field defaults here are game-independent fallbacks; `shared.config.defaults.game_defaults` supplies
the per-game values that `load_config` layers underneath the TOML file, the environment and `--set`.
Every field carries a description (it is rendered into infra/zeroforge.example.toml).
"""
from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator, model_validator

from shared.games import GameError, make_game
from shared.network.inputs import has_lines
from shared.players.spec import PlayerSpecError, parse_player_spec
from shared.search.types import SearchConfig
from shared.config.fields import (Device, OptionalFloat, OptionalInt, OptionalPath, OptionalPlies, OptionalStr,
                                  RedisUrl, Section, StoreUrl)

class GameSection(Section):
    """[game]: which game to play and the size of its network."""

    name: str = Field(description='Game name, e.g. "tictactoe", "connect4", "gomoku-6x6-4", "othello".')
    blocks: int = Field(default=4, ge=1, le=40, description="Residual blocks of the policy-value network "
                        "(default: the game's size in shared/network/spec.py).")
    channels: int = Field(default=64, ge=8, le=512, description="Convolution channels per block.")
    value_hidden: int = Field(default=64, ge=1, le=4096, description="Hidden units of the value head.")
    ownership_head: bool = Field(
        default=False, description="An ownership head trained on who owns each point at the end (games with "
        "territory: Go; KataGo's auxiliary target). Weighted by train.ownership_weight.")
    global_pool: bool = Field(
        default=False, description="Every third residual block pools the board globally (KataGo's global "
        "pooling; shared/network/resnet.py).")
    line_planes: bool = Field(
        default=False, description="Two more input planes: the empty cells where the side to move, and where the "
        "opponent, would complete n in a row (in-a-row games: tic-tac-toe, Gomoku, Connect Four; "
        "shared/network/inputs.py).")

    @field_validator("name")
    @classmethod
    def _known_game(cls, name: str) -> str:
        """Check the name with shared.games.make_game."""
        name = name.strip()
        try:
            make_game(name)
        except GameError as exc:
            raise ValueError(str(exc)) from None
        return name

    @model_validator(mode="after")
    def _ownership_needs_territory(self) -> GameSection:
        if self.ownership_head and not make_game(self.name).has_ownership:
            raise ValueError(f"ownership_head: {self.name} has no territory to own; the ownership head is for "
                             "Go (set game.ownership_head = false)")
        if self.line_planes and not has_lines(make_game(self.name)):
            raise ValueError(f"line_planes: {self.name} has no lines to complete; line planes are for tic-tac-toe, "
                             "Gomoku and Connect Four (set game.line_planes = false)")
        return self


class SearchSection(Section):
    """[search]: the PUCT search of every network player: self-play, the gate, `eval`, `analyze` and `play`."""

    simulations: int = Field(default=200, ge=1, le=100_000, description="MCTS simulations per move in self-play.")
    c_puct: float = Field(default=1.5, gt=0, le=20, description="Exploration constant of the PUCT formula.")
    fpu_reduction: float = Field(
        default=0.25, ge=0, le=2,
        description="First-play urgency: an unvisited child's Q is the parent's Q minus this value.",
    )
    dirichlet_alpha: float = Field(
        default=0.3, gt=0, le=10,
        description="Dirichlet noise concentration at the root; about 10 / typical number of legal moves.",
    )
    dirichlet_epsilon: float = Field(
        default=0.25, ge=0, le=1, description="Weight of the Dirichlet noise mixed into the root prior (0 = none)."
    )
    leaves_per_step: int = Field(
        default=1, ge=1, le=64, description="Leaves selected per tree per network call (with virtual loss)."
    )
    virtual_loss: float = Field(
        default=1.0, ge=0, le=10, description="Virtual loss applied to a path while its leaf waits for evaluation."
    )
    reuse_tree: bool = Field(default=True, description="Keep the chosen child's subtree for the next move.")
    solver: bool = Field(
        default=True,
        description="MCTS-solver in self-play: prove wins and losses in the tree, take proven wins, avoid proven "
        "losses (match players always use it).",
    )
    temperature_moves: int = Field(
        default=8, ge=0, le=1000, description="Plies played with temperature 1 (proportional to visits) per game "
        '(no effect with root = "gumbel": its Gumbel noise is the exploration at every move).'
    )
    temperature_final: float = Field(
        default=0.0, ge=0, le=5, description="Temperature after temperature_moves plies (0 = most visited move; "
        'no effect with root = "gumbel").'
    )
    root: Literal["puct", "gumbel"] = Field(
        default="puct",
        description='Root rule of self-play searches: "puct" (Dirichlet noise, move and pi from the visits) or '
        '"gumbel" (Gumbel AlphaZero: Gumbel noise, sequential halving over the considered actions, the move and '
        "pi from the completed Q; no Dirichlet noise, no temperature). Below the root PUCT either way; match "
        "players always use puct.",
    )
    gumbel_considered: int = Field(
        default=16, ge=1, le=1000, description='Actions the Gumbel root considers (root = "gumbel").'
    )
    gumbel_c_visit: float = Field(
        default=50.0, ge=0, le=10_000,
        description='Gumbel root: sigma(q) = (gumbel_c_visit + max visits) * gumbel_c_scale * q, q in [0, 1].',
    )
    gumbel_c_scale: float = Field(
        default=0.1, gt=0, le=100,
        description="Gumbel root: the scale of sigma(q) (see gumbel_c_visit); 0.1 as mctx's default: at 1.0 sigma "
        "outweighs the Gumbel noise and the prior once every considered move has a visit, and self-play's moves lose "
        "their variety.",
    )

    def search_config(self, simulations: int | None = None) -> SearchConfig:
        """The SearchConfig of these settings with `simulations` per move (default: this section's).

        The one place that turns [search] into a shared.search.SearchConfig. Self-play searches with [search]
        simulations and adds root noise and the temperature schedule on top; the gate and the anchor match use
        gate.simulations; eval/analyze/play their --sims (default gate.simulations). Match players never reuse
        trees between calls (their successive positions need not follow each other).
        """
        return SearchConfig(
            num_simulations=self.simulations if simulations is None else simulations,
            c_puct=self.c_puct,
            fpu_reduction=self.fpu_reduction,
            dirichlet_alpha=self.dirichlet_alpha,
            dirichlet_epsilon=self.dirichlet_epsilon,
            leaves_per_step=self.leaves_per_step,
            virtual_loss=self.virtual_loss,
            reuse_tree=self.reuse_tree,
            solver=self.solver,
            root=self.root,
            gumbel_considered=self.gumbel_considered,
            gumbel_c_visit=self.gumbel_c_visit,
            gumbel_c_scale=self.gumbel_c_scale,
        )


class SelfPlaySection(Section):
    """[selfplay]: how self-play work is cut into rq jobs and where it runs."""

    games_per_job: int = Field(default=128, ge=1, le=100_000, description="Games one self-play job plays (batched).")
    jobs_per_generation: int = Field(default=4, ge=1, le=10_000, description="Self-play jobs per generation.")
    device: Device = Field(default="cpu", description='Torch device of the local workers `zeroforge run` starts (self-play, training, gates): "cpu", "cuda" or "cuda:N"; remote workers use their own --device.')
    torch_threads: int = Field(
        default=1, ge=1, le=256,
        description="Torch threads of each local worker `zeroforge run` starts (remote workers: --torch-threads).",
    )
    max_moves: OptionalInt = Field(
        default=None, ge=1, le=100_000,
        description='Safety cap on plies per game ("none" = the game\'s own length bound).',
    )
    resign_threshold: OptionalFloat = Field(
        default=None, gt=-1, lt=0,
        description='Resign when the root search value (side to move) is below this, in (-1, 0), or the solver '
        'proves the root lost; the opponent wins ("none" = never resign; the go-NxN presets use -0.9).',
    )
    resign_disabled_fraction: float = Field(
        default=0.1, ge=0, le=1,
        description="Share of games (drawn per game) that never resign; they measure false resignations "
        "(the player who would have resigned won or drew).",
    )
    resign_calibration: bool = Field(
        default=True,
        description="Each generation, lower the threshold (never above resign_threshold) to the highest one whose "
        "false resignations on the last 3 generations' no-resign games stay within resign_false_rate.",
    )
    resign_false_rate: float = Field(
        default=0.05, gt=0, lt=1,
        description="Largest share of false resignations the calibrated threshold allows (AlphaGo Zero: 5%).",
    )
    full_search_fraction: float = Field(
        default=1.0, gt=0, le=1,
        description="Playout cap randomisation: each move is a full search (root noise, recorded for training) "
        "with this probability, else a fast search (fast_simulations, no noise, played but not recorded); "
        "1.0 = off.",
    )
    fast_simulations: OptionalInt = Field(
        default=None, ge=1, le=100_000,
        description='Simulations of a fast search, <= search.simulations ("none" = search.simulations // 4, '
        'at least 1).',
    )
    solved_policy_target: bool = Field(
        default=False,
        description="Record the training policy with the MCTS-solver's proofs applied: all of it on proven winning "
        "moves where there are some, none on proven losing moves while another move is not proven lost (needs "
        "search.solver; the moves played do not change).",
    )
    random_opening_plies: OptionalPlies = Field(
        default=None,
        description='Start self-play games after this many uniformly random legal moves ("2-6", "4" or a list; '
        'one length drawn per game; none = every game from the start): positions away from the lines the search '
        'keeps playing. The random moves are played, not searched or recorded; an opening stops before a move '
        'that would end the game.',
    )
    random_opening_fraction: float = Field(
        default=1.0, gt=0, le=1,
        description="Share of the self-play games that start with a random opening (with random_opening_plies).",
    )


class TrainSection(Section):
    """[train]: one training run per generation over a sliding replay window."""

    batch_size: int = Field(default=256, ge=1, le=65_536, description="Positions per optimiser step.")
    steps_per_generation: int = Field(default=1000, ge=1, le=10_000_000, description="Optimiser steps per generation.")
    optimizer: Literal["adamw", "sgd"] = Field(
        default="adamw", description='"adamw", or "sgd" (Nesterov momentum 0.9).'
    )
    learning_rate: float = Field(default=0.002, gt=0, le=10, description="Peak learning rate.")
    lr_final_fraction: float = Field(
        default=0.1, gt=0, le=1,
        description="Cosine decay over a generation's steps down to learning_rate * this (1.0 = constant).",
    )
    weight_decay: float = Field(default=1e-4, ge=0, le=1, description="Weight decay (decoupled for adamw).")
    value_weight: float = Field(
        default=1.0, gt=0, le=100, description="Weight of the value loss next to the policy loss."
    )
    grad_clip: float = Field(default=5.0, gt=0, le=1e6, description="Clip the gradient's global norm to this value.")
    augment: bool = Field(
        default=True, description="Symmetry augmentation: a random board symmetry per sampled position."
    )
    replay_window_positions: int = Field(
        default=500_000, ge=1, le=1_000_000_000, description="At most this many of the newest positions are trained on."
    )
    replay_window_generations: int = Field(
        default=20, ge=1, le=100_000, description="Only shards of the newest this-many generations are trained on."
    )
    checkpoint_every: int = Field(default=500, ge=1, le=10_000_000,
                                  description="Write a resumable checkpoint every N steps.")
    torch_threads: OptionalInt = Field(
        default=None, ge=1, le=256,
        description='At least this many torch threads for a training job, for that job only (a worker started with '
        'more keeps its own; "none" = the worker\'s own setting); under `zeroforge run` the other local workers wait '
        "while it trains, so their cores are free for it.",
    )
    value_target_mix: float = Field(
        default=0.0, ge=0, le=1,
        description="Value target = (1 - q) * z + q * root search value, both for the side to move at the "
        "position (0 = the game result z only).",
    )
    value_cut_at_sampled_moves: bool = Field(
        default=False,
        description="Value target of a position followed in its game by a sampled move (a temperature move other "
        "than the most visited one): the self-play search value at the first such move, for the side to move at the "
        "position, instead of the game result the sampled moves may have changed (Watkins' cut); positions with "
        'none after them keep z. Before value_target_mix. For root = "puct" (a Gumbel root samples every move).',
    )
    merge_duplicate_positions: bool = Field(
        default=False,
        description="Position averaging: each state the replay window holds more than once becomes one row, "
        "trained towards the mean of its rows' policy and value targets (shared.shards.merge).",
    )
    ownership_weight: float = Field(
        default=1.5, ge=0, le=100,
        description="Weight of the ownership loss (the mean over the board of each point's binary cross-entropy) "
        "when the network has an ownership head (game.ownership_head).")
    samples_per_position: OptionalFloat = Field(
        default=None, gt=0, le=100_000,
        description='Steps per generation = ceil(this * new positions / batch_size), clamped to [min_steps, '
        'steps_per_generation]; new positions = those of the generation\'s shards ("none" = always '
        'steps_per_generation).',
    )
    min_steps: int = Field(
        default=50, ge=1, le=10_000_000,
        description="Fewest optimiser steps per generation when samples_per_position is set.",
    )

    @model_validator(mode="after")
    def _window_holds_a_batch(self) -> TrainSection:
        if self.replay_window_positions < self.batch_size:
            raise ValueError(
                f"replay_window_positions ({self.replay_window_positions}) must be >= batch_size ({self.batch_size})"
            )
        if self.samples_per_position is not None and self.min_steps > self.steps_per_generation:
            raise ValueError(f"min_steps ({self.min_steps}) must be <= steps_per_generation "
                             f"({self.steps_per_generation}) when samples_per_position is set")
        return self


class GateSection(Section):
    """[gate]: the candidate-vs-best match that decides promotion, plus an optional fixed anchor."""

    games: int = Field(
        default=400, ge=2, le=100_000,
        description="Gate games; must be even: games/2 openings, each played twice with colours swapped.",
    )
    simulations: int = Field(
        default=100, ge=1, le=100_000,
        description="MCTS simulations per move in gate and anchor games (the rest of the search is [search]).",
    )
    jobs: int = Field(default=4, ge=1, le=10_000, description="Number of rq jobs the gate match is split into.")
    promote_rule: Literal["ci_low_above", "score_above"] = Field(
        default="ci_low_above",
        description='"ci_low_above": the 95% interval\'s lower end beats threshold; "score_above": the mean does.',
    )
    threshold: float = Field(default=0.5, gt=0, lt=1, description="Score threshold of the promotion rule.")
    promote_all_draws: bool = Field(
        default=False,
        description="Also promote a candidate whose every gate game was drawn (no evidence either way; it has "
        "trained on more data): for games whose good players always draw, such as tic-tac-toe.",
    )
    opening_seed: int = Field(
        default=2024, ge=0, le=2**31, description="Seed of the fixed opening set (the same openings in every gate)."
    )
    opening_plies: OptionalPlies = Field(
        default=None,
        description='Gate openings only: random openings of these lengths made of any legal moves ("6-8", "6,7,8" '
        'or a list), instead of the game family\'s plan, for boards whose family openings good players draw; the '
        'anchor match and `eval` keep the family\'s plan. "none" = the family\'s plan.',
    )
    early_stop: bool = Field(
        default=True, description="Stop the gate once the remaining pairs cannot change the decision."
    )
    early_stop_confidence: OptionalFloat = Field(
        default=0.999, ge=0.95, lt=1,
        description="With early_stop, also stop once the interval of the pairs played so far (20 or more) at this "
        "confidence lies on one side of the threshold (a sequential test: each look costs at most (1 - this) / 2 "
        'of false decisions); "none" = stop only when the remaining pairs cannot change the decision.',
    )
    anchor: OptionalStr = Field(
        default="pure-mcts:1000",
        description='Fixed baseline each new best plays, as a player spec: "pure-mcts:N", "random", '
        '"minimax" (tic-tac-toe), "weights" (Othello), "gnugo:L" (Go) or "shipped"; "none" = no anchor match.',
    )
    anchor_games: int = Field(default=40, ge=0, le=100_000, description="Games against the anchor (even; 0 = skip).")
    anchor_every: int = Field(
        default=1, ge=1, le=1_000,
        description="Play the anchor match only in generations that are a multiple of this: a new best promoted in "
        "another generation gets its match at the next multiple, if it is still best then (1 = every new best).",
    )

    @field_validator("games", "anchor_games")
    @classmethod
    def _even(cls, value: int) -> int:
        if value % 2:
            raise ValueError("must be even (each opening is played twice with colours swapped)")
        return value

    @field_validator("anchor")
    @classmethod
    def _anchor_spec(cls, value: str | None) -> str | None:
        """A fixed player spec (shared.players.spec); None disables the anchor match."""
        if value is None:
            return None
        value = value.strip()
        try:
            spec = parse_player_spec(value)
        except PlayerSpecError as exc:
            raise ValueError(str(exc)) from None
        if spec.kind in ("best", "version", "file"):
            raise ValueError(
                f"anchor {value!r} is not a fixed player that every worker has (versions change as models train, "
                "model files live outside the data directory); use pure-mcts:N, random, minimax or shipped"
            )
        return value

    @model_validator(mode="after")
    def _jobs_fit_openings(self) -> GateSection:
        if self.jobs > self.openings:
            raise ValueError(f"jobs ({self.jobs}) must be <= the number of openings games/2 ({self.openings})")
        return self

    @property
    def openings(self) -> int:
        """Number of openings (pairs of games): games / 2."""
        return self.games // 2


class PipelineSection(Section):
    """[pipeline]: generations, storage, Redis/rq plumbing."""

    generations: OptionalInt = Field(
        default=None, ge=1, le=1_000_000, description='Generations to run ("none" = until stopped).'
    )
    max_hours: OptionalFloat = Field(
        default=None, gt=0, le=100_000,
        description="Wall-clock budget of one `zeroforge run` (from its start, hours): no generation is started that "
        'would end past it, judged by the last generation\'s duration ("none" = no budget).',
    )
    data_dir: OptionalPath = Field(
        default=None,
        description="Root of shards, models, checkpoints and reports, shared by all workers "
        '("none" = $ZEROFORGE_DATA_DIR, else ./zeroforge-data).',
    )
    redis_url: RedisUrl = Field(
        default=None, description='Redis URL for rq ("none" = REDIS_URL, else a private local server).'
    )
    selfplay_timeout_s: int = Field(default=3600, ge=10, le=7 * 86_400,
                                    description="rq job timeout of one self-play job (seconds).")
    train_timeout_s: int = Field(default=7200, ge=10, le=7 * 86_400,
                                 description="rq job timeout of one training job (seconds).")
    eval_timeout_s: int = Field(default=3600, ge=10, le=7 * 86_400,
                                description="rq job timeout of one gate/anchor job (seconds).")
    wait_timeout_s: int = Field(
        default=43_200, ge=10, le=30 * 86_400,
        description="How long the flow waits for one stage's jobs (queueing included) before failing (seconds).",
    )
    result_ttl_s: int = Field(default=86_400, ge=60, le=365 * 86_400,
                              description="How long rq keeps a finished job's result (seconds).")
    failure_ttl_s: int = Field(default=604_800, ge=60, le=365 * 86_400,
                               description="How long rq keeps a failed job (seconds).")
    local_workers: int = Field(
        default=2, ge=0, le=256, description="rq worker processes `zeroforge run` starts itself (0 = external only)."
    )
    overlap_selfplay: bool = Field(
        default=False,
        description="Continuous self-play: enqueue the next generation's self-play, with the current best, right "
        "behind this generation's, and keep a waiting self-play job for every live worker while this generation "
        "trains and gates (workers take train and eval jobs first); the next generation trains on all those games "
        "of the model that was best one gate earlier (pair it with train.samples_per_position).",
    )
    seed: int = Field(default=0, ge=0, le=2**31,
                      description="Base seed; job seeds are derived from it, the generation and job.")
    job_retries: int = Field(
        default=2, ge=0, le=20,
        description="How often a failed job, or one whose worker died, is run again before the run stops with an "
        "error.",
    )
    worker_heartbeat_s: int = Field(
        default=5, ge=1, le=300,
        description="Heartbeat of the local workers `zeroforge run` starts (remote workers: --heartbeat); the job of "
        "a worker that dies is requeued after 4 missed heartbeats.",
    )
    oracle_positions: int = Field(
        default=200, ge=0, le=100_000,
        description="Labelled positions on which each generation's best model is measured (the oracle figures: "
        "raw policy and a small search against exact labels; games without labels, e.g. Go, skip it; 0 = off).",
    )
    oracle_simulations: int = Field(
        default=16, ge=1, le=10_000, description="Simulations of the search the oracle figures measure.")
    redis_outage_s: int = Field(
        default=120, ge=5, le=86_400,
        description="How long the pipeline waits for Redis to come back before it stops (resumable) with an error.",
    )
    store: StoreUrl = Field(
        default=None,
        description="Object store for workers on other hosts (s3://BUCKET/PREFIX; keys from AWS_* variables): the "
        'pipeline publishes the models its jobs play there and fetches the shards workers publish ("none" = '
        "$ZEROFORGE_STORE, else workers share the data directory).",
    )
    store_outage_s: int = Field(
        default=120, ge=5, le=86_400,
        description="How long a store request is retried while the store does not answer before the run stops "
        "(resumable) with an error.",
    )
    store_cache_gb: float = Field(
        default=4.0, gt=0, le=100_000,
        description="Size bound of the replica a host with only the store keeps (`--store` on the reading "
        "commands): before each sync its shards, then its model files other than the best, are evicted least "
        "recently used first until they fit (shared.store.cache).",
    )

    @model_validator(mode="after")
    def _wait_covers_jobs(self) -> PipelineSection:
        longest = max(self.selfplay_timeout_s, self.train_timeout_s, self.eval_timeout_s)
        if self.wait_timeout_s < longest:
            raise ValueError(f"wait_timeout_s ({self.wait_timeout_s}) must be >= the longest job timeout ({longest})")
        return self
