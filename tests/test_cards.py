import pytest

from bastra_env import card_name, parse_card
from bastra_env.cards import (
    CARD_POINTS,
    NUM_CARDS,
    mask_of,
    mask_str,
    parse_deck,
    points,
    value_of,
)


def test_every_card_round_trips_through_its_name():
    names = [card_name(c) for c in range(NUM_CARDS)]
    assert len(set(names)) == NUM_CARDS
    assert all(parse_card(n) == c for c, n in enumerate(names))


@pytest.mark.parametrize(
    "text, name", [("10D", "10D"), ("TD", "10D"), ("td", "10D"), (" as ", "AS"), ("QH", "QH")]
)
def test_parse_accepts_t_for_ten_and_any_case(text, name):
    assert card_name(parse_card(text)) == name


@pytest.mark.parametrize("bad", ["", "1D", "11C", "ZS", "10", "D", "10X", "JJ", "AS ,"])
def test_malformed_names_are_refused_with_the_name_in_the_message(bad):
    with pytest.raises(ValueError, match="not a card name"):
        parse_card(bad)


@pytest.mark.parametrize("bad", [None, 10, ("A", "S")])
def test_non_string_names_are_a_type_error(bad):
    with pytest.raises(TypeError):
        parse_card(bad)


@pytest.mark.parametrize("bad", [-1, 52, True, "AS", 1.0])
def test_card_name_refuses_non_cards(bad):
    with pytest.raises(ValueError, match="not a card"):
        card_name(bad)


def test_values_follow_r2():
    assert value_of(parse_card("AS")) == 1
    assert value_of(parse_card("10H")) == 10
    assert [value_of(parse_card(r + "C")) for r in "JQK"] == [None, None, None]


def test_card_points_follow_r14_and_sum_to_13():
    assert sum(CARD_POINTS) == 13
    assert points(mask_of(range(NUM_CARDS))) == 13
    expected = {"AC": 1, "AD": 1, "AH": 1, "AS": 1, "JC": 1, "JD": 1, "JH": 1, "JS": 1, "2C": 2,
                "10D": 3}  # fmt: skip
    assert {card_name(c): p for c, p in enumerate(CARD_POINTS) if p} == expected


def test_mask_str_prints_cards_low_to_high():
    assert mask_str(mask_of([parse_card("JS"), parse_card("7D"), parse_card("10H")])) == "7D 10H JS"


def test_parse_deck_names_duplicates_and_missing_cards():
    names = [card_name(c) for c in range(NUM_CARDS)]
    assert parse_deck(names) == list(range(NUM_CARDS))
    with pytest.raises(ValueError, match="duplicate cards \\['AC'\\]"):
        parse_deck([*names[:-1], "AC"])
    with pytest.raises(ValueError, match="got 51; missing \\['KS'\\]"):
        parse_deck(names[:-1])
    with pytest.raises(ValueError, match="not a card name"):
        parse_deck([*names[:-1], "XX"])
    with pytest.raises(TypeError, match="list of card names"):
        parse_deck("AC 2C")
