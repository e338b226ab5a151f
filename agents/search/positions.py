"""Positions rebuilt from one seat's observation, and worlds drawn for them.

A search player sees only its observation. ``position_of`` turns it into a rules kernels' state
row with that seat as seat 0 (the rules do not care where the table starts) and the unseen cards
left out; a *world* (a determinization) deals the unseen cards to the other hands, by their sizes,
and to the deck. ``inferred_worlds`` draws worlds weighted by what the other seats' plays of this
deal say of their hands (``agents.search.world_kernels.deal_log_likelihood``).
"""

from __future__ import annotations

import hashlib
from functools import lru_cache

import numpy as np

from agents.search import world_kernels as S
from bastra_env import Rules
from bastra_env import compiled_rules as K
from bastra_env.cards import NUM_CARDS
from bastra_env.layout import DEAL_PLAYS, DECK_LEFT_SCALE, OFFSETS, SCORING_SCALES

TABLE_SEATS = (2, 3, 4, 4)
"""Players per entry of the observation's ``table`` one-hot (the last: teams)."""
SLOT_OF = {2: (0, 1), 3: (0, 1, 3), 4: (0, 1, 2, 3)}
"""Seat offset from me -> observation slot (as ``bastra_env.layout.RELATIVE_SLOTS``)."""


def _plane(obs: np.ndarray, name: str, slot: int = 0) -> int:
    piece = obs[OFFSETS[name]][slot * NUM_CARDS : (slot + 1) * NUM_CARDS]
    mask = 0
    for c in np.flatnonzero(piece > 0.5):
        mask |= 1 << int(c)
    return mask


@lru_cache(maxsize=64)
def _rules_row(
    players: int, teams: bool, target: int, scoring: tuple[int, int, int, bool]
) -> np.ndarray:
    rules = Rules(
        num_players=players,
        teams=teams,
        target_score=target,
        bastra_points=scoring[0],
        jack_bastra_points=scoring[1],
        most_cards_points=scoring[2],
        last_play_bastra=scoring[3],
    )
    return K.rules_array(rules)


def position_of(observation: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The position a flat observation shows, its seat as seat 0: ``(state, rules, unseen,
    sizes)``: a kernels' state row with no card of the other hands or the deck in it (the plays
    since the latest deal included), the rules
    row (captures chosen; the scoring rules as observed), the unseen cards, and every seat's hand
    size. ``ValueError`` if it is not this seat's turn."""
    obs = np.asarray(observation, dtype=np.float64)
    table = int(np.argmax(obs[OFFSETS["table"]]))
    n, teams = TABLE_SEATS[table], table == 3
    slots = SLOT_OF[n]
    piece = obs[OFFSETS["rules"]]
    scoring = tuple(
        round(float(piece[i]) * scale) for i, scale in enumerate(SCORING_SCALES.values())
    )
    target = round(float(obs[OFFSETS["target"]][0]) * 100)
    rules = _rules_row(n, teams, target, (*scoring, bool(piece[3] > 0.5)))
    state = np.zeros(K.STATE_SIZE, dtype=np.int64)
    sizes = np.zeros(n, dtype=np.int64)
    for k in range(n):
        slot = slots[k]
        sizes[k] = round(float(obs[OFFSETS["hand_sizes"]][slot]) * 4)
        state[K.CAPTURED + k] = _plane(obs, "captured", slot)
        state[K.BASTRAS + k] = round(float(obs[OFFSETS["bastras"]][slot]) * 4)
        side = k % 2 if teams else k
        state[K.SCORES + side] = round(float(obs[OFFSETS["scores"]][slot]) * target)
    state[K.HANDS] = _plane(obs, "hand")
    state[K.BOARD] = _plane(obs, "board")
    left = round(float(obs[OFFSETS["deck_left"]][0]) * DECK_LEFT_SCALE)
    state[K.DECK_LEN] = NUM_CARDS
    state[K.DECK_POS] = NUM_CARDS - left
    state[K.PLAYS] = round(float(obs[OFFSETS["plays"]][0]) * K.PLAYS_PER_ROUND)
    state[K.ROUND] = max(1, round(float(obs[OFFSETS["round"]][0]) * 10))
    dealer_slot = int(np.argmax(obs[OFFSETS["dealer"]]))
    state[K.DEALER] = slots.index(dealer_slot)
    last = obs[OFFSETS["last_capturer"]]
    state[K.LAST_CAPTURER] = -1 if last[-1] > 0.5 else slots.index(int(np.argmax(last[:-1])))
    played = np.rint(obs[OFFSETS["deal_played"]] * DEAL_PLAYS).astype(np.int64) - 1
    taken = np.rint(obs[OFFSETS["deal_taken"]] * DEAL_PLAYS).astype(np.int64) - 1
    for card in np.flatnonzero(played >= 0):
        state[K.DEAL_CARDS + played[card]] = card
    for card in np.flatnonzero(taken >= 0):
        state[K.DEAL_CAPTURES + taken[card]] |= 1 << int(card)
    state[K.CURRENT] = 0
    state[K.WINNER] = -1
    state[K.LAST_SEAT] = -1
    state[K.LAST_CARD] = -1
    state[K.RES_LEFTOVER_SIDE] = -1
    unseen = _plane(obs, "unseen")
    cards = np.array([c for c in range(NUM_CARDS) if unseen >> c & 1], dtype=np.int64)
    if len(cards) != sizes[1:].sum() + left:
        raise ValueError(
            f"the observation shows {len(cards)} unseen cards for {sizes[1:].sum()} in hands "
            f"and {left} in the deck"
        )
    return state, rules, cards, sizes


def legal_moves(position: np.ndarray, rules: np.ndarray) -> np.ndarray:
    """The legal actions of a ``position_of`` position, in ``legal_slots``' order (the order of
    PIMC's sums, ``world_kernels.pimc_worlds``)."""
    work = np.empty(S.WORK_SIZE, dtype=np.int64)
    base = position.copy()
    n = K.legal_slots(base, rules, work)
    return base[K.MOVE_ACTIONS : K.MOVE_ACTIONS + n].copy()


def decision_seed(seed: int, observation: np.ndarray, uniform: bool = False) -> np.ndarray:
    """The random stream of one decision: from the player's seed and the observation, so a
    decision does not depend on the ones before it. ``uniform``: splitmix64's output; else the
    yardsticks' stream (``world_kernels._next``), whose shuffles are not uniform."""
    digest = hashlib.sha256(np.asarray(observation, dtype=np.float32).tobytes()).digest()
    mixed = (int.from_bytes(digest[:8], "little") ^ (seed * 0x9E3779B97F4A7C15)) % (1 << 64)
    return np.array([mixed, 1] if uniform else [mixed], dtype=np.uint64)


OPPONENT_TAU = 0.05
"""The opponent model's softmax temperature, in points-equivalents of the heuristic's estimates:
a play worse by half a point than the model's best is about 22,000 times less likely."""
OPPONENT_EPS = 0.02
"""The opponent model's share of a uniform choice among the legal plays: no play rules out a hand
entirely, so a player unlike the model is not misread beyond repair."""
CANDIDATES_PER_WORLD = 8
"""``inferred_worlds`` weighs this many uniform determinizations for each world it returns."""


def inferred_worlds(
    position: np.ndarray,
    rules: np.ndarray,
    cards: np.ndarray,
    sizes: np.ndarray,
    worlds: int,
    rng: np.ndarray,
    tau: float = OPPONENT_TAU,
    eps: float = OPPONENT_EPS,
) -> np.ndarray:
    """``int64[worlds, STATE_SIZE]``: determinizations of a ``position_of`` position drawn in
    proportion to how likely the other seats' plays of this deal were with those hands, under
    the opponent model (``agents.search.world_kernels.deal_log_likelihood``; ``tau``, ``eps``).
    Where no other seat has played since the deal, plain uniform draws."""
    if not (tau > 0 and 0 < eps <= 1):
        raise ValueError(f"tau must be > 0 and eps in (0, 1], got tau={tau}, eps={eps}")
    out = np.empty((worlds, position.shape[0]), dtype=np.int64)
    S.inferred_worlds(position, rules, cards, sizes, CANDIDATES_PER_WORLD * worlds, rng,
                      float(tau), float(eps), out)  # fmt: skip
    return out


FIT_WORLDS = 256
"""``deal_fit`` averages the two likelihoods over this many uniform determinizations."""


def deal_fit(
    position: np.ndarray,
    rules: np.ndarray,
    cards: np.ndarray,
    sizes: np.ndarray,
    rng: np.ndarray,
    worlds: int = FIT_WORLDS,
) -> float:
    """How well the opponent model (``OPPONENT_TAU``, ``OPPONENT_EPS``) explains the other seats'
    plays of this deal, against a uniform choice among their legal plays: the log Bayes factor
    of the model over uniform play, on ``worlds`` uniform determinizations of a ``position_of``
    position (``agents.search.world_kernels.deal_fit``); 0 where no other seat has played since the
    deal. Under the model's own play it is well above 0; a search player's plays often take it
    below."""
    if worlds < 1:
        raise ValueError(f"worlds must be at least 1, got {worlds!r}")
    return float(S.deal_fit(position, rules, cards, sizes, worlds, rng, OPPONENT_TAU, OPPONENT_EPS))
