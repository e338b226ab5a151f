"""The search players: the position they rebuild, what they may read, budgets, determinism."""

import time
from dataclasses import replace

import numpy as np
import pytest

import bastra_env
from agents import (
    HeuristicPolicy,
    ISMCTSPolicy,
    PIMCPolicy,
    load_policy,
    make_policy,
    policy_problem,
)
from agents.learning.config import PRESETS, SearchConfig
from agents.learning.policy import LearnedPolicy
from agents.search import world_kernels as S
from agents.search.endgame import MODEL_WEIGHT, solve
from agents.search.endgame_kernels import POINTS_ONLY
from agents.search.equity import MEASURED_SCORING, chance, game_equity, objective_table
from agents.search.players import decision_seed, position_of
from agents.search.positions import deal_fit, inferred_worlds
from bastra_env import compiled_rules as K
from bastra_env.layout import MAX_LEGAL, NUM_ACTIONS, OBSERVATION_SIZE, SLOTS_PER_CARD

TABLES = [{"num_players": 2}, {"num_players": 3}, {"num_players": 4, "teams": True}]
INFER_2P = PRESETS["bastra_2p:infer"]
MISFIT = INFER_2P.misfit


def inferring(worlds, preset=INFER_2P, **changes):
    """``MODEL:infer``'s search (the 2p preset by default) on ``worlds`` inferred worlds."""
    return replace(preset, infer_worlds=worlds, **changes)


def positions(table, seed, count):
    """(env, observation) at ``count`` decisions of a game with random legal play."""
    env = bastra_env.raw_env(**table, target_score=40)
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(count):
        if env.game.done:
            env.reset(seed=seed + 1000)
        observation = env.observe(env.agent_selection)
        yield env, observation
        env.step(int(rng.choice(np.flatnonzero(observation["action_mask"]))))


@pytest.mark.parametrize("table", TABLES, ids=["2p", "3p", "teams"])
def test_a_determinized_position_shows_the_seat_exactly_its_observation(table):
    work = np.empty(S.WORK_SIZE, dtype=np.int64)
    obs = np.empty(bastra_env.env().observation_space("player_0")["observation"].shape[0],
                   dtype=np.float32)  # fmt: skip
    mask = np.empty(208, dtype=np.int8)
    for k, (_, observation) in enumerate(positions(table, 4, 150)):
        state, rules, cards, sizes = position_of(observation["observation"])
        world = np.empty_like(state)
        S.determinize(state, cards, sizes, np.array([k], dtype=np.uint64), world)
        K.legal_slots(world, rules, work)
        K.encode(world, rules, 0, obs, mask)
        assert np.array_equal(obs, observation["observation"])
        assert np.array_equal(mask, observation["action_mask"])
        hidden = [int(world[K.HANDS + s]) for s in range(1, len(sizes))]
        assert [h.bit_count() for h in hidden] == sizes[1:].tolist()


@pytest.mark.parametrize("table", TABLES[::2], ids=["2p", "teams"])
def test_at_the_rounds_last_play_pimc_values_are_the_true_round_results(table):
    """With every card known (the last play of a round), one determinization is the true
    position and each action's value is the round's real point difference after it."""
    for env, observation in positions(table, 8, 400):
        game = env.game
        if game.plays != 47:
            continue
        seat = game.current
        side = env.rules.side_of(seat)
        values = PIMCPolicy(1, endgame=False).action_values(observation)
        for action, value in values.items():
            copy = game.copy()
            copy.apply(*env._moves()[action])
            totals = copy.results[-1].total
            others = [t for s, t in enumerate(totals) if s != side]
            assert value == pytest.approx(totals[side] - sum(others) / len(others))
        return
    raise AssertionError("no last play reached")


@pytest.mark.parametrize("table", TABLES[::2], ids=["2p", "teams"])
def test_with_the_game_objective_a_last_play_is_valued_by_the_chance_of_winning(table):
    """``objective="game"``: at the round's last play (every card known), each action's value
    is 100 times my side's chance of winning the game from the totals it leads to (the equity
    table, ``agents.search.equity``) plus a hundredth of the round's point difference."""
    checked = 0
    for env, observation in positions(table, 8, 1200):
        game = env.game
        if game.plays != 47:
            continue
        side = env.rules.side_of(game.current)
        equity = game_equity("2p" if table["num_players"] == 2 else "4p_teams", 40)
        points = PIMCPolicy(1, endgame=False).action_values(observation)
        values = PIMCPolicy(1, endgame=False, objective="game").action_values(observation)
        for action, value in values.items():
            copy = game.copy()
            copy.apply(*env._moves()[action])
            mine, theirs = copy.results[-1].scores[side], copy.results[-1].scores[1 - side]
            won = chance(equity, mine, theirs)
            assert value == pytest.approx(100 * won + 0.01 * points[action])
        checked += 1
    assert checked >= 3


def test_the_game_objective_applies_where_an_equity_table_was_measured():
    measured = list(MEASURED_SCORING.values())
    assert objective_table(3, False, measured, 100) is POINTS_ONLY
    assert objective_table(2, False, [20, 50, 3], 100) is POINTS_ONLY
    assert objective_table(2, False, measured, 40).shape == (241, 241)
    assert objective_table(4, True, measured, 100) is game_equity("4p_teams", 100)
    # three players, or scoring the table was not measured under: the round's points
    three = next(positions(TABLES[1], 3, 1))[1]
    other = bastra_env.raw_env(num_players=2, bastra_points=20)
    other.reset(seed=1)
    for observation in (three, other.observe(other.agent_selection)):
        game = PIMCPolicy(4, endgame=False, objective="game").action_values(observation)
        assert game == PIMCPolicy(4, endgame=False).action_values(observation)
    with pytest.raises(ValueError, match="objective"):
        PIMCPolicy(8, objective="wins")


@pytest.mark.parametrize(
    "make",
    [
        lambda: PIMCPolicy(8),
        lambda: PIMCPolicy(8, infer=True),
        lambda: PIMCPolicy(8, infer=True, objective="game"),
        lambda: ISMCTSPolicy(60),
        lambda: load_policy("bastra_2p", inferring(8)),
    ],
    ids=["pimc", "pimc-infer", "pimc-infer-game", "ismcts", "model-infer"],
)
def test_search_players_never_read_a_hidden_card(make):
    """Swapping a card of another hand with one of the deck changes neither the observation nor
    the search's choice (the env is passed in too, and must not matter)."""
    checked = 0
    for env, observation in positions({"num_players": 2}, 21, 60):
        game = env.game
        left = game.deck[game.deck_pos :]
        other = int(game.hands[1 - game.current])
        if not left or not other or len(np.flatnonzero(observation["action_mask"])) < 2:
            continue
        before = make().act(observation, env=env)
        a, b = (other & -other).bit_length() - 1, left[0]
        game.hands[1 - game.current] = other ^ (1 << a) ^ (1 << b)
        game.state[K.DECK + game.deck_pos] = a
        swapped = env.observe(env.agent_selection)
        assert np.array_equal(swapped["observation"], observation["observation"])
        assert make().act(swapped, env=env) == before
        game.hands[1 - game.current] = other  # put the cards back
        game.state[K.DECK + game.deck_pos] = b
        checked += 1
    assert checked >= 20


def test_iteration_budgets_are_deterministic_for_a_seed_and_seeds_matter():
    samples = [obs for _, obs in positions({"num_players": 2}, 5, 40)]
    for make in (lambda s: PIMCPolicy(16, seed=s), lambda s: ISMCTSPolicy(100, seed=s)):
        first = [make(1).act(o) for o in samples]
        assert [make(1).act(o) for o in samples] == first
        assert [make(1).act(o) for o in reversed(samples)] == first[::-1]  # order-free
    values = [PIMCPolicy(4, seed=s, endgame=False).action_values(samples[0]) for s in (1, 2)]
    assert values[0] != values[1]
    assert not np.array_equal(decision_seed(1, samples[0]["observation"]),
                              decision_seed(2, samples[0]["observation"]))  # fmt: skip


def test_ismcts_spends_its_iterations_on_the_root_moves():
    _, observation = next(positions({"num_players": 2}, 3, 1))
    position, rules, cards, sizes = position_of(observation["observation"])
    links, stats = S.new_tree(301)
    used = S.ismcts(position, rules, cards, sizes, 300, np.array([9], dtype=np.uint64), links,
                    stats, 1, 0.7, np.zeros(208), 0.0)  # fmt: skip
    visits = S.root_visits(links, stats)
    assert visits.sum() == 300 and 1 < used <= 301
    legal = np.flatnonzero(observation["action_mask"])
    assert set(np.flatnonzero(visits)) == set(legal)  # every root move tried
    assert ISMCTSPolicy(300, seed=9).act(observation) in legal


def test_a_time_budget_is_kept():
    _, observation = next(positions({"num_players": 2}, 6, 1))
    for spec in ("pimc:30ms", "ismcts:30ms"):
        policy = make_policy(spec)
        start = time.perf_counter()
        policy.act(observation)
        policy.act(observation)
        spent = (time.perf_counter() - start) / 2
        assert 0.03 <= spent < 0.5, (spec, spent)


def test_search_specs_and_bad_specs():
    assert isinstance(make_policy("pimc:64"), PIMCPolicy)
    policy = make_policy("ismcts:400:bastra_2p", seed=3)
    assert isinstance(policy, ISMCTSPolicy) and policy.prior is not None
    assert policy.budget == 400 and policy.seed == 3 and policy.name == "ismcts:400:bastra_2p"
    for bad in ("pimc:", "pimc:0", "ismcts:ten", "pimc:5s"):
        with pytest.raises(ValueError, match="search"):
            make_policy(bad)
    policy = make_policy("pimc:32:infer")
    assert policy.infer and policy.name == "pimc:32:infer"
    with pytest.raises(ValueError, match="PIMC option"):
        make_policy("ismcts:100:infer")
    assert policy_problem("ismcts:100:infer") is not None
    assert policy_problem("pimc:16:infer:bastra_2p") is None
    model = make_policy("bastra_2p:infer", seed=2)
    assert model.search.infer_worlds == 64 and model.name == "bastra_2p:infer"
    with pytest.raises(ValueError, match="infer_worlds"):
        load_policy("bastra_2p", SearchConfig(infer_worlds=-1))


def test_a_model_with_inference_searches_before_the_endgame_and_is_deterministic():
    """``MODEL:infer`` plays the PIMC search's best move, each move's value plus the network's
    log-probability at the table's weight, where the endgame search does not apply: the same move
    for the same observation."""
    model = load_policy("bastra_2p", inferring(16), seed=4)
    network = load_policy("bastra_2p", SearchConfig(endgame=False))
    samples = [obs for _, obs in positions({"num_players": 2}, 8, 30)]
    first = [model.act(o) for o in samples]
    assert [load_policy("bastra_2p", inferring(16), seed=4).act(o) for o in samples] == first
    assert first != [network.act(o) for o in samples]
    weight = model.search.network_weight
    assert weight == INFER_2P.network_weight == 0.3
    assert PRESETS["bastra_4p_teams:infer"].network_weight == 0.1
    for observation, chosen in zip(samples, first, strict=True):
        values = model.pimc.action_values(observation, model.rollout_share(observation))
        probs, _ = model.explain_batch(observation["observation"][None],
                                       observation["action_mask"][None])  # fmt: skip
        score = {a: v + weight * np.log(probs[0, a]) for a, v in values.items()}
        assert score[chosen] >= max(score.values()) - 1e-4


def test_the_network_weight_beside_the_search_goes_from_the_search_alone_to_the_network():
    """``network_weight`` (points a nat of the network's log-probability beside PIMC's values):
    0 plays the search's best move, a huge weight the network's own choice; it sets the weight
    for every table; a negative or undefined weight is refused."""
    samples = [obs for _, obs in positions({"num_players": 2}, 8, 30)]
    network = load_policy("bastra_2p", SearchConfig(endgame=False))
    alone = load_policy("bastra_2p", inferring(16, network_weight=0.0), seed=4)
    assert alone.search.network_weight == 0.0
    for observation in samples:
        values = alone.pimc.action_values(observation, alone.rollout_share(observation))
        assert values[alone.act(observation)] == max(values.values())
    led = load_policy("bastra_2p", inferring(16, network_weight=1e6), seed=4)
    assert [led.act(o) for o in samples] == [network.act(o) for o in samples]
    for bad in (-0.1, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="network_weight"):
            load_policy("bastra_2p", inferring(8, network_weight=bad))


def test_the_rollouts_share_of_the_opponent_model_blends_the_two_kinds_of_rollout():
    """``rollout_model_weight``: a move's value is that share of its mean over the modelled
    rollouts plus the rest of its mean over the rollout policy's rollouts of the same worlds. 1 is
    the modelled search (``pimc:N:infer``'s default), 0 the search without the model
    (``opponent_model=False``) on the same inferred worlds; a call may set its own share; a model
    given one takes it at every table and deal; a share outside [0, 1], or above 0 without the
    model, is refused."""
    modelled = PIMCPolicy(16, infer=True, seed=3)
    plain = PIMCPolicy(16, infer=True, seed=3, opponent_model=False)
    half = PIMCPolicy(16, infer=True, seed=3, rollout_model_weight=0.5)
    assert (modelled.rollout_model_weight, plain.rollout_model_weight) == (1.0, 0.0)
    differ = checked = 0
    for _, observation in heuristic_positions({"num_players": 2}, 5, 40):
        if observation["action_mask"].sum() < 2:
            continue
        m, p, h = (player.action_values(observation) for player in (modelled, plain, half))
        assert modelled.action_values(observation, 0.0) == p
        assert half.action_values(observation, 1.0) == m
        assert h == pytest.approx({a: 0.5 * m[a] + 0.5 * p[a] for a in m})
        differ += m != p
        checked += 1
    assert checked >= 20 and differ >= 5  # the model changes the rollouts' values
    everywhere = inferring(8, rollout_model_weight=0.25, misfit_rollout_model_weight=0.25)
    model = load_policy("bastra_2p", everywhere)
    for _, observation in positions({"num_players": 2}, 5, 30):
        assert model.rollout_share(observation) == 0.25 == everywhere.rollout_share(None)
    makes = [
        lambda: PIMCPolicy(8, infer=True, rollout_model_weight=1.5),
        lambda: PIMCPolicy(8, infer=True, rollout_model_weight=float("nan")),
        lambda: load_policy("bastra_2p", inferring(8, rollout_model_weight=-0.1)),
    ]
    for make in makes:
        with pytest.raises(ValueError, match="rollout_model_weight must be in"):
            make()
    for make in (lambda: PIMCPolicy(8, rollout_model_weight=0.5),
                 lambda: PIMCPolicy(8, infer=True, opponent_model=False, rollout_model_weight=1),
                 ):  # fmt: skip
        with pytest.raises(ValueError, match="needs the opponent model"):
            make()
    # a model without the opponent model plays the rollout policy alone, whatever its shares
    plain_model = LearnedPolicy(model.model, replace(everywhere, opponent_model=False))
    assert not plain_model.pimc.opponent_model and plain_model.rollout_share(observation) == 0.0
    with pytest.raises(ValueError, match="rollout_model_weight must be in"):
        modelled.action_values(next(heuristic_positions({"num_players": 2}, 5, 1))[1], 2.0)


@pytest.mark.parametrize("table", TABLES[::2], ids=["2p", "teams"])
def test_the_deal_fit_tells_the_models_own_play_from_random_play(table):
    """``deal_fit`` (the log Bayes factor of the opponent model over a uniform choice, on the
    deal's plays): 0 before another seat has played in the deal; under the model's own play
    (heuristic self-play) well above 0 and rarely under ``MISFIT``; under random play below 0
    and often under it; the same stream gives the same figure."""
    fits = {}
    for kind, made in (("model", heuristic_positions), ("random", positions)):
        fits[kind] = []
        for _, observation in made(table, 5, 150):
            obs = observation["observation"]
            position, rules, cards, sizes = position_of(obs)
            fit = deal_fit(position, rules, cards, sizes, decision_seed(0, obs), worlds=64)
            assert fit == deal_fit(position, rules, cards, sizes, decision_seed(0, obs), 64)
            if position[K.PLAYS] % (4 * int(rules[K.R_PLAYERS])) == 0:
                assert fit == 0.0  # no seat has played since the deal
            elif fit != 0.0:
                fits[kind].append(fit)
    model, random = np.array(fits["model"]), np.array(fits["random"])
    assert len(model) >= 100 and len(random) >= 100
    assert np.median(model) > 1.0 and (model < MISFIT).mean() < 0.15
    assert np.median(random) < 0.0 and (random < MISFIT).mean() > 0.4
    with pytest.raises(ValueError, match="worlds"):
        deal_fit(position, rules, cards, sizes, decision_seed(0, obs), worlds=0)


def test_a_2p_model_trusts_the_modelled_rollouts_less_where_the_deal_misfits_the_model():
    """``MODEL:infer`` takes its preset's shares: in 2p ``rollout_model_weight`` where the deal's
    plays fit the opponent model, ``misfit_rollout_model_weight`` where ``deal_fit`` is under
    ``misfit``; in teams one share everywhere."""
    model = load_policy("bastra_2p", inferring(8), seed=2)
    fit, misfit = INFER_2P.rollout_model_weight, INFER_2P.misfit_rollout_model_weight
    assert (fit, misfit) == (1.0, 0.5) and model.search.rollout_share(None) == fit
    seen = set()
    for _, observation in positions({"num_players": 2}, 6, 60):
        obs = observation["observation"]
        position, rules, cards, sizes = position_of(obs)
        evidence = deal_fit(position, rules, cards, sizes, decision_seed(model.pimc.seed, obs))
        share = model.rollout_share(observation)
        assert share == (misfit if evidence < MISFIT else fit)
        seen.add(share)
    assert seen == {fit, misfit}
    team = next(positions(TABLES[2], 6, 1))[1]
    teams = LearnedPolicy(model.model, inferring(8, PRESETS["bastra_4p_teams:infer"]), seed=2)
    assert teams.rollout_share(team) == teams.search.misfit_rollout_model_weight == 1.0


def test_players_that_model_the_other_sides_weigh_the_model_in_the_endgame():
    """``opponent_model`` (on with inference) brings the endgame search's ``model_weight``
    (``MODEL_WEIGHT``) with it, for the search players and the models alike; the search player's
    endgame move is the best of ``solve(model_weight=...)``; a weight outside [0, 1] is refused."""
    assert PIMCPolicy(8, infer=True).model_weight == MODEL_WEIGHT == 0.5
    assert PIMCPolicy(8).model_weight == 0.0 == ISMCTSPolicy(10).model_weight
    assert PIMCPolicy(8, infer=True, opponent_model=False).model_weight == 0.0
    assert PIMCPolicy(8, model_weight=0.25).model_weight == 0.25
    assert load_policy("bastra_2p", inferring(8)).search.endgame_model_weight == MODEL_WEIGHT
    assert load_policy("bastra_2p").search.endgame_model_weight == 0.0
    zero = inferring(8, model_weight=0.0)
    assert load_policy("bastra_2p", zero).search.endgame_model_weight == 0.0
    for make in (lambda: PIMCPolicy(8, model_weight=-0.1),
                 lambda: load_policy("bastra_2p", SearchConfig(model_weight=1.5))):  # fmt: skip
        with pytest.raises(ValueError, match="model_weight"):
            make()
    player, checked = PIMCPolicy(8, infer=True), 0
    for env, observation in heuristic_positions({"num_players": 2}, 3, 400):
        game = env.game
        if game.deck_pos < len(game.deck) or observation["action_mask"].sum() < 2:
            continue
        values = solve(observation, model_weight=MODEL_WEIGHT)
        assert player.act(observation) == max(values, key=lambda a: (values[a], -a))
        checked += 1
    assert checked >= 20


def heuristic_positions(table, seed, count):
    """(env, observation) at ``count`` decisions of heuristic self-play: the opponent model's
    own play, so the true hands fit the deal's plays as well as any."""
    policy = HeuristicPolicy()
    env = bastra_env.raw_env(**table)
    env.reset(seed=seed)
    for _ in range(count):
        if env.game.done:
            env.reset(seed=seed + 1000)
        observation = env.observe(env.agent_selection)
        yield env, observation
        env.step(policy.act(observation))


def true_world(env, position):
    """``position`` (seat to move as seat 0) with the real hands and deck filled in."""
    game = env.game
    n, me = game.num_players, game.current
    world = position.copy()
    for k in range(1, n):
        world[K.HANDS + k] = game.hands[(me + k) % n]
    rest = game.deck[game.deck_pos :]
    world[K.DECK + position[K.DECK_POS] : K.DECK + position[K.DECK_POS] + len(rest)] = rest
    return world


@pytest.mark.parametrize("table", TABLES[::2], ids=["2p", "teams"])
def test_the_deal_plays_make_the_true_hands_likely(table):
    """Under heuristic play, the real hands explain the deal's plays (at a sharp temperature, a
    play costs only where it tied with others), while uniform worlds mostly do not; the worlds
    drawn by inference hold the other hands' real cards more often than uniform draws."""
    scratch = (
        np.empty(K.STATE_SIZE, dtype=np.int64),
        np.empty(OBSERVATION_SIZE, np.float32),
        np.empty(NUM_ACTIONS, np.int8),
        np.empty((16, 3)),
        np.empty(S.WORK_SIZE, np.int64),
    )
    true_ll, uniform_ll, hits_inferred, hits_uniform = [], [], 0, 0
    for env, observation in heuristic_positions(table, 31, 300):
        position, rules, cards, sizes = position_of(observation["observation"])
        n = env.game.num_players
        if position[K.PLAYS] % (4 * n) < 2 or sizes[1:].sum() == 0:
            continue
        world = true_world(env, position)
        true_ll.append(S.deal_log_likelihood(world, position, rules, 0.05, 0.02, *scratch))
        rng = np.array([7], dtype=np.uint64)
        uniform = np.empty_like(position)
        S.determinize(position, cards, sizes, rng, uniform)
        uniform_ll.append(S.deal_log_likelihood(uniform, position, rules, 0.05, 0.02, *scratch))
        inferred = inferred_worlds(position, rules, cards, sizes, 16, rng)
        drawn = np.empty((16, K.STATE_SIZE), dtype=np.int64)
        for w in drawn:
            S.determinize(position, cards, sizes, rng, w)
        for k in range(1, n):
            real = world[K.HANDS + k]
            hits_inferred += sum(int(h & real).bit_count() for h in inferred[:, K.HANDS + k])
            hits_uniform += sum(int(h & real).bit_count() for h in drawn[:, K.HANDS + k])
        for w in inferred:  # every drawn world is a determinization of the position
            assert int(np.bitwise_or.reduce(w[K.HANDS + 1 : K.HANDS + n])) | int(
                sum(1 << int(c) for c in w[K.DECK + position[K.DECK_POS] : K.DECK + 52])
            ) == sum(1 << int(c) for c in cards)
    assert len(true_ll) >= 40
    # the heuristic's play is the model's best: only ties with other plays cost (log 1/2, ...)
    assert min(true_ll) > -8 and np.median(true_ll) > -2
    assert np.mean(np.array(true_ll) > np.array(uniform_ll) - 1e-9) > 0.75
    assert np.mean(uniform_ll) < np.mean(true_ll) - 1.0
    assert hits_inferred > 1.08 * hits_uniform


@pytest.mark.parametrize("table", TABLES[::2], ids=["2p", "teams"])
def test_modelled_rollouts_play_the_other_sides_as_the_heuristic_player(table):
    """In a modelled rollout (what ``pimc:N:infer`` plays out), every play of the other sides is
    the heuristic player's on that seat's own observation, my side's the rollout policy's: the
    same round, move for move, as those players stepped one play at a time."""
    heuristic = HeuristicPolicy()
    work = np.empty(S.WORK_SIZE, dtype=np.int64)
    obs = np.empty(OBSERVATION_SIZE, dtype=np.float32)
    mask = np.empty(NUM_ACTIONS, dtype=np.int8)
    est = np.empty((MAX_LEGAL, 3))
    differ = 0
    for k, (_, observation) in enumerate(positions(table, 9, 60)):
        position, rules, cards, sizes = position_of(observation["observation"])
        world = np.empty_like(position)
        S.determinize(position, cards, sizes, np.array([k], dtype=np.uint64), world)
        modelled, plain, stepped = world.copy(), world.copy(), world.copy()
        S.rollout(modelled, rules, work, obs, mask, est, True)
        S.rollout(plain, rules, work, obs, mask, est)
        other_side = [s % 2 == 1 if table.get("teams") else s != 0 for s in range(len(sizes))]
        while True:
            count = K.legal_slots(stepped, rules, work)
            seat = stepped[K.CURRENT]
            if other_side[seat]:
                K.encode(stepped, rules, seat, obs, mask)
                action = heuristic.act({"observation": obs, "action_mask": mask})
                i = list(stepped[K.MOVE_ACTIONS : K.MOVE_ACTIONS + count]).index(action)
            else:
                i = S.rollout_index(stepped, rules, work)
            move = stepped[K.MOVE_ACTIONS + i]
            if K.apply_move(stepped, rules, move // SLOTS_PER_CARD, stepped[K.MOVE_CAPTURES + i]):
                break
        assert np.array_equal(modelled, stepped)
        differ += not np.array_equal(modelled, plain)
    assert differ > 10  # the model is not the rollout policy


def test_search_plays_legal_moves_to_the_end_of_team_games():
    from agents.evaluation.matches import duplicate_match

    result = duplicate_match(PIMCPolicy(4), make_policy("greedy"), table="4p_teams",
                             deals=2, mode="round")  # fmt: skip
    assert result.games == 4


def test_the_uniform_stream_deals_every_unseen_card_to_the_other_hand_equally_often():
    """``decision_seed(..., uniform=True)``, the uniform stream: over many determinizations each
    unseen card lands in the other hand at the uniform rate (the players' own stream, pinned by
    tests/test_baseline_moves.py, is not uniform)."""
    env = bastra_env.env()
    env.reset(seed=11)
    for _ in range(3):  # a few plays into the first deal
        obs, *_ = env.last()
        env.step(int(np.flatnonzero(obs["action_mask"])[0]))
    obs, *_ = env.last()
    position, _, cards, sizes = position_of(obs["observation"])
    draws = 4000
    worlds = S.uniform_worlds(position, cards, sizes, draws,
                              decision_seed(0, obs["observation"], uniform=True))  # fmt: skip
    counts = np.array([((worlds[:, K.HANDS + 1] >> c) & 1).sum() for c in cards])
    rate = sizes[1] / len(cards)
    sigma = np.sqrt(draws * rate * (1 - rate))
    assert np.abs(counts - draws * rate).max() < 5 * sigma, counts
