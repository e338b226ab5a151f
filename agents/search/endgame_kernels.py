"""The endgame search of ``agents.search.endgame`` as compiled kernels: minimax with alpha-beta
pruning over int64 card masks, on the rules kernels of ``bastra_env.compiled_rules``.

A position is (the hands, the seat to move, the board, the last capturer, the pile sizes of my
side and the other side, the plays made this round); seat 0 is me, seats play in order, even
seats are my side, and a value is the rest of the round's point difference, my side minus the
other, or, with an equity table, my side's chance of winning the game from the totals the round
ends at (``agents.search.equity``; in its integer units). The round is over when the seat to move
has no card left. Every root action is searched
with a full window, so its value is exact; pruning only skips work below it. The search keeps
its path on an explicit stack rather than recursing (numba's on-disk cache does not hold
recursive functions safely).

The kernels are compiled by numba on first use and cached on disk (``cache=True``).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from bastra_env.cards import NUM_CARDS
from bastra_env.compiled_rules import (
    CAPTURE_WORK,
    PLAYS_PER_ROUND,
    R_BASTRA,
    R_JACK_BASTRA,
    R_LAST_PLAY_BASTRA,
    R_MOST_CARDS,
    R_PLAYERS,
    R_TARGET,
    R_TEAMS,
    RULES_SIZE,
    bastra_points,
    capture_points,
    card_captures,
    card_points,
    most_cards_points,
    popcount,
)
from bastra_env.layout import DECK_LEFT_SCALE, MAX_SEATS, SLOTS_PER_CARD

NOBODY = -1
"""The last capturer before anyone captured this round."""
_INF = 1 << 40
"""Beyond every round's point difference: the full window's bounds."""
EQUITY_SCALE = 1_000_000
"""The unit of an equity table (``agents.search.equity``): a certain win."""
POINTS_ONLY = np.zeros((0, 0), dtype=np.int64)
"""The empty equity table the search kernels take for the round's point difference as the
value (no game objective)."""


@njit(cache=True)
def equity_at(equity: np.ndarray, mine: int, theirs: int) -> int:
    """``equity[mine, theirs]``, the totals clipped to the table's last row and column."""
    top = equity.shape[0] - 1
    return equity[min(mine, top), min(theirs, top)]


_SLOTS = SLOTS_PER_CARD


@njit(cache=True)
def _gain(card: int, capture: int, board: int, plays: int, rules: np.ndarray) -> int:
    """The engine's ``capture_points`` (inlined wherever it is called), behind a call of its own
    so that the search loop keeps its rare bastra branch out of line: the two-deal search ran a
    few percent faster so than with it inlined (min of 7 timings, one core)."""
    return capture_points(card, capture, board, plays, rules)


@njit(cache=True)
def _round_points(
    board: int, last: int, mine: int, theirs: int, rules: np.ndarray
) -> tuple[int, int]:
    """The points each side (mine, the other) still makes once the round is over: the leftovers
    to the last capturer, the most cards (the engine's ``card_points``, ``most_cards_points``)."""
    to_mine, to_theirs = 0, 0
    if last != NOBODY and board != 0:
        if last % 2 == 0:
            to_mine += card_points(board)
            mine += popcount(board)
        else:
            to_theirs += card_points(board)
            theirs += popcount(board)
    most = max(mine, theirs)
    to_mine += most_cards_points(mine, most, rules)
    to_theirs += most_cards_points(theirs, most, rules)
    return to_mine, to_theirs


@njit(cache=True)
def _round_over(board: int, last: int, mine: int, theirs: int, rules: np.ndarray) -> int:
    """The value once the round is over: the leftovers to the last capturer, the most cards."""
    to_mine, to_theirs = _round_points(board, last, mine, theirs, rules)
    return to_mine - to_theirs


@njit(cache=True)
def _game_over(
    board: int,
    last: int,
    mine: int,
    theirs: int,
    rules: np.ndarray,
    equity: np.ndarray,
    points_mine: int,
    points_theirs: int,
) -> int:
    """The value once the round is over with the ``equity`` objective: my side's chance of
    winning the game from the sides' totals at the round's end (``equity[mine, theirs]``, the
    totals clipped to its last row and column). ``points_*``: the totals before the round's
    last points (``_round_points``)."""
    to_mine, to_theirs = _round_points(board, last, mine, theirs, rules)
    return equity_at(equity, points_mine + to_mine, points_theirs + to_theirs)


@njit(cache=True)
def _play(
    mover: int,
    card: int,
    capture: int,
    board: int,
    last: int,
    mine: int,
    theirs: int,
    plays: int,
    rules: np.ndarray,
) -> tuple[int, int, int, int, int]:
    """``mover`` plays ``card`` taking ``capture`` (0: a trail): the points it makes for my side
    (negative for the other side's: the engine's ``capture_points``), then the board, last
    capturer and pile sizes after it."""
    gain = 0
    if capture != 0:
        gain = _gain(card, capture, board, plays, rules)
        taken = popcount(capture) + 1
        if mover % 2 == 0:
            mine += taken
        else:
            theirs += taken
            gain = -gain
        board ^= capture
        last = mover
    else:
        board |= 1 << card
    return gain, board, last, mine, theirs


# The search path: one stack frame per position on it, a row of these int64 fields.
(
    F_MOVER,
    F_BOARD,
    F_LAST,
    F_MINE,
    F_THEIRS,
    F_PLAYS,
    F_ALPHA,
    F_BETA,
    F_BEST,
    F_REST,
    F_CARD,
    F_COUNT,
    F_NEXT,
    F_GAIN,
    F_HELD,
    F_POINTS_MINE,
    F_POINTS_THEIRS,
) = range(17)
FRAME_SIZE = 17


@njit(cache=True)
def _enter(
    frames: np.ndarray,
    d: int,
    hands: np.ndarray,
    mover: int,
    board: int,
    last: int,
    mine: int,
    theirs: int,
    plays: int,
    alpha: int,
    beta: int,
    points_mine: int,
    points_theirs: int,
) -> None:
    """Start frame ``d`` on a position whose mover holds a card, with the window ``(alpha,
    beta)``: no option tried yet. ``points_*``: each side's total so far (the equity
    objective's; 0 with the point objective)."""
    frames[d, F_MOVER] = mover
    frames[d, F_BOARD] = board
    frames[d, F_LAST] = last
    frames[d, F_MINE] = mine
    frames[d, F_THEIRS] = theirs
    frames[d, F_PLAYS] = plays
    frames[d, F_ALPHA] = alpha
    frames[d, F_BETA] = beta
    frames[d, F_BEST] = -_INF if mover % 2 == 0 else _INF
    frames[d, F_REST] = hands[mover]
    frames[d, F_COUNT] = 0
    frames[d, F_NEXT] = 0
    frames[d, F_POINTS_MINE] = points_mine
    frames[d, F_POINTS_THEIRS] = points_theirs


@njit(cache=True)
def _value(
    hands: np.ndarray,
    seats: int,
    mover: int,
    board: int,
    last: int,
    mine: int,
    theirs: int,
    plays: int,
    rules: np.ndarray,
    frames: np.ndarray,
    caps: np.ndarray,
    work: np.ndarray,
    deal: np.ndarray,
    count: np.ndarray,
    equity: np.ndarray,
    points_mine: int,
    points_theirs: int,
) -> int:
    """Value of the position with ``mover`` to play, under best play to the round's end: minimax
    with alpha-beta pruning, the position itself searched with a full window (so exact).
    ``frames`` (``[depth, FRAME_SIZE]``) and ``caps`` (``[depth, SLOTS_PER_CARD]``) hold a row
    per play left; ``hands`` is restored on return. ``deal``: the hands of one more deal, dealt
    when every hand is empty (all zero: none; the round ends there). ``count[0]`` is increased
    by the number of plays searched. ``equity`` empty (shape ``(0, 0)``): the value is the rest
    of the round's point difference; else it is ``_game_over``'s, from each side's total so far
    ``points_mine`` and ``points_theirs``."""
    game = equity.shape[0] > 0
    pending = False
    for seat in range(seats):
        pending |= deal[seat] != 0
    if hands[mover] == 0:  # the round is over
        if game:
            return _game_over(board, last, mine, theirs, rules, equity, points_mine, points_theirs)
        return _round_over(board, last, mine, theirs, rules)
    d = 0
    dealt_at = -1  # the frame whose play emptied the hands and dealt ``deal``
    _enter(frames, 0, hands, mover, board, last, mine, theirs, plays, -_INF, _INF,
           points_mine, points_theirs)  # fmt: skip
    value = 0
    returning = False  # whether ``value`` is that of frame d's latest option, to take in
    while True:
        mover = frames[d, F_MOVER]
        if returning:
            returning = False
            if d == dealt_at:  # back before the deal: the hands are empty again
                hands[:seats] = 0
                dealt_at = -1
            if not game:
                value += frames[d, F_GAIN]
            hands[mover] = frames[d, F_HELD]
            best = frames[d, F_BEST]
            if mover % 2 == 0:
                if value > best:
                    frames[d, F_BEST] = value
                    if value > frames[d, F_ALPHA]:
                        frames[d, F_ALPHA] = value
            elif value < best:
                frames[d, F_BEST] = value
                if value < frames[d, F_BETA]:
                    frames[d, F_BETA] = value
            if frames[d, F_ALPHA] >= frames[d, F_BETA]:  # a cut: this frame is done
                value = frames[d, F_BEST]
                if d == 0:
                    return value
                d -= 1
                returning = True
                continue
        board = frames[d, F_BOARD]
        if frames[d, F_NEXT] >= frames[d, F_COUNT]:  # the current card's options are done
            rest = frames[d, F_REST]
            if rest == 0:  # every option is done
                value = frames[d, F_BEST]
                if d == 0:
                    return value
                d -= 1
                returning = True
                continue
            card = popcount((rest & -rest) - 1)
            frames[d, F_REST] = rest & (rest - 1)
            found = card_captures(card, board, caps[d], _SLOTS, work)
            if found < 0:
                raise RuntimeError("board too large for the capture search")
            if found == 0:
                caps[d, 0] = 0
                found = 1
            frames[d, F_CARD] = card
            frames[d, F_COUNT] = found
            frames[d, F_NEXT] = 0
        card = frames[d, F_CARD]
        capture = caps[d, frames[d, F_NEXT]]
        frames[d, F_NEXT] += 1
        count[0] += 1
        plays = frames[d, F_PLAYS]
        gain, board, last, mine, theirs = _play(
            mover,
            card,
            capture,
            board,
            frames[d, F_LAST],
            frames[d, F_MINE],
            frames[d, F_THEIRS],
            plays,
            rules,
        )
        held = hands[mover]
        hands[mover] = held & ~(1 << card)
        frames[d, F_GAIN] = gain
        frames[d, F_HELD] = held
        child = (mover + 1) % seats
        points_mine = frames[d, F_POINTS_MINE] + max(gain, 0)
        points_theirs = frames[d, F_POINTS_THEIRS] + max(-gain, 0)
        if hands[child] == 0:
            if not pending or dealt_at >= 0:  # the round is over after this play
                if game:
                    value = _game_over(
                        board, last, mine, theirs, rules, equity, points_mine, points_theirs
                    )
                else:
                    value = _round_over(board, last, mine, theirs, rules)
                returning = True
                continue
            hands[:seats] = deal[:seats]  # every hand is empty: the next deal
            dealt_at = d
        alpha = frames[d, F_ALPHA]
        beta = frames[d, F_BETA]
        if not game:  # the child's values are the rest after this play's gain
            alpha -= gain
            beta -= gain
        d += 1
        _enter(frames, d, hands, child, board, last, mine, theirs, plays + 1, alpha, beta,
               points_mine, points_theirs)  # fmt: skip


# ------------------------------------------------------------------------- the position
# What ``read_position`` reads off an observation, one int64 row of these fields.
I_SEARCH = 0  # 1: a position searched here, 0: not (the other fields are then unset)
I_SEATS = 1  # 2 or 4
I_MINE = 2  # my hand
I_BOARD = 3
I_UNSEEN = 4
I_LAST = 5  # the last capturer's seat, or NOBODY
I_PLAYS = 6  # plays made this round
I_MINE_CARDS = 7  # cards in my side's piles
I_THEIRS_CARDS = 8  # cards in the other side's piles
I_SIZES = 9  # MAX_SEATS entries: cards in each seat's hand
I_RULES = I_SIZES + MAX_SEATS  # RULES_SIZE entries: the rules row (``bastra_env.compiled_rules``)
I_DECK = I_RULES + RULES_SIZE  # cards still to be dealt
I_TOTAL_MINE = I_DECK + 1  # my side's game score plus its points so far this round
I_TOTAL_THEIRS = I_DECK + 2  # the other side's (bastras counted at the bastra rule's points)
INFO_SIZE = I_DECK + 3

# Where the observation's pieces start (``bastra_env.layout.OFFSETS``), passed to the kernels
# as an int64 row of these fields rather than frozen into the compiled code.
(
    L_HAND,
    L_BOARD,
    L_CAPTURED,
    L_UNSEEN,
    L_PLAYS,
    L_DECK_LEFT,
    L_HAND_SIZES,
    L_LAST_CAPTURER,
    L_TABLE,
    L_RULES,
    L_SCORES,
    L_TARGET,
    L_BASTRAS,
) = range(13)
LAYOUT_PIECES = (
    "hand",
    "board",
    "captured",
    "unseen",
    "plays",
    "deck_left",
    "hand_sizes",
    "last_capturer",
    "table",
    "rules",
    "scores",
    "target",
    "bastras",
)
TWO_PLAYERS, TEAMS = 0, 3
"""Indices of the two-player and the team-game flags in the observation's ``table`` one-hot."""


@njit(cache=True)
def _plane(obs: np.ndarray, start: int) -> int:
    """The 52-card plane of ``obs`` at ``start`` as a card mask (entries above 0.5)."""
    mask = 0
    for c in range(NUM_CARDS):
        if obs[start + c] > 0.5:
            mask |= 1 << c
    return mask


@njit(cache=True)
def _rounded(x: float) -> int:
    """``round(x)`` of Python: to the nearest integer, halves to even."""
    return int(np.rint(x))


@njit(cache=True)
def read_position(
    obs: np.ndarray,
    action_mask: np.ndarray,
    max_team_cards: int,
    max_deck: int,
    layout: np.ndarray,
    scales: np.ndarray,
    cap: float,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The position a flat observation shows: ``(info, legal, unseen)``, ``info`` an
    ``int64[INFO_SIZE]`` row (``I_SEARCH`` 0 where the search declines: more than ``max_deck``
    cards left in the deck (any in a team game), three players, no legal action, unseen cards
    not all in hands and the deck, more than ``max_team_cards`` cards in my hand in a team
    game, a scoring rule at ``cap`` times its scale or more),
    ``legal`` the legal actions ascending, ``unseen`` the unseen cards ascending. ``layout``:
    the observation's offsets (``L_`` fields); ``scales``: the scoring rules' scales."""
    info = np.zeros(INFO_SIZE, dtype=np.int64)
    count = 0
    for a in range(action_mask.shape[0]):
        if action_mask[a] != 0:
            count += 1
    legal = np.empty(count, dtype=np.int64)
    count = 0
    for a in range(action_mask.shape[0]):
        if action_mask[a] != 0:
            legal[count] = a
            count += 1
    table = layout[L_TABLE]
    two_players = obs[table + TWO_PLAYERS] != 0
    left = _rounded(np.float64(obs[layout[L_DECK_LEFT]]) * DECK_LEFT_SCALE)
    if left > (max_deck if two_players else 0) or not (two_players or obs[table + TEAMS] != 0):
        return info, legal, legal[:0]
    unseen = _plane(obs, layout[L_UNSEEN])
    cards = np.empty(popcount(unseen), dtype=np.int64)
    rest = unseen
    for k in range(cards.shape[0]):
        cards[k] = popcount((rest & -rest) - 1)
        rest &= rest - 1
    if count == 0:
        return info, legal, cards
    seats = 2 if two_players else 4
    mine = _plane(obs, layout[L_HAND])
    hidden = 0
    for seat in range(seats):
        size = _rounded(np.float64(obs[layout[L_HAND_SIZES] + seat]) * 4.0)
        info[I_SIZES + seat] = size
        if seat > 0:
            hidden += size
    if popcount(unseen) != hidden + left:
        return info, legal, cards  # the unseen cards are not all in hands and the deck
    if seats == 4 and popcount(mine) > max_team_cards:
        return info, legal, cards
    rules = layout[L_RULES]
    for i in range(4):
        if obs[rules + i] >= cap:
            return info, legal, cards  # a scoring rule too large for the observation to tell
    row = info[I_RULES : I_RULES + RULES_SIZE]  # the rules as observed, "choose" assumed
    row[R_BASTRA] = _rounded(np.float64(obs[rules]) * scales[0])  # in the piece's order
    row[R_JACK_BASTRA] = _rounded(np.float64(obs[rules + 1]) * scales[1])
    row[R_MOST_CARDS] = _rounded(np.float64(obs[rules + 2]) * scales[2])
    row[R_LAST_PLAY_BASTRA] = 1 if obs[rules + 3] > 0.5 else 0
    piles = np.zeros(2)
    target = _rounded(np.float64(obs[layout[L_TARGET]]) * 100.0)
    totals = np.zeros(2, dtype=np.int64)
    for side in range(2):
        totals[side] = _rounded(np.float64(obs[layout[L_SCORES] + side]) * target)
    for seat in range(seats):
        for c in range(NUM_CARDS):
            piles[seat % 2] += obs[layout[L_CAPTURED] + NUM_CARDS * seat + c]
        taken = _plane(obs, layout[L_CAPTURED] + NUM_CARDS * seat)
        bastras = _rounded(np.float64(obs[layout[L_BASTRAS] + seat]) * 4.0)
        totals[seat % 2] += card_points(taken) + bastra_points(bastras, 0, row)
    last = NOBODY  # np.argmax over the seats' entries where any is set
    for seat in range(seats):
        if obs[layout[L_LAST_CAPTURER] + seat] != 0:
            last = 0
    if last == 0:
        top = obs[layout[L_LAST_CAPTURER]]
        for seat in range(1, seats):
            if obs[layout[L_LAST_CAPTURER] + seat] > top:
                top = obs[layout[L_LAST_CAPTURER] + seat]
                last = seat
    info[I_SEARCH] = 1
    info[I_SEATS] = seats
    info[I_MINE] = mine
    info[I_BOARD] = _plane(obs, layout[L_BOARD])
    info[I_UNSEEN] = unseen
    info[I_LAST] = last
    info[I_PLAYS] = _rounded(np.float64(obs[layout[L_PLAYS]]) * PLAYS_PER_ROUND)
    info[I_MINE_CARDS] = int(piles[0])
    info[I_THEIRS_CARDS] = int(piles[1])
    info[I_DECK] = left
    info[I_TOTAL_MINE] = totals[0]
    info[I_TOTAL_THEIRS] = totals[1]
    row[R_PLAYERS] = seats
    row[R_TEAMS] = int(seats == 4)
    row[R_TARGET] = target
    return info, legal, cards


# ------------------------------------------------------------------------- the search
@njit(cache=True)
def search(
    info: np.ndarray,
    orders: np.ndarray,
    actions: np.ndarray,
    deal_size: int,
    max_plays: int,
    equity: np.ndarray,
    totals: np.ndarray,
) -> tuple[np.ndarray, int]:
    """``(sums, deals)``: ``sums`` (``int64[len(actions)]``), per action (``SLOTS_PER_CARD *
    card + slot``) of seat 0, the sum over the first ``deals`` deals of its value under best play
    by every seat from then on; the deals are searched in order until ``max_plays`` plays were
    searched in all (each deal searched whole for every action; 0: no limit). ``info``: the
    position (``read_position``); ``orders``: one row per deal, the unseen cards in the order
    seats 1, 2, ... take them (``info[I_SIZES + seat]`` each), my hand being ``info[I_MINE]``,
    then, with ``deal_size`` > 0, the round's last deal: ``deal_size`` cards to each seat from
    seat 0 on, dealt once every hand is empty. ``equity``: ``int64[0, 0]`` for the point
    objective (a value is the rest of the round's point difference), else the table of my side's
    chance of winning the game (``_game_over``) from the sides' totals at the round's end, and
    ``totals`` (``int64[2]``) the totals so far: game scores plus this round's points."""
    seats = info[I_SEATS]
    board = info[I_BOARD]
    last = info[I_LAST]
    mine = info[I_MINE_CARDS]
    theirs = info[I_THEIRS_CARDS]
    plays = info[I_PLAYS]
    rules = info[I_RULES : I_RULES + RULES_SIZE].copy()
    work = np.empty(CAPTURE_WORK, dtype=np.int64)
    plies = popcount(info[I_MINE]) + orders.shape[1] + 1
    caps = np.zeros((plies, _SLOTS), dtype=np.int64)
    frames = np.zeros((plies, FRAME_SIZE), dtype=np.int64)
    root = np.zeros(_SLOTS, dtype=np.int64)
    sums = np.zeros(actions.shape[0], dtype=np.int64)
    hands = np.zeros(MAX_SEATS, dtype=np.int64)
    deal = np.zeros(MAX_SEATS, dtype=np.int64)
    none = np.zeros(MAX_SEATS, dtype=np.int64)
    count = np.zeros(1, dtype=np.int64)
    used = 0
    for d in range(orders.shape[0]):
        at = 0
        for seat in range(1, seats):
            hand = 0
            for k in range(at, at + info[I_SIZES + seat]):
                hand |= 1 << orders[d, k]
            hands[seat] = hand
            at += info[I_SIZES + seat]
        for seat in range(seats if deal_size > 0 else 0):
            hand = 0
            for k in range(at, at + deal_size):
                hand |= 1 << orders[d, k]
            deal[seat] = hand
            at += deal_size
        for a in range(actions.shape[0]):
            card = actions[a] // _SLOTS
            slot = actions[a] % _SLOTS
            found = card_captures(card, board, root, _SLOTS, work)
            if found < 0:
                raise RuntimeError("board too large for the capture search")
            capture = 0
            if found > 0:
                if slot >= found:
                    raise IndexError("no such capture for this action")
                capture = root[slot]
            gain, after, last_after, mine_after, theirs_after = _play(
                0, card, capture, board, last, mine, theirs, plays, rules
            )
            hands[0] = info[I_MINE] & ~(1 << card)
            ends_deal = deal_size > 0 and hands[1 % seats] == 0  # my play empties the hands
            if ends_deal:
                hands[:seats] = deal[:seats]
            after_mine = totals[0] + max(gain, 0)
            after_theirs = totals[1] + max(-gain, 0)
            value = _value(
                hands,
                seats,
                1 % seats,
                after,
                last_after,
                mine_after,
                theirs_after,
                plays + 1,
                rules,
                frames,
                caps,
                work,
                none if ends_deal else deal,
                count,
                equity,
                after_mine,
                after_theirs,
            )
            sums[a] += value if equity.shape[0] > 0 else gain + value
            if ends_deal:
                hands[:seats] = 0
        used += 1
        if max_plays > 0 and count[0] >= max_plays:
            break
    return sums, used
