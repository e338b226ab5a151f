"""Bastra as an OpenSpiel game (bastra_env.openspiel): OpenSpiel's own consistency test, the same
games as the AEC env, re-dealing from an information state, and OpenSpiel's IS-MCTS bot."""

import numpy as np
import pytest

pyspiel = pytest.importorskip(
    "pyspiel", reason='OpenSpiel is not installed: pip install -e ".[openspiel]"'
)

import bastra_env  # noqa: E402
import bastra_env.openspiel as bos  # noqa: E402
from bastra_env import compiled_rules as K  # noqa: E402
from bastra_env.cards import NUM_CARDS  # noqa: E402

TABLES = [
    {"num_players": 2},
    {"num_players": 3},
    {"num_players": 4},
    {"num_players": 4, "teams": True},
]


def ids(params):
    return "-".join(f"{k}={v}" for k, v in params.items())


@pytest.mark.parametrize("params", TABLES, ids=ids)
def test_openspiel_random_sim_test_passes(params):
    game = pyspiel.load_game(bos.GAME_NAME, params)
    pyspiel.random_sim_test(game, num_sims=2, serialize=True, verbose=False)


def test_parameters_are_the_rules_fields_with_their_defaults():
    game = pyspiel.load_game(bos.GAME_NAME)
    assert game.rules == bastra_env.Rules()
    params = game.get_parameters()
    assert set(params) == set(bastra_env.Rules().to_dict())
    assert params["max_rounds"] == 0 and params["num_players"] == 2
    teams = pyspiel.load_game(bos.GAME_NAME, {"num_players": 4, "teams": True, "max_rounds": 2})
    assert teams.rules.teams and teams.rules.max_rounds == 2
    assert teams.get_type().utility == pyspiel.GameType.Utility.ZERO_SUM
    three = pyspiel.load_game(bos.GAME_NAME, {"num_players": 3})
    assert three.get_type().utility == pyspiel.GameType.Utility.GENERAL_SUM
    with pytest.raises(Exception, match="teams"):
        pyspiel.load_game(bos.GAME_NAME, {"num_players": 3, "teams": True})


@pytest.mark.parametrize("params", TABLES, ids=ids)
def test_the_same_deals_and_plays_make_the_same_game_as_the_aec_env(params):
    """Chance deals the AEC engine's deck in its order: every position then agrees (legal
    actions, board, hands, scores) through whole games, and the returns are the AEC rewards."""
    rng = np.random.default_rng(len(params) + params["num_players"])
    for seed in range(2):
        game = pyspiel.load_game(bos.GAME_NAME, params)
        state = game.new_initial_state()
        aec = bastra_env.env(**params)
        aec.reset(seed=seed)
        raw = aec.unwrapped
        totals = dict.fromkeys(aec.agents, 0.0)
        while not state.is_terminal():
            engine = raw.game.state
            if state.is_chance_node():
                card = int(engine[K.DECK + state.dealt])  # the AEC engine's next card
                assert card in dict(state.chance_outcomes())
                state.apply_action(card)
                continue
            for field in (K.HANDS, K.SCORES, K.CAPTURED):
                assert np.array_equal(state.state[field : field + 4], engine[field : field + 4])
            assert state.state[K.BOARD] == engine[K.BOARD]
            agent = aec.agent_selection
            assert state.current_player() == raw.agent_name_mapping[agent]
            mask = aec.observe(agent)["action_mask"]
            assert state.legal_actions() == np.flatnonzero(mask).tolist()
            assert np.array_equal(
                state.observation_tensor(state.current_player()), aec.observe(agent)["observation"]
            )
            action = int(rng.choice(state.legal_actions()))
            state.apply_action(action)
            aec.step(action)
            for name, reward in aec.rewards.items():
                totals[name] += reward
        assert all(aec.terminations.values())
        assert state.returns() == [totals[a] for a in aec.possible_agents]
        returns = state.returns()  # as the game's utility says: +1 the winning side's seats
        assert set(returns) <= {-1.0, 0.0, 1.0}
        if any(returns):
            assert returns.count(1.0) == (2 if game.rules.teams else 1)
        else:  # a draw
            assert game.rules.tie_break == "draw" or state.state[K.WINNER] < 0
        if game.get_type().utility == pyspiel.GameType.Utility.ZERO_SUM:
            assert sum(returns) == 0.0 == game.utility_sum()


def _play_to_a_decision(game, plays, seed):
    state = game.new_initial_state()
    rng = np.random.default_rng(seed)
    done = 0
    while done < plays or state.is_chance_node():
        if state.is_chance_node():
            outcomes, probs = zip(*state.chance_outcomes(), strict=True)
            assert abs(sum(probs) - 1.0) < 1e-9
            state.apply_action(int(rng.choice(outcomes)))
        else:
            state.apply_action(int(rng.choice(state.legal_actions())))
            done += 1
    return state


@pytest.mark.parametrize("params", TABLES, ids=ids)
def test_resampling_keeps_the_players_view_and_re_deals_the_rest(params):
    game = pyspiel.load_game(bos.GAME_NAME, params)
    state = _play_to_a_decision(game, 13, seed=5)
    me = state.current_player()
    n = game.num_players()
    sampler = pyspiel.UniformProbabilitySampler(0.0, 1.0)
    moved = 0
    for _ in range(20):
        other = state.resample_from_infostate(me, sampler)
        assert other.information_state_string(me) == state.information_state_string(me)
        assert np.array_equal(other.observation_tensor(me), state.observation_tensor(me))
        assert np.array_equal(
            other.information_state_tensor(me), state.information_state_tensor(me)
        )
        assert other.legal_actions() == state.legal_actions()
        hands = [int(other.state[K.HANDS + s]) for s in range(n)]
        assert [bin(h).count("1") for h in hands] == [
            bin(int(state.state[K.HANDS + s])).count("1") for s in range(n)
        ]
        every = 0
        for h in hands:
            every |= h
        top = K.DECK + int(other.state[K.DECK_POS])
        undealt = {int(c) for c in other.state[top : K.DECK + NUM_CARDS]}
        assert not (every & sum(1 << c for c in undealt))  # a card is in one place
        moved += hands != [int(state.state[K.HANDS + s]) for s in range(n)]
        other.apply_action(other.legal_actions()[0])  # and plays on
    assert moved > 10


def test_the_hidden_cards_do_not_change_a_players_information_state():
    """Two states that differ only in another seat's hand give the same view."""
    game = pyspiel.load_game(bos.GAME_NAME, {"num_players": 4, "teams": True})
    state = _play_to_a_decision(game, 6, seed=2)
    me = state.current_player()
    swapped = state.clone()
    a, b = [(me + 1) % 4, (me + 2) % 4]
    ha, hb = int(swapped.state[K.HANDS + a]), int(swapped.state[K.HANDS + b])
    ca, cb = ha & -ha, hb & -hb  # one card of each
    swapped.state[K.HANDS + a] = ha ^ ca ^ cb
    swapped.state[K.HANDS + b] = hb ^ cb ^ ca
    assert np.array_equal(swapped.observation_tensor(me), state.observation_tensor(me))
    assert swapped.observation_string(me) == state.observation_string(me)


def test_openspiels_ismcts_bot_plays_whole_rounds_against_the_heuristic_player():
    """examples/openspiel_ismcts.py: OpenSpiel's Python IS-MCTS bot (re-dealing with
    resample_from_infostate) against the project's heuristic player as an OpenSpiel bot, whole
    rounds through OpenSpiel's evaluate_bots."""
    from tests.test_examples import load_example

    found = load_example("openspiel_ismcts").play(rounds=2, simulations=8)
    assert found["rounds"] == 4
    assert -1.0 <= found["mean_return"] <= 1.0 and 0.0 <= found["win_rate"] <= 1.0


def test_a_policy_bot_plays_its_own_seat_only():
    from agents import HeuristicPolicy
    from agents.integrations.openspiel import PolicyBot

    game = pyspiel.load_game(bos.GAME_NAME)
    state = _play_to_a_decision(game, 0, seed=1)
    seat = state.current_player()
    assert PolicyBot(HeuristicPolicy(), seat).step(state) in state.legal_actions()
    with pytest.raises(ValueError, match=f"this bot plays seat {1 - seat}"):
        PolicyBot(HeuristicPolicy(), 1 - seat).step(state)
