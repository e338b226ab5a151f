"""The endgame search: exact in the two-player last deal, sampled in the team game, never used
where cards are still hidden in the deck."""

import numpy as np
import pytest
import torch

import bastra_env
from agents import HeuristicPolicy, LearnedPolicy
from agents.endgame import solve
from agents.network import NetworkConfig, PolicyValueNet
from bastra_env.cards import points


def play_to_last_deal(env, policy) -> None:
    """Play until the deck is empty and the last deal has just been dealt."""
    game = env.game
    while not (game.deck_pos >= len(game.deck) and game.plays % (4 * game.num_players) == 0):
        env.step(policy.act(env.observe(env.agent_selection)))


def banked(game, seat: int) -> int:
    """Points ``seat`` has already made this round, minus the other seat's (2 players)."""
    rules, other = game.rules, 1 - seat
    diff = points(game.captured[seat]) - points(game.captured[other])
    diff += rules.bastra_points * (game.bastras[seat] - game.bastras[other])
    return diff + rules.jack_bastra_points * (game.jack_bastras[seat] - game.jack_bastras[other])


@pytest.mark.parametrize("rules", [{}, {"last_play_bastra": False, "most_cards_points": 5}])
def test_two_player_search_value_is_what_best_play_scores(rules):
    """Both seats play the search's best action through the last deal; the round's final point
    difference is exactly the value the search gave at its first play."""
    heuristic = HeuristicPolicy()
    for seed in range(25):
        env = bastra_env.raw_env(num_players=2, max_rounds=1, **rules)
        env.reset(seed=seed)
        play_to_last_deal(env, heuristic)
        game = env.game
        me = game.current
        values = solve(env.observe(env.agent_selection))
        assert set(values) == set(np.flatnonzero(env.observe(env.agent_selection)["action_mask"]))
        predicted = max(values.values())
        before = banked(game, me)
        while not game.done:
            values = solve(env.observe(env.agent_selection))
            env.step(max(values, key=values.get))
        total = game.results[-1].total
        assert total[me] - total[1 - me] - before == predicted, seed


def test_no_search_while_cards_are_hidden_in_the_deck_or_with_three_players():
    env = bastra_env.raw_env(num_players=2)
    env.reset(seed=0)
    assert solve(env.observe(env.agent_selection)) is None  # the first play: deck full
    env = bastra_env.raw_env(num_players=3)
    env.reset(seed=0)
    play_to_last_deal(env, HeuristicPolicy())
    assert solve(env.observe(env.agent_selection)) is None


def test_team_search_samples_the_hidden_hands_deterministically():
    env = bastra_env.raw_env(num_players=4, teams=True, max_rounds=1)
    env.reset(seed=3)
    heuristic = HeuristicPolicy()
    play_to_last_deal(env, heuristic)
    assert solve(env.observe(env.agent_selection)) is None  # 4 cards in hand: too many
    for _ in range(8):  # two cards each
        env.step(heuristic.act(env.observe(env.agent_selection)))
    seen = env.observe(env.agent_selection)
    values = solve(seen)
    assert set(values) == set(np.flatnonzero(seen["action_mask"]))
    assert values == solve(seen)  # same observation, same samples, same values
    assert all(np.isfinite(v) for v in values.values())


def test_learned_policy_plays_the_search_move_in_the_endgame_unless_told_not_to():
    torch.manual_seed(0)
    model = PolicyValueNet(NetworkConfig(hidden=(16,)))
    with_search, network_only = LearnedPolicy(model), LearnedPolicy(model, endgame=False)
    heuristic = HeuristicPolicy()
    differed = 0
    for seed in range(20):
        env = bastra_env.raw_env(num_players=2, max_rounds=1)
        env.reset(seed=seed)
        play_to_last_deal(env, heuristic)
        seen = env.observe(env.agent_selection)
        values = solve(seen)
        chosen = with_search.act(seen)
        assert values[chosen] == max(values.values())
        differed += chosen != network_only.act(seen)
    assert differed > 0  # an untrained network does not play the endgame perfectly


def test_no_search_when_a_scoring_rule_is_beyond_what_the_observation_tells():
    env = bastra_env.raw_env(num_players=2, max_rounds=1, bastra_points=150)  # encoded capped
    env.reset(seed=0)
    play_to_last_deal(env, HeuristicPolicy())
    assert solve(env.observe(env.agent_selection)) is None
