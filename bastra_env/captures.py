"""Which board cards a played card takes (RULES.md R8-R10), from Python.

The enumeration itself is the compiled kernel ``bastra_env.compiled_rules.card_captures``; this
module gives it a Python face with a cache. A capture is a union of pairwise disjoint *groups* that
leaves no further group behind (R9): pairing (one board card of the played card's rank) and
combining (two or more numeric board cards whose values sum to the played card's value).

Every board card of the played rank is a one-card group that no combining group can use, so
maximality forces a capture to take them all; and a combining group of value ``v`` only uses
numeric cards of value ``< v``. So the captures of a card depend on ``board & RELEVANT[rank]``
alone, which is the cache key: a repeated board costs one dict lookup.
"""

from __future__ import annotations

from .cards import (
    FULL_DECK,
    JACK,
    RANK_MASKS,
    Card,
    Mask,
    card_name,
    iter_cards,
    parse_card,
    parse_cards,
    points,
)
from .compiled_rules import all_captures
from .rules import Rules

BELOW: tuple[Mask, ...] = tuple(sum(RANK_MASKS[:r]) if r < JACK else 0 for r in range(13))
"""Numeric board cards that can join a combining group for a played card of rank r."""
RELEVANT: tuple[Mask, ...] = tuple(
    FULL_DECK if r == JACK else BELOW[r] | RANK_MASKS[r] if r < JACK else RANK_MASKS[r]
    for r in range(13)
)
"""The part of the board a card of rank r can take; the cache key is ``board & RELEVANT[r]``."""

CACHE_LIMIT = 1 << 20
"""Entries per rank before a cache is emptied and refilled: bounds memory in very long runs."""

CACHE: tuple[dict[Mask, tuple[Mask, ...]], ...] = tuple({} for _ in range(13))
"""Per rank: ``board & RELEVANT[rank]`` -> its captures in canonical order."""


def canonical_key(mask: Mask) -> tuple[int, int, int]:
    """Capture order used everywhere: most cards, then most points, then the lowest mask."""
    return (-mask.bit_count(), -points(mask), mask)


def captures(card: Card, board: Mask) -> tuple[Mask, ...]:
    """Every legal capture (R8-R10) of ``card`` played onto ``board``, in canonical order.

    Empty when the card cannot capture and is trailed. A jack onto an empty board trails too.
    """
    rank = card >> 2
    key = board & RELEVANT[rank]
    found = CACHE[rank].get(key)
    return found if found is not None else fill_cache(rank, key)


def fill_cache(rank: int, key: Mask) -> tuple[Mask, ...]:
    """The cache miss: compute the captures of a rank on ``key`` and keep them."""
    cache = CACHE[rank]
    if len(cache) >= CACHE_LIMIT:
        cache.clear()
    found = cache[key] = tuple(all_captures(4 * rank, key).tolist())
    return found


def legal_captures(card: str, board: list[str], rules: Rules | None = None) -> list[frozenset[str]]:
    """Every legal capture of playing ``card`` onto ``board`` (card names); ``[]`` means a trail.

    Under ``rules.capture == "auto"`` only the capture the engine would take is listed.
    """
    played = parse_card(card)
    on_board = parse_cards(board, what="board")
    if played in on_board:
        raise ValueError(f"{card_name(played)} cannot be both played and on the board")
    board_mask = 0
    for c in on_board:
        board_mask |= 1 << c
    found = captures(played, board_mask)
    if rules is not None and rules.capture == "auto":
        found = found[:1]
    return [frozenset(card_name(c) for c in iter_cards(m)) for m in found]
