"""The players: always legal, the baselines do what they say, checkpoints load or are refused."""

import numpy as np
import pytest
import torch

import bastra_env
from agents import (
    PRESETS,
    GreedyPolicy,
    HeuristicPolicy,
    LearnedPolicy,
    RandomPolicy,
    load_policy,
    make_policy,
)
from agents.learning.features import ACTION_FEATURES, MAX_LEGAL, PAD_ACTION, action_inputs
from agents.learning.network import NetworkConfig, PolicyValueNet, save_checkpoint
from bastra_env import card_name, parse_card
from bastra_env.layout import SLOTS_PER_CARD

from .helpers import deck_dealing

POLICIES = {
    "random": lambda: RandomPolicy(0),
    "greedy": GreedyPolicy,
    "heuristic": HeuristicPolicy,
    "learned": lambda: LearnedPolicy(PolicyValueNet(NetworkConfig(hidden=(32,)))),
    "learned-sample": lambda: LearnedPolicy(
        PolicyValueNet(NetworkConfig(hidden=(32,))), sample=True
    ),
}


@pytest.mark.parametrize(
    "table", [{"num_players": 2}, {"num_players": 3}, {"num_players": 4, "teams": True}]
)
@pytest.mark.parametrize("name", list(POLICIES))
def test_every_policy_plays_only_legal_actions(name, table):
    policy = POLICIES[name]()
    env = bastra_env.raw_env(**table)
    for game in range(3):
        env.reset(seed=game)
        while not env.game.done:
            observation = env.observe(env.agent_selection)
            action = policy.act(observation, env=env)
            assert observation["action_mask"][action] == 1
            env.step(action)  # raw_env raises on an illegal action


def start(hands, board):
    env = bastra_env.raw_env()
    env.reset(seed=0, options={"deck": [card_name(c) for c in deck_dealing(hands, board)]})
    return env, env.observe("player_0")


def action(card: str, slot: int = 0) -> int:
    return parse_card(card) * SLOTS_PER_CARD + slot


def test_greedy_takes_the_most_cards_then_points_and_trails_its_cheapest_card():
    env, obs = start([["7H", "9D", "KD", "3S"], ["4C", "6C", "8C", "9C"]], ["2S", "AD", "5C", "4H"])
    assert GreedyPolicy().act(obs) == action("7H", 0)  # 2+A+4: three cards beat two
    env, obs = start(
        [["6S", "AS", "QS", "8D"], ["4C", "6C", "8C", "9C"]], ["10S", "10H", "KC", "9D"]
    )
    assert GreedyPolicy().act(obs) == action("6S")  # nothing to take: keep the ace, trail low


def test_heuristic_takes_a_bastra_and_never_trails_a_jack_onto_an_empty_board():
    env, obs = start(
        [["9H", "KD", "2D", "3D"], ["4C", "6C", "8C", "10C"]], ["5S", "4H", "2S", "7H"]
    )
    assert HeuristicPolicy().act(obs) == action("9H")  # 9 takes all four: a bastra
    # an empty board, and a hand of a jack and a five: trailing the jack invites a 50-point reply
    env, obs = start(
        [["9H", "JD", "5D", "3D"], ["4C", "6C", "8C", "10C"]], ["5S", "4H", "2S", "7H"]
    )
    env.game.board = 0
    env.game.hands[0] = sum(1 << parse_card(c) for c in ("JD", "5D"))
    env._move_cache = None
    obs = env.observe("player_0")
    assert sorted(env.legal_actions()) == sorted([action("JD"), action("5D")])
    assert HeuristicPolicy().act(obs) == action("5D")


def test_policies_refuse_an_observation_without_a_legal_action():
    env = bastra_env.raw_env()
    env.reset(seed=0)
    not_to_move = env.observe("player_1")
    for make in POLICIES.values():
        with pytest.raises(ValueError, match="no legal action"):
            make().act(not_to_move)


def test_make_policy_knows_the_baselines():
    assert isinstance(make_policy("greedy"), GreedyPolicy)
    assert isinstance(make_policy("heuristic"), HeuristicPolicy)
    with pytest.raises(ValueError, match="no checkpoint file"):
        make_policy("no-such-policy")
    with pytest.raises(ValueError, match="Did you mean 'heuristic'"):
        make_policy("heurisitc")


def test_a_models_network_alone_by_name():
    searching, alone = make_policy("bastra_2p"), make_policy("bastra_2p:network")
    s, n = searching.search, alone.search
    assert s.endgame and not n.endgame and alone.name == "bastra_2p:network"
    assert s.endgame_deals == 2
    last = make_policy("bastra_2p:last-deal")
    assert last.search.endgame and last.search.endgame_deals == 1
    assert last.name == "bastra_2p:last-deal"
    assert s.objective == last.search.objective == "game"
    both = make_policy("bastra_2p:last-deal:points").search
    assert both.endgame_deals == 1 and both.objective == "points" and both.endgame
    assert make_policy("bastra_2p:points").search.endgame_deals == 2
    for spec in ("bastra_2p", "bastra_2p:network", "bastra_2p:last-deal:points"):
        assert make_policy(spec).search == PRESETS[spec]  # each name is its preset
    with pytest.raises(ValueError, match="not a built-in"):
        make_policy("greedy:network")
    with pytest.raises(ValueError, match="last-deal follows a model"):
        make_policy("heuristic:last-deal")
    with pytest.raises(ValueError, match="unknown policy 'nope'"):
        make_policy("nope:network")


def test_packaged_models_load_by_name_from_any_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for name in ("bastra_2p", "bastra_4p_teams"):
        policy = make_policy(name)
        assert isinstance(policy, LearnedPolicy) and policy.name == name
        assert load_policy(name).model.config == policy.model.config


# --------------------------------------------------------------------------- checkpoints
def test_checkpoint_round_trip_keeps_the_policy(tmp_path):
    torch.manual_seed(0)
    model = PolicyValueNet(NetworkConfig(hidden=(48, 24)))
    path = tmp_path / "model.pt"
    save_checkpoint(path, model, note="test")
    loaded = load_policy(path)
    env = bastra_env.raw_env(num_players=4, teams=True)
    env.reset(seed=1)
    original = LearnedPolicy(model)
    for _ in range(40):
        obs = env.observe(env.agent_selection)
        assert loaded.act(obs) == original.act(obs)
        env.step(original.act(obs))
    for a, b in zip(model.state_dict().values(), loaded.model.state_dict().values(), strict=True):
        assert torch.equal(a, b)


def test_corrupt_and_mismatched_checkpoints_are_refused(tmp_path):
    garbage = tmp_path / "garbage.pt"
    garbage.write_bytes(b"not a checkpoint at all" * 10)
    with pytest.raises(ValueError, match="not a readable checkpoint"):
        load_policy(garbage)
    truncated = tmp_path / "truncated.pt"
    save_checkpoint(truncated, PolicyValueNet(NetworkConfig(hidden=(8,))))
    truncated.write_bytes(truncated.read_bytes()[:200])
    with pytest.raises(ValueError, match="not a readable checkpoint"):
        load_policy(truncated)
    foreign = tmp_path / "foreign.pt"
    torch.save({"weights": torch.zeros(3)}, foreign)
    with pytest.raises(ValueError, match="not a Bastra policy checkpoint"):
        load_policy(foreign)
    model = PolicyValueNet(NetworkConfig(hidden=(8,)))
    other = tmp_path / "other_env.pt"
    save_checkpoint(other, model)
    payload = torch.load(other, weights_only=True)
    payload["network"]["observation_size"] = 999
    torch.save(payload, other)
    with pytest.raises(ValueError, match="trained for observation_size=999"):
        load_policy(other)
    payload["network"]["observation_size"] = model.config.observation_size
    payload["network"]["hidden"] = [16]
    torch.save(payload, other)
    with pytest.raises(ValueError, match="do not fit its network"):
        load_policy(other)
    payload["version"] = 99
    torch.save(payload, other)
    with pytest.raises(ValueError, match="version 99"):
        load_policy(other)
    with pytest.raises(ValueError, match="no checkpoint at"):
        load_policy(tmp_path / "missing.pt")
    # a mistyped packaged name: the closest one, and the presets make_policy adds to it
    with pytest.raises(ValueError, match=r"Did you mean 'bastra_2p'\?") as caught:
        load_policy("bastra2p")
    assert ":network" in str(caught.value) and ":infer" in str(caught.value)


def test_masked_logits_stay_finite_and_illegal_actions_get_no_probability():
    model = PolicyValueNet(NetworkConfig(hidden=(16,)))
    obs = torch.randn(5, model.config.observation_size)
    actions = torch.full((5, MAX_LEGAL), PAD_ACTION)
    actions[:, 0] = 3
    features = torch.randn(5, MAX_LEGAL, ACTION_FEATURES)
    logits, values = model(obs, actions, features)
    probs = torch.softmax(logits, dim=-1)
    assert logits.shape == (5, model.config.num_actions)
    assert torch.isfinite(logits).all() and torch.isfinite(values).all()
    assert torch.allclose(probs[:, 3], torch.ones(5))
    entropy = torch.distributions.Categorical(logits=logits).entropy()
    assert torch.isfinite(entropy).all() and np.allclose(entropy.detach().numpy(), 0, atol=1e-5)


def test_action_inputs_describe_what_each_play_takes_and_leaves():
    env, obs = start([["7H", "KD", "2D", "3D"], ["4C", "6C", "8C", "9C"]], ["2S", "AD", "5C", "4H"])
    actions, features = action_inputs(obs["observation"], obs["action_mask"])
    legal = sorted(env.legal_actions())
    assert sorted(actions[: len(legal)]) == legal and (actions[len(legal) :] == PAD_ACTION).all()
    row = list(actions).index(action("7H", 1))  # 7H takes 2S + 5C
    planes = features[row, :156].reshape(3, 52)
    names = [{card_name(c) for c in np.flatnonzero(p)} for p in planes]
    assert names == [{"7H"}, {"2S", "5C"}, {"AD", "4H"}]
    trail = list(actions).index(action("KD"))
    names = [
        {card_name(c) for c in np.flatnonzero(p)} for p in features[trail, :156].reshape(3, 52)
    ]
    assert names == [{"KD"}, set(), {"2S", "AD", "5C", "4H", "KD"}]
