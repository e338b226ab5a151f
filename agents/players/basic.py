"""Rule-based Bastra players. Each ``act(observation, env=None)`` returns a legal action.

They read the action summaries of the observation (cards and points each legal action moves to
the pile, whether it is a bastra), so they work from what the seat may know. Each also has
``act_batch(observations [B, N], masks [B, 208]) -> int64[B]``, the same choice for every row
(compiled: ``agents.players.observation_kernels``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from agents.players import observation_kernels as compiled
from bastra_env.cards import CARD_POINTS, FULL_DECK, JACK
from bastra_env.layout import OFFSETS

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
    move_model = "sampled"
    """It draws its moves from ``move_probabilities``
    (``agents.evaluation.matches.decision_model``)."""

    def __init__(self, seed: int | None = None) -> None:
        self.rng = np.random.default_rng(seed)

    def act(self, observation: Observation, env: Any = None) -> int:
        legal = legal_actions(observation)
        return int(legal[self.rng.integers(legal.size)])

    def move_probabilities(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """``float64[B, 208]``: the probability of each action that ``act_batch`` draws from
        (uniform over the legal ones); variance-reduced evaluation reads it."""
        _, mask = compiled.batch_arrays(observations, masks)
        legal = (mask != 0).astype(np.float64)
        return legal / np.maximum(legal.sum(axis=1, keepdims=True), 1.0)

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """``int64[B]``: a uniformly random legal action of every row, one draw per row in order
        from the policy's generator."""
        _, mask = compiled.batch_arrays(observations, masks)
        legal = mask != 0
        counts = legal.sum(axis=1)
        empty = np.flatnonzero(counts == 0)
        if empty.size:
            raise ValueError(
                f"no legal action in row {int(empty[0])} of the masks: it is not that seat's turn"
            )
        if counts.size == 0:
            return np.empty(0, dtype=np.int64)
        draws = self.rng.integers(counts)
        # the draws-th legal action of each row: the first where the running count exceeds it
        return np.argmax(np.cumsum(legal, axis=1) > draws[:, None], axis=1).astype(np.int64)


def trail_cost(card: int) -> tuple[int, int, int]:
    """How much a card is worth keeping: its points, whether it is a jack, its rank."""
    return (CARD_POINTS[card], int(card >> 2 == JACK), card >> 2)


class GreedyPolicy:
    """Takes the capture with the most cards, then the most points (a bastra first on a tie);
    with nothing to take, trails its least valuable card."""

    name = "greedy"
    move_model = "deterministic"
    """Its move is a function of the observation (``agents.evaluation.matches.decision_model``)."""

    def act(self, observation: Observation, env: Any = None) -> int:
        # the capture of largest (cards, points, bastra), the lowest action on a tie; with none,
        # the legal action of least (trail_cost(card), action)
        # (compiled: agents.players.observation_kernels)
        return compiled.greedy_action(observation["observation"], observation["action_mask"])

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """``int64[B]``: ``act`` of every row of ``observations [B, N]`` / ``masks [B, 208]``."""
        return compiled.greedy_actions(observations, masks)
