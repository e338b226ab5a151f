"""A rule-based player that weighs what a play takes against what it leaves the next player.

For each legal action it scores the immediate gain (cards, card points, bastra) and subtracts the
expected value of the next player's best reply on the board the action leaves, estimated from the
unseen cards: the next player holds ``h`` of the ``U`` unseen cards, so the chance that it holds at
least one of the ``j`` most damaging ones is ``1 - C(U - j, h) / C(U, h)``. Spending a jack on a
small capture also costs the jack's future value. Everything it reads is in the observation.

``play_estimates`` exposes those numbers per legal action (plus the best capture the player's own
remaining cards would have on the board it leaves), so a learned player can start from them.
Both run as compiled kernels (``agents.players.observation_kernels``), ``HeuristicPolicy.act_batch``
on many observations at once.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from agents.players import observation_kernels as compiled
from agents.players.basic import Observation
from agents.players.observation_kernels import CARD_VALUE, JACK_KEEP

__all__ = ["CARD_VALUE", "ESTIMATES", "JACK_KEEP", "HeuristicPolicy", "play_estimates"]

ESTIMATES = ("gain", "reply", "follow_up")
"""The columns of ``play_estimates``, in points-equivalents. ``CARD_VALUE`` (points-equivalent of
one captured card, the most-cards bonus spread over the cards) and ``JACK_KEEP`` (of keeping a
jack in hand for a later sweep) are the defaults, defined in
``agents.players.observation_kernels``."""


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

    (The compiled kernel ``agents.players.observation_kernels.play_estimates``.)
    """
    return compiled.play_estimates(obs, legal, card_value, jack_keep)


class HeuristicPolicy:
    """Gain of the play minus the expected best reply of the next player (see module docs)."""

    name = "heuristic"
    move_model = "deterministic"
    """Its move is a function of the observation (``agents.evaluation.matches.decision_model``)."""

    def __init__(self, card_value: float = CARD_VALUE, jack_keep: float = JACK_KEEP) -> None:
        self.card_value = card_value
        self.jack_keep = jack_keep

    def act(self, observation: Observation, env: Any = None) -> int:
        return compiled.heuristic_action(
            observation["observation"], observation["action_mask"], self.card_value, self.jack_keep
        )

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """``int64[B]``: ``act`` of every row of ``observations [B, N]`` / ``masks [B, 208]``."""
        return compiled.heuristic_actions(observations, masks, self.card_value, self.jack_keep)
