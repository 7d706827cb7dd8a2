"""gate.anchor_every: the decide flow plays the anchor match only in generations that are multiples of k, for the
candidate it promoted or for a best whose match was deferred; a resumed run does not play a deferred one early.
The match itself is replaced by a recorder here (the e2e tests play real anchor matches)."""
from __future__ import annotations

import logging

import pytest

import flows.promote as promote
from tests.services.conftest import tiny_config
from tests.services.test_next_generation import _add_candidate


@pytest.fixture
def played(monkeypatch) -> list[tuple[str, int]]:
    """The (version, generation) of each anchor match the flows ask for; each scores 0.75."""
    calls: list[tuple[str, int]] = []

    def fake_match(config, data_dir, version, generation, logger):
        calls.append((version, generation))
        return {"opponent": config.gate.anchor, "games": 4, "wins": 3, "draws": 0, "losses": 1, "score": 0.75,
                "ci_low": 0.3, "ci_high": 0.95, "elo": 190.0, "elo_low": -150.0, "elo_high": 500.0}

    monkeypatch.setattr(promote, "anchor_match", fake_match)
    monkeypatch.setattr(promote, "publish_strength", lambda *args: None)     # a Prefect artifact: needs a flow run
    monkeypatch.setattr(promote, "get_run_logger", lambda: logging.getLogger("test-decide"))
    return calls


def _decide(config, layout, registry, generation: int, promote_it: bool) -> tuple[str, dict]:
    """Register a candidate of `generation` on best and run the decide flow's body on a gate that promotes it or
    not; returns the candidate and the decision."""
    best = registry.best_version()
    candidate = _add_candidate(registry, best, generation)
    gate = {"promote": promote_it, "reason": "won" if promote_it else "lost", "score": 0.6 if promote_it else 0.4}
    return candidate, promote.decide_flow.fn(config=config, generation=generation, data_dir=str(layout.root),
                                             candidate=candidate, best=best, gate=gate)


def test_with_anchor_every_2_the_matches_wait_for_even_generations(layout, registry, initial_version, played) -> None:
    config = tiny_config(**{"gate.anchor": "random", "gate.anchor_games": 4, "gate.anchor_every": 2})
    first, decision = _decide(config, layout, registry, 1, True)
    assert decision == {"promoted": True, "best": first, "anchor": None} and played == []
    assert promote.missing_anchor(config, registry).version == first

    second, decision = _decide(config, layout, registry, 2, False)      # rejected, but the best's match is due
    assert played == [(first, 2)] and decision["best"] == first and decision["anchor"]["score"] == 0.75
    assert registry.get(first).gate["anchor"]["score"] == 0.75 and registry.get(first).gate["promote"] is True
    assert "anchor" not in (registry.get(second).gate or {})

    third, _ = _decide(config, layout, registry, 3, True)
    assert promote.ensure_anchor(config, str(layout.root), logging.getLogger("test")) is None   # resumed: not due
    assert played == [(first, 2)]
    fourth, decision = _decide(config, layout, registry, 4, True)
    assert played == [(first, 2), (fourth, 4)] and decision["anchor"] is not None
    assert "anchor" not in registry.get(third).gate                     # overtaken before its match was due

    _, decision = _decide(config, layout, registry, 6, False)           # nothing missing: no match
    assert decision["anchor"] is None and len(played) == 2


def test_with_anchor_every_1_each_new_best_plays_at_once_and_a_rejection_plays_none(
        layout, registry, initial_version, played) -> None:
    config = tiny_config(**{"gate.anchor": "random", "gate.anchor_games": 4})
    first, decision = _decide(config, layout, registry, 1, True)
    assert played == [(first, 1)] and decision["anchor"]["opponent"] == "random"
    _, decision = _decide(config, layout, registry, 2, False)
    assert played == [(first, 1)] and decision == {"promoted": False, "best": first, "anchor": None}


def test_no_anchor_configured_plays_none(layout, registry, initial_version, played) -> None:
    config = tiny_config(**{"gate.anchor_every": 2})                     # gate.anchor = none
    _decide(config, layout, registry, 2, True)
    assert played == [] and not promote.anchor_due(config, 2)
