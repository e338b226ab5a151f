"""The engine on scripted deals: dealing, captures, bastras, scoring, game end, bad input."""

import random

import pytest

from bastra_env import Game, Rules, card_name, parse_card
from bastra_env.cards import FULL_DECK, JACKS, NUM_CARDS, mask_str
from bastra_env.game import PLAYS_PER_ROUND, round_seed_deck

from .helpers import deck_dealing, mask


def state_of(game: Game) -> tuple:
    """Everything a game holds: its kernel state row, its results and its rules."""
    return (game.state.tolist(), game.results, game.rules)


def last_play_setup(
    game: Game, hand: str, board: list[str], piles: dict[int, list[str]], last_capturer: int
) -> None:
    """Put ``game`` just before the 48th play: the seat to move holds one card, every other card
    is in the given piles or on the board."""
    seat = game.current
    game.hands = [0] * game.num_players
    game.hands[seat] = mask(hand)
    game.board = mask(*board)
    game.captured = [mask(*piles.get(s, [])) for s in range(game.num_players)]
    game.deck_pos = len(game.deck)
    game.plays = PLAYS_PER_ROUND - 1
    game.last_capturer = last_capturer
    rest = FULL_DECK & ~(game.hands[seat] | game.board)
    for pile in game.captured:
        rest &= ~pile
    game.captured[last_capturer if last_capturer >= 0 else seat] |= (
        rest if last_capturer >= 0 else 0
    )


# --------------------------------------------------------------------------- dealing
@pytest.mark.parametrize("n", [2, 3, 4])
def test_round_one_deals_one_card_at_a_time_from_the_dealers_left(n):
    deck = list(range(NUM_CARDS))
    random.Random(n).shuffle(deck)
    deck = [c for c in deck if c >> 2 != 10] + [c for c in deck if c >> 2 == 10]  # no board jack
    game = Game(Rules(num_players=n), seed=1, deck=deck)
    assert game.dealer == n - 1 and game.current == 0 and game.round == 1
    for seat in range(n):
        assert game.hands[seat] == sum(1 << deck[k] for k in range(seat, 4 * n, n))
    assert game.board == sum(1 << c for c in deck[4 * n : 4 * n + 4])
    assert game.deck_pos == 4 * n + 4


def test_board_jacks_go_to_the_bottom_in_the_order_turned():
    hands = [["2C", "3C", "4C", "5C"], ["2D", "3D", "4D", "5D"]]
    deck = deck_dealing(hands, ["JH", "7S", "JC", "8S"], rest_first=["9S", "10S"])
    game = Game(Rules(), seed=0, deck=deck)
    assert mask_str(game.board) == "7S 8S 9S 10S"
    assert game.deck[-2:] == (parse_card("JH"), parse_card("JC"))
    assert game.board & JACKS == 0


def test_hands_are_redealt_when_empty_and_the_board_gets_none():
    game = Game(Rules(), seed=3)
    for _ in range(8):
        board_before = game.board
        game.play(game.legal_moves()[0])
    assert [h.bit_count() for h in game.hands] == [4, 4]
    assert game.deck_pos == 8 + 4 + (len(game.deck) - 52) + 8  # board jacks were turned past
    assert game.current == 0  # the dealer's left leads every hand
    assert game.board.bit_count() <= board_before.bit_count() + 1


@pytest.mark.parametrize("n, hands_per_round", [(2, 6), (3, 4), (4, 3)])
def test_a_round_is_48_plays_in_every_table_size(n, hands_per_round):
    game = Game(Rules(num_players=n), seed=5)
    deals = 1
    for play in range(1, PLAYS_PER_ROUND + 1):
        game.play(game.legal_moves()[-1])
        if play < PLAYS_PER_ROUND and play % (4 * n) == 0:
            deals += 1
            assert all(h.bit_count() == 4 for h in game.hands)
    assert deals == hands_per_round
    assert game.round == 2 or game.done


def test_the_deal_passes_left_each_round():
    game = Game(Rules(num_players=3), seed=11)
    dealers = []
    while game.round <= 4 and not game.done:
        if game.plays == 0:
            dealers.append((game.round, game.dealer, game.current))
        game.apply(*game.legal_moves()[0])
    assert dealers[:4] == [(1, 2, 0), (2, 0, 1), (3, 1, 2), (4, 2, 0)]


def test_later_rounds_are_shuffled_from_the_seed():
    game = Game(Rules(), seed=42)
    while game.round == 1:
        game.apply(*game.legal_moves()[0])
    expected = round_seed_deck(42, 2)
    assert game.hands[1] & (1 << expected[0])  # round 2's dealer is seat 0, so seat 1 gets card 1


# --------------------------------------------------------------------------- plays
def test_a_capture_moves_the_cards_and_the_played_card_to_the_pile():
    hands = [["9H", "2C", "3C", "4C"], ["2D", "3D", "4D", "5D"]]
    game = Game(Rules(), seed=0, deck=deck_dealing(hands, ["5S", "4H", "KC", "QD"]))
    game.play((parse_card("9H"), mask("5S", "4H")))
    assert game.captured[0] == mask("9H", "5S", "4H")
    assert game.board == mask("KC", "QD")
    assert game.last_capturer == 0 and game.current == 1
    assert game.last_move == (0, parse_card("9H"), mask("5S", "4H"))


def test_clearing_the_board_is_a_bastra():
    # R9's example: board 5, 4, 2, 7 and a 9 takes all four
    hands = [["9H", "2C", "3C", "4C"], ["2D", "3D", "4D", "5D"]]
    game = Game(Rules(), seed=0, deck=deck_dealing(hands, ["5S", "4H", "2S", "7H"]))
    game.play((parse_card("9H"), mask("5S", "4H", "2S", "7H")))
    assert game.board == 0 and game.bastras == [1, 0] and game.jack_bastras == [0, 0]


def test_a_jack_clearing_a_board_is_no_bastra_but_a_lone_jack_is_worth_50():
    hands = [["JH", "2C", "3C", "4C"], ["JD", "3D", "4D", "5D"]]
    game = Game(Rules(), seed=0, deck=deck_dealing(hands, ["5S", "4H", "2S", "7H"]))
    game.play((parse_card("JH"), mask("5S", "4H", "2S", "7H")))
    assert game.bastras == [0, 0] and game.jack_bastras == [0, 0]
    assert game.legal_moves()[-1] == (parse_card("JD"), 0)  # a jack onto an empty board trails
    game.play((parse_card("JD"), 0))
    assert game.board == mask("JD")
    game.hands[0] |= mask("JS")  # hand seat 0 another jack to take the lone jack
    game.hands[0] &= ~mask("2C")
    game.play((parse_card("JS"), mask("JD")))
    assert game.jack_bastras == [1, 0] and game.bastras == [0, 0]


def test_a_jack_taking_a_jack_among_other_cards_scores_nothing():
    game = Game(Rules(), seed=0)
    seat = game.current
    game.hands[seat] = mask("JS", "2C", "3C", "4C")
    game.board = mask("JD", "5H")
    game.play((parse_card("JS"), mask("JD", "5H")))
    assert game.jack_bastras[seat] == 0 and game.bastras[seat] == 0


@pytest.mark.parametrize("last_play_bastra, bastras", [(True, 1), (False, 0)])
def test_clearing_on_the_last_play_follows_the_rules_field(last_play_bastra, bastras):
    game = Game(Rules(last_play_bastra=last_play_bastra), seed=0)
    last_play_setup(game, "7H", ["7S"], {}, last_capturer=1)
    game.play((parse_card("7H"), mask("7S")))
    result = game.results[-1]
    assert result.bastras[0] == bastras
    assert result.leftover == 0


def test_leftovers_go_to_the_last_capturer_and_are_no_bastra():
    game = Game(Rules(), seed=0)
    last_play_setup(game, "8H", ["2S", "3D", "KH"], {}, last_capturer=1)
    game.play((parse_card("8H"), 0))  # trail: the board keeps 2S 3D KH 8H
    result = game.results[-1]
    assert result.leftover == 4 and result.leftover_side == 1
    assert result.bastras == (0, 0)
    assert result.cards[0] + result.cards[1] == NUM_CARDS


def test_leftovers_are_not_counted_when_nobody_captured():
    game = Game(Rules(), seed=0)
    last_play_setup(game, "8H", ["2S"], {}, last_capturer=-1)
    game.play((parse_card("8H"), 0))
    result = game.results[-1]
    assert result.leftover_side is None and result.cards == (0, 0)
    assert result.most_cards == (3, 3)  # both tied for the most (R15)


# --------------------------------------------------------------------------- scoring
def test_round_breakdown_adds_card_points_most_cards_and_bastras():
    game = Game(Rules(), seed=0)
    seat0 = ["AC", "AD", "2C", "10D", "JC", "5S", "6S", "7S"]  # 1+1+2+3+1 = 8 points, 8 cards
    seat1 = ["AH", "AS", "JD", "JH", "JS"]  # 5 points, 5 cards + leftovers
    last_play_setup(game, "9C", [], {0: seat0, 1: seat1}, last_capturer=1)  # 1 gets the rest
    game.bastras = [2, 0]
    game.jack_bastras = [0, 1]
    game.play((parse_card("9C"), 0))
    r = game.results[-1]
    assert r.card_points == (8, 5) and sum(r.card_points) == 13
    assert r.cards == (8, 44)
    assert r.most_cards == (0, 3)
    assert r.bastras == (2, 0) and r.jack_bastras == (0, 1) and r.bastra_points == (20, 50)
    assert r.total == (28, 58) and r.scores == (28, 58) and game.scores == [28, 58]


def test_team_breakdown_is_per_side_and_ties_pay_each_side():
    game = Game(Rules(num_players=4, teams=True), seed=0)
    evens = [c for c in range(NUM_CARDS) if c % 2 == 0]
    odds = [c for c in range(NUM_CARDS) if c % 2]
    piles = {0: evens[:13], 2: evens[13:], 1: odds[:13], 3: odds[13:25]}
    names = {s: [mask_str(1 << c) for c in cards] for s, cards in piles.items()}
    last_play_setup(game, mask_str(1 << odds[25]), [], names, last_capturer=1)
    game.apply(odds[25], 0)
    r = game.results[-1]
    assert r.cards == (26, 26) and r.most_cards == (3, 3)
    assert game.scores[0] == r.total[0] and len(game.scores) == 2


def test_three_sides_tied_for_most_cards_each_score():
    game = Game(Rules(num_players=4), seed=0)
    order = list(range(NUM_CARDS))
    piles = {0: order[:15], 1: order[15:30], 2: order[30:45], 3: order[45:51]}
    names = {s: [mask_str(1 << c) for c in cards] for s, cards in piles.items()}
    last_play_setup(game, mask_str(1 << order[51]), [], names, last_capturer=3)
    game.apply(order[51], 0)
    r = game.results[-1]
    assert r.cards == (15, 15, 15, 7) and r.most_cards == (3, 3, 3, 0)


# --------------------------------------------------------------------------- game end
def finish_round(game: Game) -> None:
    start = game.round
    while game.round == start and not game.done:
        game.apply(*game.legal_moves()[0])


def test_the_game_ends_when_one_side_passes_the_target_alone():
    game = Game(Rules(target_score=1), seed=2)
    finish_round(game)
    r = game.results[0]
    assert game.done == (max(r.total) >= 1 and r.total.count(max(r.total)) == 1)
    if game.done:
        assert game.winner == r.total.index(max(r.total)) and game.current == -1
        assert game.legal_moves() == []


@pytest.mark.parametrize("tie_break, done", [("extra_rounds", False), ("draw", True)])
def test_a_tie_at_the_target_plays_on_or_draws(tie_break, done):
    game = Game(Rules(target_score=50, tie_break=tie_break), seed=0)
    # seat 0 holds 6 card points; seat 1 the other 7, the most cards (3) and the trailed 9C
    last_play_setup(game, "9C", [], {0: ["AC", "2C", "10D"]}, last_capturer=1)
    game.scores = [64, 60]
    game.play((parse_card("9C"), 0))
    assert game.scores[0] == game.scores[1] == 70
    assert game.done is done
    assert game.winner is None
    assert game.is_draw() is done


def test_max_rounds_stops_below_the_target_and_the_highest_wins():
    game = Game(Rules(max_rounds=1), seed=9)
    finish_round(game)
    assert game.done and game.round == 1 and len(game.results) == 1
    total = game.results[0].total
    expected = None if total[0] == total[1] else (0 if total[0] > total[1] else 1)
    assert game.winner == expected


# --------------------------------------------------------------------------- bad input
def test_illegal_moves_are_refused_and_change_nothing():
    hands = [["9H", "2C", "3C", "KC"], ["2D", "3D", "4D", "5D"]]
    game = Game(Rules(), seed=0, deck=deck_dealing(hands, ["5S", "4H", "7S", "QD"]))
    before = state_of(game)
    cases = [
        ((parse_card("2D"), 0), "does not hold 2D"),
        ((parse_card("9H"), 0), "must take one of \\[4H 5S\\]"),
        ((parse_card("9H"), mask("5S")), "must take one of"),
        ((parse_card("KC"), mask("QD")), "cannot capture"),
        ((99, 0), "card 0..51"),
        ("9H", "pair of ints"),
        ((parse_card("9H"),), "pair of ints"),
    ]
    for move, message in cases:
        with pytest.raises(ValueError, match=message):
            game.play(move)
        assert state_of(game) == before
    assert not game.is_legal((parse_card("9H"), 0))


def test_a_finished_game_refuses_moves():
    game = Game(Rules(max_rounds=1), seed=0)
    finish_round(game)
    with pytest.raises(ValueError, match="game is over"):
        game.play((0, 0))


def test_a_deck_of_card_names_deals_the_same_game():
    names = [card_name(c) for c in range(NUM_CARDS)]
    assert state_of(Game(Rules(), seed=1, deck=names)) == state_of(
        Game(Rules(), seed=1, deck=list(range(NUM_CARDS)))
    )
    with pytest.raises(ValueError, match="duplicate cards"):
        Game(Rules(), deck=[*names[:-1], "AC"])


def test_a_bad_deck_or_seed_is_refused():
    with pytest.raises(ValueError, match="52 cards"):
        Game(Rules(), deck=list(range(51)))
    with pytest.raises(ValueError, match="52 cards"):
        Game(Rules(), deck=[0] * 52)
    with pytest.raises(TypeError, match="seed must be an int"):
        Game(Rules(), seed="7")
    with pytest.raises(TypeError, match="rules must be a Rules"):
        Game({"num_players": 2})


# --------------------------------------------------------------------------- copy, determinism
def test_copy_is_independent():
    game = Game(Rules(num_players=4, teams=True), seed=4)
    for _ in range(10):
        game.apply(*game.legal_moves()[0])
    clone = game.copy()
    assert state_of(clone) == state_of(game)
    before = state_of(game)
    while not clone.done:
        clone.apply(*clone.legal_moves()[-1])
    assert state_of(game) == before


def play_out(seed: int, rules: Rules) -> list:
    game = Game(rules, seed=seed)
    rng = random.Random(seed)
    moves = []
    while not game.done:
        move = rng.choice(game.legal_moves())
        moves.append(move)
        game.play(move)
    return [moves, game.results, game.winner]


@pytest.mark.parametrize("rules", [Rules(), Rules(num_players=4, teams=True)])
def test_the_same_seed_and_moves_give_the_same_game(rules):
    assert play_out(7, rules) == play_out(7, rules)
    assert play_out(7, rules) != play_out(8, rules)


def test_auto_capture_lists_one_move_per_card():
    game = Game(Rules(capture="auto"), seed=0)
    seat = game.current
    game.hands[seat] = mask("7H", "KD", "2C", "3C")
    game.board = mask("2S", "AD", "5C", "4H")
    moves = game.legal_moves()
    assert len(moves) == 4
    assert (parse_card("7H"), mask("2S", "AD", "4H")) in moves
    with pytest.raises(ValueError):
        game.play((parse_card("7H"), mask("2S", "5C")))


def test_last_play_bastra_false_also_removes_the_jack_bastra():
    game = Game(Rules(last_play_bastra=False), seed=0)
    last_play_setup(game, "JH", ["JS"], {}, last_capturer=1)
    game.play((parse_card("JH"), mask("JS")))
    assert game.results[-1].jack_bastras == (0, 0)
    game = Game(Rules(), seed=0)
    last_play_setup(game, "JH", ["JS"], {}, last_capturer=1)
    game.play((parse_card("JH"), mask("JS")))
    assert game.results[-1].jack_bastras == (1, 0) and game.results[-1].bastra_points[0] == 50


def test_max_rounds_caps_extra_rounds_and_a_tie_then_is_a_draw():
    game = Game(Rules(target_score=50, max_rounds=1), seed=0)
    last_play_setup(game, "9C", [], {0: ["AC", "2C", "10D"]}, last_capturer=1)
    game.scores = [64, 60]  # both reach 70 this round: tied past the target on the last round
    game.play((parse_card("9C"), 0))
    assert game.scores == [70, 70] and game.done and game.winner is None
