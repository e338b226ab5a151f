"""Cards, card sets as 52-bit masks, and card points.

A card is an ``int`` in ``0..51``: ``card = 4 * rank + suit``, with ranks ``A 2 .. 10 J Q K``
(indices 0..12) and suits ``C D H S`` (indices 0..3). A set of cards is a ``Mask``: bit ``c`` is set
when card ``c`` is in the set. Putting the four suits of a rank in one nibble makes "every card of
rank r" the mask ``0xF << 4 * r``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from numbers import Integral

Card = int
Mask = int

RANKS = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")
SUITS = ("C", "D", "H", "S")
SUIT_SYMBOLS = {"C": "♣", "D": "♦", "H": "♥", "S": "♠"}
NUM_CARDS = 52
FULL_DECK: Mask = (1 << NUM_CARDS) - 1

ACE, JACK, QUEEN, KING = 0, 10, 11, 12
"""Rank indices of the cards the rules name."""


def rank_of(card: Card) -> int:
    return card >> 2


def suit_of(card: Card) -> int:
    return card & 3


def make_card(rank: int, suit: int) -> Card:
    return 4 * rank + suit


RANK_MASKS: tuple[Mask, ...] = tuple(0xF << (4 * r) for r in range(13))
JACKS: Mask = RANK_MASKS[JACK]
ACES: Mask = RANK_MASKS[ACE]
NUMERIC: Mask = sum(RANK_MASKS[r] for r in range(10))
"""Aces and 2-10: the cards with a numeric value (RULES.md R2)."""

TWO_OF_CLUBS: Card = make_card(1, 0)
TEN_OF_DIAMONDS: Card = make_card(9, 1)

# Card points (R14): each ace 1, each jack 1, the 2 of clubs 2, the 10 of diamonds 3 (13 in all).
CARD_POINTS: tuple[int, ...] = tuple(
    (1 if rank_of(c) in (ACE, JACK) else 0)
    + (2 if c == TWO_OF_CLUBS else 0)
    + (3 if c == TEN_OF_DIAMONDS else 0)
    for c in range(NUM_CARDS)
)
POINT_CARDS: Mask = sum(1 << c for c in range(NUM_CARDS) if CARD_POINTS[c])


def value_of(card: Card) -> int | None:
    """Numeric value (R2): A = 1, 2-10 face value; J, Q, K have none."""
    r = card >> 2
    return r + 1 if r < JACK else None


def points(mask: Mask) -> int:
    """Card points (R14) of a set of cards."""
    return (
        (mask & (ACES | JACKS)).bit_count()
        + ((mask >> TWO_OF_CLUBS) & 1) * 2
        + ((mask >> TEN_OF_DIAMONDS) & 1) * 3
    )


def iter_cards(mask: Mask) -> Iterator[Card]:
    """The cards of a mask, lowest first."""
    while mask:
        low = mask & -mask
        yield low.bit_length() - 1
        mask ^= low


def cards_of(mask: Mask) -> list[Card]:
    return list(iter_cards(mask))


def mask_of(cards: Iterable[Card]) -> Mask:
    m = 0
    for c in cards:
        m |= 1 << c
    return m


_NAME_TO_CARD = {RANKS[r] + SUITS[s]: make_card(r, s) for r in range(13) for s in range(4)}
_CARD_TO_NAME = tuple(RANKS[c >> 2] + SUITS[c & 3] for c in range(NUM_CARDS))


def parse_card(name: str) -> Card:
    """``"10D"`` (or ``"TD"``) -> card int. Case-insensitive; ``ValueError`` on anything else."""
    if not isinstance(name, str):
        raise TypeError(f"a card name must be a str like '10D', got {type(name).__name__} {name!r}")
    text = name.strip().upper()
    rank, suit = text[:-1], text[-1:]
    rank = "10" if rank == "T" else rank
    card = _NAME_TO_CARD.get(rank + suit)
    if card is None:
        raise ValueError(
            f"not a card name: {name!r} (expected rank A,2-10,J,Q,K (or T for 10) then suit "
            f"C,D,H,S, e.g. 'AS', '10D', 'TD', 'QH')"
        )
    return card


def card_name(card: Card) -> str:
    """Card int -> its name (``"10D"``), the inverse of :func:`parse_card`."""
    if isinstance(card, bool) or not isinstance(card, Integral) or not 0 <= card < NUM_CARDS:
        raise ValueError(f"not a card: {card!r} (cards are ints 0..51)")
    return _CARD_TO_NAME[int(card)]


def pretty(card: Card) -> str:
    """Name with a suit symbol: ``"10♦"``."""
    return RANKS[card >> 2] + SUIT_SYMBOLS[SUITS[card & 3]]


def mask_str(mask: Mask, symbols: bool = False) -> str:
    """A printable form of a card set, lowest card first: ``"7D 10H JS"``."""
    name = pretty if symbols else card_name
    return " ".join(name(c) for c in iter_cards(mask))


def parse_cards(names: Iterable[str], what: str = "cards") -> list[Card]:
    """Parse card names, refusing duplicates with a message naming them."""
    if isinstance(names, str):
        raise TypeError(f"{what} must be a list of card names, not one string {names!r}")
    cards = [parse_card(n) for n in names]
    dups = [c for c, count in Counter(cards).items() if count > 1]
    if dups:
        raise ValueError(f"{what}: duplicate cards {sorted({card_name(c) for c in dups})}")
    return cards


def parse_deck(names: Iterable[str]) -> list[Card]:
    """A full deck, top first: exactly the 52 cards once each; ``ValueError`` says what is wrong."""
    cards = parse_cards(names, what="deck")
    if len(cards) != NUM_CARDS:
        missing = [card_name(c) for c in range(NUM_CARDS) if c not in set(cards)]
        raise ValueError(
            f"deck must hold exactly the 52 cards, got {len(cards)}"
            + (f"; missing {missing}" if missing else "")
        )
    return cards
