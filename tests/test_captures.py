"""Capture enumeration (RULES.md R8-R10): the source's worked examples, then a brute force."""

from itertools import combinations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bastra_env import Rules, legal_captures, parse_card
from bastra_env.captures import CACHE, captures
from bastra_env.cards import JACK, NUM_CARDS, QUEEN, iter_cards, mask_of, points
from tests.reference import combining_groups

F = frozenset

# (played card, board, every legal capture): RULES.md R8-R10 and the source text.
WORKED_EXAMPLES = [
    # R8 combining: board 2, A, 5, 4
    ("3H", ["2S", "AD", "5C", "4H"], [F({"2S", "AD"})]),
    ("9H", ["2S", "AD", "5C", "4H"], [F({"5C", "4H"})]),
    # R9: a 7 takes 2+5, or 2+A+4 (the player chooses)
    ("7H", ["2S", "AD", "5C", "4H"], [F({"2S", "5C"}), F({"2S", "AD", "4H"})]),
    # R9: several groups of the same sum at once
    ("9H", ["5S", "4D", "2C", "7H"], [F({"5S", "4D", "2C", "7H"})]),
    # R9: pairing and combining on the same play
    ("9H", ["3S", "6D", "5C", "4H", "9S"], [F({"3S", "6D", "5C", "4H", "9S"})]),
    # R8 pairing: a 7 takes a 7, a king a king, a 6 takes two 6s
    ("7C", ["7D", "KS"], [F({"7D"})]),
    ("KC", ["KD", "QS", "5H"], [F({"KD"})]),
    ("6C", ["6D", "6H", "3S"], [F({"6D", "6H"})]),
    ("QC", ["QD", "QH", "QS"], [F({"QD", "QH", "QS"})]),
    # no capture: the card is trailed
    ("8C", ["2D", "3H", "KS"], []),
    ("QC", ["KD", "JS"], []),
    ("AC", ["2D", "3H"], []),
    # board J, Q, K never take part in combining (R8)
    ("5C", ["JD", "QH", "4S", "AH"], [F({"4S", "AH"})]),
    ("KC", ["JD", "QH", "AS"], []),
    # a combining group needs two or more cards; a lone lower card is no group
    ("5C", ["4S"], []),
    # R10: a jack takes everything, jacks included; onto an empty board it trails
    ("JC", ["JD", "QH", "4S", "10D"], [F({"JD", "QH", "4S", "10D"})]),
    ("JC", [], []),
    ("JC", ["JD"], [F({"JD"})]),
    # pairing cards are always taken with the combination (maximality)
    ("5C", ["5D", "2H", "3S"], [F({"5D", "2H", "3S"})]),
    # a capture is a set of specific cards: the two 10s make two choices
    ("10C", ["10D", "9H"], [F({"10D"})]),
    (
        "10C",
        ["5D", "5H", "AS", "4S"],
        [F({"5D", "5H"}), F({"5D", "AS", "4S"}), F({"5H", "AS", "4S"})],
    ),
    # on A 2 3 4 5 a 6 takes 1+5 with 2+4, or 1+2+3 (which leaves 4 5: no group of 6 left)
    ("6C", ["AD", "2D", "3D", "4D", "5D"], [F({"AD", "5D", "2D", "4D"}), F({"AD", "2D", "3D"})]),
]


@pytest.mark.parametrize("card, board, expected", WORKED_EXAMPLES)
def test_worked_examples(card, board, expected):
    assert sorted(map(sorted, legal_captures(card, board))) == sorted(map(sorted, expected))


def test_auto_mode_keeps_the_biggest_capture():
    auto = Rules(capture="auto")
    # most cards first: 2+A+4 (3 cards) over 2+5
    assert legal_captures("7H", ["2S", "AD", "5C", "4H"], rules=auto) == [F({"2S", "AD", "4H"})]
    # same card count: most points (2C is worth 2)
    assert legal_captures("3C", ["2D", "2C", "AH"], rules=auto) == [F({"2C", "AH"})]
    assert len(legal_captures("3C", ["2D", "2C", "AH"])) == 2


def test_legal_captures_refuses_bad_input():
    with pytest.raises(ValueError, match="not a card name"):
        legal_captures("11H", ["2S"])
    with pytest.raises(ValueError, match="duplicate cards"):
        legal_captures("7H", ["2S", "2S"])
    with pytest.raises(ValueError, match="both played and on the board"):
        legal_captures("7H", ["7H", "2S"])


# --------------------------------------------------------------------------- brute force
def brute_force_captures(card: int, board: list[int]) -> set[frozenset[int]]:
    """R8-R10 read literally: every subset of the board that splits into disjoint groups and
    leaves no group behind."""
    rank = card >> 2
    if rank == JACK:
        return {frozenset(board)} if board else set()

    def is_group(cards: tuple[int, ...]) -> bool:
        if len(cards) == 1:
            return cards[0] >> 2 == rank
        if rank >= JACK or any(c >> 2 >= JACK for c in cards):
            return False
        return sum((c >> 2) + 1 for c in cards) == rank + 1

    groups = [
        frozenset(g)
        for k in range(1, len(board) + 1)
        for g in combinations(board, k)
        if is_group(g)
    ]

    def splits(rest: frozenset[int]) -> bool:
        if not rest:
            return True
        low = min(rest)
        return any(low in g and g <= rest and splits(rest - g) for g in groups)

    found = set()
    for k in range(1, len(board) + 1):
        for subset in combinations(board, k):
            s = frozenset(subset)
            left = frozenset(board) - s
            if splits(s) and not any(g <= left for g in groups):
                found.add(s)
    return found


boards = st.lists(st.integers(0, NUM_CARDS - 1), max_size=10, unique=True)


@settings(max_examples=3000, deadline=None)
@given(board=boards, card=st.integers(0, NUM_CARDS - 1))
def test_captures_match_brute_force(board, card):
    if card in board:
        board = [c for c in board if c != card]
    got = [frozenset(iter_cards(m)) for m in captures(card, mask_of(board))]
    assert len(got) == len(set(got)), "a capture is listed twice"
    assert set(got) == brute_force_captures(card, board)


@settings(max_examples=500, deadline=None)
@given(
    board=st.lists(st.sampled_from(range(40)), min_size=3, max_size=12, unique=True),
    card=st.integers(0, 39),
)
def test_captures_on_numeric_heavy_boards_match_brute_force(board, card):
    board = [c for c in board if c != card]
    got = {frozenset(iter_cards(m)) for m in captures(card, mask_of(board))}
    assert got == brute_force_captures(card, board)


@settings(max_examples=300, deadline=None)
@given(board=boards, card=st.integers(0, NUM_CARDS - 1))
def test_captures_come_in_canonical_order(board, card):
    board = [c for c in board if c != card]
    caps = captures(card, mask_of(board))
    keys = [(-m.bit_count(), -points(m), m) for m in caps]
    assert keys == sorted(keys)


def test_repeated_boards_are_a_cache_hit():
    card, board = parse_card("7H"), mask_of(map(parse_card, ["2S", "AD", "5C", "4H", "KD"]))
    first = captures(card, board)
    key = board & ~mask_of(map(parse_card, ["KD"]))  # kings are not part of a 7's key
    assert CACHE[card >> 2][key] is first
    assert captures(card, board) is first
    assert captures(parse_card("7S"), board) is first  # the suit of the played card is irrelevant


def test_combining_groups_need_two_cards():
    assert combining_groups(5, [parse_card("4S")]) == []
    assert combining_groups(QUEEN + 1, []) == []
