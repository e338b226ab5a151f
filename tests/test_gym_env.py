"""The single-agent Gymnasium env: check_env, masks, opponents, seats, illegal actions."""

import warnings

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import bastra_env  # noqa: F401  (registers Bastra-v0)
from bastra_env.gym_env import BastraGymEnv
from bastra_env.layout import NUM_ACTIONS, OBSERVATION_SIZE


def play_episode(env, rng, policy=None):
    obs, info = env.reset(seed=int(rng.integers(1 << 30)))
    total, steps, terminated = 0.0, 0, False
    while not terminated:
        mask = env.unwrapped.action_masks()
        assert mask.dtype == bool and mask.any()
        np.testing.assert_array_equal(mask, info["action_mask"].astype(bool))
        action = policy(obs, mask) if policy else int(rng.choice(np.flatnonzero(mask)))
        obs, reward, terminated, truncated, info = env.step(action)
        assert not truncated
        total += reward
        steps += 1
    return total, steps, info


@pytest.mark.parametrize(
    "kwargs", [{}, {"num_players": 4, "teams": True, "seat": None}, {"num_players": 3, "seat": 2}]
)
def test_gymnasium_make_and_check_env(kwargs):
    env = gymnasium.make("Bastra-v0", **kwargs)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(env.unwrapped, skip_render_check=True)
    assert env.observation_space.shape == (OBSERVATION_SIZE,)
    assert env.action_space.n == NUM_ACTIONS
    total, steps, info = play_episode(env, np.random.default_rng(0))
    assert total in (-1.0, 0.0, 1.0) and steps > 20


def test_same_seed_same_episode():
    def trace(seed):
        env = gymnasium.make("Bastra-v0", num_players=4, teams=True, seat=None)
        obs, info = env.reset(seed=seed)
        out = [obs.tobytes(), info["seat"]]
        terminated = False
        while not terminated:
            action = int(np.flatnonzero(env.unwrapped.action_masks())[-1])
            obs, reward, terminated, _, info = env.step(action)
            out.append((obs.tobytes(), reward))
        return out

    assert trace(3) == trace(3)
    assert trace(3) != trace(4)


def test_random_seat_visits_every_seat():
    env = BastraGymEnv(num_players=4, teams=True, seat=None, max_rounds=1)
    seats = {env.reset(seed=s)[1]["seat"] for s in range(40)}
    assert seats == {0, 1, 2, 3}


def test_opponents_are_called_for_the_other_seats_only():
    calls = []

    def first_legal(observation):
        calls.append(1)
        return int(np.flatnonzero(observation["action_mask"])[0])

    class Greedyish:
        def act(self, observation, env=None):
            assert env is not None and env.agent_selection != "player_0"
            return int(np.flatnonzero(observation["action_mask"])[-1])

    env = BastraGymEnv(num_players=3, opponents=[first_legal, Greedyish()], max_rounds=1)
    _, steps, _ = play_episode(env, np.random.default_rng(1))
    assert steps == 16 and len(calls) == 16  # 48 plays: 16 each


def test_team_game_reward_is_the_sides_reward():
    env = BastraGymEnv(num_players=4, teams=True, seat=1, reward="points", max_rounds=2)
    total, _, _ = play_episode(env, np.random.default_rng(2))
    scores = env.aec.game.scores
    assert total == scores[1] - scores[0]


def test_illegal_actions_lose_or_raise():
    env = BastraGymEnv()
    obs, info = env.reset(seed=0)
    illegal = int(np.flatnonzero(info["action_mask"] == 0)[0])
    obs, reward, terminated, _, info = env.step(illegal)
    assert (reward, terminated, info["illegal_action"]) == (-1.0, True, True)
    with pytest.raises(RuntimeError, match="episode is over"):
        env.step(0)
    strict = BastraGymEnv(illegal_action="raise")
    obs, info = strict.reset(seed=0)
    with pytest.raises(ValueError, match="not legal"):
        strict.step(illegal)
    legal = int(np.flatnonzero(info["action_mask"])[0])
    strict.step(legal)  # nothing was changed by the refused action


@pytest.mark.parametrize(
    "kwargs, error, message",
    [
        ({"seat": 2}, ValueError, "seat must be None or a seat in 0..1"),
        ({"opponents": [None, None]}, ValueError, "one policy per other seat"),
        ({"opponents": {5: None}}, ValueError, "outside 0..1"),
        ({"opponents": 3}, TypeError, "a policy needs act"),
        ({"illegal_action": "ignore"}, ValueError, "illegal_action"),
        ({"colour": "red"}, TypeError, "unknown keyword"),
    ],
)
def test_bad_arguments_are_refused(kwargs, error, message):
    with pytest.raises(error, match=message):
        BastraGymEnv(**kwargs)


def test_opponents_by_name_play_as_the_named_player():
    """``opponents="heuristic"`` is the heuristic player, as ``make_policy("heuristic")`` is:
    every opponent move equals the heuristic's choice in that position."""
    from agents.registry import make_policy

    heuristic = make_policy("heuristic")
    env = gymnasium.make("Bastra-v0", opponents="heuristic", seat=0).unwrapped
    aec = env.aec
    seen = []
    step = aec.step

    def watched(action):
        agent = aec.agent_selection
        if agent != "player_0":
            seen.append(action == heuristic.act(aec.observe(agent), env=aec))
        step(action)

    aec.step = watched
    obs, info = env.reset(seed=5)
    done = False
    while not done:
        action = int(np.flatnonzero(info["action_mask"])[0])
        obs, _, done, _, info = env.step(action)
    assert seen and all(seen)


def test_opponents_by_name_in_the_vector_face_and_bad_names():
    venv = gymnasium.make_vec("Bastra-v0", num_envs=4, opponents={1: "greedy"})
    obs, info = venv.reset(seed=0)
    obs, reward, terminated, truncated, info = venv.step(
        np.array([int(np.flatnonzero(m)[0]) for m in info["action_mask"]])
    )
    assert obs.shape == (4, OBSERVATION_SIZE)
    with pytest.raises(ValueError, match=r"heuristc.*heuristic"):
        gymnasium.make("Bastra-v0", opponents="heuristc")
    with pytest.raises(ValueError, match="heuristc"):
        gymnasium.make_vec("Bastra-v0", num_envs=2, opponents=["greedy", "heuristc"])
