"""The agents' per-action numbers in plain Python: the reference the compiled kernels of
``agents.players.observation_kernels`` are checked against (tests only; nothing in the package
imports it).

``play_estimates``, ``action_inputs`` and ``greedy_act`` are the implementations
``agents.players.heuristic``, ``agents.learning.features`` and ``GreedyPolicy.act`` had before the
kernels, unchanged but for their imports; their constants are restated here, as they were.
"""

from __future__ import annotations

from math import comb

import numpy as np

from agents.players.basic import Observation, legal_actions, plane, trail_cost
from bastra_env.captures import captures
from bastra_env.cards import JACK, NUM_CARDS, iter_cards, points
from bastra_env.game import BASTRA, JACK_BASTRA, NO_BASTRA, PLAYS_PER_ROUND, bastra_kind
from bastra_env.layout import (
    ACTION_SUMMARIES,
    NUM_ACTIONS,
    OFFSETS,
    SLOTS_PER_CARD,
    observed_scoring,
)

CARD_VALUE = 0.25
JACK_KEEP = 1.5
ESTIMATES = ("gain", "reply", "follow_up")
MAX_LEGAL = 4 * SLOTS_PER_CARD
PAD_ACTION = NUM_ACTIONS
ESTIMATE_SCALE = 0.1
_SUMMARIES = tuple(OFFSETS[name] for name in ACTION_SUMMARIES)
ACTION_FEATURES = 3 * NUM_CARDS + len(_SUMMARIES) + len(ESTIMATES)
_PLANE_BITS = 3 * NUM_CARDS
_PLANE_BYTES = (_PLANE_BITS + 7) // 8


def play_estimates(
    obs: np.ndarray,
    legal: np.ndarray,
    card_value: float = CARD_VALUE,
    jack_keep: float = JACK_KEEP,
) -> np.ndarray:
    """``float64[len(legal), 3]``: gain, reply, follow_up (see ``agents.players.heuristic``)."""
    board = plane(obs, "board")
    unseen = plane(obs, "unseen")
    hand = plane(obs, "hand")
    scoring = observed_scoring(obs)
    bastra_points, jack_bastra_points = scoring["bastra_points"], scoring["jack_bastra_points"]
    last_play_bastra = scoring["last_play_bastra"] > 0.5
    plays = round(float(obs[OFFSETS["plays"]][0]) * PLAYS_PER_ROUND)
    next_hand = round(float(obs[OFFSETS["hand_sizes"]][1]) * 4)
    deck_left = round(float(obs[OFFSETS["deck_left"]][0]) * 44)
    if next_hand == 0 and deck_left > 0:
        next_hand = 4  # the next player is dealt a new hand before it plays
    last_play = plays == PLAYS_PER_ROUND - 1
    replies_left = not last_play and next_hand > 0
    # a bastra scored by the reply, if it comes on the round's last play, may not count
    reply_bastra = plays + 1 < PLAYS_PER_ROUND - 1 or last_play_bastra
    my_bastra = not last_play or last_play_bastra
    unseen_cards = list(iter_cards(unseen))

    def value(card: int, capture: int, board_before: int, bastra_ok: bool) -> float:
        taken = capture | 1 << card
        v = card_value * taken.bit_count() + points(taken)
        kind = bastra_kind(card, capture, board_before) if bastra_ok else NO_BASTRA
        if kind == BASTRA:
            v += bastra_points
        elif kind == JACK_BASTRA:
            v += jack_bastra_points
        return v

    def best(card: int, board_after: int, bastra_ok: bool) -> float:
        caps = captures(card, board_after)
        return max(value(card, c, board_after, bastra_ok) for c in caps) if caps else 0.0

    def reply_risk(board_after: int) -> float:
        if not replies_left or not unseen_cards:
            return 0.0
        values = sorted(
            (best(card, board_after, reply_bastra) for card in unseen_cards), reverse=True
        )
        total = len(values)
        h = min(next_hand, total)
        none = comb(total, h)
        expected = 0.0
        for j, v in enumerate(values, start=1):
            if v <= 0:
                break
            following = values[j] if j < total else 0.0
            expected += (v - following) * (1 - comb(total - j, h) / none)
        return expected

    out = np.zeros((len(legal), len(ESTIMATES)))
    for row, action in enumerate(legal):
        card, slot = divmod(int(action), SLOTS_PER_CARD)
        caps = captures(card, board)
        if caps:
            capture = caps[slot]
            gain = value(card, capture, board, my_bastra)
            after = board ^ capture
            if card >> 2 == JACK and capture.bit_count() <= 2:
                gain -= jack_keep
        else:
            gain = 0.0
            after = board | 1 << card
            if card >> 2 == JACK:
                gain -= jack_keep
        rest = hand & ~(1 << card)
        follow = max((best(c, after, True) for c in iter_cards(rest)), default=0.0)
        out[row] = gain, reply_risk(after), follow
    return out


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


def greedy_act(observation: Observation) -> int:
    """``GreedyPolicy.act``: the capture with the most cards, then points, then bastra; with
    nothing to take, the trail of the least valuable card."""
    legal = legal_actions(observation)
    obs = observation["observation"]
    cards = obs[OFFSETS["action_cards"]]
    points = obs[OFFSETS["action_points"]]
    bastra = obs[OFFSETS["action_bastra"]]
    captures = [a for a in legal if cards[a] > 0]
    if captures:
        return int(max(captures, key=lambda a: (cards[a], points[a], bastra[a], -a)))
    return int(min(legal, key=lambda a: (trail_cost(a // SLOTS_PER_CARD), a)))
