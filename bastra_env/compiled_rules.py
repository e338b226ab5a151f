"""The rules of Bastra (RULES.md R5-R17) as compiled kernels over int64 state arrays.

This module is the one implementation of the rules. :class:`bastra_env.game.Game`, the AEC env,
the vector env and the agents' features all call these kernels; nothing else enumerates captures,
deals or scores.

A game is one ``int64[STATE_SIZE]`` row (the vector env holds ``[num_envs, STATE_SIZE]``); the
rules in force are one ``int64[RULES_SIZE]`` row made by :func:`rules_array`. Card sets are 52-bit
masks, card ``c`` being bit ``c`` (``c = 4 * rank + suit``, see ``bastra_env.cards``). The kernels
are compiled by numba on first use and cached on disk (``cache=True``), so later processes load
them in well under a second.

Seeding rule: round ``k`` of the game with seed ``s`` is dealt from :func:`shuffled_deck` ``(s,
k)``, a Fisher-Yates shuffle driven by splitmix64 started at ``s ^ (k * 0xD1B54A32D192ED03)``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core.extending import intrinsic

from .cards import FULL_DECK, NUM_CARDS
from .layout import (
    DEAL_PLAYS,
    DECK_LEFT_SCALE,
    MAX_LEGAL,
    MAX_SEATS,
    OBSERVATION_SIZE,
    OBSERVED_CAP,
    OFFSETS,
    SCORING_SCALES,
    SLOTS_PER_CARD,
)
from .rules import Rules

HAND_SIZE = 4
BOARD_SIZE = 4
PLAYS_PER_ROUND = 48
"""Every round has 48 plays, whatever the table (R6)."""
JACK = 10
ACES_JACKS = 0xF | (0xF << (4 * JACK))
TWO_OF_CLUBS = 4
TEN_OF_DIAMONDS = 37
DECK_CAPACITY = NUM_CARDS + 4
"""A round's deck with the board's jacks moved to its bottom (R5) has at most 56 entries."""

# ------------------------------------------------------------------------- the state row
_FIELDS = (
    ("HANDS", MAX_SEATS),
    ("CAPTURED", MAX_SEATS),
    ("BASTRAS", MAX_SEATS),
    ("JACK_BASTRAS", MAX_SEATS),
    ("SCORES", MAX_SEATS),  # per side
    ("BOARD", 1),
    ("DECK_POS", 1),
    ("DECK_LEN", 1),
    ("PLAYS", 1),
    ("CURRENT", 1),  # -1 once the game is over
    ("DEALER", 1),
    ("ROUND", 1),
    ("LAST_CAPTURER", 1),  # -1: nobody captured yet this round
    ("DONE", 1),
    ("WINNER", 1),  # winning side, -1 while playing or for a draw
    ("SEED", 1),
    ("LAST_SEAT", 1),  # the latest play: seat, card, capture (-1: none this round)
    ("LAST_CARD", 1),
    ("LAST_CAPTURE", 1),
    ("ROUND_ENDED", 1),  # 1 when the latest play ended a round: the RES_ block holds its result
    ("RES_ROUND", 1),
    ("RES_DEALER", 1),
    ("RES_CARDS", MAX_SEATS),  # per side
    ("RES_CARD_POINTS", MAX_SEATS),
    ("RES_MOST_CARDS", MAX_SEATS),
    ("RES_BASTRAS", MAX_SEATS),
    ("RES_JACK_BASTRAS", MAX_SEATS),
    ("RES_BASTRA_POINTS", MAX_SEATS),
    ("RES_TOTAL", MAX_SEATS),
    ("RES_LEFTOVER", 1),
    ("RES_LEFTOVER_SIDE", 1),  # -1: nobody captured, the cards count for nobody
    ("DEAL_CARDS", DEAL_PLAYS),  # the plays since the latest deal, k = PLAYS % (4 * players):
    ("DEAL_CAPTURES", DEAL_PLAYS),  # card played and capture taken (entries past k are stale)
    ("NUM_MOVES", 1),  # the legal actions of the seat to move (env encoding), see legal_slots
    ("MOVE_ACTIONS", MAX_LEGAL),
    ("MOVE_CAPTURES", MAX_LEGAL),
    ("DECK", DECK_CAPACITY),
)
FIELD_OFFSETS: dict[str, int] = {}
_at = 0
for _name, _size in _FIELDS:
    FIELD_OFFSETS[_name] = _at
    _at += _size
STATE_SIZE = _at
del _at, _name, _size

HANDS = FIELD_OFFSETS["HANDS"]
CAPTURED = FIELD_OFFSETS["CAPTURED"]
BASTRAS = FIELD_OFFSETS["BASTRAS"]
JACK_BASTRAS = FIELD_OFFSETS["JACK_BASTRAS"]
SCORES = FIELD_OFFSETS["SCORES"]
BOARD = FIELD_OFFSETS["BOARD"]
DECK_POS = FIELD_OFFSETS["DECK_POS"]
DECK_LEN = FIELD_OFFSETS["DECK_LEN"]
PLAYS = FIELD_OFFSETS["PLAYS"]
CURRENT = FIELD_OFFSETS["CURRENT"]
DEALER = FIELD_OFFSETS["DEALER"]
ROUND = FIELD_OFFSETS["ROUND"]
LAST_CAPTURER = FIELD_OFFSETS["LAST_CAPTURER"]
DONE = FIELD_OFFSETS["DONE"]
WINNER = FIELD_OFFSETS["WINNER"]
SEED = FIELD_OFFSETS["SEED"]
LAST_SEAT = FIELD_OFFSETS["LAST_SEAT"]
LAST_CARD = FIELD_OFFSETS["LAST_CARD"]
LAST_CAPTURE = FIELD_OFFSETS["LAST_CAPTURE"]
ROUND_ENDED = FIELD_OFFSETS["ROUND_ENDED"]
RES_ROUND = FIELD_OFFSETS["RES_ROUND"]
RES_DEALER = FIELD_OFFSETS["RES_DEALER"]
RES_CARDS = FIELD_OFFSETS["RES_CARDS"]
RES_CARD_POINTS = FIELD_OFFSETS["RES_CARD_POINTS"]
RES_MOST_CARDS = FIELD_OFFSETS["RES_MOST_CARDS"]
RES_BASTRAS = FIELD_OFFSETS["RES_BASTRAS"]
RES_JACK_BASTRAS = FIELD_OFFSETS["RES_JACK_BASTRAS"]
RES_BASTRA_POINTS = FIELD_OFFSETS["RES_BASTRA_POINTS"]
RES_TOTAL = FIELD_OFFSETS["RES_TOTAL"]
RES_LEFTOVER = FIELD_OFFSETS["RES_LEFTOVER"]
RES_LEFTOVER_SIDE = FIELD_OFFSETS["RES_LEFTOVER_SIDE"]
NUM_MOVES = FIELD_OFFSETS["NUM_MOVES"]
MOVE_ACTIONS = FIELD_OFFSETS["MOVE_ACTIONS"]
MOVE_CAPTURES = FIELD_OFFSETS["MOVE_CAPTURES"]
DEAL_CARDS = FIELD_OFFSETS["DEAL_CARDS"]
DEAL_CAPTURES = FIELD_OFFSETS["DEAL_CAPTURES"]
DECK = FIELD_OFFSETS["DECK"]

# ------------------------------------------------------------------------- the rules row
RULE_FIELDS = (
    "num_players",
    "teams",
    "target_score",
    "max_rounds",  # 0 stands for None
    "tie_break",  # index in rules.TIE_BREAKS: 0 extra rounds, 1 draw
    "capture",  # index in rules.CAPTURE_MODES: 0 choose, 1 auto
    "bastra_points",
    "jack_bastra_points",
    "last_play_bastra",
    "most_cards_points",
)
RULES_SIZE = len(RULE_FIELDS)
R_PLAYERS, R_TEAMS, R_TARGET, R_MAX_ROUNDS, R_TIE_DRAW, R_AUTO = range(6)
R_BASTRA, R_JACK_BASTRA, R_LAST_PLAY_BASTRA, R_MOST_CARDS = range(6, 10)


def rules_array(rules: Rules) -> np.ndarray:
    """A ``Rules`` as the ``int64[RULES_SIZE]`` row the kernels read."""
    from .rules import CAPTURE_MODES, TIE_BREAKS

    values = [
        rules.num_players,
        int(rules.teams),
        rules.target_score,
        rules.max_rounds or 0,
        TIE_BREAKS.index(rules.tie_break),
        CAPTURE_MODES.index(rules.capture),
        rules.bastra_points,
        rules.jack_bastra_points,
        int(rules.last_play_bastra),
        rules.most_cards_points,
    ]
    return np.array(values, dtype=np.int64)


# ------------------------------------------------------------------------- observation offsets
_O_HAND = OFFSETS["hand"].start
_O_BOARD = OFFSETS["board"].start
_O_CAPTURED = OFFSETS["captured"].start
_O_UNSEEN = OFFSETS["unseen"].start
_O_SCORES = OFFSETS["scores"].start
_O_TARGET = OFFSETS["target"].start
_O_ROUND = OFFSETS["round"].start
_O_PLAYS = OFFSETS["plays"].start
_O_DECK_LEFT = OFFSETS["deck_left"].start
_O_HAND_SIZES = OFFSETS["hand_sizes"].start
_O_BASTRAS = OFFSETS["bastras"].start
_O_LAST_CAPTURER = OFFSETS["last_capturer"].start
_O_DEALER = OFFSETS["dealer"].start
_O_TABLE = OFFSETS["table"].start
_O_RULES = OFFSETS["rules"].start
_O_ACTION_CARDS = OFFSETS["action_cards"].start
_O_ACTION_POINTS = OFFSETS["action_points"].start
_O_ACTION_BASTRA = OFFSETS["action_bastra"].start
_O_DEAL_PLAYED = OFFSETS["deal_played"].start
_O_DEAL_TAKEN = OFFSETS["deal_taken"].start
_SCALE_BASTRA = float(SCORING_SCALES["bastra_points"])
_SCALE_JACK = float(SCORING_SCALES["jack_bastra_points"])
_SCALE_MOST = float(SCORING_SCALES["most_cards_points"])
_CAP = float(OBSERVED_CAP)
_OBS = OBSERVATION_SIZE
_SLOTS = SLOTS_PER_CARD
_FULL = FULL_DECK
# seat offset -> observation slot, per table size (row n); unused entries 0
_SLOT_TABLE = np.array([[0, 0, 0, 0], [0, 0, 0, 0], [0, 1, 0, 0], [0, 1, 3, 0], [0, 1, 2, 3]])

NO_BASTRA, BASTRA, JACK_BASTRA = 0, 1, 2
CAPTURE_WORK = 4096
"""Scratch entries for :func:`card_captures` (combining groups and the search stack)."""


# ------------------------------------------------------------------------- bit helpers
@intrinsic
def _ctpop(typingctx: Any, x: types.Type) -> Any:
    """LLVM's ctpop (one POPCNT instruction where the processor has it) on an int64."""
    if not isinstance(x, types.Integer):
        return None

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        value = context.cast(builder, args[0], signature.args[0], types.int64)
        return builder.ctpop(value)

    return types.int64(x), codegen


@intrinsic
def _cttz(typingctx: Any, x: types.Type) -> Any:
    """LLVM's cttz (count trailing zeros: one TZCNT/BSF instruction) on a non-zero int64."""
    if not isinstance(x, types.Integer):
        return None

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        value = context.cast(builder, args[0], signature.args[0], types.int64)
        return builder.cttz(value, ir.Constant(ir.IntType(1), 1))

    return types.int64(x), codegen


@njit(cache=True, inline="always")
def popcount(x: int) -> int:
    """Cards in a mask."""
    return _ctpop(x)  # type: ignore[call-arg]  # numba's stub counts typingctx as an argument


@njit(cache=True, inline="always")
def lowest_card(x: int) -> int:
    """Index of the lowest set bit of a non-zero mask."""
    return _cttz(x)  # type: ignore[call-arg]  # (as in popcount)


@njit(cache=True, inline="always")
def card_points(mask: int) -> int:
    """R14: aces and jacks 1, the 2 of clubs 2, the 10 of diamonds 3."""
    return (
        popcount(mask & ACES_JACKS)
        + 2 * ((mask >> TWO_OF_CLUBS) & 1)
        + 3 * ((mask >> TEN_OF_DIAMONDS) & 1)
    )


@njit(cache=True, inline="always")
def _before(a: int, b: int) -> bool:
    """Canonical capture order: most cards, then most points, then the lowest mask."""
    ca = popcount(a)
    cb = popcount(b)
    if ca != cb:
        return ca > cb
    pa = card_points(a)
    pb = card_points(b)
    if pa != pb:
        return pa > pb
    return a < b


@njit(cache=True, inline="always")
def _insert(out: np.ndarray, count: int, limit: int, mask: int) -> int:
    """Insert ``mask`` into the sorted, duplicate-free ``out[:count]`` keeping at most ``limit``
    entries; returns the new count. A mask that was dropped earlier ranks below every entry
    kept, so it is dropped again: the kept entries are always the first ``limit`` in order."""
    p = 0
    while p < count and _before(out[p], mask):
        p += 1
    if p < count and out[p] == mask:
        return count
    if p >= limit:
        return count
    end = count if count < limit else limit - 1
    for q in range(end, p, -1):
        out[q] = out[q - 1]
    out[p] = mask
    return end + 1


@njit(cache=True)
def bastra_kind(card: int, capture: int, board: int) -> int:
    """R12: ``BASTRA`` when a card other than a jack clears ``board``, ``JACK_BASTRA`` when a
    jack takes a board of one jack, else ``NO_BASTRA`` (before the last-play rule)."""
    if capture == 0 or capture != board:
        return NO_BASTRA
    if (card >> 2) != JACK:
        return BASTRA
    if (capture & (0xF << (4 * JACK))) != 0 and (capture & (capture - 1)) == 0:
        return JACK_BASTRA
    return NO_BASTRA


# ------------------------------------------------------------------------- scoring (R12-R16)
# The one place the scoring is written: the engine scores a round with these, and the search
# kernels (``agents.search``) score their plays and rounds with them, reading the rules row.
@njit(cache=True, inline="always")
def scored_bastra(card: int, capture: int, board: int, plays: int, rules: np.ndarray) -> int:
    """The bastra (``NO_BASTRA``, ``BASTRA``, ``JACK_BASTRA``) that playing ``card`` taking
    ``capture`` off ``board`` scores as play ``plays + 1`` of the round: R12, and on the round's
    last play only where ``last_play_bastra`` says so."""
    if capture != board or (plays + 1 >= PLAYS_PER_ROUND and rules[R_LAST_PLAY_BASTRA] == 0):
        return NO_BASTRA  # (the common case: a capture that leaves cards on the board)
    return bastra_kind(card, capture, board)


@njit(cache=True, inline="always")
def bastra_points(bastras: int, jack_bastras: int, rules: np.ndarray) -> int:
    """R12: what ``bastras`` bastras and ``jack_bastras`` jack bastras score."""
    return bastras * rules[R_BASTRA] + jack_bastras * rules[R_JACK_BASTRA]


@njit(cache=True, inline="always")
def capture_points(card: int, capture: int, board: int, plays: int, rules: np.ndarray) -> int:
    """R12, R14: the points playing ``card`` taking ``capture`` (non-zero) off ``board`` as play
    ``plays + 1`` makes at once: the card points of the cards taken and the card played, and
    the bastra's where it scores one (``scored_bastra``)."""
    points = card_points(capture | (1 << card))
    if capture == board:  # only a capture of the whole board is a bastra
        kind = scored_bastra(card, capture, board, plays, rules)
        points += bastra_points(int(kind == BASTRA), int(kind == JACK_BASTRA), rules)
    return points


@njit(cache=True, inline="always")
def most_cards_points(cards: int, most: int, rules: np.ndarray) -> int:
    """R15: a side with ``cards`` captured cards, ``most`` being the most any side has."""
    return rules[R_MOST_CARDS] if cards == most else 0


@njit(cache=True)
def side_difference(totals: np.ndarray, rules: np.ndarray, side: int) -> float:
    """``totals[side]`` less the other sides' mean: a round's point difference for ``side``, as
    ``reward="points"`` pays it and the search players value a round."""
    sides = 2 if rules[R_TEAMS] else rules[R_PLAYERS]
    others = 0
    for other in range(sides):
        if other != side:
            others += totals[other]
    return totals[side] - others / (sides - 1)


# ------------------------------------------------------------------------- captures (R8-R10)
@njit(cache=True)
def card_captures(card: int, board: int, out: np.ndarray, limit: int, work: np.ndarray) -> int:
    """The legal captures of ``card`` on ``board`` in canonical order, the first ``limit`` of
    them written to ``out``; returns how many were written (0: the card trails). ``work`` is
    scratch of at least ``CAPTURE_WORK`` entries; -1 means it was too small for this board."""
    rank = card >> 2
    if rank == JACK:  # R10: a jack takes everything; onto an empty board it trails
        if board == 0:
            return 0
        out[0] = board
        return 1
    pair = board & (0xF << (4 * rank))
    if rank > JACK:  # queens and kings only pair
        if pair == 0:
            return 0
        out[0] = pair
        return 1
    value = rank + 1
    low = board & ((1 << (4 * rank)) - 1)  # numeric cards of value below the played value
    # the low cards, ascending (values ascending)
    n_low = 0
    cards = work[:52]
    rest = low
    while rest:
        c = lowest_card(rest)
        rest &= rest - 1
        cards[n_low] = c
        n_low += 1
    count = 0
    if n_low >= 2:
        # combining groups: every set of two or more low cards summing to the value, by a
        # depth-first search over the cards in ascending order (at most 10 deep: values >= 1)
        next_i = work[52:64]
        sums = work[64:76]
        masks = work[76:88]
        groups = work[96 : CAPTURE_WORK // 2]
        capacity = CAPTURE_WORK // 2 - 96
        n_groups = 0
        top = 0
        next_i[0] = 0
        sums[0] = 0
        masks[0] = 0
        while top >= 0:
            i = next_i[top]
            if i >= n_low:
                top -= 1
                continue
            next_i[top] = i + 1
            total = sums[top] + (cards[i] >> 2) + 1
            if total > value:  # ascending values: no later card fits at this depth either
                top -= 1
                continue
            chosen = masks[top] | (1 << cards[i])
            if total == value:
                if top >= 1:  # two or more cards
                    if n_groups >= capacity:
                        return -1
                    groups[n_groups] = chosen
                    n_groups += 1
                continue
            top += 1
            next_i[top] = i + 1
            sums[top] = total
            masks[top] = chosen
        if n_groups:
            # maximal unions of pairwise disjoint groups (R9), depth-first
            stack = work[CAPTURE_WORK // 2 :]
            depth_limit = (CAPTURE_WORK // 2) // 3
            used_at = 0
            next_at = depth_limit
            grew_at = 2 * depth_limit
            depth = 0
            stack[used_at] = 0
            stack[next_at] = 0
            stack[grew_at] = 0
            while depth >= 0:
                used = stack[used_at + depth]
                i = stack[next_at + depth]
                while i < n_groups and (groups[i] & used) != 0:
                    i += 1
                if i < n_groups:
                    stack[next_at + depth] = i + 1
                    stack[grew_at + depth] = 1
                    depth += 1
                    if depth >= depth_limit:
                        return -1
                    stack[used_at + depth] = used | groups[i]
                    stack[next_at + depth] = i + 1
                    stack[grew_at + depth] = 0
                else:
                    if stack[grew_at + depth] == 0 and used != 0:
                        maximal = True
                        for g in range(n_groups):
                            if (groups[g] & used) == 0:
                                maximal = False
                                break
                        if maximal:
                            count = _insert(out, count, limit, pair | used)
                    depth -= 1
    if count == 0 and pair != 0:
        out[0] = pair
        count = 1
    return count


@njit(cache=True)
def all_captures(card: int, board: int) -> np.ndarray:
    """Every legal capture of ``card`` on ``board``, canonical order (grows its buffers)."""
    limit = 64
    work_size = CAPTURE_WORK
    while True:
        out = np.empty(limit, dtype=np.int64)
        work = np.empty(work_size, dtype=np.int64)
        count = card_captures(card, board, out, limit, work)
        if count < 0:
            raise RuntimeError("board too large for the capture search")
        if count < limit:
            return out[:count].copy()
        limit *= 8


# ------------------------------------------------------------------------- legal actions
@njit(cache=True)
def legal_slots(state: np.ndarray, rules: np.ndarray, work: np.ndarray) -> int:
    """The legal actions of the seat to move in the env encoding (action ``4 * card + slot``,
    slot = index in the card's canonical captures, slot 0 also the trail), written to the
    state's ``NUM_MOVES``/``MOVE_ACTIONS``/``MOVE_CAPTURES``; returns their number (0 once the
    game is over). ``work`` is scratch of ``CAPTURE_WORK + SLOTS_PER_CARD`` entries."""
    if state[DONE]:
        state[NUM_MOVES] = 0
        return 0
    board = state[BOARD]
    hand = state[HANDS + state[CURRENT]]
    limit = 1 if rules[R_AUTO] else _SLOTS
    caps = work[CAPTURE_WORK:]
    n = 0
    while hand:
        card = lowest_card(hand)
        hand &= hand - 1
        found = card_captures(card, board, caps, limit, work)
        if found < 0:
            raise RuntimeError("board too large for the capture search")
        if found == 0:
            state[MOVE_ACTIONS + n] = card * _SLOTS
            state[MOVE_CAPTURES + n] = 0
            n += 1
        else:
            for slot in range(found):
                state[MOVE_ACTIONS + n] = card * _SLOTS + slot
                state[MOVE_CAPTURES + n] = caps[slot]
                n += 1
    state[NUM_MOVES] = n
    return n


@njit(cache=True)
def find_move(state: np.ndarray, action: int) -> int:
    """Index of ``action`` among the state's legal moves (see ``legal_slots``), -1 if illegal."""
    for i in range(state[NUM_MOVES]):
        if state[MOVE_ACTIONS + i] == action:
            return i
    return -1


# ------------------------------------------------------------------------- dealing (R4-R6)
@njit(cache=True)
def splitmix64(x: np.uint64) -> tuple:
    """One step of splitmix64: (the next state, its output)."""
    x = x + np.uint64(0x9E3779B97F4A7C15)
    z = x
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x, z ^ (z >> np.uint64(31))


@njit(cache=True)
def shuffle_into(seed: int, round_number: int, out: np.ndarray) -> None:
    """Round ``round_number``'s deck (top first) of the game with ``seed``: see the module docs."""
    x = np.uint64(seed) ^ (np.uint64(round_number) * np.uint64(0xD1B54A32D192ED03))
    for i in range(NUM_CARDS):
        out[i] = i
    for i in range(NUM_CARDS - 1, 0, -1):
        x, z = splitmix64(x)
        j = np.int64(z % np.uint64(i + 1))
        t = out[i]
        out[i] = out[j]
        out[j] = t


@njit(cache=True)
def _deal_hands(state: np.ndarray, n: int) -> None:
    """R5/R6: one card at a time to each player, from the dealer's left, until each has 4."""
    first = (state[DEALER] + 1) % n
    pos = state[DECK_POS]
    for _ in range(HAND_SIZE):
        for k in range(n):
            state[HANDS + (first + k) % n] |= 1 << state[DECK + pos]
            pos += 1
    state[DECK_POS] = pos


@njit(cache=True)
def start_round(state: np.ndarray, rules: np.ndarray) -> None:
    """Deal the round whose 52-card deck is in ``state[DECK:DECK + 52]`` (R5): hands, then the
    board, each jack turned going to the bottom of the deck."""
    n = rules[R_PLAYERS]
    for s in range(MAX_SEATS):
        state[HANDS + s] = 0
        state[CAPTURED + s] = 0
        state[BASTRAS + s] = 0
        state[JACK_BASTRAS + s] = 0
    state[LAST_CAPTURER] = -1
    state[PLAYS] = 0
    state[LAST_SEAT] = -1
    state[LAST_CARD] = -1
    state[LAST_CAPTURE] = 0
    state[DECK_POS] = 0
    state[DECK_LEN] = NUM_CARDS
    _deal_hands(state, n)
    pos = state[DECK_POS]
    length = NUM_CARDS
    board = 0
    count = 0
    while count < BOARD_SIZE:
        card = state[DECK + pos]
        pos += 1
        if (card >> 2) == JACK:
            state[DECK + length] = card
            length += 1
        else:
            board |= 1 << card
            count += 1
    state[BOARD] = board
    state[DECK_POS] = pos
    state[DECK_LEN] = length
    state[CURRENT] = (state[DEALER] + 1) % n


@njit(cache=True)
def new_game(state: np.ndarray, rules: np.ndarray, seed: int, deck: np.ndarray) -> None:
    """Start a game: ``deck`` (52 cards, top first) deals round 1, or when it is empty round 1
    is shuffled from ``seed`` like every later round."""
    n = rules[R_PLAYERS]
    for i in range(STATE_SIZE):
        state[i] = 0
    state[SEED] = seed
    state[ROUND] = 1
    state[DEALER] = n - 1
    state[WINNER] = -1
    state[RES_LEFTOVER_SIDE] = -1
    if deck.shape[0] == NUM_CARDS:
        for i in range(NUM_CARDS):
            state[DECK + i] = deck[i]
    else:
        shuffle_into(seed, 1, state[DECK : DECK + NUM_CARDS])
    start_round(state, rules)


# ------------------------------------------------------------------------- a play (R7-R13)
@njit(cache=True)
def side_of(rules: np.ndarray, seat: int) -> int:
    return seat % 2 if rules[R_TEAMS] else seat


@njit(cache=True)
def apply_move(state: np.ndarray, rules: np.ndarray, card: int, capture: int) -> bool:
    """Play ``card`` taking ``capture`` (0: a trail) for the seat to move, unchecked: the move
    must be legal. Deals, scores the round and starts the next one as the rules say. Returns
    whether a round ended (its result is then in the ``RES_`` block)."""
    n = rules[R_PLAYERS]
    seat = state[CURRENT]
    bit = 1 << card
    state[HANDS + seat] ^= bit
    in_deal = state[PLAYS] % (HAND_SIZE * n)
    state[DEAL_CARDS + in_deal] = card
    state[DEAL_CAPTURES + in_deal] = capture
    plays = state[PLAYS] + 1
    state[PLAYS] = plays
    state[ROUND_ENDED] = 0
    if capture != 0:
        kind = scored_bastra(card, capture, state[BOARD], plays - 1, rules)
        if kind == BASTRA:
            state[BASTRAS + seat] += 1
        elif kind == JACK_BASTRA:
            state[JACK_BASTRAS + seat] += 1
        state[BOARD] ^= capture
        state[CAPTURED + seat] |= capture | bit
        state[LAST_CAPTURER] = seat
    else:
        state[BOARD] |= bit
    state[LAST_SEAT] = seat
    state[LAST_CARD] = card
    state[LAST_CAPTURE] = capture
    if plays % (HAND_SIZE * n) != 0:
        state[CURRENT] = (seat + 1) % n
        return False
    if plays < PLAYS_PER_ROUND:
        _deal_hands(state, n)
        state[CURRENT] = (seat + 1) % n
        return False
    _end_round(state, rules)
    return True


@njit(cache=True)
def _end_round(state: np.ndarray, rules: np.ndarray) -> None:
    """R13-R17: leftover cards, the round's points, the game's end, or the next round's deal."""
    n = rules[R_PLAYERS]
    sides = 2 if rules[R_TEAMS] else n
    board = state[BOARD]
    state[RES_LEFTOVER] = popcount(board)
    state[RES_LEFTOVER_SIDE] = -1
    last = state[LAST_CAPTURER]
    if last >= 0:
        state[CAPTURED + last] |= board
        state[RES_LEFTOVER_SIDE] = side_of(rules, last)
    state[BOARD] = 0
    state[ROUND_ENDED] = 1
    state[RES_ROUND] = state[ROUND]
    state[RES_DEALER] = state[DEALER]
    for side in range(MAX_SEATS):
        state[RES_CARDS + side] = 0
        state[RES_CARD_POINTS + side] = 0
        state[RES_MOST_CARDS + side] = 0
        state[RES_BASTRAS + side] = 0
        state[RES_JACK_BASTRAS + side] = 0
        state[RES_BASTRA_POINTS + side] = 0
        state[RES_TOTAL + side] = 0
    piles = np.zeros(MAX_SEATS, dtype=np.int64)
    for seat in range(n):
        side = side_of(rules, seat)
        piles[side] |= state[CAPTURED + seat]
        state[RES_BASTRAS + side] += state[BASTRAS + seat]
        state[RES_JACK_BASTRAS + side] += state[JACK_BASTRAS + seat]
    most = 0
    for side in range(sides):
        cards = popcount(piles[side])
        state[RES_CARDS + side] = cards
        state[RES_CARD_POINTS + side] = card_points(piles[side])
        if cards > most:
            most = cards
    for side in range(sides):
        state[RES_MOST_CARDS + side] = most_cards_points(state[RES_CARDS + side], most, rules)
        state[RES_BASTRA_POINTS + side] = bastra_points(
            state[RES_BASTRAS + side], state[RES_JACK_BASTRAS + side], rules
        )
        total = (
            state[RES_CARD_POINTS + side]
            + state[RES_MOST_CARDS + side]
            + state[RES_BASTRA_POINTS + side]
        )
        state[RES_TOTAL + side] = total
        state[SCORES + side] += total
    # R17, with max_rounds and tie_break from the rules
    top = state[SCORES]
    leader = 0
    leaders = 1
    for side in range(1, sides):
        score = state[SCORES + side]
        if score > top:
            top = score
            leader = side
            leaders = 1
        elif score == top:
            leaders += 1
    reached = top >= rules[R_TARGET] and (leaders == 1 or rules[R_TIE_DRAW] == 1)
    out_of_rounds = rules[R_MAX_ROUNDS] > 0 and state[ROUND] >= rules[R_MAX_ROUNDS]
    if reached or out_of_rounds:
        state[DONE] = 1
        state[WINNER] = leader if leaders == 1 else -1
        state[CURRENT] = -1
        return
    state[ROUND] += 1
    state[DEALER] = (state[DEALER] + 1) % n
    shuffle_into(state[SEED], state[ROUND], state[DECK : DECK + NUM_CARDS])
    start_round(state, rules)


# ------------------------------------------------------------------------- observation
@njit(cache=True, inline="always")
def _set_cards(obs: np.ndarray, at: int, cards: int) -> None:
    """``obs[at + c] = 1.0`` for each card ``c`` of the mask (the rest stays as it is)."""
    while cards:
        obs[at + lowest_card(cards)] = 1.0
        cards &= cards - 1


@njit(cache=True)
def encode(
    state: np.ndarray, rules: np.ndarray, seat: int, obs: np.ndarray, mask: np.ndarray
) -> None:
    """Write ``seat``'s observation (layout ``bastra_env.layout``) into ``obs`` (float32) and its
    action mask into ``mask`` (all 0 unless it is that seat's turn). The legal moves must be
    current (``legal_slots`` since the last play)."""
    n = rules[R_PLAYERS]
    for i in range(_OBS):
        obs[i] = 0.0
    for i in range(mask.shape[0]):
        mask[i] = 0
    hand = state[HANDS + seat]
    board = state[BOARD]
    _set_cards(obs, _O_HAND, hand)
    _set_cards(obs, _O_BOARD, board)
    seen = hand | board
    target = rules[R_TARGET]
    for offset in range(n):
        other = (seat + offset) % n
        slot = _SLOT_TABLE[n, offset]
        pile = state[CAPTURED + other]
        seen |= pile
        _set_cards(obs, _O_CAPTURED + NUM_CARDS * slot, pile)
        obs[_O_SCORES + slot] = min(state[SCORES + side_of(rules, other)] / target, 4.0)
        obs[_O_HAND_SIZES + slot] = popcount(state[HANDS + other]) / 4
        obs[_O_BASTRAS + slot] = (state[BASTRAS + other] + state[JACK_BASTRAS + other]) / 4
    _set_cards(obs, _O_UNSEEN, _FULL & ~seen)
    obs[_O_TARGET] = min(target / 100, 10.0)
    obs[_O_ROUND] = min(state[ROUND] / 10, 10.0)
    obs[_O_PLAYS] = state[PLAYS] / PLAYS_PER_ROUND
    obs[_O_DECK_LEFT] = (state[DECK_LEN] - state[DECK_POS]) / DECK_LEFT_SCALE
    last = state[LAST_CAPTURER]
    if last >= 0:
        obs[_O_LAST_CAPTURER + _SLOT_TABLE[n, (last - seat) % n]] = 1.0
    else:
        obs[_O_LAST_CAPTURER + MAX_SEATS] = 1.0
    obs[_O_DEALER + _SLOT_TABLE[n, (state[DEALER] - seat) % n]] = 1.0
    obs[_O_TABLE + (3 if rules[R_TEAMS] else n - 2)] = 1.0
    obs[_O_RULES] = min(rules[R_BASTRA] / _SCALE_BASTRA, _CAP)
    obs[_O_RULES + 1] = min(rules[R_JACK_BASTRA] / _SCALE_JACK, _CAP)
    obs[_O_RULES + 2] = min(rules[R_MOST_CARDS] / _SCALE_MOST, _CAP)
    obs[_O_RULES + 3] = float(rules[R_LAST_PLAY_BASTRA])
    for k in range(state[PLAYS] % (HAND_SIZE * n)):
        mark = (k + 1) / DEAL_PLAYS
        obs[_O_DEAL_PLAYED + state[DEAL_CARDS + k]] = mark
        taken = state[DEAL_CAPTURES + k]
        while taken:
            obs[_O_DEAL_TAKEN + lowest_card(taken)] = mark
            taken &= taken - 1
    if seat != state[CURRENT] or state[DONE]:
        return
    for i in range(state[NUM_MOVES]):
        action = state[MOVE_ACTIONS + i]
        capture = state[MOVE_CAPTURES + i]
        mask[action] = 1
        if capture != 0:
            card = action // _SLOTS
            obs[_O_ACTION_CARDS + action] = (popcount(capture) + 1) / 10
            obs[_O_ACTION_POINTS + action] = card_points(capture | (1 << card)) / 13
            if scored_bastra(card, capture, board, state[PLAYS], rules) != NO_BASTRA:
                obs[_O_ACTION_BASTRA + action] = 1.0


def capture_work() -> np.ndarray:
    """Scratch for :func:`legal_slots` and :func:`card_captures`."""
    return np.empty(CAPTURE_WORK + SLOTS_PER_CARD, dtype=np.int64)


def shuffled_deck(seed: int, round_number: int) -> list[int]:
    """The shuffled deck (top first) of round ``round_number`` of the game with ``seed``."""
    out = np.empty(NUM_CARDS, dtype=np.int64)
    shuffle_into(seed, round_number, out)
    return out.tolist()


# ------------------------------------------------------------------------- rewards
@njit(cache=True)
def step_rewards(state: np.ndarray, rules: np.ndarray, points_mode: int, out: np.ndarray) -> None:
    """What the latest play paid each seat (``out[seat]``), as the AEC env's rewards:
    ``points_mode`` 1 pays each round's points minus the mean points of the other sides when
    the round is scored; 0 ("win") pays +1 to the winning side's seats and -1 to the others
    when the game ends, 0 on a draw. Partners receive the same. Zero on every other play."""
    n = rules[R_PLAYERS]
    for seat in range(n):
        out[seat] = 0.0
    if state[ROUND_ENDED] == 0:
        return
    if points_mode == 1:
        for seat in range(n):
            out[seat] = side_difference(state[RES_TOTAL:], rules, side_of(rules, seat))
    elif state[DONE] and state[WINNER] >= 0:
        for seat in range(n):
            out[seat] = 1.0 if side_of(rules, seat) == state[WINNER] else -1.0
