"""EXPERIMENTAL league (``agents.experimental.league``, ``bastra train --config league_smoke``):
who its pool picks, the exploiters' games, a run's exploiters and their measurements, the same
seed giving the same run, an exact resume, and a PPO checkpoint refused."""

from __future__ import annotations

import csv

import numpy as np
import pytest
import torch

import agents.train as train
from agents.experimental.league import (
    LEAGUE_COLUMNS,
    ExploiterGames,
    League,
    LeagueConfig,
)
from agents.learning.network import NetworkConfig, PolicyValueNet, cpu_state_dict

TINY = ["--config", "league_smoke", "eval.deals=2", "eval.opponents=random", "threads=1"]
NETWORK = NetworkConfig(hidden=(16,), pair_width=8)


def league(share: float, snapshots: int, exploiters: int) -> League:
    config = LeagueConfig.from_dict({"algorithm": "league", "league": {
        "pool_size": 3, "exploiters": 2, "exploiter_share": share}})  # fmt: skip
    pool = League(config, torch.device("cpu"), NETWORK)
    torch.manual_seed(0)
    for _ in range(snapshots):
        pool.add(PolicyValueNet(NETWORK))
    for _ in range(exploiters):
        pool.add_exploiter(cpu_state_dict(PolicyValueNet(NETWORK)))
    return pool


def test_the_league_keeps_the_newest_and_picks_exploiters_at_their_share():
    pool = league(0.25, snapshots=5, exploiters=3)
    assert len(pool.snapshots) == 3 and len(pool.exploiter_models) == 2
    assert pool.models == pool.snapshots + pool.exploiter_models
    rng = np.random.default_rng(1)
    picks = np.array([pool.pick(rng) for _ in range(4000)])
    assert 0.22 < (picks >= 3).mean() < 0.28  # the exploiters' share
    assert set(picks.tolist()) == {0, 1, 2, 3, 4}
    only = league(0.0, snapshots=2, exploiters=2)
    assert max(only.pick(rng) for _ in range(200)) < 2  # share 0: snapshots only
    early = league(0.0, snapshots=0, exploiters=1)
    assert early.pick(rng) == 0  # no snapshot yet: the exploiter plays


def test_an_exploiters_games_put_the_frozen_main_on_exactly_one_side():
    config = LeagueConfig.from_dict({"algorithm": "league", "num_players": 4, "teams": True,
                                     "league": {"num_envs": 64}})  # fmt: skip
    games = ExploiterGames(config, league(0.5, 1, 0), 0, np.random.default_rng(0))
    sides = []
    for e in list(range(64)) * 3:  # each slot's next games too
        games.start(e)
        frozen = games.controllers[e] == 0
        assert sorted(frozen.tolist()) == [False, False, True, True]
        assert {config.rules.side_of(s) for s in np.flatnonzero(frozen)} in ({0}, {1})
        sides.append(config.rules.side_of(int(np.flatnonzero(frozen)[0])))
    assert 0 < np.mean(sides) < 1  # both sides drawn


def test_a_run_trains_measures_and_keeps_its_exploiters(tmp_path):
    summary = train.main([*TINY, "--run-dir", str(tmp_path)])
    rows = list(csv.DictReader((tmp_path / "league.csv").open()))
    assert list(rows[0]) == LEAGUE_COLUMNS
    assert [int(r["update"]) for r in rows] == [3, 6] and summary["updates"] == 6
    for row in rows:
        assert int(row["exploiter_plays"]) >= 2 * 500  # two updates of 500 plays at least
        assert int(row["probe_rounds"]) == 10
        assert float(row["ci_low"]) <= float(row["win_rate"]) <= float(row["ci_high"])
    final = torch.load(tmp_path / "final.pt", weights_only=False)
    assert final["pool"]["phases"] == 2 and len(final["pool"]["exploiters"]) == 2
    main = final["model"]
    newest = final["pool"]["exploiters"][-1]
    assert any(not torch.equal(main[k], newest[k]) for k in main)  # the exploiter learnt


def test_the_same_seed_gives_the_same_run_and_a_resume_continues_exactly(tmp_path):
    whole = train.main([*TINY, "--run-dir", str(tmp_path / "a")])
    again = train.main([*TINY, "--run-dir", str(tmp_path / "b")])
    assert whole["env_steps"] == again["env_steps"]
    resumed = train.main(["--resume", str(tmp_path / "a" / "checkpoint_000004.pt"),
                          "--run-dir", str(tmp_path / "c")])  # fmt: skip
    assert resumed["env_steps"] == whole["env_steps"]
    final = {name: torch.load(tmp_path / name / "final.pt", weights_only=False)
             for name in "abc"}  # fmt: skip
    for key, tensor in final["a"]["model"].items():
        assert torch.equal(tensor, final["b"]["model"][key])
        assert torch.equal(tensor, final["c"]["model"][key])
    for key, tensor in final["a"]["pool"]["exploiters"][-1].items():
        assert torch.equal(tensor, final["c"]["pool"]["exploiters"][-1][key])
    rows = {}
    for name in "abc":  # every figure but the seconds
        table = csv.DictReader((tmp_path / name / "league.csv").open())
        rows[name] = [{k: v for k, v in row.items() if k != "exploiter_seconds"} for row in table]
    assert rows["a"] == rows["b"]
    assert rows["c"] == rows["a"][1:]  # the resumed run's exploiter: the same, to the digit


def test_a_ppo_checkpoint_cannot_resume_as_a_league(tmp_path):
    train.main(["--config", "smoke", "--run-dir", str(tmp_path / "ppo"), "threads=1"])
    checkpoint = next(iter(sorted((tmp_path / "ppo").glob("checkpoint_*.pt"))))
    pool = league(0.5, 0, 0)
    with pytest.raises(ValueError, match="not a league's"):
        pool.load(torch.load(checkpoint, weights_only=False)["pool"])


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"league": {"exploiter_every": 0}}, "league.exploiter_every must be"),
        ({"league": {"exploiter_share": 1.5}}, "league.exploiter_share must be a number in"),
        ({"ppo": {"num_envs": 8}}, "algorithm league reads no ppo: section"),
    ],
)
def test_the_config_refuses_bad_league_fields(values, message):
    with pytest.raises(ValueError, match=message):
        LeagueConfig.from_dict({"algorithm": "league", **values})
