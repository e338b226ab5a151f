"""Variance-reduced evaluation: the luck corrections have mean zero (with the packaged value
function and with one of random numbers), the intervals cover, the match API's fields, and bad
input. The long measurements (standard errors side by side) are benchmarks/variance_reduction.py."""

import json
import math
import re

import numpy as np
import pytest
import torch

from agents.evaluation.ladder import BATCH_DEALS, elo_expectation, fit_rating, load_ladder, rate
from agents.evaluation.luck import (
    CHANCE_EVENTS,
    CHANCE_POINTS,
    CHANCE_WIN,
    DECISION_EVENTS,
    DECISION_POINTS,
    OUTCOME_POINTS,
    ROLLOUT_GREEDY,
    ROLLOUT_HEURISTIC,
    ROLLOUT_NETWORK,
    STAGE_POINTS,
    STAGE_WIN,
    STAGES,
    luck_corrections,
)
from agents.evaluation.matches import MoveTrace, cross_fitted, duplicate_match, play_games
from agents.evaluation.rate_cli import main as rate_main
from agents.evaluation.store import RatingStore
from agents.learning.state_value import StateValue, load_state_value, state_value_path
from agents.players.basic import GreedyPolicy, RandomPolicy
from agents.players.heuristic import HeuristicPolicy
from bastra_env import Rules
from bastra_env.layout import OFFSETS

ROUND_2P = Rules(num_players=2, max_rounds=1)


def walked(rules, seat_policies, seeds, value, samples=2):
    trace = MoveTrace.empty(len(seeds))
    scores, _ = play_games(rules, seat_policies, seeds, trace=trace)
    figures = luck_corrections(rules, seeds, trace.actions, trace.prob_rows, trace.prob_table,
                               value, samples=samples)  # fmt: skip
    assert np.array_equal(figures[:, OUTCOME_POINTS], scores[:, 0] - scores[:, 1])
    return scores, figures


def decisions(env, seed):
    """Each decision of the game ``env`` plays from ``seed``: the seat's observation, its flat
    float32 row ``[1, N]`` and mask ``[1, 208]``; the caller steps ``env`` before the next."""
    env.reset(seed=seed)
    for _agent in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        flat = obs["observation"].astype(np.float32)[None]
        yield obs, flat, obs["action_mask"].astype(bool)[None]


def assert_mean_zero(values, z=2.576):
    """The mean lies within its 99% interval around zero."""
    half = z * values.std(ddof=1) / math.sqrt(len(values))
    assert abs(values.mean()) <= half, (values.mean(), half)


@pytest.mark.slow
def test_corrections_have_mean_zero_over_10000_rounds():
    # a sampling player (decision corrections) against a deterministic one, seats alternating
    rng_player, greedy = RandomPolicy(seed=7), GreedyPolicy()
    seats = [[rng_player, greedy] if g % 2 == 0 else [greedy, rng_player] for g in range(10_000)]
    _, figures = walked(ROUND_2P, seats, list(range(10_000)), load_state_value(table="2p"))
    assert (figures[:, DECISION_EVENTS] == 24).all()  # every move of the random seat
    assert (figures[:, CHANCE_EVENTS] == 6).all()  # the six deals of a 2p round
    assert_mean_zero(figures[:, CHANCE_POINTS] + figures[:, DECISION_POINTS])
    assert_mean_zero(figures[:, CHANCE_POINTS])
    assert_mean_zero(figures[:, DECISION_POINTS])


def test_random_value_function_keeps_the_estimate_unbiased_only_noisier():
    poor = StateValue.random("2p", seed=3, scale=0.3)
    seats = [[HeuristicPolicy(), GreedyPolicy()], [GreedyPolicy(), HeuristicPolicy()]] * 1500
    scores, figures = walked(ROUND_2P, seats, [g // 2 for g in range(3000)], poor)
    corrections = figures[:, CHANCE_POINTS] + figures[:, DECISION_POINTS]
    assert_mean_zero(corrections)
    raw = (scores[:, 0] - scores[:, 1]).astype(float)
    assert (raw - corrections).var() > raw.var()  # noisier than the plain estimate
    assert_mean_zero(figures[:, CHANCE_WIN])
    # the stages' sums split the chance corrections: first deal, 3 in the middle, 2 last ones
    stages = figures[:, STAGE_POINTS : STAGE_POINTS + STAGES]
    assert np.allclose(stages.sum(axis=1), figures[:, CHANCE_POINTS])
    assert np.allclose(figures[:, STAGE_WIN : STAGE_WIN + STAGES].sum(axis=1),
                       figures[:, CHANCE_WIN])  # fmt: skip
    assert (stages != 0).mean(axis=0).min() > 0.5  # every stage has its deals


@pytest.mark.slow
def test_95_intervals_cover_the_large_sample_value():
    # the large-sample value: 20,000 plain duplicate deals of single rounds
    greedy, heuristic = GreedyPolicy(), HeuristicPolicy()
    big = duplicate_match(greedy, heuristic, deals=20_000, mode="round", seed=10**6)
    truth = big.point_diff
    assert big.point_diff_ci < 0.15
    value = load_state_value(table="2p")
    held = 0
    matches = 200
    for m in range(matches):
        r = duplicate_match(greedy, heuristic, deals=120, mode="round", seed=1000 * m,
                            variance_reduction=True, value=value)  # fmt: skip
        held += abs(r.point_diff - truth) <= r.point_diff_ci
    assert 0.93 * matches <= held <= 0.97 * matches, held


def test_match_fields_and_determinism():
    kwargs = dict(deals=12, mode="game", seed=5, variance_reduction=True, target_score=30)
    r = duplicate_match("random", "greedy", num_threads=1, **kwargs)
    again = duplicate_match("random", "greedy", num_threads=2, **kwargs)
    assert r.variance_reduced and r.decisions == {"a": "sampled", "b": "deterministic"}
    assert len(r.deal_values) == len(r.raw_deal_values) == 12
    assert r.point_diff == pytest.approx(np.mean(r.deal_values))
    assert r.raw_point_diff == pytest.approx(np.mean(r.raw_deal_values))
    assert r.raw_win_rate == (r.wins + r.draws / 2) / r.games
    assert r.ci_low < r.win_rate < r.ci_high
    assert not np.array_equal(r.deal_values, r.raw_deal_values)
    for field in ("point_diff", "point_diff_ci", "win_rate", "raw_point_diff", "ci_low"):
        assert getattr(r, field) == getattr(again, field)
    assert np.array_equal(r.deal_values, again.deal_values)
    plain = duplicate_match("random", "greedy", deals=12, mode="game", seed=5, target_score=30)
    assert plain.point_diff == r.raw_point_diff and plain.win_rate == r.raw_win_rate
    assert not plain.variance_reduced and np.array_equal(plain.deal_values, r.raw_deal_values)
    assert isinstance(r.deal_values, np.ndarray) and r.deal_values.shape == (12,)
    assert json.loads(json.dumps(r.to_json()))["deal_values"] == r.deal_values.tolist()


def test_team_game_and_unknown_decisions():
    r = duplicate_match("heuristic", "pimc:2", table="4p_teams", deals=2, mode="round", seed=1,
                        variance_reduction=True)  # fmt: skip
    assert r.decisions == {"a": "deterministic", "b": "unknown"}
    assert "variance-reduced" in r.line()


def test_a_player_that_raises_is_named():
    class Broken:
        name = "broken"

        def act_batch(self, observations, masks):
            raise KeyError("no model")

    with pytest.raises(RuntimeError, match=r"'broken' failed choosing a move.*no model"):
        duplicate_match(Broken(), "greedy", deals=2, mode="round", variance_reduction=True)


def test_value_files_from_elsewhere_are_refused(tmp_path):
    with pytest.raises(ValueError, match="for the '2p' table, asked for '4p_teams'"):
        load_state_value(state_value_path("2p"), table="4p_teams")
    with pytest.raises(ValueError, match="4p_teams table, these games are 2 players"):
        duplicate_match("greedy", "heuristic", deals=2, variance_reduction=True,
                        value=load_state_value(table="4p_teams"))  # fmt: skip
    corrupt = tmp_path / "value.pt"
    corrupt.write_bytes(b"not a checkpoint")
    with pytest.raises(ValueError, match="not a readable value function file"):
        load_state_value(corrupt)
    other = tmp_path / "other.pt"
    torch.save({"format": "bastra-policy"}, other)
    with pytest.raises(ValueError, match="not a state value file"):
        load_state_value(other)
    payload = torch.load(state_value_path("2p"), weights_only=True)
    payload["features"] += 1
    torch.save(payload, other)
    with pytest.raises(ValueError, match="another feature layout"):
        load_state_value(other)
    with pytest.raises(ValueError, match="value= is the value function of variance_reduction"):
        duplicate_match("greedy", "heuristic", deals=2, value=state_value_path("2p"))


def test_moves_that_do_not_replay_are_refused():
    trace = MoveTrace.empty(1)
    play_games(ROUND_2P, [[GreedyPolicy(), GreedyPolicy()]], [3], trace=trace)
    with pytest.raises(ValueError, match="does not replay"):
        luck_corrections(ROUND_2P, [4], trace.actions, trace.prob_rows, trace.prob_table,
                         load_state_value(table="2p"))  # fmt: skip


# ------------------------------------------------------------------ the frozen ladder
def small_ladder(tmp_path, ratings=None):
    path = tmp_path / "ladder.json"
    path.write_text(json.dumps({
        "format": "bastra-ladder", "table": "2p", "version": "test",
        "ratings": ratings or {"random": 723.1, "greedy": 1121.6, "heuristic": 1535.4},
    }))  # fmt: skip
    return path


def test_fit_rating_matches_the_elo_expectation():
    # 60% against a 1500 player is 400 log10(1.5) = 70.4 Elo above it
    values = [np.array([1.0, 0.0, 1.0, 0.5, 0.5] * 40)]
    rating, ci = fit_rating([1500.0], values)
    assert rating == pytest.approx(1500 + 400 * math.log10(1.5), abs=0.01)
    assert 0 < ci < math.inf
    rating, ci = fit_rating([1500.0], [np.ones(10)])  # all won: no finite rating explains it
    assert ci == math.inf


def test_rate_stores_and_extends_a_rating(tmp_path):
    ladder = load_ladder("2p", small_ladder(tmp_path))
    store = RatingStore(tmp_path / "ratings.sqlite")
    first = rate("greedy", "2p", minutes=10, precision=1000, store=store, ladder=ladder)
    assert first.stopped == "precision" and first.ladder_rating == 1121.6
    assert set(first.opponents) == {"random", "heuristic"}  # a member never plays itself
    assert first.games == 2 * BATCH_DEALS * 2
    again = rate("greedy", "2p", minutes=10, precision=first.ci - 1, store=store, ladder=ladder)
    assert again.games > first.games  # extended: the stored batches count, new deals are added
    stored = store.matches("greedy", "2p", "test")
    assert len(stored) == again.games // (2 * BATCH_DEALS)
    assert len({(m.opponent, m.seed) for m in stored}) == len(stored)  # no deal replayed
    assert store.ratings("2p")[0]["rating"] == pytest.approx(again.rating)


def test_rate_command_line(tmp_path, capsys):
    ladder = small_ladder(tmp_path)
    out = tmp_path / "rating.json"
    args = ["greedy", "--ladder", str(ladder), "--store", str(tmp_path / "r.sqlite")]
    payload = rate_main([*args, "--precision", "1000", "--json", str(out)])
    assert json.loads(out.read_text()) == payload
    assert {"rating", "ci", "games", "ladder_rating"} <= set(payload)
    assert "greedy (2p):" in capsys.readouterr().out
    for bad, message in (
        (["--precision", "0"], "--precision must be a positive"),
        (["--table", "4p_teams"], "no ladder for the table '4p_teams'|the ladder of '2p'"),
    ):
        with pytest.raises(SystemExit):
            rate_main([*args, *bad])
        assert re.search(message, capsys.readouterr().err)
    with pytest.raises(SystemExit):
        rate_main(["greedy", "--ladder", str(tmp_path / "missing.json")])
    assert "not a readable ladder file" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        rate_main(["bastra2p", "--ladder", str(ladder), "--store", str(tmp_path / "r.sqlite")])
    assert "unknown policy 'bastra2p'" in capsys.readouterr().err


def test_store_refuses_a_file_that_is_not_sqlite(tmp_path):
    bad = tmp_path / "ratings.sqlite"
    bad.write_text("not a database")
    with pytest.raises(ValueError, match="not a usable SQLite file"):
        RatingStore(bad)


def test_the_fitted_weight_keeps_good_corrections_and_drops_noise():
    """``cross_fitted``: corrections that explain the results get a weight near 1 and take the
    spread away; corrections of pure noise get a weight near 0 and leave the plain estimate
    (instead of adding their noise). Over repeated draws, both estimates stay unbiased."""
    rng = np.random.default_rng(5)
    good, noise, plain = [], [], []
    for _ in range(400):
        luck = rng.normal(0, 3, 200)
        raw = 1.0 + luck + rng.normal(0, 1, 200)
        values, weight = cross_fitted(raw, luck)
        good.append((values.mean(), weight[0], values.std()))
        values, weight = cross_fitted(raw, rng.normal(0, 3, 200))
        noise.append((values.mean(), weight[0], values.std()))
        plain.append(raw.std())
    good_a, noise_a = np.array(good), np.array(noise)
    assert abs(good_a[:, 1].mean() - 1) < 0.02 and good_a[:, 2].mean() < 0.35 * np.mean(plain)
    assert abs(noise_a[:, 1].mean()) < 0.02 and noise_a[:, 2].mean() < 1.02 * np.mean(plain)
    for means in (good_a[:, 0], noise_a[:, 0]):  # the true mean is 1 in both
        assert abs(means.mean() - 1) < 3 * means.std() / math.sqrt(len(means))
    assert cross_fitted(np.array([1.0, 2.0]), np.array([0.5, 0.5]))[1].tolist() == [1.0]
    # a second kind of correction that explains what the first leaves gets its own weight
    luck, other = rng.normal(0, 3, 400), rng.normal(0, 2, 400)
    raw = luck + 0.5 * other + rng.normal(0, 0.5, 400)
    values, weights = cross_fitted(raw, np.stack([luck, other], axis=1))
    assert np.allclose(weights, [1.0, 0.5], atol=0.05) and values.std() < 0.6


def test_a_learned_seat_rolls_out_with_its_own_network_as_it_plays():
    """The walk's compiled copy of a learned player's network chooses what the player does."""
    from agents.evaluation.luck import _policy_choice, pack_policies, policy_arrays
    from agents.evaluation.matches import rollout_players
    from agents.registry import make_policy
    from bastra_env import raw_env

    tables = (({"num_players": 2}, "bastra_2p:network"),
              ({"num_players": 4, "teams": True}, "bastra_4p_teams:network"))  # fmt: skip
    for table, name in tables:
        policy = make_policy(name, seed=0)
        flat, meta = pack_policies([policy_arrays(policy.model)])
        env = raw_env(**table)
        rng = np.random.default_rng(0)
        checked = 0
        for _obs, o, m in decisions(env, 11):
            played = int(policy.act_batch(o, m)[0])
            assert _policy_choice(o, m, flat, meta, 0) == played
            checked += 1
            env.step(played if rng.random() < 0.8 else int(rng.choice(np.flatnonzero(m[0]))))
        assert checked > 40
        codes, nets = rollout_players([[policy, GreedyPolicy()] * (table["num_players"] // 2)])
        assert codes[0, 1] == ROLLOUT_GREEDY and codes[0, 0] == ROLLOUT_NETWORK and len(nets) == 1
    codes, _ = rollout_players([[HeuristicPolicy(), RandomPolicy()]])
    assert codes.tolist() == [[ROLLOUT_HEURISTIC, ROLLOUT_HEURISTIC]]


def test_a_search_seat_rolls_out_its_own_endgame_search_in_the_last_deal():
    """In a two-player round's last deal the walk's rollouts play a search seat's own endgame
    search: the move PIMC (the round's points) and the shipped learned player (the game's
    chance, its network breaking ties) make, on every last-deal position of random games."""
    from agents.evaluation.luck import (
        ENDGAME_GAME,
        ENDGAME_NONE,
        ENDGAME_POINTS,
        _endgame_choice,
        pack_policies,
        policy_arrays,
    )
    from agents.evaluation.matches import endgame_searches
    from agents.registry import make_policy
    from bastra_env import raw_env

    pimc, learned = make_policy("pimc:64", seed=0), make_policy("bastra_2p", seed=0)
    others = [make_policy(n, seed=0) for n in ("bastra_2p:points", "bastra_2p:network")]
    codes, equity = endgame_searches([[learned, pimc], [*others], [HeuristicPolicy(), pimc]],
                                     Rules(num_players=2))  # fmt: skip
    assert codes.tolist() == [[ENDGAME_GAME, ENDGAME_POINTS], [ENDGAME_POINTS, ENDGAME_NONE],
                              [ENDGAME_NONE, ENDGAME_POINTS]] and equity.size  # fmt: skip
    teams, _ = endgame_searches([[pimc] * 4], Rules(num_players=4, teams=True))
    assert not teams.any()
    flat, meta = pack_policies([policy_arrays(learned.model)])
    env = raw_env(num_players=2)
    rng = np.random.default_rng(0)
    checked = 0
    for seed in range(6):
        for obs, o, m in decisions(env, seed):
            points = _endgame_choice(o, m, ENDGAME_POINTS, equity, ROLLOUT_HEURISTIC, (flat, meta))
            game = _endgame_choice(o, m, ENDGAME_GAME, equity, ROLLOUT_NETWORK, (flat, meta))
            deck_empty = obs["observation"][OFFSETS["deck_left"].start] == 0
            assert (points >= 0) == (game >= 0) == bool(deck_empty)
            if points >= 0 and m.sum() > 1:
                assert points == pimc.act(obs)
                assert game == int(learned.act_batch(o, m)[0])
                checked += 1
            env.step(int(rng.choice(np.flatnonzero(m[0]))))
    assert checked > 100


def test_the_ladder_brackets_the_rating_then_plays_the_most_informative_member_a_second():
    ladder = load_ladder("2p")
    rating = ladder.ratings["pimc:64"] + 5
    nearest = sorted((m for m in ladder.ratings if m != "x"),
                     key=lambda m: abs(ladder.ratings[m] - rating))[:3]  # fmt: skip
    first = ladder.next_opponent(rating, "x", {})
    second = ladder.next_opponent(rating, "x", {first: 16})
    assert {first, second} == set(nearest[:2])
    played = {m: 16 for m in nearest}
    chosen = ladder.next_opponent(rating, "x", played)
    assert chosen == ladder.next_opponent(rating, "x", played)  # a function of its arguments
    # among the three nearest, a slow member is chosen only for much more information a second
    info = {m: float(elo_expectation(rating - ladder.ratings[m])) for m in nearest}
    per_second = {m: info[m] * (1 - info[m]) / ladder.seconds[m] for m in nearest}
    assert chosen == max(per_second, key=per_second.get)


def test_the_team_game_has_its_own_frozen_ladder(tmp_path):
    ladder = load_ladder("4p_teams")
    assert ladder.version.startswith("4p_teams") and {"random", "bastra_4p_teams"} <= set(
        ladder.ratings
    )
    assert set(ladder.seconds) == set(ladder.ratings)
    store = RatingStore(tmp_path / "r.sqlite")
    rating = rate("greedy", table="4p_teams", precision=1000, store=store)
    assert rating.ladder_rating == ladder.ratings["greedy"] and len(rating.opponents) >= 2
    assert [e["policy"] for e in store.ratings("4p_teams")] == ["greedy"]
    assert store.ratings("2p") == []
