"""A rule-based player that weighs what a play takes against what it leaves the next player.

For each legal action it scores the immediate gain (cards, card points, bastra) and subtracts the
expected value of the next player's best reply on the board the action leaves, estimated from the
unseen cards: the next player holds ``h`` of the ``U`` unseen cards, so the chance that it holds at
least one of the ``j`` most damaging ones is ``1 - C(U - j, h) / C(U, h)``. Spending a jack on a
small capture also costs the jack's future value. Everything it reads is in the observation.

``play_estimates`` exposes those numbers per legal action (plus the best capture the player's own
remaining cards would have on the board it leaves), so a learned player can start from them.
"""

from __future__ import annotations

from math import comb
from typing import Any

import numpy as np

from bastra_env.captures import captures
from bastra_env.cards import JACK, iter_cards, points
from bastra_env.game import BASTRA, JACK_BASTRA, NO_BASTRA, PLAYS_PER_ROUND, bastra_kind
from bastra_env.layout import OFFSETS, SLOTS_PER_CARD, observed_scoring

from .policies import Observation, legal_actions, plane

CARD_VALUE = 0.25
"""Points-equivalent of one captured card (the most-cards bonus, spread over the cards)."""
JACK_KEEP = 1.5
"""Points-equivalent of keeping a jack in hand for a later sweep."""
ESTIMATES = ("gain", "reply", "follow_up")
"""The columns of ``play_estimates``, in points-equivalents."""


def play_estimates(
    obs: np.ndarray,
    legal: np.ndarray,
    card_value: float = CARD_VALUE,
    jack_keep: float = JACK_KEEP,
) -> np.ndarray:
    """``float64[len(legal), 3]`` for the flat observation ``obs``, one row per legal action:

    - ``gain``: cards (``card_value`` each), card points and bastra the play takes, less
      ``jack_keep`` when it spends a jack on two cards or fewer (or trails one);
    - ``reply``: expected value of the next player's best reply on the board the play leaves;
    - ``follow_up``: the best capture one of my remaining cards has on that board.
    """
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


class HeuristicPolicy:
    """Gain of the play minus the expected best reply of the next player (see module docs)."""

    name = "heuristic"

    def __init__(self, card_value: float = CARD_VALUE, jack_keep: float = JACK_KEEP) -> None:
        self.card_value = card_value
        self.jack_keep = jack_keep

    def act(self, observation: Observation, env: Any = None) -> int:
        legal = legal_actions(observation)
        estimates = play_estimates(
            observation["observation"], legal, self.card_value, self.jack_keep
        )
        return int(legal[int(np.argmax(estimates[:, 0] - estimates[:, 1]))])
