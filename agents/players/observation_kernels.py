"""The agents' per-observation work as compiled, batched numba kernels.

Everything the rule-based players and the network's per-action inputs compute from an observation
is here, over flat observations ``float32[B, OBSERVATION_SIZE]`` (float64 works too) and action
masks ``[B, NUM_ACTIONS]`` (any dtype; nonzero means legal):

- :func:`play_estimates`: the heuristic's gain, reply and follow-up numbers of some actions of one
  observation (``agents.players.heuristic.play_estimates`` is this function);
- :func:`action_inputs_batch`: the network's per-action inputs of every row (``action_inputs`` of
  ``agents.learning.features`` is its one-row case), optionally into reused buffers;
- :func:`heuristic_actions` and :func:`greedy_actions`: the choices of ``HeuristicPolicy`` and
  ``GreedyPolicy`` for every row.

They give exactly what the plain Python versions gave (kept under ``tests/`` as the reference):
the same float64 estimates, the same float32 features, the same actions, ties broken the same
way. Card planes are read as ``> 0.5``, like ``agents.players.basic.plane``. The kernels are
compiled on first use and cached on disk (``cache=True``), like those of
``bastra_env.compiled_rules``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from bastra_env.cards import NUM_CARDS
from bastra_env.compiled_rules import (
    BASTRA,
    CAPTURE_WORK,
    JACK,
    JACK_BASTRA,
    PLAYS_PER_ROUND,
    all_captures,
    bastra_kind,
    card_captures,
    card_points,
    lowest_card,
    popcount,
)
from bastra_env.layout import (
    ACTION_SUMMARIES,
    DECK_LEFT_SCALE,
    MAX_LEGAL,
    NUM_ACTIONS,
    OBSERVATION_SIZE,
    OFFSETS,
    SCORING_SCALES,
    SLOTS_PER_CARD,
)

CARD_VALUE = 0.25
"""Points-equivalent of one captured card (the most-cards bonus, spread over the cards)."""
JACK_KEEP = 1.5
"""Points-equivalent of keeping a jack in hand for a later sweep."""
NUM_ESTIMATES = 3
"""Columns of the estimates: gain, reply, follow_up (``agents.players.heuristic.ESTIMATES``)."""
PAD_ACTION = NUM_ACTIONS
"""Index of padding rows: one past the last action."""
ESTIMATE_SCALE = 0.1
"""Estimates enter the network in tens of points."""
SUMMARY_FEATURES = len(ACTION_SUMMARIES) + NUM_ESTIMATES
"""The last features of each action: the observation's summary, then the heuristic estimates."""
PLANE_FEATURES = 3 * NUM_CARDS
"""The first features of each action: the card played, the cards taken, the board left."""
ACTION_FEATURES = PLANE_FEATURES + SUMMARY_FEATURES
CAPTURE_BUFFER = 64
"""Captures of one card held at once; a board with more falls back to ``all_captures``."""

__all__ = [
    "ACTION_FEATURES",
    "CARD_VALUE",
    "ESTIMATE_SCALE",
    "JACK_KEEP",
    "MAX_LEGAL",
    "NUM_ESTIMATES",
    "PAD_ACTION",
    "action_inputs_batch",
    "batch_arrays",
    "greedy_action",
    "greedy_actions",
    "heuristic_action",
    "heuristic_actions",
    "play_estimates",
]

_O_HAND = OFFSETS["hand"].start
_O_BOARD = OFFSETS["board"].start
_O_UNSEEN = OFFSETS["unseen"].start
_O_PLAYS = OFFSETS["plays"].start
_O_DECK_LEFT = OFFSETS["deck_left"].start
_O_HAND_SIZES = OFFSETS["hand_sizes"].start
_O_RULES = OFFSETS["rules"].start
_O_ACTION_CARDS = OFFSETS["action_cards"].start
_O_ACTION_POINTS = OFFSETS["action_points"].start
_O_ACTION_BASTRA = OFFSETS["action_bastra"].start
_O_SUMMARIES = np.array([OFFSETS[name].start for name in ACTION_SUMMARIES], dtype=np.int64)
_N_SUMMARIES = len(ACTION_SUMMARIES)
_SCALE_BASTRA = float(SCORING_SCALES["bastra_points"])
_SCALE_JACK = float(SCORING_SCALES["jack_bastra_points"])
_LAST_PLAY_BASTRA = len(SCORING_SCALES)  # index in the "rules" piece
_SLOTS = SLOTS_PER_CARD
_NUM_CARDS = NUM_CARDS
_NUM_ACTIONS = NUM_ACTIONS
_MAX_LEGAL = MAX_LEGAL
_PAD = PAD_ACTION
_PLANES = PLANE_FEATURES
_FEATURES = ACTION_FEATURES
_SCALE = ESTIMATE_SCALE
_PLAYS = float(PLAYS_PER_ROUND)
_LAST_PLAY = PLAYS_PER_ROUND - 1
# the kernels return 0, one of these error codes, or for heuristic_actions / greedy_actions
# 1 + the index of the first row without a legal action
_TOO_MANY = -2  # action_inputs_batch: a row with more than MAX_LEGAL legal actions
_BAD_SLOT = -3  # a capture slot past the card's captures
_TOO_LARGE = -4  # a board too large for the capture search


# ------------------------------------------------------------------------- small helpers
@njit(cache=True)
def _plane(obs: np.ndarray, start: int) -> int:
    """The 52-card plane at ``obs[start:start + 52]`` as a card mask (entries ``> 0.5``)."""
    mask = 0
    for c in range(_NUM_CARDS):
        if obs[start + c] > 0.5:
            mask |= 1 << c
    return mask


@njit(cache=True)
def _round(x: float) -> int:
    """Python's ``round(x)``: to the nearest integer, halves to even."""
    low = np.floor(x)
    diff = x - low
    r = np.int64(low)
    if diff > 0.5 or (diff == 0.5 and r % 2 == 1):
        r += 1
    return r


@njit(cache=True)
def _comb(n: int, k: int) -> float:
    """``math.comb(n, k)`` as a float64 (exact: the values here are far below 2**53)."""
    if k < 0 or n < 0 or k > n:
        return 0.0
    c = 1
    for i in range(k):
        c = c * (n - i) // (i + 1)
    return float(c)


@njit(cache=True)
def _value(
    card: int,
    capture: int,
    board_before: int,
    bastra_ok: bool,
    card_value: float,
    bastra_points: float,
    jack_bastra_points: float,
) -> float:
    """Cards, card points and bastra of playing ``card`` taking ``capture``."""
    taken = capture | (1 << card)
    v = card_value * popcount(taken) + card_points(taken)
    if bastra_ok:
        kind = bastra_kind(card, capture, board_before)
        if kind == BASTRA:
            v += bastra_points
        elif kind == JACK_BASTRA:
            v += jack_bastra_points
    return v


@njit(cache=True)
def _best_of(
    card: int,
    found: np.ndarray,
    count: int,
    board: int,
    bastra_ok: bool,
    card_value: float,
    bastra_points: float,
    jack_bastra_points: float,
) -> float:
    best = _value(card, found[0], board, bastra_ok, card_value, bastra_points, jack_bastra_points)
    for i in range(1, count):
        v = _value(card, found[i], board, bastra_ok, card_value, bastra_points, jack_bastra_points)
        if v > best:
            best = v
    return best


@njit(cache=True)
def _captures_of(card: int, board: int, caps: np.ndarray, work: np.ndarray) -> np.ndarray:
    """Every capture of ``card`` on ``board`` (canonical order): a prefix of ``caps`` when they
    fit, else a fresh array from ``all_captures``."""
    count = card_captures(card, board, caps, caps.shape[0], work)
    if count < 0:
        raise RuntimeError("board too large for the capture search")
    if count == caps.shape[0]:
        return all_captures(card, board)
    return caps[:count]


@njit(cache=True, inline="always")
def _play_of(action: int, board: int, caps: np.ndarray, work: np.ndarray) -> tuple:
    """(error code or 0, the capture ``action`` takes on ``board`` (0: a trail), the board it
    leaves)."""
    card = action // _SLOTS
    slot = action % _SLOTS
    found = card_captures(card, board, caps, _SLOTS, work)
    if found < 0:
        return _TOO_LARGE, 0, board
    if found == 0:
        return 0, 0, board | (1 << card)
    if slot >= found:
        return _BAD_SLOT, 0, board
    return 0, caps[slot], board ^ caps[slot]


# ------------------------------------------------------------------------- the heuristic
@njit(cache=True)
def _estimates_row(
    obs: np.ndarray,
    legal: np.ndarray,
    n_legal: int,
    card_value: float,
    jack_keep: float,
    out: np.ndarray,
    caps: np.ndarray,
    work: np.ndarray,
    values: np.ndarray,
) -> int:
    """``agents.players.heuristic.play_estimates`` of ``legal[:n_legal]`` into ``out[:n_legal]``.
    Returns 0, or ``_BAD_SLOT`` for an action naming a capture its card does not have."""
    board = _plane(obs, _O_BOARD)
    unseen = _plane(obs, _O_UNSEEN)
    hand = _plane(obs, _O_HAND)
    bastra_points = np.float64(obs[_O_RULES]) * _SCALE_BASTRA
    jack_bastra_points = np.float64(obs[_O_RULES + 1]) * _SCALE_JACK
    last_play_bastra = obs[_O_RULES + _LAST_PLAY_BASTRA] > 0.5
    plays = _round(np.float64(obs[_O_PLAYS]) * _PLAYS)
    next_hand = _round(np.float64(obs[_O_HAND_SIZES + 1]) * 4.0)
    deck_left = _round(np.float64(obs[_O_DECK_LEFT]) * DECK_LEFT_SCALE)
    if next_hand == 0 and deck_left > 0:
        next_hand = 4  # the next player is dealt a new hand before it plays
    last_play = plays == _LAST_PLAY
    replies_left = not last_play and next_hand > 0 and unseen != 0
    # a bastra scored by the reply, if it comes on the round's last play, may not count
    reply_bastra = plays + 1 < _LAST_PLAY or last_play_bastra
    my_bastra = not last_play or last_play_bastra
    total = popcount(unseen)
    h = min(next_hand, total)
    none = _comb(total, h)
    for row in range(n_legal):
        card = legal[row] // _SLOTS
        error, capture, after = _play_of(legal[row], board, caps, work)
        if error != 0:
            return error
        if capture != 0:
            gain = _value(
                card, capture, board, my_bastra, card_value, bastra_points, jack_bastra_points
            )
            if card >> 2 == JACK and popcount(capture) <= 2:
                gain -= jack_keep
        else:
            gain = 0.0
            if card >> 2 == JACK:
                gain -= jack_keep
        # follow_up: the best capture of one of my other cards on the board left
        follow = 0.0
        first = True
        rest = hand & ~(1 << card)
        while rest:
            c = lowest_card(rest)
            rest &= rest - 1
            mine = _captures_of(c, after, caps, work)
            v = 0.0
            if mine.shape[0] > 0:
                v = _best_of(
                    c,
                    mine,
                    mine.shape[0],
                    after,
                    True,
                    card_value,
                    bastra_points,
                    jack_bastra_points,
                )
            if first or v > follow:
                follow = v
                first = False
        # reply: the expected best reply of the next player, from the unseen cards
        reply = 0.0
        if replies_left:
            n = 0
            for rank in range(13):
                of_rank = unseen & (0xF << (4 * rank))
                if of_rank == 0:
                    continue
                theirs = _captures_of(4 * rank, after, caps, work)
                while of_rank:
                    c = lowest_card(of_rank)
                    of_rank &= of_rank - 1
                    v = 0.0
                    if theirs.shape[0] > 0:
                        v = _best_of(
                            c,
                            theirs,
                            theirs.shape[0],
                            after,
                            reply_bastra,
                            card_value,
                            bastra_points,
                            jack_bastra_points,
                        )
                    # insert, keeping values[:n] in descending order
                    p = n
                    while p > 0 and values[p - 1] < v:
                        values[p] = values[p - 1]
                        p -= 1
                    values[p] = v
                    n += 1
            for j in range(1, total + 1):
                v = values[j - 1]
                if v <= 0:
                    break
                following = values[j] if j < total else 0.0
                reply += (v - following) * (1.0 - _comb(total - j, h) / none)
        out[row, 0] = gain
        out[row, 1] = reply
        out[row, 2] = follow
    return 0


@njit(cache=True)
def _play_estimates(
    obs: np.ndarray, legal: np.ndarray, card_value: float, jack_keep: float, out: np.ndarray
) -> int:
    caps = np.empty(CAPTURE_BUFFER, dtype=np.int64)
    work = np.empty(CAPTURE_WORK, dtype=np.int64)
    values = np.empty(_NUM_CARDS, dtype=np.float64)
    return _estimates_row(
        obs, legal, legal.shape[0], card_value, jack_keep, out, caps, work, values
    )


@njit(cache=True)
def _legal_of(mask_row: np.ndarray, legal: np.ndarray) -> int:
    """The legal actions of one mask row, ascending, into ``legal``; returns their number."""
    n = 0
    for a in range(_NUM_ACTIONS):
        if mask_row[a] != 0:
            legal[n] = a
            n += 1
    return n


@njit(cache=True)
def heuristic_index(est: np.ndarray, n: int) -> int:
    """The heuristic player's choice among the first ``n`` rows of its estimates: ``np.argmax``
    of gain - reply, the first maximum (the first NaN, were there one)."""
    best = 0
    top = est[0, 0] - est[0, 1]
    if top == top:
        for row in range(1, n):
            d = est[row, 0] - est[row, 1]
            if d != d:
                return row
            if d > top:
                top = d
                best = row
    return best


@njit(cache=True)
def heuristic_rows(
    obs: np.ndarray, mask: np.ndarray, card_value: float, jack_keep: float, chosen: np.ndarray
) -> int:
    """``HeuristicPolicy.act`` of every row into ``chosen``; returns 0, an error code or 1 + the
    first row without a legal action. Compiled kernels call it too (variance-reduced
    evaluation's value function plays deals out with it)."""
    caps = np.empty(CAPTURE_BUFFER, dtype=np.int64)
    work = np.empty(CAPTURE_WORK, dtype=np.int64)
    values = np.empty(_NUM_CARDS, dtype=np.float64)
    legal = np.empty(_NUM_ACTIONS, dtype=np.int64)
    est = np.empty((_NUM_ACTIONS, 3), dtype=np.float64)
    for b in range(obs.shape[0]):
        n = _legal_of(mask[b], legal)
        if n == 0:
            return b + 1
        error = _estimates_row(obs[b], legal, n, card_value, jack_keep, est, caps, work, values)
        if error != 0:
            return error
        chosen[b] = legal[heuristic_index(est, n)]
    return 0


@njit(cache=True)
def greedy_rows(obs: np.ndarray, mask: np.ndarray, chosen: np.ndarray) -> int:
    """``GreedyPolicy.act`` of every row into ``chosen``: the capture with most cards, then
    points, then bastra, then the lowest action; with none, the trail of least (card points, is
    a jack, rank), then the lowest action. Returns 0 or 1 + the first row without a legal
    action."""
    for b in range(obs.shape[0]):
        take = -1
        take_cards = 0.0
        take_points = 0.0
        take_bastra = 0.0
        trail = -1
        trail_points = 0
        trail_jack = 0
        trail_rank = 0
        for a in range(_NUM_ACTIONS):
            if mask[b, a] == 0:
                continue
            cards = obs[b, _O_ACTION_CARDS + a]
            if cards > 0:
                points = obs[b, _O_ACTION_POINTS + a]
                bastra = obs[b, _O_ACTION_BASTRA + a]
                if (
                    take < 0
                    or cards > take_cards
                    or (
                        cards == take_cards
                        and (
                            points > take_points or (points == take_points and bastra > take_bastra)
                        )
                    )
                ):
                    take = a
                    take_cards = cards
                    take_points = points
                    take_bastra = bastra
            card = a // _SLOTS
            rank = card >> 2
            cost_points = card_points(1 << card)
            cost_jack = 1 if rank == JACK else 0
            if (
                trail < 0
                or cost_points < trail_points
                or (
                    cost_points == trail_points
                    and (cost_jack < trail_jack or (cost_jack == trail_jack and rank < trail_rank))
                )
            ):
                trail = a
                trail_points = cost_points
                trail_jack = cost_jack
                trail_rank = rank
        if trail < 0:
            return b + 1
        chosen[b] = take if take >= 0 else trail
    return 0


# ------------------------------------------------------------------------- network inputs
@njit(cache=True)
def _action_inputs(
    obs: np.ndarray,
    mask: np.ndarray,
    card_value: float,
    jack_keep: float,
    actions: np.ndarray,
    features: np.ndarray,
) -> int:
    """``agents.learning.features.action_inputs`` of every row into ``actions``/``features``;
    returns 0 or an error code (``_TOO_MANY``, ``_BAD_SLOT``, ``_TOO_LARGE``)."""
    caps = np.empty(CAPTURE_BUFFER, dtype=np.int64)
    work = np.empty(CAPTURE_WORK, dtype=np.int64)
    values = np.empty(_NUM_CARDS, dtype=np.float64)
    legal = np.empty(_NUM_ACTIONS, dtype=np.int64)
    est = np.empty((_MAX_LEGAL, 3), dtype=np.float64)
    for b in range(obs.shape[0]):
        n = _legal_of(mask[b], legal)
        if n > _MAX_LEGAL:
            return _TOO_MANY
        for row in range(_MAX_LEGAL):
            actions[b, row] = _PAD
            for k in range(_FEATURES):
                features[b, row, k] = 0.0
        board = _plane(obs[b], _O_BOARD)
        for row in range(n):
            action = legal[row]
            card = action // _SLOTS
            error, capture, after = _play_of(action, board, caps, work)
            if error != 0:
                return error
            features[b, row, card] = 1.0
            rest = capture
            while rest:
                c = lowest_card(rest)
                rest &= rest - 1
                features[b, row, _NUM_CARDS + c] = 1.0
            rest = after
            while rest:
                c = lowest_card(rest)
                rest &= rest - 1
                features[b, row, 2 * _NUM_CARDS + c] = 1.0
            actions[b, row] = action
            for i in range(_N_SUMMARIES):
                features[b, row, _PLANES + i] = np.float32(obs[b, _O_SUMMARIES[i] + action])
        error = _estimates_row(obs[b], legal, n, card_value, jack_keep, est, caps, work, values)
        if error != 0:
            return error
        for row in range(n):
            for k in range(3):
                features[b, row, _PLANES + _N_SUMMARIES + k] = np.float32(est[row, k] * _SCALE)
    return 0


# ------------------------------------------------------------------------- Python faces
def _observations(obs: np.ndarray, name: str = "observations") -> np.ndarray:
    """``obs`` as a C-contiguous float32 (or float64) ``[B, OBSERVATION_SIZE]`` array."""
    obs = np.asarray(obs)
    if obs.ndim != 2 or obs.shape[1] != OBSERVATION_SIZE:
        raise ValueError(
            f"{name} must have shape [B, {OBSERVATION_SIZE}] (flat observations), got {obs.shape}"
        )
    if obs.dtype != np.float32 and obs.dtype != np.float64:
        if not (np.issubdtype(obs.dtype, np.number) or obs.dtype == np.bool_):
            raise ValueError(f"{name} must be numeric, got dtype {obs.dtype}")
        obs = obs.astype(np.float64)
    return np.ascontiguousarray(obs)


def _masks(mask: np.ndarray, rows: int, name: str = "masks") -> np.ndarray:
    """``mask`` as a C-contiguous int8 ``[rows, NUM_ACTIONS]`` array, nonzero where legal."""
    mask = np.asarray(mask)
    if mask.shape != (rows, NUM_ACTIONS):
        raise ValueError(
            f"{name} must have shape [{rows}, {NUM_ACTIONS}] (one action mask per observation), "
            f"got {mask.shape}"
        )
    if mask.dtype in (np.bool_, np.int8, np.uint8):
        return np.ascontiguousarray(mask).view(np.int8)
    return (mask != 0).view(np.int8)


def batch_arrays(observations: np.ndarray, masks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The kernels' view of a batch: observations as C-contiguous float32 (or float64)
    ``[B, OBSERVATION_SIZE]``, masks as C-contiguous int8 ``[B, NUM_ACTIONS]``; ``ValueError``
    on any other shape."""
    obs = _observations(observations)
    return obs, _masks(masks, obs.shape[0])


def _raise(error: int, single: bool = False) -> None:
    if error > 0:
        if single:
            raise ValueError("no legal action in this observation: it is not this seat's turn")
        raise ValueError(
            f"no legal action in row {error - 1} of the masks: it is not that seat's turn"
        )
    if error == _TOO_MANY:
        raise ValueError(f"an action mask has more than MAX_LEGAL={MAX_LEGAL} legal actions")
    if error == _BAD_SLOT:
        raise ValueError("an action names a capture slot its card does not have on this board")
    if error == _TOO_LARGE:
        raise RuntimeError("board too large for the capture search")


def play_estimates(
    obs: np.ndarray,
    legal: np.ndarray,
    card_value: float = CARD_VALUE,
    jack_keep: float = JACK_KEEP,
) -> np.ndarray:
    """``float64[len(legal), NUM_ESTIMATES]`` (gain, reply, follow_up) of the actions ``legal``
    of one flat observation: ``agents.players.heuristic.play_estimates``."""
    obs = np.asarray(obs)
    if obs.shape != (OBSERVATION_SIZE,):
        raise ValueError(
            f"obs must be one flat observation of shape ({OBSERVATION_SIZE},), got {obs.shape}"
        )
    row = _observations(obs[None], "obs")[0]
    legal = np.asarray(legal)
    if legal.ndim != 1 or not (np.issubdtype(legal.dtype, np.integer) or legal.size == 0):
        raise ValueError(f"legal must be a 1-D array of action ids, got {legal.dtype}{legal.shape}")
    legal = np.ascontiguousarray(legal, dtype=np.int64)
    if legal.size and (legal.min() < 0 or legal.max() >= NUM_ACTIONS):
        raise ValueError(f"legal holds an action outside 0..{NUM_ACTIONS - 1}")
    out = np.zeros((legal.size, NUM_ESTIMATES), dtype=np.float64)
    _raise(_play_estimates(row, legal, float(card_value), float(jack_keep), out))
    return out


def action_inputs_batch(
    observations: np.ndarray,
    masks: np.ndarray,
    out: tuple[np.ndarray, np.ndarray] | None = None,
    card_value: float = CARD_VALUE,
    jack_keep: float = JACK_KEEP,
) -> tuple[np.ndarray, np.ndarray]:
    """(actions ``int64[B, MAX_LEGAL]`` padded with ``PAD_ACTION``, features
    ``float32[B, MAX_LEGAL, ACTION_FEATURES]``) of flat observations ``[B, OBSERVATION_SIZE]``
    and their action masks ``[B, NUM_ACTIONS]``; row ``b`` is
    ``agents.learning.features.action_inputs`` of row ``b``. ``out=(actions, features)``,
    C-contiguous buffers of those shapes and dtypes (or larger in B: the first B rows are used), is
    overwritten and returned instead of new arrays."""
    obs, mask = batch_arrays(observations, masks)
    rows = obs.shape[0]
    if out is None:
        actions = np.empty((rows, MAX_LEGAL), dtype=np.int64)
        features = np.empty((rows, MAX_LEGAL, ACTION_FEATURES), dtype=np.float32)
    else:
        actions, features = out
        for buffer, dtype, shape, name in (
            (actions, np.int64, (MAX_LEGAL,), "actions"),
            (features, np.float32, (MAX_LEGAL, ACTION_FEATURES), "features"),
        ):
            if (
                not isinstance(buffer, np.ndarray)
                or buffer.dtype != dtype
                or buffer.shape[1:] != shape
                or buffer.shape[0] < rows
                or not buffer.flags.c_contiguous
                or not buffer.flags.writeable
            ):
                raise ValueError(
                    f"out {name} must be a writeable C-contiguous {np.dtype(dtype).name} array "
                    f"of shape [>= {rows}, {', '.join(map(str, shape))}], got "
                    f"{getattr(buffer, 'dtype', type(buffer).__name__)} "
                    f"{getattr(buffer, 'shape', '')}"
                )
        actions, features = actions[:rows], features[:rows]
    _raise(_action_inputs(obs, mask, float(card_value), float(jack_keep), actions, features))
    return actions, features


def heuristic_actions(
    observations: np.ndarray,
    masks: np.ndarray,
    card_value: float = CARD_VALUE,
    jack_keep: float = JACK_KEEP,
) -> np.ndarray:
    """``int64[B]``: ``HeuristicPolicy(card_value, jack_keep).act`` of every row (the legal action
    of largest gain - reply, the lowest action on a tie). ``ValueError`` if a row has no legal
    action."""
    obs, mask = batch_arrays(observations, masks)
    chosen = np.empty(obs.shape[0], dtype=np.int64)
    _raise(heuristic_rows(obs, mask, float(card_value), float(jack_keep), chosen))
    return chosen


def greedy_actions(observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """``int64[B]``: ``GreedyPolicy.act`` of every row. ``ValueError`` if a row has no legal
    action."""
    obs, mask = batch_arrays(observations, masks)
    chosen = np.empty(obs.shape[0], dtype=np.int64)
    _raise(greedy_rows(obs, mask, chosen))
    return chosen


def heuristic_action(
    observation: np.ndarray,
    mask: np.ndarray,
    card_value: float = CARD_VALUE,
    jack_keep: float = JACK_KEEP,
) -> int:
    """``HeuristicPolicy(card_value, jack_keep).act`` of one flat observation and its mask."""
    obs, masks = batch_arrays(np.asarray(observation)[None], np.asarray(mask)[None])
    chosen = np.empty(1, dtype=np.int64)
    _raise(heuristic_rows(obs, masks, float(card_value), float(jack_keep), chosen), True)
    return int(chosen[0])


def greedy_action(observation: np.ndarray, mask: np.ndarray) -> int:
    """``GreedyPolicy.act`` of one flat observation and its mask."""
    obs, masks = batch_arrays(np.asarray(observation)[None], np.asarray(mask)[None])
    chosen = np.empty(1, dtype=np.int64)
    _raise(greedy_rows(obs, masks, chosen), True)
    return int(chosen[0])
