"""One frozen config per service, composed of the shared sections.

Each job's typed payload (services.payloads) carries its service config, and pydantic validates it
when the worker reads the payload. Workers never re-read the environment for a job: the job's config
is the one the pipeline built.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Any, TypeVar

from pydantic import model_validator

from shared.config.fields import Section
from shared.games import families
from shared.games.family import family_for_name
from shared.search.selfplay import SelfPlayConfig
from shared.config.sections import (
    GameSection,
    GateSection,
    PipelineSection,
    SearchSection,
    SelfPlaySection,
    TrainSection,
)

#: Section name -> section model, in the order of zeroforge.toml.
SECTIONS: dict[str, type[Section]] = {
    "game": GameSection,
    "search": SearchSection,
    "selfplay": SelfPlaySection,
    "train": TrainSection,
    "gate": GateSection,
    "pipeline": PipelineSection,
}

ServiceConfigT = TypeVar("ServiceConfigT", bound="ServiceConfig")


class ServiceConfig(Section):
    """Base of the service configs (frozen, unknown keys rejected)."""


class SelfPlayServiceConfig(ServiceConfig):
    """Everything a self-play job needs."""

    game: GameSection
    search: SearchSection
    selfplay: SelfPlaySection
    pipeline: PipelineSection

    @model_validator(mode="after")
    def _fast_search_fits(self) -> SelfPlayServiceConfig:
        _check_selfplay(self.search, self.selfplay)
        return self

    def selfplay_config(self) -> Any:
        """A shared.search.SelfPlayConfig (search settings, temperature schedule, move cap, resignation, caps)."""
        return SelfPlayConfig(
            search=self.search.search_config(),
            temperature_moves=self.search.temperature_moves,
            temperature_final=self.search.temperature_final,
            max_moves=self.selfplay.max_moves,
            resign_threshold=self.selfplay.resign_threshold,
            resign_disabled_fraction=self.selfplay.resign_disabled_fraction,
            full_search_fraction=self.selfplay.full_search_fraction,
            fast_simulations=self.selfplay.fast_simulations,
            solved_policy_target=self.selfplay.solved_policy_target,
            random_opening_plies=self.selfplay.random_opening_plies,
            random_opening_fraction=self.selfplay.random_opening_fraction,
        )


class TrainerConfig(ServiceConfig):
    """Everything a training job needs."""

    game: GameSection
    train: TrainSection
    pipeline: PipelineSection


def _check_selfplay(search: SearchSection, selfplay: SelfPlaySection) -> None:
    """The [selfplay] options that depend on [search]: ValueError saying what to change."""
    if selfplay.fast_simulations is not None and selfplay.fast_simulations > search.simulations:
        raise ValueError(f"selfplay.fast_simulations ({selfplay.fast_simulations}) must be <= search.simulations "
                         f"({search.simulations}); lower it or leave it unset (simulations // 4)")
    if selfplay.solved_policy_target and not search.solver:
        raise ValueError("selfplay.solved_policy_target needs the solver's proofs: set search.solver = true, or "
                         "leave solved_policy_target off")


def _check_anchor_for_game(game: GameSection, gate: GateSection) -> None:
    """A baseline anchor that only some families' games can seat (e.g. minimax) must suit the game."""
    if gate.anchor is None:
        return
    kind = gate.anchor.partition(":")[0]
    owners = [family.name for family in families().values() if kind in family.baseline_players]
    family = family_for_name(game.name)
    if owners and (family is None or kind not in family.baseline_players):
        raise ValueError(f'gate.anchor "{kind}" exists only for {", ".join(owners)}, not {game.name!r}; '
                         'use "pure-mcts:N"')


class GatekeeperConfig(ServiceConfig):
    """Everything a gate or anchor match job, and `zeroforge eval`, needs."""

    game: GameSection
    search: SearchSection
    gate: GateSection
    pipeline: PipelineSection

    @model_validator(mode="after")
    def _anchor_fits_game(self) -> GatekeeperConfig:
        _check_anchor_for_game(self.game, self.gate)
        return self

    def match_search_config(self, simulations: int | None = None) -> Any:
        """The search of the network players of a match: [search] with gate.simulations (or `simulations`), and
        always the solver (the tactic guarantee of the gate, eval, analyze, play; [search] solver is self-play's)
        and the PUCT root (the players choose their moves from the visits; [search] root is self-play's)."""
        config = self.search.search_config(self.gate.simulations if simulations is None else simulations)
        return replace(config, solver=True, root="puct")


class PipelineConfig(ServiceConfig):
    """The whole pipeline: every section; builds the per-service configs passed to jobs."""

    game: GameSection
    search: SearchSection
    selfplay: SelfPlaySection
    train: TrainSection
    gate: GateSection
    pipeline: PipelineSection

    @model_validator(mode="after")
    def _anchor_fits_game(self) -> PipelineConfig:
        _check_anchor_for_game(self.game, self.gate)
        _check_selfplay(self.search, self.selfplay)
        if self.train.value_cut_at_sampled_moves and self.search.root == "gumbel":
            raise ValueError('train.value_cut_at_sampled_moves cuts at temperature moves of a "puct" root; a Gumbel '
                             'root samples every move, so nearly no game result would be left: set search.root = '
                             '"puct" or leave value_cut_at_sampled_moves off')
        return self

    def service_config(self, cls: type[ServiceConfigT]) -> ServiceConfigT:
        """The sections `cls` needs, taken from this config (e.g. `cfg.service_config(TrainerConfig)`)."""
        return cls.model_validate({name: getattr(self, name) for name in cls.model_fields})

    def selfplay_service(self) -> SelfPlayServiceConfig:
        """The self-play job's config."""
        return self.service_config(SelfPlayServiceConfig)

    def trainer(self) -> TrainerConfig:
        """The training job's config."""
        return self.service_config(TrainerConfig)

    def gatekeeper(self) -> GatekeeperConfig:
        """The gate / anchor match job's config."""
        return self.service_config(GatekeeperConfig)


#: The service configs load_config can build.
SERVICE_CONFIGS: tuple[type[ServiceConfig], ...] = (
    SelfPlayServiceConfig,
    TrainerConfig,
    GatekeeperConfig,
    PipelineConfig,
)
