"""The observation and action layout, shared by the AEC env, the vector env and the kernels.

One table, ``OBSERVATION_LAYOUT``, names every piece of the flat observation; the offsets, the
observation space's bounds, the env docs and the compiled encoder all come from it.
"""

from __future__ import annotations

import numpy as np

from .cards import NUM_CARDS

SLOTS_PER_CARD = 4
"""Capture alternatives kept per card (the biggest, in canonical order)."""
NUM_ACTIONS = NUM_CARDS * SLOTS_PER_CARD
MAX_SEATS = 4
MAX_LEGAL = 4 * SLOTS_PER_CARD
"""At most 4 cards in hand, each with at most SLOTS_PER_CARD actions."""
DECK_LEFT_SCALE = 44
"""The observation's ``deck_left`` is the cards still to be dealt / this (the most there are)."""
DEAL_PLAYS = MAX_SEATS * 4
"""The most plays a deal has (4 cards to each of 4 seats): the deal pieces' scale."""
REWARD_MODES = ("win", "points")
"""``"win"``: +1 / -1 / 0 to each seat at the end of the game; ``"points"``: each round's point
difference as it is scored (see ``bastra_env.env``)."""

# One row per observation piece: (name, size, high, meaning).
OBSERVATION_LAYOUT: tuple[tuple[str, int, float, str], ...] = (
    ("hand", NUM_CARDS, 1.0, "cards in my hand"),
    ("board", NUM_CARDS, 1.0, "cards on the board"),
    ("captured", MAX_SEATS * NUM_CARDS, 1.0, "cards each seat captured this round (4 planes)"),
    ("unseen", NUM_CARDS, 1.0, "cards in no place I can see: other hands and the deck"),
    ("scores", MAX_SEATS, 4.0, "each seat's side score / target score (at most 4)"),
    ("target", 1, 10.0, "target score / 100 (at most 10)"),
    ("round", 1, 10.0, "round number / 10 (at most 10)"),
    ("plays", 1, 1.0, "plays made this round / 48"),
    ("deck_left", 1, 1.0, f"cards still to be dealt / {DECK_LEFT_SCALE}"),
    ("hand_sizes", MAX_SEATS, 1.0, "cards in each seat's hand / 4"),
    ("bastras", MAX_SEATS, 12.0, "bastras (both kinds) each seat made this round / 4"),
    ("last_capturer", MAX_SEATS + 1, 1.0, "one-hot: who captured last this round (last: nobody)"),
    ("dealer", MAX_SEATS, 1.0, "one-hot: the dealer"),
    ("table", 4, 1.0, "one-hot: 2 players, 3 players, 4 players, 4 players in teams"),
    (
        "rules",
        4,
        10.0,
        "bastra/10, jack bastra/50, most cards/3 (each at most 10), last-play bastra",
    ),
    ("action_cards", NUM_ACTIONS, 5.2, "per action: cards it moves to my pile / 10"),
    ("action_points", NUM_ACTIONS, 1.0, "per action: card points it moves to my pile / 13"),
    ("action_bastra", NUM_ACTIONS, 1.0, "per action: 1 if it scores a bastra"),
    (
        "deal_played",
        NUM_CARDS,
        1.0,
        f"cards played since the latest deal: (k + 1) / {DEAL_PLAYS} for the deal's k-th play",
    ),
    (
        "deal_taken",
        NUM_CARDS,
        1.0,
        f"cards taken since the latest deal: (k + 1) / {DEAL_PLAYS} for the play that took them",
    ),
)
"""The layout only grows at its end (``EARLIER_OBSERVATION_SIZES``)."""
OFFSETS: dict[str, slice] = {}
_start = 0
for _name, _size, _high, _meaning in OBSERVATION_LAYOUT:
    OFFSETS[_name] = slice(_start, _start + _size)
    _start += _size
OBSERVATION_SIZE = _start
del _start, _name, _size, _high, _meaning
EARLIER_OBSERVATION_SIZES = (OFFSETS["deal_played"].start,)
"""The observation sizes of earlier versions of this layout, each a prefix of this one (version
0.2 ended at ``action_bastra``): a network trained on one reads the first entries."""

ACTION_SUMMARIES = ("action_cards", "action_points", "action_bastra")
"""The per-action pieces, last in the layout and one after the other: together the slice
``ACTION_SUMMARY`` of ``len(ACTION_SUMMARIES)`` rows of ``NUM_ACTIONS``."""
ACTION_SUMMARY = slice(OFFSETS[ACTION_SUMMARIES[0]].start, OFFSETS[ACTION_SUMMARIES[-1]].stop)

SCORING_SCALES = {"bastra_points": 10, "jack_bastra_points": 50, "most_cards_points": 3}
"""The "rules" piece holds each of these ``Rules`` fields over its scale (capped at
``OBSERVED_CAP``), then ``last_play_bastra``."""
OBSERVED_CAP = next(high for name, _, high, _ in OBSERVATION_LAYOUT if name == "rules")

RELATIVE_SLOTS = {2: (0, 1), 3: (0, 1, 3), 4: (0, 1, 2, 3)}
"""Seat offset (0 = me, 1 = left, ...) -> observation slot (me, left, opposite, right)."""


def observation_high() -> np.ndarray:
    """The upper bound of every observation entry (the lower bound is 0)."""
    high = np.empty(OBSERVATION_SIZE, dtype=np.float32)
    for name, _size, value, _meaning in OBSERVATION_LAYOUT:
        high[OFFSETS[name]] = value
    return high


def observed_scoring(observation: np.ndarray) -> dict[str, float]:
    """The scoring rules a flat observation's "rules" piece gives: ``bastra_points``,
    ``jack_bastra_points``, ``most_cards_points`` and ``last_play_bastra`` (1.0 or 0.0). A value
    at ``OBSERVED_CAP`` times its scale may stand for a larger one."""
    piece = observation[OFFSETS["rules"]]
    found = {
        name: float(piece[i]) * scale for i, (name, scale) in enumerate(SCORING_SCALES.items())
    }
    found["last_play_bastra"] = 1.0 if piece[len(SCORING_SCALES)] > 0.5 else 0.0
    return found
