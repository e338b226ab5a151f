"""Learning the endgame search (``algorithm: endgame``): the values it learns from (exact in a
known world), the run (its files, a held-out regret that falls, an exact resume), bad fields."""

from __future__ import annotations

import csv
import os
import signal
import sys

import numpy as np
import pytest
import torch

import agents.train as train
import bastra_env
from agents import HeuristicPolicy, load_policy
from agents.learning.policy import pretrained_path
from agents.search.endgame import solve, world_values
from agents.training import endgame
from agents.training.config import EndgameConfig
from agents.training.endgame import (
    SHARD_FIELDS,
    collect,
    endgame_rows,
    play_remote_shard,
    shard_inputs,
    train_endgame,
)
from bastra_env.layout import OFFSETS

from .helpers import shards_digest
from .test_endgame import banked, play_to_deal

TINY = ["--config", "endgame_smoke", "endgame.rounds=512", "endgame.epochs=3", "eval.deals=2",
        "endgame.learning_rate=0.001", "threads=1"]  # fmt: skip


def hidden(game) -> tuple[list[list[int]], list[int]]:
    """The other seats' hands (in turn order after the seat to move) and the deck's rest."""
    n, me = game.num_players, game.current
    hands = [[c for c in range(52) if game.hands[(me + i) % n] >> c & 1] for i in range(1, n)]
    return hands, [int(c) for c in game.deck[game.deck_pos :]]


@pytest.mark.parametrize("rules", [{}, {"last_play_bastra": False, "most_cards_points": 5}])
def test_world_values_are_what_best_play_in_the_true_world_scores(rules):
    """From the first play of the 2p last-but-one deal both seats play ``world_values``' best move
    in the true world (the engine dealing the last deal between them), then the exact search's:
    the round's final point difference is the first value. In the last deal it is ``solve``'s."""
    heuristic = HeuristicPolicy()
    for seed in range(6):
        env = bastra_env.raw_env(num_players=2, max_rounds=1, **rules)
        env.reset(seed=seed)
        play_to_deal(env, heuristic, left=8)
        game = env.game
        me = game.current
        predicted = max(world_values(env.observe(env.agent_selection), *hidden(game)).values())
        before = banked(game, me)
        while not game.done:
            seen = env.observe(env.agent_selection)
            values = world_values(seen, *hidden(game))
            assert values is not None
            if game.deck_pos == len(game.deck):
                assert values == pytest.approx(solve(seen))
            env.step(max(values, key=values.get))
        total = game.results[-1].total
        assert total[me] - total[1 - me] - before == predicted, seed


def test_world_values_refuse_a_world_the_seat_could_not_be_in():
    env = bastra_env.raw_env(num_players=2, max_rounds=1)
    env.reset(seed=1)
    play_to_deal(env, HeuristicPolicy(), left=8)
    seen = env.observe(env.agent_selection)
    hands, deck = hidden(env.game)
    with pytest.raises(ValueError, match="not the cards this seat has not seen"):
        world_values(seen, hands, [*deck[:-1], hands[0][0]])
    with pytest.raises(ValueError, match="holds 4 cards"):
        world_values(seen, [hands[0][:3]], deck)
    with pytest.raises(ValueError, match="hands of the other 1 seats"):
        world_values(seen, [hands[0], []], deck)
    env.reset(seed=1)  # the first deal: nothing to search
    assert world_values(env.observe(env.agent_selection), *hidden(env.game)) is None


def read_metrics(run) -> list[dict[str, str]]:
    return list(csv.DictReader((run / "metrics.csv").open()))


def test_an_endgame_run_learns_writes_its_files_and_resumes_exactly(tmp_path):
    run = tmp_path / "run"
    summary = train.main([*TINY, "--run-dir", str(run)])
    for name in ("final.pt", "checkpoint_000001.pt", "checkpoint_000003.pt", "curves.png",
                 "eval.csv", "summary.json", "config.yaml"):  # fmt: skip
        assert (run / name).is_file(), name
    rows = read_metrics(run)
    assert [r["epoch"] for r in rows] == ["0", "1", "2", "3"]
    assert int(rows[0]["searched"]) > 5 * 512  # about 6 in the last deal of a 2p round
    # the points the policy gives away in expectation (what it learns to lower) fall pass by pass
    losses = [float(r["regret_loss"]) for r in rows[1:]]
    assert losses[0] > losses[1] > losses[2]
    assert summary["env_steps"] == 512 * 48
    policy = load_policy(str(run / "final.pt"))
    start = load_policy("bastra_2p")
    learnt, started = policy.model.state_dict(), start.model.state_dict()
    assert any(not torch.equal(learnt[k], started[k]) for k in learnt)

    resumed = tmp_path / "resumed"
    train.main(["--resume", str(run / "checkpoint_000001.pt"), "--run-dir", str(resumed)])
    a = torch.load(run / "final.pt", weights_only=True)["model"]
    b = torch.load(resumed / "final.pt", weights_only=True)["model"]
    assert all(torch.equal(a[k], b[k]) for k in a)
    assert read_metrics(resumed)[-1]["held_out_regret"] == rows[-1]["held_out_regret"]


def test_bad_endgame_fields_are_named(tmp_path):
    with pytest.raises(ValueError, match="set init_from"):
        train.Config(algorithm="endgame")
    with pytest.raises(ValueError, match=r"endgame\.rounds must be a positive int"):
        train.Config(algorithm="endgame", init_from="bastra_2p", endgame=EndgameConfig(rounds=0))
    with pytest.raises(ValueError, match="2 players or the team game"):
        train.Config(algorithm="endgame", init_from="bastra_2p", num_players=3)
    with pytest.raises(ValueError, match="train_rounds must be 1"):
        train.Config(algorithm="endgame", init_from="bastra_2p", train_rounds=0)
    config = train.Config(algorithm="endgame", init_from="bastra_2p")
    with pytest.raises(ValueError, match="not an endgame run's"):
        train_endgame(config, tmp_path / "run", str(pretrained_path("bastra_2p")))


def test_the_team_game_learns_the_cards_its_endgame_search_plays():
    """``endgame_4p_teams``: the valued decisions are those of the last three cards of a hand
    (what the team game's endgame search plays), each with the best legal move at gap 0, the
    others at or above it, and nothing outside the legal moves."""
    config, _, _ = train.parse_config(["--config", "endgame_4p_teams", "endgame.rounds=64",
                                       "threads=1"])  # fmt: skip
    assert config.num_players == 4 and config.teams
    model = load_policy("bastra_4p_teams").model
    data = collect(model, config, threads=1)
    valued = data["searched"]
    hand = data["obs"][:, OFFSETS["hand"]].astype(bool).sum(1)
    last_deal = endgame_rows(data["obs"].astype(np.float32))
    assert last_deal[valued].all() and set(hand[valued].tolist()) == {1, 2, 3}
    assert valued.sum() > 64 * 4 * 2 * 0.9  # nearly every seat's choices of its last three cards
    assert (hand[last_deal & ~valued] == 4).all()  # the last deal's first card: an anchor
    gaps, mask = data["gaps"][valued].astype(float), data["mask"][valued]
    assert (gaps[~mask] == 0).all() and (gaps >= 0).all()
    assert ((gaps == 0) & mask).any(1).all()  # a best move in every valued decision
    assert (gaps > 0).any()  # moves differ somewhere: the values are not all equal


# ------------------------------------------------------------ the shards, here and on Ray actors
def digest(shards: list[dict]) -> str:
    return shards_digest(shards, SHARD_FIELDS)


def small_shards(size: int = 8) -> tuple[tuple, list[dict]]:
    """A config of 3 shards of ``size`` rounds, the shared inputs an actor gets, and the shards
    as this process plays them."""
    config, _, _ = train.parse_config(
        ["--config", "endgame_smoke", f"endgame.rounds={3 * size}", "threads=1"]
    )
    model = load_policy("bastra_2p").model.eval()
    shared = shard_inputs(model, config, size)
    return shared, [play_remote_shard(shared, i) for i in range(3)]


def test_a_shard_is_the_same_wherever_it_is_played(monkeypatch):
    """A shard depends on its index only: played in any order, on any thread count, its arrays
    are the same; and collect() concatenates the shards in order."""
    monkeypatch.setattr(endgame, "BATCH_GAMES", 8)
    shared, shards = small_shards()
    assert [int(s["rounds"]) for s in shards] == [8, 8, 8]
    assert digest([play_remote_shard(shared, i) for i in (2, 1, 0)][::-1]) == digest(shards)
    config = shared[2]
    model = load_policy("bastra_2p").model.eval()
    data = collect(model, config, threads=2)
    assert digest([data]) == digest([{k: np.concatenate([s[k] for s in shards])
                                      for k in SHARD_FIELDS}])  # fmt: skip
    assert data["searched"].any() and (~data["searched"]).any()


def test_without_ray_the_error_says_what_to_install(monkeypatch):
    from agents.integrations import ray_selfplay

    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(ImportError, match=r'pip install -e "\.\[ray\]"'):
        ray_selfplay.RaySelfPlay(1)


@pytest.mark.slow
def test_ray_actors_give_the_same_shards_even_when_one_is_killed(local_ray, monkeypatch):
    """The endgame learning's searched self-play on two Ray actors: one actor's process killed,
    its shard (or, where it had just finished one, the next it is given) played again by a fresh
    actor, every shard taken once and equal to this process's."""
    from agents.integrations.ray_selfplay import RaySelfPlay

    shared, expected = small_shards(size=128)  # shards of seconds: the kill lands mid-shard
    runner = RaySelfPlay(2)
    assert runner.run(play_remote_shard, shared, [0, 1]) and not runner.replaced
    victims = {p["pid"] for p in runner.where()}
    killed: list[int] = []

    def kill_the_other_actor(index: int, result: dict) -> None:
        if not killed:  # the first shard back: kill the actor still playing one
            for pid in victims:
                if pid != result["worker_pid"]:
                    os.kill(pid, signal.SIGKILL)
                    killed.append(pid)
                    break

    got = runner.run(play_remote_shard, shared, [0, 1, 2], on_result=kill_the_other_actor)
    assert killed and digest(got) == digest(expected)  # every shard once, as played here
    # The kill may land after the other actor sent its shard back: then the run ended without
    # giving it work, and the dead actor is met when the next run gives it a shard.
    again = runner.run(play_remote_shard, shared, [2, 1])
    runner.close()
    assert runner.replaced == 1
    assert digest(again) == digest(expected[:0:-1])


@pytest.mark.slow
def test_an_endgame_run_on_ray_actors_learns_what_it_learns_here(tmp_path, local_ray):
    """``ray_workers=2``: the same data, so the same network as in this process."""
    small = [*TINY, "endgame.rounds=256", "endgame.epochs=1"]
    train.main([*small, "endgame.ray_workers=2", "--run-dir", str(tmp_path / "ray")])
    train.main([*small, "endgame.ray_workers=0", "--run-dir", str(tmp_path / "here")])
    a = torch.load(tmp_path / "ray" / "final.pt", weights_only=True)
    b = torch.load(tmp_path / "here" / "final.pt", weights_only=True)
    assert all(torch.equal(a["model"][k], b["model"][k]) for k in a["model"])
