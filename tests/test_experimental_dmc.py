"""EXPERIMENTAL Deep Monte-Carlo (``agents.experimental.dmc``, ``bastra train --config
dmc_smoke``): its move rule, its targets (the Monte-Carlo returns), its config's refusals, and a
run on PPO's self-play loop (its files, the same seed giving the same weights, an exact resume,
a loss that falls)."""

from __future__ import annotations

import csv

import numpy as np
import pytest
import torch

import agents.train as train
from agents.experimental.dmc import (
    DMC_STATS,
    PAD_LOGIT,
    DMCConfig,
    epsilon_greedy,
    learn_dmc,
    start_in_points,
)
from agents.learning.network import HEURISTIC_TEMPERATURE, NetworkConfig, PolicyValueNet
from agents.registry import make_policy
from agents.training.ppo import compute_advantages
from agents.training.rollout import Pool, Rollout, SelfPlayGames, collect_rollout
from bastra_env.vector import VectorEnv

TINY = ["--config", "dmc_smoke", "eval.deals=2", "eval.opponents=random", "threads=1"]


def logits_with_padding() -> torch.Tensor:
    """Three rows: legal slots first, padding after (as ``pair_logits`` pads)."""
    logits = torch.full((3, 6), -1e9)
    logits[0, :2] = torch.tensor([0.1, 0.4])
    logits[1, :5] = torch.tensor([-0.3, -0.2, -0.9, -0.1, -0.5])
    logits[2, :1] = torch.tensor([2.0])
    return logits


def test_epsilon_zero_takes_the_highest_q_and_one_draws_only_legal_slots():
    logits = logits_with_padding()
    slots, logps = epsilon_greedy(0.0)(logits)
    assert slots.tolist() == [1, 3, 0] and logps.tolist() == [0.0, 0.0, 0.0]
    torch.manual_seed(0)
    drawn = torch.stack([epsilon_greedy(1.0)(logits)[0] for _ in range(600)])
    legal = (logits > PAD_LOGIT).sum(1)
    assert bool((drawn < legal).all())  # never a padding slot
    counts = torch.bincount(drawn[:, 1], minlength=5).numpy()
    assert counts.min() > 80  # each of row 1's five legal slots, about 120 times


def test_the_targets_are_each_seats_monte_carlo_returns():
    """GAE with lambda 1 plus the value is the return whatever the values: each move's target
    is the sum of its seat's later rewards (gamma 1), nothing mixed between trajectories."""
    buffer = Rollout()
    buffer.rewards = [0.0, 0.5, 0.0, -1.0, 0.25]
    buffer.trajectories = [[0, 2, 4], [1, 3]]
    values = torch.tensor([0.3, -2.0, 1.0, 0.7, -0.1])
    returns = compute_advantages(buffer, values, 1.0, 1.0) + values
    assert np.allclose(returns.numpy(), [0.25, -0.5, 0.25, -1.0, 0.25])


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"dmc": {"ent_coef": 0.003}}, "dmc.ent_coef: Deep Monte-Carlo does not read it"),
        ({"dmc": {"imitation_samples": 100}}, "dmc.imitation_samples"),
        ({"dmc": {"epsilon": 1.5}}, "dmc.epsilon must be a number in"),
        ({"ppo": {"num_envs": 8}}, "algorithm dmc reads no ppo: section"),
    ],
)
def test_the_config_refuses_what_dmc_does_not_read(values, message):
    with pytest.raises(ValueError, match=message):
        DMCConfig.from_dict({"algorithm": "dmc", **values})


def test_a_run_writes_its_files_and_its_network_plays_legal_moves(tmp_path):
    summary = train.main([*TINY, "--run-dir", str(tmp_path)])
    assert summary["env_steps"] >= 3000
    rows = list(csv.DictReader((tmp_path / "metrics.csv").open()))
    assert set(DMC_STATS) <= set(rows[0]) and len(rows) == summary["updates"]
    policy = make_policy(str(tmp_path / "final.pt") + ":network")
    venv = VectorEnv(16, seed=3)
    state = venv.reset(seed=3)
    for _ in range(30):
        actions = policy.act_batch(state["observation"], state["action_mask"])
        assert state["action_mask"][np.arange(16), actions].all()
        state = venv.step(actions)


def test_a_fresh_network_starts_as_the_heuristic_in_the_returns_unit_and_learns_its_returns():
    """Q starts as the heuristic's score times reward_scale (the moves PPO's fresh network
    prefers, on a twentieth of the scale); updates on one rollout bring its Q to the returns."""
    config = DMCConfig.from_dict({"algorithm": "dmc", "dmc": {"num_envs": 8, "hidden": [32],
                                  "pair_width": 16, "rollout_steps": 400}})  # fmt: skip
    torch.manual_seed(0)
    model = PolicyValueNet(NetworkConfig(hidden=(32,), pair_width=16))
    fresh = model.summary_weights.detach().clone()
    start_in_points(model, config)
    scale = HEURISTIC_TEMPERATURE * config.dmc.reward_scale
    assert torch.allclose(model.summary_weights, fresh * scale)
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    rng = np.random.default_rng(0)
    pool = Pool(config, torch.device("cpu"), model.config)
    games = SelfPlayGames(config, pool, 0, rng)
    venv = VectorEnv(8, rules=config.rules, reward="points", copy=False, num_threads=1)
    buffer, _, _ = collect_rollout(venv, games, model, [], torch.device("cpu"),
                                   epsilon_greedy(0.1))  # fmt: skip
    losses = [learn_dmc(model, optimizer, buffer, config)["q_loss"] for _ in range(30)]
    assert losses[-1] < 0.5 * losses[0]


def test_the_same_seed_gives_the_same_weights_and_a_resume_continues_exactly(tmp_path):
    whole = train.main([*TINY, "--run-dir", str(tmp_path / "a")])
    again = train.main([*TINY, "--run-dir", str(tmp_path / "b")])
    assert whole["env_steps"] == again["env_steps"]
    resumed = train.main(["--resume", str(tmp_path / "a" / "checkpoint_000002.pt"),
                          "--run-dir", str(tmp_path / "c")])  # fmt: skip
    assert resumed["env_steps"] == whole["env_steps"]
    final = {name: torch.load(tmp_path / name / "final.pt", weights_only=False)["model"]
             for name in "abc"}  # fmt: skip
    for key, tensor in final["a"].items():
        assert torch.equal(tensor, final["b"][key]) and torch.equal(tensor, final["c"][key])
