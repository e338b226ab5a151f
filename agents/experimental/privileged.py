"""EXPERIMENTAL (expert iteration, ``agents.experimental``): what a seat cannot see, for a critic
that trains beside the policy, and PIMC with that critic as its leaf one play deep
(``exit.leaf: value``). No player that ships reads any of it.

``PRIVILEGED_SIZE`` entries: every seat's hand, slot by slot as in the observation (me, left,
opposite, right), then the deck's undealt cards, each at ``1 - k / 52`` where it is the ``k``-th
still to come (its order).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from numba import njit

from agents.search import world_kernels as S
from agents.search.players import PIMCPolicy
from bastra_env import compiled_rules as K
from bastra_env.layout import MAX_SEATS, NUM_ACTIONS, NUM_CARDS, OBSERVATION_SIZE, SLOTS_PER_CARD
from bastra_env.vector import VectorEnv

PRIVILEGED_SIZE = MAX_SEATS * NUM_CARDS + NUM_CARDS
"""The length of what a seat cannot see (module docs)."""

Leaf = Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]
"""``(observations, hidden inputs, on my side) -> my side's expected round point difference``."""


@njit(cache=True)
def encode_privileged(state: np.ndarray, rules: np.ndarray, seat: int, out: np.ndarray) -> None:
    """Write what ``seat`` cannot see into ``out`` (float32, ``PRIVILEGED_SIZE``): every hand by
    the observation's seat slots, then the undealt cards in their order."""
    n = rules[K.R_PLAYERS]
    for i in range(out.shape[0]):
        out[i] = 0.0
    for offset in range(n):
        slot = K._SLOT_TABLE[n, offset]
        cards = state[K.HANDS + (seat + offset) % n]
        while cards:
            out[NUM_CARDS * slot + K.lowest_card(cards)] = 1.0
            cards &= cards - 1
    at = MAX_SEATS * NUM_CARDS
    for k in range(state[K.DECK_LEN] - state[K.DECK_POS]):
        out[at + state[K.DECK + state[K.DECK_POS] + k]] = 1.0 - k / NUM_CARDS


@njit(cache=True)
def _privileged_rows(
    states: np.ndarray, rules: np.ndarray, rows: np.ndarray, out: np.ndarray
) -> None:
    for r in range(rows.shape[0]):
        s = states[rows[r]]
        encode_privileged(s, rules, s[K.CURRENT], out[r])


def privileged(env: VectorEnv, rows: Any = None) -> np.ndarray:
    """``float32[len(rows), PRIVILEGED_SIZE]``: what the seat to move in each of the vector env's
    games ``rows`` (all by default) cannot see."""
    rows = np.arange(env.num_envs) if rows is None else np.asarray(rows, dtype=np.int64)
    out = np.empty((len(rows), PRIVILEGED_SIZE), dtype=np.float32)
    _privileged_rows(env.states, env._rules_row, rows, out)
    return out


@njit(cache=True)
def leaf_inputs(
    position: np.ndarray, rules: np.ndarray, worlds: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """PIMC one play deep, for a value function of the full state: each legal move ``i`` of
    ``position`` (``legal_slots``' order) played in each world ``w`` (row ``w * n + i``). Returns
    (the observation of the seat to move after it ``float32[W*n, OBSERVATION_SIZE]``, what that
    seat cannot see ``float32[W*n, PRIVILEGED_SIZE]``, whether it is on the searching side
    ``bool[W*n]``, whether the move ended the round ``bool[W*n]``, and then the round's point
    difference for the searching side ``float64[W*n]``)."""
    work = np.empty(S.WORK_SIZE, dtype=np.int64)
    base = position.copy()
    n = K.legal_slots(base, rules, work)
    rows = worlds.shape[0] * n
    obs = np.zeros((rows, OBSERVATION_SIZE), dtype=np.float32)
    hidden = np.zeros((rows, PRIVILEGED_SIZE), dtype=np.float32)
    mine = np.zeros(rows, dtype=np.bool_)
    ended = np.zeros(rows, dtype=np.bool_)
    exact = np.zeros(rows)
    mask = np.empty(NUM_ACTIONS, dtype=np.int8)
    state = np.empty_like(position)
    for w in range(worlds.shape[0]):
        for i in range(n):
            row = w * n + i
            state[:] = worlds[w]
            action = base[K.MOVE_ACTIONS + i]
            if K.apply_move(state, rules, action // SLOTS_PER_CARD, base[K.MOVE_CAPTURES + i]):
                ended[row] = True
                exact[row] = S.round_value(state, rules, 0)
                continue
            K.legal_slots(state, rules, work)
            seat = state[K.CURRENT]
            K.encode(state, rules, seat, obs[row], mask)
            encode_privileged(state, rules, seat, hidden[row])
            mine[row] = S._mine(rules, seat)
    return obs, hidden, mine, ended, exact


class ValueLeafPIMC(PIMCPolicy):
    """PIMC whose worlds are valued one play deep by ``leaf`` (the critic) instead of rolled
    out to the round's end; a round that the move ends is valued exactly."""

    leaf: Leaf

    @classmethod
    def around(cls, pimc: PIMCPolicy, leaf: Leaf) -> ValueLeafPIMC:
        """The same search as ``pimc`` (its settings and seed), with ``leaf``."""
        player = cls.__new__(cls)
        player.__dict__.update(pimc.__dict__)
        player.leaf = leaf
        return player

    def value_worlds(
        self,
        position: np.ndarray,
        rules: np.ndarray,
        worlds: np.ndarray,
        share: float,
        equity: np.ndarray,
        modelled_sums: np.ndarray,
        plain_sums: np.ndarray,
    ) -> None:
        obs, hidden, mine, ended, exact = leaf_inputs(position, rules, worlds)
        values = np.where(ended, exact, self.leaf(obs, hidden, mine))
        totals = values.reshape(worlds.shape[0], -1).sum(axis=0)
        modelled_sums += totals  # both: the move's value is the leaf's for any share
        plain_sums += totals
