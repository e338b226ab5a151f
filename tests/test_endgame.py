"""The endgame search: exact in the two-player last deal, sampled in the team game, never used
where cards are still hidden in the deck."""

import numpy as np
import pytest
import torch

import bastra_env
from agents import HeuristicPolicy, LearnedPolicy, SearchConfig
from agents.learning.network import NetworkConfig, PolicyValueNet
from agents.players.basic import GreedyPolicy, RandomPolicy
from agents.search.endgame import solve
from bastra_env import compiled_rules as K
from bastra_env.cards import points

from . import reference_endgame as reference

RULE_VARIANTS = (
    {},
    {"last_play_bastra": False, "most_cards_points": 5},
    {"bastra_points": 20, "jack_bastra_points": 30, "most_cards_points": 0},
    {"capture": "auto"},
)


def play_to_deal(env, policy, left: int) -> None:
    """Play until ``left`` cards are still in the deck and a deal has just been dealt."""
    game = env.game
    while not (len(game.deck) - game.deck_pos == left and game.plays % (4 * game.num_players) == 0):
        env.step(policy.act(env.observe(env.agent_selection)))


def play_to_last_deal(env, policy) -> None:
    """Play until the deck is empty and the last deal has just been dealt."""
    play_to_deal(env, policy, left=0)


def last_deals(rules: dict, seeds=range(25)):
    """(seed, env) of single-round 2p games played by the heuristic player to their last deal."""
    heuristic = HeuristicPolicy()
    for seed in seeds:
        env = bastra_env.raw_env(num_players=2, max_rounds=1, **rules)
        env.reset(seed=seed)
        play_to_last_deal(env, heuristic)
        yield seed, env


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
    for seed, env in last_deals(rules):
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


@pytest.mark.parametrize("rules", [{}, {"last_play_bastra": False, "most_cards_points": 5}])
def test_against_the_opponent_model_the_value_is_what_the_best_answer_to_it_scores(rules):
    """``model_weight=1``: the other seat plays the heuristic player (the opponent model) and mine
    the search's best move against it, through the last deal; the round's final point difference
    is exactly the value given at the first play, and no move is worth less against the model
    than under minimax (the best answer to one strategy does at least as well as against the
    worst); ``model_weight=0.5`` is the mean of the two."""
    heuristic = HeuristicPolicy()
    for seed, env in last_deals(rules):
        game = env.game
        me = game.current
        seen = env.observe(env.agent_selection)
        modelled, minimax = solve(seen, model_weight=1.0), solve(seen)
        assert set(modelled) == set(np.flatnonzero(seen["action_mask"]))
        assert all(modelled[a] >= minimax[a] for a in minimax)
        assert solve(seen, model_weight=0.5) == pytest.approx(
            {a: (modelled[a] + minimax[a]) / 2 for a in minimax}
        )
        predicted = max(modelled.values())
        before = banked(game, me)
        while not game.done:
            seen = env.observe(env.agent_selection)
            if game.current == me:
                values = solve(seen, model_weight=1.0)
                env.step(max(values, key=values.get))
            else:
                env.step(heuristic.act(seen))
        total = game.results[-1].total
        assert total[me] - total[1 - me] - before == predicted, seed
    with pytest.raises(ValueError, match="model_weight"):
        solve(seen, model_weight=1.5)


@pytest.mark.parametrize("objective", ["points", "game"])
def test_in_the_last_but_one_deal_the_model_value_is_the_modelled_rollout(objective):
    """In the two-deal search's earlier deal, a move's value against the model in one known
    world (the real hand and deck) is that move rolled out to the round's end, the other seat
    playing the heuristic player: the round's point difference less what is already banked, or
    the chance of winning the game from the totals (with a ten-thousandth of the points)."""
    from agents.search import world_kernels as S
    from agents.search.endgame import _modelled_values
    from agents.search.endgame_kernels import POINTS_ONLY
    from agents.search.equity import objective_table
    from agents.search.positions import position_of
    from bastra_env.cards import iter_cards
    from bastra_env.layout import MAX_LEGAL, NUM_ACTIONS, OBSERVATION_SIZE, SLOTS_PER_CARD

    heuristic = HeuristicPolicy()
    work = np.empty(S.WORK_SIZE, dtype=np.int64)
    scratch = (np.empty(OBSERVATION_SIZE, dtype=np.float32), np.empty(NUM_ACTIONS, dtype=np.int8),
               np.empty((MAX_LEGAL, 3)))  # fmt: skip
    equity = objective_table(2, False, [10, 50, 3], 100) if objective == "game" else POINTS_ONLY
    checked = 0
    for seed in range(8):
        env = bastra_env.raw_env(num_players=2, target_score=100)
        env.reset(seed=seed)
        play_to_deal(env, heuristic, left=8)
        env.step(heuristic.act(env.observe(env.agent_selection)))  # a play to infer from
        game, seen = env.game, env.observe(env.agent_selection)
        me = game.current
        rest = [int(c) for c in game.deck[game.deck_pos :]]
        order = np.array([*iter_cards(int(game.hands[1 - me])), *rest], dtype=np.int64)
        values = _modelled_values(seen["observation"], order[None], equity)
        position, rules, _, _ = position_of(seen["observation"])
        world = position.copy()
        world[K.HANDS + 1] = game.hands[1 - me]
        world[K.DECK + world[K.DECK_POS] : K.DECK + world[K.DECK_LEN]] = rest
        n = K.legal_slots(world, rules, work)
        assert sorted(values) == sorted(world[K.MOVE_ACTIONS : K.MOVE_ACTIONS + n].tolist())
        for i in range(n):
            state = world.copy()
            action = int(world[K.MOVE_ACTIONS + i])
            K.apply_move(state, rules, action // SLOTS_PER_CARD, world[K.MOVE_CAPTURES + i])
            S.rollout(state, rules, work, *scratch, True)
            if objective == "points":
                expected = S.round_value(state, rules, 0) - banked(game, me)
            else:
                expected = S.end_value(state, rules, equity) / 100
            assert values[action] == pytest.approx(expected)
            checked += 1
    assert checked >= 16


def known_world(game) -> np.ndarray:
    """The real cards hidden from the seat to move, as ``search`` takes a deal's order: the
    other hand, then the last deal (this seat's four, the other's four), read by playing a copy
    of the game on to that deal."""
    me, other = game.current, 1 - game.current
    ahead = game.copy()
    while ahead.deck_pos < len(ahead.deck):
        ahead.play(ahead.legal_moves()[0])
    last = [ahead.hands[me], ahead.hands[other]]
    masks = [game.hands[other], *last]
    return np.array([c for mask in masks for c in range(52) if mask >> c & 1], dtype=np.int64)


def world_values(env, world: np.ndarray) -> dict[int, int]:
    """The two-deal search's exact values of the seat to move in one known world."""
    from agents.search.endgame import LAST_DEAL, POSITION_LAYOUT, POSITION_SCALES
    from agents.search.endgame_kernels import I_SEARCH, read_position, search
    from bastra_env.layout import OBSERVED_CAP

    seen = env.observe(env.agent_selection)
    info, legal, unseen = read_position(
        seen["observation"],
        seen["action_mask"],
        2,
        LAST_DEAL,
        POSITION_LAYOUT,
        POSITION_SCALES,
        OBSERVED_CAP,
    )
    assert info[I_SEARCH] and sorted(world.tolist()) == unseen.tolist()
    sums, _ = search(info, world[None], legal, 4, 0, np.zeros((0, 0), dtype=np.int64),
                     np.zeros(2, dtype=np.int64))  # fmt: skip
    return dict(zip(legal.tolist(), sums.tolist(), strict=True))


@pytest.mark.parametrize("rules", [{}, {"last_play_bastra": False, "most_cards_points": 5}])
def test_two_deal_search_in_a_known_world_is_what_best_play_scores(rules):
    """From the first play of the last-but-one deal, with the hidden cards given as they are,
    both seats play the search's best action through both deals (the deal between them as the
    engine makes it); the round's final point difference is the value the first search gave."""
    heuristic = HeuristicPolicy()
    for seed in range(8):
        env = bastra_env.raw_env(num_players=2, max_rounds=1, **rules)
        env.reset(seed=seed)
        play_to_deal(env, heuristic, left=8)
        game = env.game
        me = game.current
        predicted = max(world_values(env, known_world(game)).values())
        before = banked(game, me)
        while not game.done:
            if game.deck_pos < len(game.deck):
                values = world_values(env, known_world(game))
            else:
                values = solve(env.observe(env.agent_selection))
            env.step(max(values, key=values.get))
        total = game.results[-1].total
        assert total[me] - total[1 - me] - before == predicted, seed


def test_two_deal_search_samples_deterministically_and_only_where_asked():
    env = bastra_env.raw_env(num_players=2, max_rounds=1)
    env.reset(seed=4)
    heuristic = HeuristicPolicy()
    play_to_deal(env, heuristic, left=16)
    assert solve(env.observe(env.agent_selection), deals=2) is None  # two deals still to come
    play_to_deal(env, heuristic, left=8)
    seen = env.observe(env.agent_selection)
    assert solve(seen) is None  # the default: the last deal only
    values = solve(seen, deals=2, deal_samples=6)
    assert set(values) == set(np.flatnonzero(seen["action_mask"]))
    assert values == solve(seen, deals=2, deal_samples=6)
    assert values != solve(seen, deals=2, deal_samples=7)
    # a bound on the plays searched: the first sampled deal is always searched whole
    assert solve(seen, deals=2, max_plays=1) == solve(seen, deals=2, deal_samples=1, max_plays=0)
    play_to_last_deal(env, heuristic)
    seen = env.observe(env.agent_selection)
    assert solve(seen, deals=2) == solve(seen)  # the last deal: exact either way
    with pytest.raises(ValueError, match="deals must be 1"):
        solve(seen, deals=3)


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
    with_search = LearnedPolicy(model)
    network_only = LearnedPolicy(model, SearchConfig(endgame=False))
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


def test_learned_policy_searches_the_last_two_deals_unless_told_to_search_one():
    torch.manual_seed(0)
    model = PolicyValueNet(NetworkConfig(hidden=(16,)))
    two, one = LearnedPolicy(model), LearnedPolicy(model, SearchConfig(endgame_deals=1))
    network_only = LearnedPolicy(model, SearchConfig(endgame=False))
    heuristic = HeuristicPolicy()
    differed = 0
    for seed in range(12):
        env = bastra_env.raw_env(num_players=2, max_rounds=1)
        env.reset(seed=seed)
        play_to_deal(env, heuristic, left=8)
        seen = env.observe(env.agent_selection)
        values = solve(seen, deals=2)
        chosen = two.act(seen)
        assert values[chosen] == max(values.values())
        assert one.act(seen) == network_only.act(seen)
        differed += chosen != network_only.act(seen)
    assert differed > 0
    with pytest.raises(ValueError, match="endgame_deals"):
        LearnedPolicy(model, SearchConfig(endgame_deals=3))


def test_no_search_when_a_scoring_rule_is_beyond_what_the_observation_tells():
    env = bastra_env.raw_env(num_players=2, max_rounds=1, bastra_points=150)  # encoded capped
    env.reset(seed=0)
    play_to_last_deal(env, HeuristicPolicy())
    assert solve(env.observe(env.agent_selection)) is None


def endgame_observations(num_players: int, teams: bool, games: int, seed: int) -> list:
    """Every observation of the seat to move once the deck is empty, over ``games`` one-round
    games of random and greedy seats, the rule variants in turn."""
    found = []
    for g in range(games):
        env = bastra_env.raw_env(
            num_players=num_players,
            teams=teams,
            max_rounds=1,
            **RULE_VARIANTS[g % len(RULE_VARIANTS)],
        )
        env.reset(seed=seed + g)
        pick = np.random.default_rng(seed + g)
        seats = [
            RandomPolicy(seed + g + s) if pick.random() < 0.5 else GreedyPolicy()
            for s in range(num_players)
        ]
        game = env.game
        while not game.done:
            seen = env.observe(env.agent_selection)
            if game.deck_pos >= len(game.deck):
                found.append(seen)
            env.step(seats[game.current].act(seen))
    return found


def same_answer(found, expected) -> bool:
    """The same ``None``, or the same actions in the same order with the same values."""
    if found is None or expected is None:
        return found is expected
    return list(found.items()) == list(expected.items())


@pytest.mark.parametrize(
    ("num_players", "teams", "games"), [(2, False, 40), (4, True, 40), (3, False, 2)]
)
def test_compiled_search_gives_the_reference_search_values(num_players, teams, games):
    """The kernels against the pure-Python search they replaced, on endgame observations of
    random and greedy play under several scoring rules: the same values (exactly, the team
    game's sampled deals included) and the same declines."""
    observations = endgame_observations(num_players, teams, games, seed=100 * num_players)
    searched = 0
    for seen in observations:
        expected = reference.solve(seen)  # at most two cards in a team hand, 16 deals, as it was
        assert same_answer(solve(seen, max_team_cards=2, samples=16), expected)
        searched += expected is not None
    assert searched == (0 if num_players == 3 else len(observations) // (2 if teams else 1))
    if teams:  # other sample counts and hand limits
        for seen in observations[::10]:
            for options in (
                {"samples": 3, "max_team_cards": 2},
                {"max_team_cards": 3, "samples": 4},
                {"max_team_cards": 3, "samples": 64},
            ):
                assert same_answer(solve(seen, **options), reference.solve(seen, **options))


def test_compiled_search_declines_where_the_reference_declines():
    """Cards left in the deck, no legal action (not my turn), a scoring rule past the cap."""
    env = bastra_env.raw_env(num_players=2, max_rounds=1, jack_bastra_points=600)
    env.reset(seed=1)
    heuristic = HeuristicPolicy()
    assert solve(env.observe(env.agent_selection)) is None
    play_to_last_deal(env, heuristic)
    for agent in env.agents:
        seen = env.observe(agent)
        assert solve(seen) is None and reference.solve(seen) is None


def test_equity_table_is_the_chance_of_winning_from_the_totals():
    """Each round one side or the other scores 10 (the outcome counted both ways): to 20, from
    10-0 the leader wins at once half the time and else stands at 10-10 (even): 3/4."""
    from agents.search.equity import EQUITY_SCALE, equity_table

    table = equity_table(20, np.array([[10, 0, 1]])) / EQUITY_SCALE
    assert table[0, 0] == 0.5 and table[10, 10] == 0.5
    assert table[10, 0] == 0.75 and table[0, 10] == 0.25
    assert table[20, 19] == 1.0 and table[19, 25] == 0.0 and table[25, 25] == 0.5
    shipped = equity_table(100, np.array([[16, 10, 3], [3, 13, 1], [30, 3, 1]]))
    assert (abs(shipped + shipped.T - EQUITY_SCALE) <= 1).all()  # zero-sum, to the rounding
    assert (np.diff(shipped[:100, :100], axis=0) >= 0).all()  # more points never hurt
    with pytest.raises(ValueError, match="no outcome scores"):
        equity_table(100, np.array([[0, 0, 5]]))
    with pytest.raises(ValueError, match="target must be a positive int"):
        equity_table(0, np.array([[10, 0, 1]]))


def test_game_objective_value_is_the_equity_of_the_totals_best_play_reaches():
    """In a game to 100, from the first play of a later round's last deal both seats play the
    game objective's best action to the round's end: the totals the round ends at have exactly
    the equity the search predicted (the game scores, the round's points so far and the rest)."""
    from agents.search.equity import EQUITY_SCALE, game_equity

    heuristic = HeuristicPolicy()
    equity = game_equity("2p", 100)
    checked = 0
    for seed in range(12):
        env = bastra_env.raw_env(num_players=2)
        env.reset(seed=seed)
        game = env.game
        while game.round < 3 and not game.done:
            env.step(heuristic.act(env.observe(env.agent_selection)))
        if game.done:
            continue
        play_to_last_deal(env, heuristic)
        me, played = game.current, game.round
        if game.jack_bastras[0] or game.jack_bastras[1]:
            continue  # the observation counts a jack bastra at the bastra rule's points
        values = solve(env.observe(env.agent_selection), objective="game")
        predicted = max(values.values())
        points = solve(env.observe(env.agent_selection))
        assert set(values) == set(points)
        while game.round == played and not game.done:
            values = solve(env.observe(env.agent_selection), objective="game")
            env.step(max(values, key=values.get))
        scores = game.results[-1].scores  # cumulative, after this round
        assert equity[scores[me], scores[1 - me]] / EQUITY_SCALE == predicted, seed
        checked += 1
    assert checked >= 6


def test_game_objective_in_the_team_game_and_where_no_table_applies():
    """The team game's sampled search gives chances (0 to 1) for the same actions; under scoring
    rules the equity table was not measured for, the game objective is the round's points."""
    heuristic = HeuristicPolicy()
    env = bastra_env.raw_env(num_players=4, teams=True)
    env.reset(seed=3)
    play_to_last_deal(env, heuristic)
    for _ in range(4):  # a play each: three cards left in the hand to move
        env.step(heuristic.act(env.observe(env.agent_selection)))
    seen = env.observe(env.agent_selection)
    chances, points = solve(seen, objective="game"), solve(seen)
    assert set(chances) == set(points) and all(0.0 <= v <= 1.0 for v in chances.values())
    assert chances == solve(seen, objective="game")  # the same observation, the same answer
    env = bastra_env.raw_env(num_players=2, bastra_points=20)
    env.reset(seed=3)
    play_to_last_deal(env, heuristic)
    seen = env.observe(env.agent_selection)
    assert solve(seen, objective="game") == solve(seen)
    with pytest.raises(ValueError, match="objective must be one of"):
        solve(seen, objective="wins")


@pytest.mark.parametrize("table", [{"num_players": 2}, {"num_players": 4, "teams": True}],
                         ids=["2p two deals", "teams"])  # fmt: skip
def test_inferred_samples_are_deterministic_and_never_read_a_hidden_card(table):
    """``solve(infer=True)``: the same observation gives the same values, they differ from the
    uniform samples' where the deal's plays say something, and swapping a card of another hand
    with one of another hand (teams) or of the deck (2p) leaves them as they were."""
    env = bastra_env.raw_env(**table, max_rounds=1)
    heuristic = HeuristicPolicy()
    checked = differed = 0
    for seed in range(8):
        env.reset(seed=seed)
        game = env.game
        two = game.num_players == 2
        play_to_deal(env, heuristic, left=8 if two else 0)
        for _ in range(2 if two else 6):  # plays of this deal to infer from
            env.step(heuristic.act(env.observe(env.agent_selection)))
        seen = env.observe(env.agent_selection)
        kwargs = {"deals": 2, "deal_samples": 16} if two else {"samples": 16}
        values = solve(seen, infer=True, **kwargs)
        if not values:
            continue
        assert set(values) == set(np.flatnonzero(seen["action_mask"]))
        assert values == solve(seen, infer=True, **kwargs)
        differed += values != solve(seen, **kwargs)
        me = game.current
        other = (me + 1) % game.num_players
        theirs = int(game.hands[other])
        if two:  # a card of the opponent's hand swapped with the next card of the deck
            a, b = (theirs & -theirs).bit_length() - 1, game.deck[game.deck_pos]
            game.hands[other] = theirs ^ (1 << a) ^ (1 << b)
            game.state[K.DECK + game.deck_pos] = a
        else:  # a card swapped between two other hands
            third = int(game.hands[(me + 2) % 4])
            a, b = (theirs & -theirs).bit_length() - 1, (third & -third).bit_length() - 1
            game.hands[other] = theirs ^ (1 << a) ^ (1 << b)
            game.hands[(me + 2) % 4] = third ^ (1 << a) ^ (1 << b)
        swapped = env.observe(env.agent_selection)
        assert np.array_equal(swapped["observation"], seen["observation"])
        assert solve(swapped, infer=True, **kwargs) == values
        if not two:  # the search against the opponent model reads no hidden card either
            modelled = solve(seen, infer=True, model_weight=0.5, **kwargs)
            assert solve(swapped, infer=True, model_weight=0.5, **kwargs) == modelled
        checked += 1
    assert checked >= 4 and differed >= 1
