"""The oracle figures: rates against hand-labelled sets, each family's set builder against its solver, the set
file and the metrics record."""
from __future__ import annotations

import numpy as np
import pytest

from shared.curves import GenerationMetrics, append_metrics, read_metrics
from shared.games import family_of, make_game
from shared.games.oracle_set import OracleSet, load_oracle_set, save_oracle_set
from shared.players.oracle import compare_on_oracle, hit_rate, measure_oracle, oracle_line_of, random_move_rate
from shared.search.types import SearchConfig


def test_hit_rate_and_random_rate_on_a_hand_labelled_set():
    keeps = np.array([[1, 0, 0, 0], [1, 1, 0, 0], [0, 0, 1, 1]], bool)
    legal = np.array([[1, 1, 0, 0], [1, 1, 1, 1], [1, 1, 1, 0]], bool)
    perfect = hit_rate(keeps, keeps.argmax(axis=1))
    assert (perfect.hits, perfect.total, perfect.rate) == (3, 3, 1.0)
    assert 0.4 < perfect.ci_low < 1.0 and perfect.ci_high == pytest.approx(1.0)
    wrong = hit_rate(keeps, np.array([1, 2, 0]))
    assert wrong.hits == 0 and wrong.ci_low == pytest.approx(0.0, abs=1e-12)
    # uniformly random legal move: 1/2, 2/4, 1/3 (the 4th action of row 3 is illegal)
    assert random_move_rate(keeps, legal) == pytest.approx((1 / 2 + 2 / 4 + 1 / 3) / 3)


def test_random_player_matches_the_analytic_rate():
    game = make_game("tictactoe")
    oracle = family_of(game).oracle_set(game, 10_000, 0)
    legal = game.legal_mask(oracle.states)
    rng = np.random.default_rng(1)
    draws = [hit_rate(oracle.keeps, np.where(legal, rng.random(legal.shape), -1.0).argmax(axis=1)).rate
             for _ in range(20)]
    assert np.mean(draws) == pytest.approx(random_move_rate(oracle.keeps, legal), abs=0.01)


def test_a_network_that_knows_the_labels_scores_100_percent():
    from shared.games.tictactoe.minimax import move_values

    game = make_game("tictactoe")
    oracle = family_of(game).oracle_set(game, 60, 3)

    def perfect(states):                   # logits: the exact move scores (illegal moves set low)
        scores = move_values(game, states, scored=True)
        logits = np.where(np.isfinite(scores), scores, -20.0).astype(np.float32)
        return logits, np.sign(scores.max(axis=1)).astype(np.float32)

    figures = measure_oracle(game, perfect, oracle, SearchConfig(num_simulations=4))
    assert figures.raw.rate == 1.0 and figures.raw_optimal.rate == 1.0 and figures.positions == 60
    assert figures.search.total == figures.search_optimal.total == 60 and 0.0 < figures.random_move < 1.0
    assert "optimal move: raw 100.0%" in oracle_line_of(figures.to_dict())


def test_compare_on_oracle_pairs_each_model_with_the_first_position_by_position():
    from shared.games.tictactoe.minimax import move_values

    game = make_game("tictactoe")
    oracle = family_of(game).oracle_set(game, 80, 2)

    def perfect(states):                   # the exact move scores as logits: keeps every outcome
        scores = move_values(game, states, scored=True)
        return np.where(np.isfinite(scores), scores, -20.0).astype(np.float32), np.zeros(len(states), np.float32)

    def worst(states):                     # the negated scores: picks a losing or drawing move where one exists
        logits, values = perfect(states)
        return np.where(game.legal_mask(states), -logits, -20.0).astype(np.float32), values

    report = compare_on_oracle(game, [("perfect", perfect), ("worst", worst), ("again", perfect)], oracle,
                               SearchConfig(num_simulations=2), resamples=500)
    assert [m["model"] for m in report["models"]] == ["perfect", "worst", "again"]
    assert report["positions"] == 80 and report["simulations"] == 2 and report["source"] == oracle.source
    assert report["models"][0]["raw"]["rate"] == 1.0
    worst_raw = report["models"][1]["raw"]
    # the worst move keeps the outcome only where every legal move does
    every_move_keeps = (oracle.keeps | ~game.legal_mask(oracle.states)).all(axis=1)
    assert worst_raw["hits"] == int(every_move_keeps.sum()) < 80
    versus_worst, versus_itself = report["differences"]
    assert (versus_worst["model"], versus_worst["baseline"]) == ("worst", "perfect")
    mean, low, high = versus_worst["raw"]
    assert mean == pytest.approx(worst_raw["rate"] - 1.0) and low <= mean <= high < 0
    assert versus_itself["raw"] == [0.0, 0.0, 0.0] and set(versus_itself) >= {"raw_optimal", "search_optimal"}
    with pytest.raises(ValueError, match="at least one model"):
        compare_on_oracle(game, [], oracle, SearchConfig(num_simulations=2))


def test_tictactoe_set_is_exhaustive_deterministic_and_agrees_with_minimax():
    from shared.games.tictactoe.minimax import move_values, reachable_positions

    game = make_game("tictactoe")
    build = family_of(game).oracle_set
    everything = build(game, 100_000, 0)
    states = np.concatenate(reachable_positions(game))
    values = move_values(game, states[~game.is_terminal(states)])
    assert len(everything) == int((values.max(axis=1) >= 0).sum())
    assert len(np.unique(everything.states[:, :9], axis=0)) == len(everything)
    first, again, other = build(game, 100, 5), build(game, 100, 5), build(game, 100, 6)
    assert np.array_equal(first.states, again.states) and not np.array_equal(first.states, other.states)
    labels = move_values(game, first.states)
    assert np.array_equal(first.keeps, labels == labels.max(axis=1, keepdims=True))
    # optimal moves keep the outcome, and where a move wins at once the optimal moves are exactly those
    assert not (everything.optimal & ~everything.keeps).any() and everything.optimal.any(axis=1).all()
    wins_now = game.winning_moves(everything.states)
    rows = wins_now.any(axis=1)
    assert rows.any() and np.array_equal(everything.optimal[rows], wins_now[rows])
    assert (everything.optimal.sum() < everything.keeps.sum())


@pytest.mark.parametrize("name", [pytest.param("connect4", marks=pytest.mark.integration), "othello-6x6"])
def test_solver_sets_agree_with_the_solver(name):
    game = make_game(name)
    oracle = family_of(game).oracle_set(game, 4, 0)
    if name == "connect4":
        from shared.games.connect4.oracle import ORACLE_MAX_NODES
        from shared.games.connect4.solver import Connect4Solver
        label = Connect4Solver(max_nodes=ORACLE_MAX_NODES).state_values
    else:
        from shared.games.othello.solver import OthelloSolver
        label = OthelloSolver(game).move_values
    assert len(oracle) == 4 and not game.is_terminal(oracle.states).any()
    for state, keeps in zip(oracle.states, oracle.keeps):
        values = label(state)
        assert values.max() >= 0 and np.array_equal(keeps, values == values.max())


def test_othello_late_midgame_set_holds_positions_further_from_the_end_labelled_by_the_solver():
    from shared.games.othello.oracle import LATE_MIDGAME_EMPTIES, ORACLE_EMPTIES
    from shared.games.othello.solver import OthelloSolver

    game = make_game("othello-6x6")
    build = family_of(game).oracle_phases["late-midgame"]
    oracle = build(game, 3, 0)
    empties = (oracle.states[:, :game.num_cells] == 0).sum(axis=1)
    low, high = LATE_MIDGAME_EMPTIES
    assert len(oracle) == 3 and ((empties >= low) & (empties <= high)).all()
    assert empties.min() > ORACLE_EMPTIES[6][1] and "late-midgame positions with 17-22 empty squares" in oracle.source
    assert np.array_equal(oracle.states, build(game, 3, 0).states)
    solver = OthelloSolver(game, max_nodes=10**9)
    for state, keeps in zip(oracle.states, oracle.keeps):
        values = solver.move_values(state)
        assert values.max() >= 0 and np.array_equal(keeps, values == values.max())


def test_inarow_set_keeps_winning_and_blocking_moves():
    game = make_game("gomoku-6x6-4")
    oracle = family_of(game).oracle_set(game, 8, 0)
    outcomes = game.move_outcomes(oracle.states)
    legal = game.legal_mask(oracle.states)
    assert len(oracle) >= 4 and (oracle.keeps & legal).any(axis=1).all() and not (oracle.keeps & ~legal).any()
    wins = (outcomes == 1).any(axis=1)
    assert np.array_equal(oracle.keeps[wins], (outcomes == 1)[wins])
    # each position's kind says what it asks: a win in 1 has a winning move, a must-block none but a losing one
    assert oracle.kind_names == ("win_in_1", "must_block", "vcf", "vcf_defence") and oracle.kinds.shape == (len(oracle),)
    kind = np.asarray(oracle.kind_names)[oracle.kinds]
    assert (kind == "win_in_1").sum() == (kind == "must_block").sum() == 2
    assert np.array_equal(wins, kind == "win_in_1")
    blocks = kind == "must_block"
    assert ((outcomes == -1) & legal)[blocks].any(axis=1).all() and not (outcomes == 1)[blocks].any()


def test_oracle_figures_split_by_kind_of_position():
    from shared.players.oracle import hits_by_kind

    game = make_game("gomoku-6x6-4")
    states = game.initial_states(5)
    keeps = game.legal_mask(states)
    oracle = OracleSet(states, keeps, None, "five", np.array([0, 2, 0, 2, 2], np.int8), ("a", "b", "c"))
    rows = hits_by_kind(oracle, {"raw": np.array([1, 0, 0, 1, 1], bool), "search": np.ones(5, bool)})
    assert [(r["kind"], r["positions"], r["raw"]["hits"], r["search"]["hits"]) for r in rows] == [
        ("a", 2, 1, 2), ("c", 3, 2, 3)]                                      # "b" has no position: left out
    assert rows[0]["raw"]["rate"] == 0.5 and 0.0 < rows[0]["raw"]["ci_low"] < 0.5
    assert hits_by_kind(OracleSet(states, keeps, None, "five"), {"raw": np.ones(5, bool)}) == []

    def uniform(batch):
        return np.zeros((batch.shape[0], game.num_actions), np.float32), np.zeros(batch.shape[0], np.float32)

    report = compare_on_oracle(game, [("uniform", uniform)], oracle, SearchConfig(num_simulations=2))
    (model,) = report["models"]
    assert [k["kind"] for k in model["kinds"]] == ["a", "c"] and model["kinds"][1]["raw"]["hits"] == 3


def test_go_has_no_oracle_set():
    assert family_of(make_game("go-9x9")).oracle_set is None


def test_set_file_round_trips(tmp_path):
    game = make_game("tictactoe")
    oracle = family_of(game).oracle_set(game, 30, 0)
    outcome_only = OracleSet(oracle.states, oracle.keeps, None, oracle.source)
    with_kinds = OracleSet(oracle.states, oracle.keeps, None, oracle.source,
                           (np.arange(len(oracle)) % 2).astype(np.int8), ("even", "odd"))
    for original in (oracle, outcome_only, with_kinds):
        save_oracle_set(tmp_path / "set.npz", original)
        loaded = load_oracle_set(tmp_path / "set.npz", game)
        assert np.array_equal(loaded.states, original.states) and np.array_equal(loaded.keeps, original.keeps)
        assert (loaded.optimal is None) == (original.optimal is None) and loaded.source == original.source
        assert (loaded.kinds is None) == (original.kinds is None) and loaded.kind_names == original.kind_names
    assert np.array_equal(loaded.kinds, with_kinds.kinds)
    bad = OracleSet(oracle.states, oracle.keeps, None, oracle.source, np.full(len(oracle), 2, np.int8), ("a", "b"))
    save_oracle_set(tmp_path / "bad.npz", bad)
    with pytest.raises(ValueError, match="kinds do not fit"):
        load_oracle_set(tmp_path / "bad.npz", game)
    with pytest.raises(ValueError, match="not an oracle set of connect4"):
        load_oracle_set(tmp_path / "set.npz", make_game("connect4"))


def test_metrics_record_round_trips_the_oracle_figures(tmp_path):
    base = dict(generation=1, time="2026-01-01T00:00:00+00:00", games=4, positions=30, first_player_wins=1, draws=2,
                second_player_wins=1)
    measured = GenerationMetrics(**base, oracle_positions=200, oracle_simulations=16, oracle_raw=0.8,
                                 oracle_raw_ci_low=0.74, oracle_raw_ci_high=0.85, oracle_search=0.9,
                                 oracle_search_ci_low=0.85, oracle_search_ci_high=0.93, oracle_random=0.5)
    append_metrics(tmp_path / "m.jsonl", measured)
    append_metrics(tmp_path / "m.jsonl", GenerationMetrics(**{**base, "generation": 2}))
    first, second = read_metrics(tmp_path / "m.jsonl")
    assert first == measured and second.oracle_raw is None
    assert first.scalars()["oracle/raw_policy"] == 0.8 and second.scalars()["oracle/search"] is None
