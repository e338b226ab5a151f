"""Tianshou's PettingZooEnv wrapper runs Bastra, masks included (skipped without tianshou)."""

import numpy as np
import pytest

import bastra_env
from bastra_env.layout import OBSERVATION_SIZE

tianshou_env = pytest.importorskip("tianshou.env")


@pytest.mark.parametrize("table", [{"num_players": 2}, {"num_players": 4, "teams": True}])
def test_wrapped_env_plays_whole_games_with_legal_masks(table):
    env = tianshou_env.PettingZooEnv(bastra_env.env(max_rounds=1, reward="points", **table))
    rng = np.random.default_rng(0)
    for episode in range(3):
        observation, _ = env.reset(seed=episode)
        totals = np.zeros(table["num_players"])
        done, plays = False, 0
        while not done:
            agent = env.env.agent_selection
            legal = np.flatnonzero(observation["mask"])
            assert observation["agent_id"] == agent
            assert np.array_equal(observation["mask"], env.env.observe(agent)["action_mask"] == 1)
            assert observation["obs"].shape == (OBSERVATION_SIZE,)
            observation, rewards, done, truncated, _ = env.step(int(rng.choice(legal)))
            totals += rewards
            plays += 1
        assert plays == 48 and not truncated
        assert totals.sum() == pytest.approx(0.0)  # a round's point differences cancel out


def test_collector_with_tianshou_multi_agent_random_players():
    from tianshou.algorithm.multiagent.marl import MultiAgentOffPolicyAlgorithm
    from tianshou.algorithm.random import MARLRandomDiscreteMaskedOffPolicyAlgorithm
    from tianshou.data import Collector
    from tianshou.env import DummyVectorEnv

    def make():
        return tianshou_env.PettingZooEnv(bastra_env.env(max_rounds=1))

    probe = make()
    algorithm = MultiAgentOffPolicyAlgorithm(
        algorithms=[
            MARLRandomDiscreteMaskedOffPolicyAlgorithm(probe.action_space) for _ in probe.agents
        ],
        env=probe,
    )
    collector = Collector(algorithm, DummyVectorEnv([make, make]))
    stats = collector.collect(n_episode=4, reset_before_collect=True)
    assert stats.n_collected_episodes == 4
    assert stats.n_collected_steps == 4 * 48  # every episode one whole round, no illegal move
