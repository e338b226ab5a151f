"""Evaluation statistics on known inputs, duplicate deals, round-robin ratings, curves."""

import json

import pytest

import bastra_env
from agents import GreedyPolicy, RandomPolicy
from agents.evaluation.cli import main
from agents.evaluation.curves import plot_curves
from agents.evaluation.matches import MatchResult, duplicate_match, wilson_interval
from agents.evaluation.ratings import bradley_terry, rating_intervals
from agents.evaluation.replay import read_record


@pytest.mark.parametrize(
    "successes, trials, low, high",
    [
        (50, 100, 0.4038, 0.5962),
        (0, 10, 0.0, 0.2775),
        (10, 10, 0.7225, 1.0),
        (90, 100, 0.8256, 0.9448),
        (950, 1000, 0.9347, 0.9619),
    ],
)
def test_wilson_interval_matches_known_values(successes, trials, low, high):
    got = wilson_interval(successes, trials)
    assert got == pytest.approx((low, high), abs=5e-4)


def result(a, b, wins, games):
    return MatchResult(a, b, "2p", "game", games, wins, 0, games - wins, wins / games, 0, 1, 0.0)


def test_bradley_terry_orders_and_scales_ratings():
    even = bradley_terry(["x", "y"], [result("x", "y", 50, 100)])
    assert even["x"] == pytest.approx(even["y"]) == pytest.approx(1500)
    ratings = bradley_terry(["a", "b"], [result("a", "b", 750, 1000)])
    # 3:1 odds is 400 * log10(3) = 191 Elo points; the prior game shrinks it only slightly
    assert ratings["a"] - ratings["b"] == pytest.approx(190.8, abs=3)
    chain = bradley_terry(
        ["a", "b", "c"],
        [result("a", "b", 70, 100), result("b", "c", 70, 100), result("a", "c", 85, 100)],
    )
    assert chain["a"] > chain["b"] > chain["c"]


def test_a_policy_against_itself_on_duplicate_deals_is_exactly_even():
    r = duplicate_match(GreedyPolicy(), GreedyPolicy(), deals=6, mode="round")
    assert r.games == 12 and r.wins == r.losses and r.point_diff == 0 and r.win_rate == 0.5


def test_duplicate_match_counts_and_intervals():
    r = duplicate_match(GreedyPolicy(), RandomPolicy(0), deals=10, names=("greedy", "random"))
    assert r.games == 20 and r.wins + r.draws + r.losses == 20
    assert r.ci_low <= r.win_rate <= r.ci_high and r.win_rate > 0.5
    assert "greedy vs random" in r.line()
    teams = duplicate_match(
        (GreedyPolicy(), RandomPolicy(1)), RandomPolicy(2), table="4p_teams", deals=3, mode="round"
    )
    assert teams.games == 6
    with pytest.raises(ValueError, match="table must be one of"):
        duplicate_match(GreedyPolicy(), GreedyPolicy(), table="3p", deals=1)
    with pytest.raises(ValueError, match="team game"):
        duplicate_match((GreedyPolicy(), GreedyPolicy()), GreedyPolicy(), deals=1)


def test_command_line_head_to_head_and_round_robin(tmp_path, capsys):
    out = tmp_path / "match.json"
    main(["greedy", "random", "--deals", "3", "--mode", "round", "--json", str(out)])
    payload = json.loads(out.read_text())
    assert payload["results"][0]["games"] == 6
    main(["greedy", "random", "heuristic", "--deals", "2", "--mode", "round"])
    printed = capsys.readouterr().out
    assert "| policy | rating |" in printed and "heuristic" in printed
    main(["greedy+random", "random", "--table", "4p_teams", "--deals", "1", "--mode", "round"])
    assert "greedy+random vs random" in capsys.readouterr().out


def test_curves_plot_from_a_run_directory(tmp_path):
    (tmp_path / "eval.csv").write_text(
        "update,env_steps,opponent,games,win_rate,ci_low,ci_high,point_diff\n"
        "1,100,greedy,20,0.4,0.2,0.6,-1\n2,200,greedy,20,0.6,0.4,0.8,1\n"
    )
    png = plot_curves([tmp_path])
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with pytest.raises(ValueError, match=r"eval\.csv not found"):
        plot_curves([tmp_path / "nothing"])


def test_batched_games_are_the_games_the_aec_env_plays():
    from agents import GreedyPolicy, HeuristicPolicy
    from agents.evaluation.matches import play_game, play_games

    greedy, heuristic = GreedyPolicy(), HeuristicPolicy()
    for table, seats in (
        ({"num_players": 2}, [greedy, heuristic]),
        ({"num_players": 4, "teams": True}, [heuristic, greedy, greedy, heuristic]),
    ):
        rules = bastra_env.Rules(target_score=30, **table)
        seeds = [5, 6, 7]
        scores, winners = play_games(rules, [seats] * 3, seeds)
        env = bastra_env.env(rules=rules)
        for g, seed in enumerate(seeds):
            assert play_game(env, seats, seed) == scores[g].tolist()
            expected = env.unwrapped.game.winner
            assert winners[g] == (-1 if expected is None else expected)


def test_rating_intervals_hold_the_ratings_and_repeat_for_a_seed():
    results = [result("a", "b", 60, 100), result("b", "c", 70, 100), result("a", "c", 80, 100)]
    ratings = bradley_terry(["a", "b", "c"], results)
    intervals = rating_intervals(["a", "b", "c"], results, samples=100, seed=3)
    for name, (low, high) in intervals.items():
        assert low < ratings[name] < high
        assert high - low < 200
    assert intervals["a"][0] > intervals["c"][1]  # 80% of 100 games: clearly apart
    assert rating_intervals(["a", "b", "c"], results, samples=100, seed=3) == intervals
    wide = rating_intervals(["a", "b"], [result("a", "b", 6, 10)], samples=100)
    narrow = rating_intervals(["a", "b"], [result("a", "b", 600, 1000)], samples=100)
    assert wide["a"][1] - wide["a"][0] > 3 * (narrow["a"][1] - narrow["a"][0])


def test_recorded_games_replay_to_the_scores_the_match_counted(tmp_path):
    from agents import SearchConfig, load_policy

    learned = load_policy("bastra_2p", SearchConfig(endgame=False))
    match = duplicate_match(
        learned, GreedyPolicy(), deals=2, seed=11, names=("net", "greedy"), record=tmp_path,
        target_score=40,
    )  # fmt: skip
    files = sorted(tmp_path.glob("*.json"))
    assert [f.name for f in files] == [
        "net-vs-greedy-deal00000-a-seat0.json",
        "net-vs-greedy-deal00000-b-seat0.json",
        "net-vs-greedy-deal00001-a-seat0.json",
        "net-vs-greedy-deal00001-b-seat0.json",
    ]
    wins = 0.0
    for f in files:
        record = read_record(f)
        a_side = 0 if "-a-seat0" in f.name else 1
        assert record["game_seed"] == 11 + record["deal"]
        assert record["final"]["done"] and record["rules"]["target_score"] == 40
        assert [p["name"] for p in record["players"]] == (
            ["net", "greedy"] if a_side == 0 else ["greedy", "net"]
        )
        winner = record["final"]["winner"]
        wins += 0.5 if winner is None else float(winner == a_side)
        for step in record["steps"]:
            learned_seat = record["players"][step["seat"]]["name"] == "net"
            assert ("policy" in step) == learned_seat
            if learned_seat:  # greedy network play: its move is its most probable one
                top = step["policy"]["top"]
                assert top[0]["action"] == step["action"] and 0 < top[0]["prob"] <= 1
            hand = step["before"]["hands"][step["seat"]]
            assert step["card"] in hand
            assert set(step["takes"]) <= set(step["before"]["board"])
        for round_info in record["rounds"]:
            assert sorted(round_info["deck"]) == sorted(bastra_env.cards.card_name(c)
                                                        for c in range(52))  # fmt: skip
        env = bastra_env.raw_env(rules=bastra_env.Rules(target_score=40))
        env.reset(seed=0, options={"deck": record["rounds"][0]["deck"]})
        first = record["steps"][0]["before"]
        assert list(env.snapshot()["hands"].values()) == first["hands"]
        assert env.snapshot()["board"] == first["board"]
    assert wins / 4 == match.win_rate
    (tmp_path / "bad.json").write_text("{}")
    with pytest.raises(ValueError, match="not a Bastra game record"):
        read_record(tmp_path / "bad.json")


def test_a_round_robin_is_extended_by_new_players_only(tmp_path, capsys):
    first = tmp_path / "rr.json"
    main(["random", "greedy", "--deals", "2", "--mode", "round", "--json", str(first)])
    before = json.loads(first.read_text())
    capsys.readouterr()
    main(["heuristic", "--extend", str(first), "--deals", "2", "--mode", "round",
          "--json", str(first)])  # fmt: skip
    printed = capsys.readouterr().out
    assert "random vs greedy" not in printed.split("\n\n")[0]  # not played again
    after = json.loads(first.read_text())
    assert after["results"][0] == before["results"][0]
    assert {(r["a"], r["b"]) for r in after["results"]} == {
        ("random", "greedy"),
        ("random", "heuristic"),
        ("greedy", "heuristic"),
    }
    assert set(after["ratings"]) == set(after["rating_intervals"]) == {"random", "greedy",
                                                                       "heuristic"}  # fmt: skip
    with pytest.raises(SystemExit):
        main(["heuristic", "--extend", str(first), "--deals", "3", "--mode", "round"])
    assert "give the same --table, --mode, --deals" in capsys.readouterr().err
