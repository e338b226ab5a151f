"""Per-action inputs for the network, derived from the observation alone.

For each legal action the network sees what the play does: the card played, the board cards it
takes and the board it leaves behind (three 52-card planes), the observation's own summary of the
action (cards and points to the pile, bastra), and the heuristic player's estimates of it
(``agents.heuristic.play_estimates``: gain, expected best reply of the next player, best follow-up
capture of my remaining cards; points-equivalents scaled by ``ESTIMATE_SCALE``). Scoring each
(state, action) pair with one shared function lets the network learn "what does this board leave
my opponent" once for every card, instead of once per action slot.
"""

from __future__ import annotations

import numpy as np

from bastra_env.captures import captures
from bastra_env.cards import NUM_CARDS
from bastra_env.layout import ACTION_SUMMARIES, NUM_ACTIONS, OFFSETS, SLOTS_PER_CARD

from .heuristic import ESTIMATES, play_estimates
from .policies import plane

MAX_LEGAL = 4 * SLOTS_PER_CARD
"""At most 4 cards in hand, each with at most SLOTS_PER_CARD actions."""
PAD_ACTION = NUM_ACTIONS
"""Index of padding rows: one past the last action."""
ESTIMATE_SCALE = 0.1
"""Estimates enter the network in tens of points."""
_SUMMARIES = tuple(OFFSETS[name] for name in ACTION_SUMMARIES)
SUMMARY_FEATURES = len(_SUMMARIES) + len(ESTIMATES)
"""The last features of each action: the observation's summary, then the heuristic estimates."""
ACTION_FEATURES = 3 * NUM_CARDS + SUMMARY_FEATURES
_PLANE_BITS = 3 * NUM_CARDS
_PLANE_BYTES = (_PLANE_BITS + 7) // 8


def action_inputs(
    observation: np.ndarray, action_mask: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """(actions ``int64[MAX_LEGAL]`` padded with ``PAD_ACTION``, features
    ``float32[MAX_LEGAL, ACTION_FEATURES]``) for one observation."""
    actions = np.full(MAX_LEGAL, PAD_ACTION, dtype=np.int64)
    features = np.zeros((MAX_LEGAL, ACTION_FEATURES), dtype=np.float32)
    legal = np.flatnonzero(action_mask)
    board = plane(observation, "board")
    for row, action in enumerate(legal):
        card, slot = divmod(int(action), SLOTS_PER_CARD)
        caps = captures(card, board)
        if caps:
            capture = caps[slot]
            after = board ^ capture
        else:
            capture = 0
            after = board | 1 << card
        bits = 1 << card | capture << NUM_CARDS | after << (2 * NUM_CARDS)
        features[row, :_PLANE_BITS] = np.unpackbits(
            np.frombuffer(bits.to_bytes(_PLANE_BYTES, "little"), dtype=np.uint8),
            count=_PLANE_BITS,
            bitorder="little",
        )
        actions[row] = action
    rows = len(legal)
    for i, piece in enumerate(_SUMMARIES):
        features[:rows, _PLANE_BITS + i] = observation[piece][legal]
    estimates = play_estimates(observation, legal)
    features[:rows, _PLANE_BITS + len(_SUMMARIES) :] = estimates * ESTIMATE_SCALE
    return actions, features
