"""Search of the round's last plays, once the deck is empty.

Then every unseen card is in another player's hand, and the rest of the round can be searched to
its end: minimax on the round's point difference (card points and bastras still to come, the
leftovers to the last capturer, the most-cards points), my side maximising, the other side
minimising.

- Two players: the unseen cards are exactly the opponent's hand, so the search is exact (the
  whole last deal, 8 plays: a few thousand positions, under a millisecond).
- Four players in teams: the unseen cards are split among three hands I cannot tell apart, so the
  search is run on ``samples`` random splits (sizes as the observation says) and each action's
  values are averaged (perfect-information Monte Carlo). Only when my hand holds at most
  ``max_team_cards`` cards, which keeps each search small.

It reads the observation only, never the env; the same observation gives the same answer. The
search itself is the compiled kernels of ``agents.endgame_kernels``.
Limits: the observation does not say whether captures are chosen or automatic, so the search
assumes ``capture="choose"`` (the default; with ``"auto"`` its values are those of a game with
choice); it declines when a scoring rule is beyond what the observation encodes (over 10 times
its scale, where the "rules" piece is capped).
"""

from __future__ import annotations

import hashlib

import numpy as np

from bastra_env.layout import OBSERVED_CAP, OFFSETS, SCORING_SCALES

from .endgame_kernels import I_SEARCH, I_SEATS, LAYOUT_PIECES, read_position, search
from .policies import Observation

_LAYOUT = np.array([OFFSETS[name].start for name in LAYOUT_PIECES], dtype=np.int64)
_SCALES = np.array(list(SCORING_SCALES.values()), dtype=np.float64)


def solve(
    observation: Observation, samples: int = 16, max_team_cards: int = 2
) -> dict[int, float] | None:
    """``{action: expected round point difference for my side under best play}`` over the legal
    actions, or ``None`` where this module does not search (cards left in the deck, three
    players, a team game with more than ``max_team_cards`` cards in my hand)."""
    obs = np.asarray(observation["observation"])
    info, legal, unseen = read_position(
        obs, np.asarray(observation["action_mask"]), max_team_cards, _LAYOUT, _SCALES, OBSERVED_CAP
    )
    if not info[I_SEARCH]:
        return None
    if info[I_SEATS] == 2:
        orders = unseen.reshape(1, -1)  # exactly the opponent's hand
    else:
        digest = hashlib.sha256(obs.tobytes()).digest()
        rng = np.random.default_rng(int.from_bytes(digest[:8], "big"))  # "big": needed on 3.10
        orders = np.tile(unseen, (samples, 1))
        for order in orders:  # as rng.permutation(unseen), one deal after the other
            rng.shuffle(order)
    sums = search(info, orders, legal)
    return {a: v / len(orders) for a, v in zip(legal.tolist(), sums.tolist(), strict=True)}
