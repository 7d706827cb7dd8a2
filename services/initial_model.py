"""The first model of a run: a randomly initialised network of the configured size, registered and made best."""
from __future__ import annotations

from shared.config import GameSection
from shared.games import make_game
from shared.layout import DataLayout
from shared.network.modelfile import create_model, model_file_info, save_model
from shared.network.spec import NetworkError, NetworkSpec
from shared.registry import BestChangedError, ModelRegistry, RegistryError


def configured_spec(game_section: GameSection) -> NetworkSpec:
    """The network [game] asks for: its size and optional parts (the first model of a run is built to it)."""
    return NetworkSpec(game_section.blocks, game_section.channels, game_section.value_hidden,
                       game_section.ownership_head, game_section.global_pool, game_section.line_planes)


def network_mismatch(layout: DataLayout, game_section: GameSection) -> str | None:
    """A sentence saying that the registry's best model is another network than [game] asks for (a run resumed
    after a change of blocks, channels, value_hidden, ownership_head, global_pool or line_planes: training goes on
    from the best model, so its network stays), or None when they agree, when there is no best yet, or when the
    registry or the best model's file cannot be read (the pipeline's next steps report that with its fix)."""
    try:
        best = ModelRegistry(layout.registry_dir, game_name=layout.game_name).best()
        if best is None:
            return None
        stored = NetworkSpec.from_dict(model_file_info(best.path, verify=False)["spec"])
    except (RegistryError, NetworkError):      # NetworkError covers ModelFileError
        return None
    wanted = configured_spec(game_section)
    if stored == wanted:
        return None
    return (f"the best model {best.version} is a {stored} network and [game] asks for {wanted}: this run goes on "
            f"training the best model's network; the [game] network settings apply to a new run (another "
            f"--data-dir)")


def ensure_initial_model(layout: DataLayout, game_section: GameSection, seed: int) -> str:
    """The registry's best version; on an empty registry, a random network (game_section's size, torch seed
    `seed`) is registered as version 1 and promoted. RegistryError when versions exist but none is best."""
    registry = ModelRegistry(layout.registry_dir, game_name=layout.game_name)
    best = registry.best_version()
    if best is not None:
        return best
    if registry.list():
        raise RegistryError(f"the registry at {layout.registry_dir} has versions but no best; "
                            "choose one with `zeroforge models promote V`")
    game = make_game(game_section.name)
    spec = configured_spec(game_section)
    path = layout.initial_model_path
    path.parent.mkdir(parents=True, exist_ok=True)
    save_model(path, create_model(game, spec, seed=seed), game, {"generation": 0, "init": "random"})
    version = registry.register(path, parent=None, generation=0, training={"init": "random"})
    try:
        registry.promote(version.version, reason="initial", expected_best=None)
    except BestChangedError:   # another process made the first model at the same time: use theirs
        pass
    path.unlink(missing_ok=True)
    return registry.best_version()
