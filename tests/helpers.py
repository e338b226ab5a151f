"""Shared test helpers: decks that deal chosen cards, name-level views of the engine, and a digest
of self-play shards' arrays."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence

import numpy as np

from bastra_env import parse_card
from bastra_env.cards import NUM_CARDS, mask_of


def deck_dealing(hands: list[list[str]], board: list[str], rest_first: list[str] = ()) -> list[int]:
    """A round-1 deck (card ints, top first) that deals ``hands[seat]`` and ``board``.

    Round 1's dealer is the last seat, so card ``k`` of the deck goes to seat ``k % n``; the board
    follows. ``rest_first`` are the next cards after the board; the others follow in card order.
    """
    n = len(hands)
    deck: list[int] = []
    for i in range(4):
        for seat in range(n):
            deck.append(parse_card(hands[seat][i]))
    deck += [parse_card(c) for c in board]
    deck += [parse_card(c) for c in rest_first]
    used = set(deck)
    deck += [c for c in range(NUM_CARDS) if c not in used]
    assert sorted(deck) == list(range(NUM_CARDS))
    return deck


def mask(*names: str) -> int:
    return mask_of(parse_card(n) for n in names)


def shards_digest(shards: Iterable[dict], fields: Sequence[str]) -> str:
    """One hash of the ``fields`` arrays of every shard, in order (equal data, equal digest)."""
    h = hashlib.sha256()
    for shard in shards:
        for name in fields:
            h.update(np.ascontiguousarray(shard[name]).tobytes())
    return h.hexdigest()
