"""Rule-based Bastra players. Each ``act(observation, env=None)`` returns a legal action.

They read the action summaries of the observation (cards and points each legal action moves to
the pile, whether it is a bastra), so they work from what the seat may know.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from bastra_env.cards import CARD_POINTS, FULL_DECK, JACK
from bastra_env.layout import OFFSETS, SLOTS_PER_CARD

Observation = dict[str, np.ndarray]


def plane(observation: np.ndarray, name: str) -> int:
    """A 52-card plane of the flat observation (``"hand"``, ``"board"``, ...) as a card mask."""
    bits = np.packbits(observation[OFFSETS[name]] > 0.5, bitorder="little")
    return int.from_bytes(bits.tobytes(), "little") & FULL_DECK


def legal_actions(observation: Observation) -> np.ndarray:
    legal = np.flatnonzero(observation["action_mask"])
    if legal.size == 0:
        raise ValueError("no legal action in this observation: it is not this seat's turn")
    return legal


class RandomPolicy:
    """A uniformly random legal action, from its own seeded generator."""

    name = "random"

    def __init__(self, seed: int | None = None) -> None:
        self.rng = np.random.default_rng(seed)

    def act(self, observation: Observation, env: Any = None) -> int:
        legal = legal_actions(observation)
        return int(legal[self.rng.integers(legal.size)])


def trail_cost(card: int) -> tuple[int, int, int]:
    """How much a card is worth keeping: its points, whether it is a jack, its rank."""
    return (CARD_POINTS[card], int(card >> 2 == JACK), card >> 2)


class GreedyPolicy:
    """Takes the capture with the most cards, then the most points (a bastra first on a tie);
    with nothing to take, trails its least valuable card."""

    name = "greedy"

    def act(self, observation: Observation, env: Any = None) -> int:
        legal = legal_actions(observation)
        obs = observation["observation"]
        cards = obs[OFFSETS["action_cards"]]
        points = obs[OFFSETS["action_points"]]
        bastra = obs[OFFSETS["action_bastra"]]
        captures = [a for a in legal if cards[a] > 0]
        if captures:
            return int(max(captures, key=lambda a: (cards[a], points[a], bastra[a], -a)))
        return int(min(legal, key=lambda a: (trail_cost(a // SLOTS_PER_CARD), a)))
