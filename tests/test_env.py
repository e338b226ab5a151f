"""The PettingZoo AEC environment: PettingZoo's own tests, masks, codec, observation, rewards."""

import json
import random

import numpy as np
import pettingzoo
import pytest
from pettingzoo.test import api_test, render_test, seed_test
from pettingzoo.utils import wrappers

import bastra_env
from bastra_env import Rules, card_name, parse_card
from bastra_env.cards import FULL_DECK, NUM_CARDS, iter_cards
from bastra_env.env import (
    NUM_ACTIONS,
    OBSERVATION_LAYOUT,
    OBSERVATION_SIZE,
    OFFSETS,
    SLOTS_PER_CARD,
)
from bastra_env.game import Game
from bastra_env.layout import DEAL_PLAYS
from bastra_env.vector import VectorEnv

from .helpers import deck_dealing

TABLES = {
    "2p": {"num_players": 2},
    "3p": {"num_players": 3},
    "4p": {"num_players": 4},
    "4p teams": {"num_players": 4, "teams": True},
}


def random_play(env, rng, steps=None):
    """Yield after every live step of random masked play through ``env``."""
    done = 0
    for agent in env.agent_iter():
        obs, _, termination, truncation, _ = env.last()
        if termination or truncation:
            env.step(None)
            continue
        legal = np.flatnonzero(obs["action_mask"])
        env.step(int(rng.choice(legal)))
        done += 1
        yield agent
        if steps is not None and done >= steps:
            return


@pytest.mark.parametrize("table", list(TABLES))
def test_pettingzoo_api_seed_and_render_tests_pass(table):
    kwargs = TABLES[table]
    api_test(bastra_env.env(**kwargs), num_cycles=500)
    seed_test(lambda: bastra_env.env(**kwargs), num_cycles=500)
    render_test(lambda render_mode=None: bastra_env.env(render_mode=render_mode, **kwargs))


def test_importable_the_classic_way_and_from_the_registry():
    from bastra_env import env as make_env

    assert isinstance(make_env(), wrappers.OrderEnforcingWrapper)
    made = pettingzoo.make("aec", "bastra/bastra-v0", num_players=4, teams=True)
    made.reset(seed=0)
    assert made.possible_agents == ["player_0", "player_1", "player_2", "player_3"]
    assert made.unwrapped.rules.teams


def test_wrapped_env_keeps_pettingzoos_wrappers_and_checks():
    env = bastra_env.env()
    assert isinstance(env, wrappers.OrderEnforcingWrapper)
    assert isinstance(env.env, wrappers.AssertOutOfBoundsWrapper)
    assert isinstance(env.env.env, wrappers.TerminateIllegalWrapper)
    with pytest.raises(AttributeError, match="cannot be accessed before reset"):
        _ = env.agent_selection
    env.reset(seed=0)
    with pytest.raises(AssertionError):
        env.step(NUM_ACTIONS)  # out of bounds


def test_rules_keywords_and_bad_arguments():
    raw = bastra_env.raw_env(num_players=4, teams=True, max_rounds=1, tie_break="draw")
    assert raw.rules == Rules(num_players=4, teams=True, max_rounds=1, tie_break="draw")
    assert bastra_env.raw_env(rules=Rules(num_players=3)).possible_agents[-1] == "player_2"
    with pytest.raises(TypeError, match="unknown keyword"):
        bastra_env.raw_env(colour="red")
    with pytest.raises(TypeError, match="not both"):
        bastra_env.raw_env(rules=Rules(), num_players=3)
    with pytest.raises(ValueError, match="teams needs num_players=4"):
        bastra_env.env(num_players=2, teams=True)
    with pytest.raises(ValueError, match="reward must be one of"):
        bastra_env.raw_env(reward="score")
    with pytest.raises(ValueError, match="render_mode"):
        bastra_env.raw_env(render_mode="rgb")


# --------------------------------------------------------------------------- actions and masks
@pytest.mark.parametrize("table", list(TABLES))
def test_mask_is_exactly_the_engines_legal_moves_and_the_codec_round_trips(table):
    env = bastra_env.env(**TABLES[table])
    env.reset(seed=1)
    raw = env.unwrapped
    rng = np.random.default_rng(1)
    checked = 0
    for agent in env.agent_iter():
        obs, _, termination, truncation, _ = env.last()
        if termination or truncation:
            env.step(None)
            continue
        moves = raw.game.legal_moves()
        legal = set(np.flatnonzero(obs["action_mask"]))
        by_card: dict[int, int] = {}
        expected = set()
        for card, _capture in moves:
            slot = by_card.get(card, 0)
            by_card[card] = slot + 1
            if slot < SLOTS_PER_CARD:
                expected.add(card * SLOTS_PER_CARD + slot)
        assert legal == expected
        for action in legal:
            card, capture = raw.decode_action(action)
            assert raw.encode_action(card, capture) == action
            assert (parse_card(card), sum(1 << parse_card(c) for c in capture)) in moves
        for other in env.agents:
            if other != agent:
                assert not env.observe(other)["action_mask"].any()
        env.step(int(rng.choice(sorted(legal))))
        checked += 1
    assert checked > 200


def test_decode_and_encode_refuse_illegal_plays():
    hands = [["7H", "KD", "2D", "3D"], ["4C", "6C", "8C", "9C"]]
    raw = bastra_env.raw_env()
    raw.reset(
        seed=0,
        options={"deck": [card_name(c) for c in deck_dealing(hands, ["2S", "AD", "5C", "4H"])]},
    )
    # 7H has two maximal captures: 2+A+4 (3 cards, slot 0) and 2+5 (slot 1)
    seven = parse_card("7H") * SLOTS_PER_CARD
    assert raw.decode_action(seven) == ("7H", frozenset({"2S", "AD", "4H"}))
    assert raw.decode_action(seven + 1) == ("7H", frozenset({"2S", "5C"}))
    assert raw.encode_action("KD") == parse_card("KD") * SLOTS_PER_CARD
    with pytest.raises(ValueError, match="not legal"):
        raw.decode_action(seven + 2)
    with pytest.raises(ValueError, match="not legal now"):
        raw.encode_action("7H", [])  # capturing is compulsory for the card played
    with pytest.raises(ValueError, match="not legal now"):
        raw.encode_action("4C")  # not in hand
    with pytest.raises(ValueError, match="not a card name"):
        raw.encode_action("7X")


def test_raw_step_refuses_illegal_actions_and_changes_nothing():
    raw = bastra_env.raw_env()
    raw.reset(seed=3)
    before = json.dumps(raw.snapshot())
    illegal = next(a for a in range(NUM_ACTIONS) if a not in raw.legal_actions())
    for bad in (illegal, NUM_ACTIONS, -1, "3", 2.5, None, np.array([1, 2])):
        with pytest.raises((ValueError, TypeError)):
            raw.step(bad)
        assert json.dumps(raw.snapshot()) == before
    assert raw.agent_selection == "player_0"
    raw.step(np.int64(raw.legal_actions()[0]))  # numpy ints are fine
    assert raw.agent_selection == "player_1"


def test_wrapped_env_ends_the_game_with_minus_one_for_an_illegal_action():
    env = bastra_env.env(num_players=4, teams=True)
    env.reset(seed=0)
    obs, *_ = env.last()
    illegal = int(np.flatnonzero(obs["action_mask"] == 0)[0])
    env.step(illegal)
    assert all(env.terminations.values())
    # partners share the reward: the offender's partner (player_2) gets -1 too, as in VectorEnv
    assert env._cumulative_rewards == {"player_0": -1, "player_1": 0, "player_2": -1, "player_3": 0}
    assert env.rewards == {"player_0": -1, "player_1": 0, "player_2": -1, "player_3": 0}


def test_an_illegal_action_costs_the_same_in_the_aec_and_the_vector_env():
    """One rule in every env: the offending side's seats get -1, the others 0."""
    for players, teams in ((2, False), (3, False), (4, True), (4, False)):
        env = bastra_env.env(num_players=players, teams=teams)
        env.reset(seed=3)
        obs, *_ = env.last()
        illegal = int(np.flatnonzero(obs["action_mask"] == 0)[0])
        env.step(illegal)
        vector = VectorEnv(2, num_players=players, teams=teams, seed=3, num_threads=1)
        state = vector.reset()
        actions = np.array([int(np.flatnonzero(row == 0)[0]) for row in state["action_mask"]])
        state = vector.step(actions)
        assert state["illegal"].all()
        aec = [env._cumulative_rewards[a] for a in env.possible_agents]
        assert aec == state["rewards"][0].tolist(), (players, teams)


def test_capture_slot_cap_binds_rarely_in_random_play():
    """More than SLOTS_PER_CARD maximal captures for the card played: < 1 in 10,000 captures."""
    rng = random.Random(0)
    capturing = capped = 0
    for g in range(3000):
        game = Game(Rules(), seed=g)
        while not game.done:
            moves = game.legal_moves()
            card, capture = rng.choice(moves)
            if capture:
                capturing += 1
                capped += len(game.captures_for(card)) > SLOTS_PER_CARD
            game.apply(card, capture)
    assert capturing > 400_000
    print(f"cap binds on {capped} of {capturing} capturing plays")
    assert capped / capturing < 1e-4, (capped, capturing)


# --------------------------------------------------------------------------- reset and decks
def test_reset_deals_round_one_from_the_given_deck():
    hands = [["7H", "KD", "2D", "3D"], ["4C", "6C", "8C", "9C"]]
    deck = [card_name(c) for c in deck_dealing(hands, ["JS", "2S", "AD", "5C", "4H"])]
    env = bastra_env.env()
    env.reset(seed=5, options={"deck": deck})
    snap = env.unwrapped.snapshot()
    assert sorted(snap["hands"]["player_0"]) == sorted(hands[0])
    assert sorted(snap["hands"]["player_1"]) == sorted(hands[1])
    assert snap["board"] == ["AD", "2S", "4H", "5C"]
    assert snap["deck"][-1] == "JS"  # the board jack went to the bottom
    assert snap["current"] == "player_0" and snap["dealer"] == "player_1"
    assert json.loads(json.dumps(snap)) == snap


@pytest.mark.parametrize(
    "deck, message",
    [
        (["AC"] * 52, "duplicate cards"),
        ([card_name(c) for c in range(51)], "got 51; missing \\['KS'\\]"),
        ([card_name(c) for c in range(51)] + ["ZZ"], "not a card name"),
    ],
)
def test_a_bad_deck_is_refused_and_the_env_keeps_its_game(deck, message):
    env = bastra_env.raw_env()
    env.reset(seed=1)
    before = json.dumps(env.snapshot())
    with pytest.raises(ValueError, match=message):
        env.reset(seed=2, options={"deck": deck})
    assert json.dumps(env.snapshot()) == before


def test_same_seed_same_game_and_different_seeds_differ():
    def trace(seed):
        env = bastra_env.env(num_players=3)
        env.reset(seed=seed)
        rng = np.random.default_rng(0)
        return [json.dumps(env.unwrapped.snapshot()) for _ in random_play(env, rng, steps=150)]

    assert trace(11) == trace(11)
    assert trace(11) != trace(12)


# --------------------------------------------------------------------------- observation
def test_layout_table_builds_the_space_and_the_docstring():
    assert sum(size for _, size, _, _ in OBSERVATION_LAYOUT) == OBSERVATION_SIZE
    space = bastra_env.raw_env().observation_space("player_0")
    assert space["observation"].shape == (OBSERVATION_SIZE,)
    assert space["action_mask"].shape == (NUM_ACTIONS,) and space["action_mask"].dtype == np.int8
    from bastra_env import env as env_module

    doc = env_module.__doc__ or ""
    doc = __import__("bastra_env.env", fromlist=["x"]).__doc__
    for name, size, _, meaning in OBSERVATION_LAYOUT:
        assert f"| `{name}` | {size} | {meaning} |" in doc
    assert f"({OBSERVATION_SIZE},) float32" in doc and f"float32[{OBSERVATION_SIZE}]" in doc


def plane(obs, name, index=0):
    start = OFFSETS[name].start + index * NUM_CARDS
    return sum(1 << c for c in range(NUM_CARDS) if obs[start + c])


@pytest.mark.parametrize("table", list(TABLES))
def test_observation_pieces_say_what_the_layout_says(table):
    env = bastra_env.raw_env(**TABLES[table])
    env.reset(seed=4)
    rng = np.random.default_rng(4)
    slots = {2: (0, 1), 3: (0, 1, 3), 4: (0, 1, 2, 3)}[env.rules.num_players]
    for _ in range(60):
        game = env.game
        n = game.num_players
        for seat, agent in enumerate(env.possible_agents):
            obs = env.observe(agent)["observation"]
            assert env.observation_space(agent)["observation"].contains(obs)
            assert plane(obs, "hand") == game.hands[seat]
            assert plane(obs, "board") == game.board
            seen = game.hands[seat] | game.board
            for offset in range(n):
                pile = game.captured[(seat + offset) % n]
                assert plane(obs, "captured", slots[offset]) == pile
                seen |= pile
            assert plane(obs, "unseen") == FULL_DECK & ~seen
            dealer = obs[OFFSETS["dealer"]]
            assert dealer[slots[(game.dealer - seat) % n]] == 1 and dealer.sum() == 1
            sizes = obs[OFFSETS["hand_sizes"]]
            assert sizes[0] * 4 == game.hands[seat].bit_count()
            assert obs[OFFSETS["plays"]][0] == pytest.approx(game.plays / 48)
            table_flags = obs[OFFSETS["table"]]
            assert table_flags.sum() == 1
        env.step(int(rng.choice(env.legal_actions())))


@pytest.mark.parametrize("table", list(TABLES))
def test_deal_pieces_replay_the_plays_since_the_latest_deal(table):
    """Every seat sees the current deal's plays in order, each card played and what it took; the
    board before each of them follows by undoing them from the board now."""
    env = bastra_env.raw_env(**TABLES[table])
    env.reset(seed=6)
    rng = np.random.default_rng(6)
    n = env.rules.num_players
    deal: list[tuple[int, int, int, int]] = []  # (seat, card, capture, board before)
    for _ in range(100):  # into a second round
        game = env.game
        for agent in env.possible_agents:
            obs = env.observe(agent)["observation"]
            played = np.rint(obs[OFFSETS["deal_played"]] * DEAL_PLAYS).astype(int)
            taken = np.rint(obs[OFFSETS["deal_taken"]] * DEAL_PLAYS).astype(int)
            assert sorted(played[played > 0]) == list(range(1, len(deal) + 1))
            board = game.board
            for k in range(len(deal) - 1, -1, -1):  # undo the plays, latest first
                seat, card, capture, before = deal[k]
                assert played[card] == k + 1
                assert sum(1 << int(c) for c in np.flatnonzero(taken == k + 1)) == capture
                board = board | capture if capture else board & ~(1 << card)
                assert board == before
        seat = game.current
        action = int(rng.choice(env.legal_actions()))
        card, takes = env.decode_action(action)
        before = game.board
        env.step(action)
        if env.game.plays % (4 * n) == 0:
            deal = []  # a deal (or a round) begins
        else:
            capture = sum(1 << parse_card(c) for c in takes)
            deal.append((seat, parse_card(card), capture, before))
        assert len(deal) == env.game.plays % (4 * n)


def test_action_features_describe_each_legal_action():
    hands = [["9H", "JD", "2D", "3D"], ["4C", "5C", "6C", "8C"]]
    deck = [card_name(c) for c in deck_dealing(hands, ["5S", "4H", "2S", "7H"])]
    env = bastra_env.raw_env()
    env.reset(seed=0, options={"deck": deck})
    obs = env.observe("player_0")["observation"]
    nine = parse_card("9H") * SLOTS_PER_CARD
    jack = parse_card("JD") * SLOTS_PER_CARD
    trail = parse_card("3D") * SLOTS_PER_CARD
    cards, pts, bastra = (
        obs[OFFSETS[k]] for k in ("action_cards", "action_points", "action_bastra")
    )
    assert cards[nine] == pytest.approx(0.5) and bastra[nine] == 1  # 9 takes all four: a bastra
    assert cards[jack] == pytest.approx(0.5) and bastra[jack] == 0  # a jack sweep is no bastra
    assert pts[jack] == pytest.approx(1 / 13)
    assert cards[trail] == 0 and pts[trail] == 0
    illegal = parse_card("4C") * SLOTS_PER_CARD
    assert cards[illegal] == 0


@pytest.mark.parametrize("table", ["2p", "4p teams"])
def test_observation_hides_other_hands_and_the_deck(table):
    env = bastra_env.raw_env(**TABLES[table])
    env.reset(seed=8)
    rng = np.random.default_rng(8)
    for _ in range(17):  # just past a deal: every other hand still holds cards
        env.step(int(rng.choice(env.legal_actions())))
    game = env.game
    me = game.current
    before = {a: env.observe(a) for a in env.possible_agents}
    # swap a card of every other hand with a card still in the deck, and reverse the deck
    deck = list(game.deck)
    for seat in range(game.num_players):
        if seat == me:
            continue
        theirs = next(iter_cards(game.hands[seat]))
        index = game.deck_pos + seat
        mine = deck[index]
        game.hands[seat] ^= (1 << theirs) | (1 << mine)
        deck[index] = theirs
    deck[game.deck_pos :] = reversed(deck[game.deck_pos :])
    game.deck = tuple(deck)
    env._move_cache = None
    after = env.observe(env.possible_agents[me])
    for key in ("observation", "action_mask"):
        np.testing.assert_array_equal(after[key], before[env.possible_agents[me]][key])
    other = env.possible_agents[(me + 1) % game.num_players]
    assert not np.array_equal(env.observe(other)["observation"], before[other]["observation"])


# --------------------------------------------------------------------------- rewards and infos
@pytest.mark.parametrize("table", list(TABLES))
def test_win_rewards_at_the_end_partners_equal(table):
    env = bastra_env.env(**TABLES[table], target_score=30)
    env.reset(seed=2)
    rules = env.unwrapped.rules
    totals = dict.fromkeys(env.possible_agents, 0.0)
    for agent in env.agent_iter():
        obs, reward, termination, truncation, _ = env.last()
        totals[agent] += reward
        if termination or truncation:
            env.step(None)
            continue
        env.step(int(np.random.default_rng(0).choice(np.flatnonzero(obs["action_mask"]))))
    game = env.unwrapped.game
    for seat, agent in enumerate(env.possible_agents):
        if game.winner is None:
            assert totals[agent] == 0
        else:
            assert totals[agent] == (1 if rules.side_of(seat) == game.winner else -1)


def test_points_rewards_pay_each_rounds_difference_to_the_right_seats():
    env = bastra_env.env(num_players=4, teams=True, reward="points", max_rounds=3)
    env.reset(seed=6)
    totals = dict.fromkeys(env.possible_agents, 0.0)
    infos_seen = []
    for agent in env.agent_iter():
        obs, reward, termination, truncation, info = env.last()
        totals[agent] += reward
        if "round_result" in info:
            infos_seen.append((agent, info["round_result"]["round"]))
        if termination or truncation:
            env.step(None)
            continue
        env.step(int(np.flatnonzero(obs["action_mask"])[0]))
    scores = env.unwrapped.game.scores
    assert totals["player_0"] == totals["player_2"] == scores[0] - scores[1]
    assert totals["player_1"] == totals["player_3"] == scores[1] - scores[0]
    # every agent sees each round's breakdown once, at its next turn (or at the end)
    for rnd in (1, 2, 3):
        assert sorted(a for a, r in infos_seen if r == rnd) == env.possible_agents


def test_round_breakdown_in_infos():
    env = bastra_env.raw_env(num_players=3, max_rounds=1)
    env.reset(seed=9)
    while not env.game.done:
        env.step(env.legal_actions()[0])
    info = env.infos["player_0"]["round_result"]
    result = env.game.results[0]
    assert info["round"] == 1
    assert [info["points"][a] for a in env.possible_agents] == list(result.total)
    assert sum(info["card_points"].values()) == 13
    assert json.loads(json.dumps(info)) == info


# --------------------------------------------------------------------------- rendering
def test_ansi_render_shows_the_table_and_hides_other_hands():
    env = bastra_env.env(render_mode="ansi")
    env.reset(seed=0)
    text = env.render()
    raw = env.unwrapped
    mine = [c for c in iter_cards(raw.game.hands[0])]
    theirs = [c for c in iter_cards(raw.game.hands[1])]
    assert "round 1" in text and "▶ player_0" in text and "target 100" in text
    assert any(s in text for s in "♣♦♥♠")
    from bastra_env.cards import pretty

    assert all(pretty(c) in text for c in mine)
    assert "player_1  hand: 4 cards" in text
    env.step(int(np.flatnonzero(env.last()[0]["action_mask"])[0]))
    assert "Last: player_0 played" in env.render()
    revealed = bastra_env.env(render_mode="ansi", reveal_hands=True)
    revealed.reset(seed=0)
    assert all(pretty(c) in revealed.render() for c in theirs)


@pytest.mark.parametrize("table", ["2p", "4p teams"])
def test_turn_based_parallel_conversion_works(table):
    from pettingzoo.test import parallel_api_test
    from pettingzoo.utils.conversions import turn_based_aec_to_parallel

    parallel_api_test(turn_based_aec_to_parallel(bastra_env.env(**TABLES[table])), num_cycles=200)
    par = turn_based_aec_to_parallel(bastra_env.env(**TABLES[table], max_rounds=1))
    observations, _ = par.reset(seed=0)
    steps = 0
    while par.agents:
        actions = {}
        for agent in par.agents:
            legal = np.flatnonzero(observations[agent]["action_mask"])
            actions[agent] = int(legal[0]) if legal.size else 0
        observations, rewards, *_ = par.step(actions)
        steps += 1
    assert steps == 48
    assert sorted(set(rewards.values())) in ([-1.0, 1.0], [0.0])


def test_rgb_array_render_draws_the_table():
    env = bastra_env.env(render_mode="rgb_array", num_players=4, teams=True)
    env.reset(seed=0)
    first = env.render()
    assert first.shape == (640, 960, 3) and first.dtype == np.uint8
    assert len(np.unique(first.reshape(-1, 3), axis=0)) > 20  # felt, cards, text, not one colour
    env.step(int(np.flatnonzero(env.last()[0]["action_mask"])[0]))
    assert not np.array_equal(env.render(), first)


def test_env_survives_pickle_and_deepcopy():
    import copy
    import pickle

    env = bastra_env.env(num_players=4, teams=True)
    env.reset(seed=0)
    env.step(int(np.flatnonzero(env.last()[0]["action_mask"])[0]))
    for clone in (copy.deepcopy(env), pickle.loads(pickle.dumps(env))):
        assert isinstance(clone, wrappers.OrderEnforcingWrapper)
        assert clone.unwrapped.snapshot() == env.unwrapped.snapshot()
        np.testing.assert_array_equal(clone.last()[0]["observation"], env.last()[0]["observation"])


def test_step_or_observe_before_reset_says_to_reset_first():
    env = bastra_env.raw_env()
    with pytest.raises(RuntimeError, match=r"call reset\(\) before"):
        env.step(0)
    with pytest.raises(RuntimeError, match=r"call reset\(\) before"):
        env.observe("player_0")
    env.reset(seed=0)
    env.step(int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"])[0]))


def test_pettingzoo_naming_bastra_v0_gives_the_env_and_its_layout():
    """``from bastra_env import bastra_v0; bastra_v0.env()`` (the name the metadata gives) is the
    wrapped AEC env, and the layout is read from it, not from ``bastra_env.env`` (a function)."""
    from bastra_env import bastra_v0

    env = bastra_v0.env(num_players=4, teams=True)
    assert env.metadata["name"] == "bastra_v0"
    assert type(env) is type(bastra_env.env())
    env.reset(seed=1)
    assert env.observation_space("player_0")["observation"].shape == (bastra_v0.OBSERVATION_SIZE,)
    assert sum(size for _, size, *_ in bastra_v0.OBSERVATION_LAYOUT) == bastra_v0.OBSERVATION_SIZE
    assert callable(bastra_env.env)
