"""The compiled rules (``bastra_env.compiled_rules``, behind ``Game``) against the plain Python
reference (``tests/reference.py``): the same legal moves, states and results play for play."""

import dataclasses
import random

import numpy as np
import pytest

from bastra_env import Rules
from bastra_env.game import Game, round_seed_deck
from tests import reference

VARIANTS = [
    Rules(),
    Rules(num_players=3),
    Rules(num_players=4),
    Rules(num_players=4, teams=True),
    Rules(capture="auto"),
    Rules(last_play_bastra=False, tie_break="draw", target_score=30),
    Rules(max_rounds=2, most_cards_points=5, bastra_points=7, jack_bastra_points=20),
]


def lockstep(rules: Rules, seed: int, rng: random.Random) -> int:
    fast, slow = Game(rules, seed=seed), reference.Game(rules, seed=seed)
    plays = 0
    while not slow.done:
        moves = fast.legal_moves()
        assert moves == slow.legal_moves()
        move = rng.choice(moves)
        fast.apply(*move)
        slow.apply(*move)
        plays += 1
        assert list(fast.hands) == slow.hands and fast.board == slow.board
        assert list(fast.captured) == slow.captured and list(fast.scores) == slow.scores
        assert (fast.current, fast.dealer, fast.round, fast.plays) == (
            slow.current,
            slow.dealer,
            slow.round,
            slow.plays,
        )
        assert fast.deck == slow.deck and fast.deck_pos == slow.deck_pos
        assert fast.last_move == slow.last_move and fast.last_capturer == slow.last_capturer
        assert list(fast.bastras) == slow.bastras
        assert list(fast.jack_bastras) == slow.jack_bastras
    assert fast.done and fast.winner == slow.winner
    assert [dataclasses.astuple(r) for r in fast.results] == [
        dataclasses.astuple(r) for r in slow.results
    ]
    return plays


@pytest.mark.parametrize("rules", VARIANTS, ids=lambda r: repr(r)[6:60])
def test_kernels_play_whole_games_like_the_reference(rules):
    rng = random.Random(hash(repr(rules)) % 1000)
    for _ in range(12):
        assert lockstep(rules, rng.getrandbits(63), rng) > 0


def test_the_seeding_rule_is_the_references():
    for seed in (0, 1, 12345, 2**63 - 1):
        for k in (1, 2, 9):
            assert round_seed_deck(seed, k) == reference.round_seed_deck(seed, k)


@pytest.mark.parametrize("rules", VARIANTS, ids=lambda r: repr(r)[6:60])
def test_the_scoring_functions_add_up_to_the_rounds_result(rules):
    """The engine's scoring pieces, which the search kernels score with (``capture_points`` per
    play, the leftovers' ``card_points``, ``most_cards_points``, ``side_difference``), add up to
    the round result the engine itself records, in every variant."""
    from bastra_env import compiled_rules as K

    rng = random.Random(7)
    game = Game(rules, seed=rng.getrandbits(63))
    row, sides = game.rules_row, rules.num_sides
    made = [0] * sides
    while not game.done:
        seat, board, plays = game.current, game.board, game.plays
        card, capture = rng.choice(game.legal_moves())
        if capture:
            made[rules.side_of(seat)] += K.capture_points(card, capture, board, plays, row)
            last, board = seat, board ^ capture
        else:
            board |= 1 << card
        rounds = len(game.results)
        game.apply(card, capture)
        if len(game.results) == rounds:
            continue
        result = game.results[-1]
        if result.leftover_side is not None:
            assert result.leftover_side == rules.side_of(last)
            made[result.leftover_side] += K.card_points(board)
        most = max(result.cards)
        for side in range(sides):
            made[side] += K.most_cards_points(result.cards[side], most, row)
            others = sum(result.total) - result.total[side]
            difference = K.side_difference(np.array(result.total), row, side)
            assert difference == result.total[side] - others / (sides - 1)
        assert tuple(made) == result.total
        made = [0] * sides
