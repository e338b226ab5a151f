"""The compiled agent kernels (``agents.players.observation_kernels``) against the plain Python
reference (``tests/reference_agents.py``) on observations of random play at every table: the same
estimates, bit for bit the same network inputs, the same heuristic and greedy choices; and every
policy's ``act_batch`` plays legal actions."""

import numpy as np
import pytest
import torch

import bastra_env
from agents import GreedyPolicy, HeuristicPolicy, LearnedPolicy, RandomPolicy, SearchConfig
from agents.learning import features as features_module
from agents.learning.features import ACTION_FEATURES, MAX_LEGAL, PAD_ACTION, action_inputs
from agents.learning.network import NetworkConfig, PolicyValueNet
from agents.players import observation_kernels as compiled
from agents.players.heuristic import ESTIMATES
from agents.players.heuristic import play_estimates as heuristic_play_estimates
from agents.players.observation_kernels import (
    action_inputs_batch,
    greedy_actions,
    heuristic_actions,
    play_estimates,
)
from bastra_env.layout import NUM_ACTIONS, OBSERVATION_SIZE

from . import reference_agents as reference

TABLES = {
    "2p": {"num_players": 2},
    "2p-auto": {"num_players": 2, "capture": "auto", "last_play_bastra": False},
    "3p": {"num_players": 3, "bastra_points": 20, "most_cards_points": 5},
    "4p": {"num_players": 4, "jack_bastra_points": 30, "last_play_bastra": False},
    "4p-teams": {"num_players": 4, "teams": True},
}
ROUNDS = {"2p": 16, "2p-auto": 6, "3p": 16, "4p": 16, "4p-teams": 16}


def random_play(table: dict, rounds: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Every observation of the seat to move (and its mask) in ``rounds`` single-round games."""
    env = bastra_env.raw_env(**table, max_rounds=1)
    policy = RandomPolicy(seed)
    observations, masks = [], []
    for game in range(rounds):
        env.reset(seed=1000 * seed + game)
        while not env.game.done:
            observation = env.observe(env.agent_selection)
            observations.append(observation["observation"])
            masks.append(observation["action_mask"])
            env.step(policy.act(observation))
    return np.array(observations), np.array(masks)


@pytest.fixture(scope="module")
def played() -> dict[str, tuple[np.ndarray, np.ndarray]]:
    return {
        name: random_play(table, ROUNDS[name], seed)
        for seed, (name, table) in enumerate(TABLES.items())
    }


@pytest.fixture(scope="module")
def everything(played) -> tuple[np.ndarray, np.ndarray]:
    return (
        np.concatenate([obs for obs, _ in played.values()]),
        np.concatenate([mask for _, mask in played.values()]),
    )


def reference_heuristic(obs, mask, card_value=reference.CARD_VALUE, jack_keep=reference.JACK_KEEP):
    legal = np.flatnonzero(mask)
    estimates = reference.play_estimates(obs, legal, card_value, jack_keep)
    return int(legal[int(np.argmax(estimates[:, 0] - estimates[:, 1]))])


def test_the_sample_covers_every_table_and_the_round_s_last_plays(everything, played):
    obs, masks = everything
    assert len(obs) > 3000
    assert obs.dtype == np.float32 and masks.dtype == np.int8
    for table_obs, _ in played.values():
        plays = np.round(table_obs[:, compiled._O_PLAYS] * 48)
        assert plays.min() == 0 and plays.max() == 47


@pytest.mark.parametrize("name", list(TABLES))
def test_estimates_equal_the_reference(played, name):
    obs, masks = played[name]
    exact = True
    for o, m in zip(obs, masks, strict=True):
        legal = np.flatnonzero(m)
        want = reference.play_estimates(o, legal)
        got = play_estimates(o, legal)
        assert got.dtype == np.float64 and got.shape == (len(legal), len(ESTIMATES))
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-9)
        exact &= bool(np.array_equal(got, want))
    assert exact  # in fact bit for bit
    # other weights, the actions in another order, and the module's own entry point
    for o, m in zip(obs[::7], masks[::7], strict=True):
        legal = np.flatnonzero(m)[::-1]
        want = reference.play_estimates(o, legal, 1.3, 0.0)
        np.testing.assert_allclose(play_estimates(o, legal, 1.3, 0.0), want, rtol=0, atol=1e-9)
        np.testing.assert_allclose(
            heuristic_play_estimates(o, legal, 1.3, 0.0), want, rtol=0, atol=1e-9
        )


def test_action_inputs_equal_the_reference_bit_for_bit(everything):
    obs, masks = everything
    actions, features = action_inputs_batch(obs, masks)
    assert actions.shape == (len(obs), MAX_LEGAL) and actions.dtype == np.int64
    assert features.shape == (len(obs), MAX_LEGAL, ACTION_FEATURES)
    assert features.dtype == np.float32
    for i in range(len(obs)):
        want_actions, want_features = reference.action_inputs(obs[i], masks[i])
        np.testing.assert_array_equal(actions[i], want_actions)
        assert np.array_equal(features[i].view(np.uint32), want_features.view(np.uint32)), i
        if i % 5 == 0:
            one_actions, one_features = action_inputs(obs[i], masks[i])
            np.testing.assert_array_equal(one_actions, want_actions)
            assert np.array_equal(one_features.view(np.uint32), want_features.view(np.uint32))


def test_action_inputs_into_reused_buffers_and_from_other_dtypes(everything):
    obs, masks = everything[0][:300], everything[1][:300]
    want = action_inputs_batch(obs, masks)
    buffers = (
        np.full((400, MAX_LEGAL), 7, dtype=np.int64),
        np.full((400, MAX_LEGAL, ACTION_FEATURES), np.nan, dtype=np.float32),
    )
    for _ in range(2):  # a stale buffer is overwritten completely
        actions, features = action_inputs_batch(obs, masks, out=buffers)
        assert np.shares_memory(actions, buffers[0]) and np.shares_memory(features, buffers[1])
        np.testing.assert_array_equal(actions, want[0])
        np.testing.assert_array_equal(features, want[1])
        np.testing.assert_array_equal(buffers[0][300:], 7)
    for o, m in [
        (obs.astype(np.float64), masks.astype(bool)),
        (obs, masks.astype(np.int64)),
        (np.asfortranarray(obs), masks.astype(np.float32)),
    ]:
        actions, features = action_inputs_batch(o, m)
        np.testing.assert_array_equal(actions, want[0])
        np.testing.assert_array_equal(features, want[1])
    empty = action_inputs_batch(obs[:0], masks[:0])
    assert empty[0].shape == (0, MAX_LEGAL) and empty[1].shape == (0, MAX_LEGAL, ACTION_FEATURES)


def test_heuristic_and_greedy_batches_choose_what_the_players_choose(everything):
    obs, masks = everything
    heuristic = heuristic_actions(obs, masks)
    tuned = heuristic_actions(obs, masks, 1.0, 3.0)
    greedy = greedy_actions(obs, masks)
    np.testing.assert_array_equal(HeuristicPolicy().act_batch(obs, masks), heuristic)
    np.testing.assert_array_equal(HeuristicPolicy(1.0, 3.0).act_batch(obs, masks), tuned)
    np.testing.assert_array_equal(GreedyPolicy().act_batch(obs, masks), greedy)
    heuristic_player, tuned_player, greedy_player = (
        HeuristicPolicy(),
        HeuristicPolicy(1.0, 3.0),
        GreedyPolicy(),
    )
    for i in range(len(obs)):
        observation = {"observation": obs[i], "action_mask": masks[i]}
        assert heuristic[i] == reference_heuristic(obs[i], masks[i])
        assert greedy[i] == reference.greedy_act(observation)
        assert heuristic_player.act(observation) == heuristic[i]
        assert greedy_player.act(observation) == greedy[i]
        if i % 4 == 0:
            assert tuned[i] == reference_heuristic(obs[i], masks[i], 1.0, 3.0)
            assert tuned_player.act(observation) == tuned[i]


def test_greedy_breaks_ties_like_the_python_player():
    """Equal captures go to the lowest action; trails to the cheapest card, then lowest action."""
    obs = np.zeros((3, OBSERVATION_SIZE), dtype=np.float32)
    masks = np.zeros((3, NUM_ACTIONS), dtype=np.int8)
    cards = compiled._O_ACTION_CARDS
    points = compiled._O_ACTION_POINTS
    bastra = compiled._O_ACTION_BASTRA
    for a in (9, 40, 41, 100):  # 40 and 41 tie on everything; 9 has fewer points
        masks[0, a] = 1
        obs[0, cards + a] = 0.3
        obs[0, points + a] = 1 / 13
    obs[0, points + 9] = 0.0
    obs[0, bastra + 100] = 1.0  # a bastra, but fewer cards
    obs[0, cards + 100] = 0.2
    masks[1, [4 * 40, 4 * 0, 4 * 41, 4 * 12, 4 * 13]] = 1  # J, A, J, 4, 4: trail a 4, the first
    masks[2, [4 * 40, 4 * 37, 4 * 4]] = 1  # J (1 point), 10D (3), 2C (2): the jack
    want = [
        reference.greedy_act({"observation": o, "action_mask": m})
        for o, m in zip(obs, masks, strict=True)
    ]
    assert want == [40, 48, 160]
    np.testing.assert_array_equal(greedy_actions(obs, masks), want)


def test_every_policy_plays_legal_actions_in_batches(everything):
    obs, masks = everything[0][::5], everything[1][::5]
    torch.manual_seed(0)
    model = PolicyValueNet(NetworkConfig(hidden=(32,)))
    policies = [
        RandomPolicy(0),
        GreedyPolicy(),
        HeuristicPolicy(),
        LearnedPolicy(model),
        LearnedPolicy(model, SearchConfig(endgame=False)),
        LearnedPolicy(model, sample=True, seed=3),
    ]
    for policy in policies:
        chosen = policy.act_batch(obs, masks)
        assert chosen.shape == (len(obs),) and chosen.dtype == np.int64
        assert (masks[np.arange(len(obs)), chosen] == 1).all(), policy
    # the same draws as acting row by row, for the random player
    batch, single = RandomPolicy(5), RandomPolicy(5)
    rows = batch.act_batch(obs, masks)
    assert rows.tolist() == [
        single.act({"observation": o, "action_mask": m}) for o, m in zip(obs, masks, strict=True)
    ]
    # the greedy network chooses what act chooses (the endgame search included)
    learned = LearnedPolicy(model)
    rows = learned.act_batch(obs[:300], masks[:300])
    single = [
        learned.act({"observation": o, "action_mask": m})
        for o, m in zip(obs[:300], masks[:300], strict=True)
    ]
    assert rows.tolist() == single


def test_bad_shapes_and_rows_without_a_legal_action_are_refused(everything):
    obs, masks = everything[0][:4], everything[1][:4]
    for call in (action_inputs_batch, heuristic_actions, greedy_actions):
        with pytest.raises(ValueError, match=rf"shape \[B, {OBSERVATION_SIZE}\]"):
            call(obs[0], masks)
        with pytest.raises(ValueError, match=rf"shape \[B, {OBSERVATION_SIZE}\]"):
            call(obs[:, :-1], masks)
        with pytest.raises(ValueError, match=r"shape \[4, 208\]"):
            call(obs, masks[:3])
        with pytest.raises(ValueError, match=r"shape \[4, 208\]"):
            call(obs, masks[:, :-1])
    with pytest.raises(ValueError, match="one flat observation"):
        play_estimates(obs, np.flatnonzero(masks[0]))
    with pytest.raises(ValueError, match=r"outside 0\.\.207"):
        play_estimates(obs[0], np.array([208]))
    with pytest.raises(ValueError, match="1-D array of action ids"):
        play_estimates(obs[0], np.array([[1]]))
    with pytest.raises(ValueError, match="one flat observation and its action mask"):
        action_inputs(obs, masks)
    with pytest.raises(ValueError, match="out actions"):
        action_inputs_batch(obs, masks, out=(np.empty((4, MAX_LEGAL), dtype=np.int32), None))
    with pytest.raises(ValueError, match="out features"):
        action_inputs_batch(
            obs,
            masks,
            out=(np.empty((4, MAX_LEGAL), dtype=np.int64), np.empty((3, MAX_LEGAL, 162))),
        )
    too_many = masks.copy()
    too_many[0, :] = 1
    with pytest.raises(ValueError, match="more than MAX_LEGAL"):
        action_inputs_batch(obs, too_many)
    bad_slot = masks.copy()
    bad_slot[0] = 0
    bad_slot[0, 4 * 40 + 3] = 1  # the fourth capture of a jack: it has one, the whole board
    with pytest.raises(ValueError, match="capture slot"):
        action_inputs_batch(obs, bad_slot)
    idle = masks.copy()
    idle[2] = 0
    model = PolicyValueNet(NetworkConfig(hidden=(8,)))
    for policy in (RandomPolicy(0), GreedyPolicy(), HeuristicPolicy(), LearnedPolicy(model)):
        with pytest.raises(ValueError, match="no legal action in row 2"):
            policy.act_batch(obs, idle)
        with pytest.raises(ValueError, match=r"shape \[4, 208\]"):
            policy.act_batch(obs, masks[:, :100])


def test_the_constants_agree():
    assert len(ESTIMATES) == compiled.NUM_ESTIMATES
    assert features_module.PAD_ACTION == PAD_ACTION == NUM_ACTIONS
    assert features_module.ESTIMATE_SCALE == reference.ESTIMATE_SCALE
    assert (MAX_LEGAL, ACTION_FEATURES) == (reference.MAX_LEGAL, reference.ACTION_FEATURES)
    assert (compiled.CARD_VALUE, compiled.JACK_KEEP) == (reference.CARD_VALUE, reference.JACK_KEEP)
    assert ESTIMATES == reference.ESTIMATES
