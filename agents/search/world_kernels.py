"""Compiled kernels of the search players (``agents.search``): determinized positions, rollouts,
perfect-information Monte Carlo and single-observer information-set MCTS, on the rules kernels.

A *position* is a state row of the compiled rules (``bastra_env.compiled_rules``) rebuilt from one
seat's observation with that seat as seat 0 (the rules do not care where the table starts), its
unseen cards left out; a *determinization* fills the other hands and the deck's rest with one
ordering of the unseen cards. From there every play is the real rules' ``apply_move``, to the end
of the round, whose point difference (the searching side's round total minus the other sides'
mean) is the value.

The rollout policy plays one ply ahead with the full (determinized) information: the points and
cards a play takes, minus the best the next player's actual hand could then take off the board it
leaves (a bastra counted at its value), ties to the lowest action. A *modelled* rollout plays the
other sides' seats by the heuristic player instead, on their own observations (what they cannot
see, they estimate), as the inference models them. The kernels are compiled on first use and
cached on disk (``cache=True``).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from agents.players.observation_kernels import (
    CARD_VALUE,
    JACK_KEEP,
    NUM_ESTIMATES,
    _play_estimates,
    heuristic_index,
)
from agents.search.endgame_kernels import EQUITY_SCALE, equity_at
from bastra_env.compiled_rules import (
    BASTRAS,
    BOARD,
    CAPTURE_WORK,
    CAPTURED,
    CURRENT,
    DEAL_CAPTURES,
    DEAL_CARDS,
    DECK,
    DECK_LEN,
    DECK_POS,
    HAND_SIZE,
    HANDS,
    JACK_BASTRA,
    JACK_BASTRAS,
    LAST_CAPTURER,
    MOVE_ACTIONS,
    MOVE_CAPTURES,
    NUM_MOVES,
    PLAYS,
    PLAYS_PER_ROUND,
    R_PLAYERS,
    R_TEAMS,
    RES_TOTAL,
    SCORES,
    apply_move,
    bastra_points,
    capture_points,
    card_captures,
    card_points,
    encode,
    legal_slots,
    lowest_card,
    popcount,
    scored_bastra,
    side_difference,
    side_of,
    splitmix64,
)
from bastra_env.layout import (
    MAX_LEGAL,
    NUM_ACTIONS,
    OBSERVATION_SIZE,
    SLOTS_PER_CARD,
)

CARD_WEIGHT = 0.25
"""Points-equivalent of one captured card in the rollout policy (the most-cards bonus)."""
WORK_SIZE = CAPTURE_WORK + SLOTS_PER_CARD
VALUE_SCALE = 26.0
"""Round point differences are divided by this in the tree (UCB's exploration is on that scale)."""


# ------------------------------------------------------------------------- randomness
@njit(cache=True)
def _next(rng: np.ndarray) -> np.uint64:
    """The next 64 bits of the stream whose state is ``rng[0]``: splitmix64's output where
    ``rng`` has a second entry (``decision_seed(..., uniform=True)``), else the yardsticks'
    stream, which returns splitmix64's *state* (a Weyl sequence: consecutive draws a fixed step
    apart, so its shuffles are far from uniform); kept so the yardsticks' moves never change."""
    rng[0] = rng[0] + np.uint64(0x9E3779B97F4A7C15)
    state, output = splitmix64(rng[0])
    if rng.shape[0] > 1:
        return output
    return state


@njit(cache=True)
def _below(rng: np.ndarray, n: int) -> int:
    return int(_next(rng) % np.uint64(n))


@njit(cache=True)
def _shuffle(values: np.ndarray, rng: np.ndarray) -> None:
    """Fisher-Yates on ``rng``, in place."""
    for i in range(values.shape[0] - 1, 0, -1):
        j = _below(rng, i + 1)
        values[i], values[j] = values[j], values[i]


@njit(cache=True)
def determinize(
    position: np.ndarray, cards: np.ndarray, sizes: np.ndarray, rng: np.ndarray, out: np.ndarray
) -> None:
    """``out``: ``position`` with the unseen ``cards`` shuffled (Fisher-Yates on ``rng``) and
    dealt: ``sizes[s]`` to seat ``s`` (seats 1..n-1), the rest to the deck from its position."""
    out[:] = position
    order = cards.copy()
    _shuffle(order, rng)
    at = 0
    n = sizes.shape[0]
    for seat in range(1, n):
        hand = 0
        for _ in range(sizes[seat]):
            hand |= 1 << order[at]
            at += 1
        out[HANDS + seat] = hand
    pos = out[DECK_POS]
    for k in range(at, order.shape[0]):
        out[DECK + pos + k - at] = order[k]


# ------------------------------------------------------------------------- the rollout policy
@njit(cache=True)
def _take_value(card: int, capture: int, board: int, plays: int, rules: np.ndarray) -> float:
    """What taking ``capture`` (non-zero) off ``board`` with ``card`` is worth to the taker: the
    points it makes (the engine's ``capture_points``) and ``CARD_WEIGHT`` a card taken."""
    taken = popcount(capture) + 1
    return capture_points(card, capture, board, plays, rules) + CARD_WEIGHT * taken


@njit(cache=True)
def _best_take(hand: int, board: int, plays: int, rules: np.ndarray, work: np.ndarray) -> float:
    """The most any card of ``hand`` can take off ``board`` (0 when none can)."""
    caps = work[CAPTURE_WORK:]
    best = 0.0
    while hand:
        card = lowest_card(hand)
        hand &= hand - 1
        found = card_captures(card, board, caps, SLOTS_PER_CARD, work)
        for k in range(found):
            value = _take_value(card, caps[k], board, plays, rules)
            if value > best:
                best = value
    return best


@njit(cache=True)
def rollout_index(state: np.ndarray, rules: np.ndarray, work: np.ndarray) -> int:
    """The rollout policy's choice among the state's legal moves (``legal_slots`` written)."""
    n = rules[R_PLAYERS]
    seat = state[CURRENT]
    nxt = state[HANDS + (seat + 1) % n]
    board = state[BOARD]
    plays = state[PLAYS]
    best = -1e18
    choice = 0
    for i in range(state[NUM_MOVES]):
        action = state[MOVE_ACTIONS + i]
        capture = state[MOVE_CAPTURES + i]
        card = action // SLOTS_PER_CARD
        if capture != 0:
            gain = _take_value(card, capture, board, plays, rules)
            after = board ^ capture
        else:
            gain = -0.01 * card_points(1 << card) - 0.001 * (card >> 2)  # trail the least
            after = board | (1 << card)
        threat = 0.0
        if after != 0 and plays + 1 < PLAYS_PER_ROUND:
            threat = _best_take(nxt, after, plays + 1, rules, work)
        score = gain - threat
        if score > best + 1e-12:
            best = score
            choice = i
    return choice


@njit(cache=True)
def round_value(state: np.ndarray, rules: np.ndarray, me: int) -> float:
    """The ended round's point difference for ``me``'s side: its total minus the other sides'
    mean (the ``RES_`` block, by the engine's ``side_difference``)."""
    return side_difference(state[RES_TOTAL:], rules, side_of(rules, me))


@njit(cache=True)
def end_value(state: np.ndarray, rules: np.ndarray, equity: np.ndarray) -> float:
    """What the searching side (seat 0's) makes of the ended round: its point difference
    (``round_value``) where ``equity`` is empty (``POINTS_ONLY``); else, two sides, 100 times
    its chance of winning the game from the totals reached (``equity_at``, in
    ``EQUITY_SCALE`` units) plus a hundredth of the point difference, which decides between
    moves the chance does not tell apart."""
    points = round_value(state, rules, 0)
    if equity.shape[0] == 0:
        return points
    chance = equity_at(equity, state[SCORES], state[SCORES + 1])
    return 100.0 * chance / EQUITY_SCALE + 0.01 * points


@njit(cache=True)
def _mine(rules: np.ndarray, seat: int) -> bool:
    """Whether ``seat`` is on the searching side (seat 0's: seat 0, and seat 2 in teams)."""
    return seat == 0 or (rules[R_TEAMS] != 0 and seat == 2)


@njit(cache=True)
def model_index(
    state: np.ndarray,
    rules: np.ndarray,
    count: int,
    work: np.ndarray,
    obs: np.ndarray,
    mask: np.ndarray,
    est: np.ndarray,
) -> int:
    """The opponent model's choice among the state's ``count`` legal moves (``legal_slots``
    written): the heuristic player's on the mover's own observation (``agents.players.heuristic``),
    the rollout policy's where its estimates cannot be made. ``obs``, ``mask``, ``est``:
    scratch."""
    if count == 1:
        return 0
    encode(state, rules, state[CURRENT], obs, mask)
    if _play_estimates(obs, state[MOVE_ACTIONS : MOVE_ACTIONS + count], CARD_VALUE, JACK_KEEP,
                       est) == 0:  # fmt: skip
        return heuristic_index(est, count)
    return rollout_index(state, rules, work)


@njit(cache=True)
def rollout(
    state: np.ndarray,
    rules: np.ndarray,
    work: np.ndarray,
    obs: np.ndarray,
    mask: np.ndarray,
    est: np.ndarray,
    modelled: bool = False,
) -> None:
    """Play the rollout policy to the end of the round (the state is left just after it).
    ``modelled``: the other sides' seats play the heuristic player on their own observation
    instead (``agents.players.heuristic``: the best gain less the next player's expected best reply,
    estimated from the cards that seat cannot see), the opponent model of the inference; my
    side's seats keep the rollout policy. ``obs``, ``mask``, ``est``: scratch for the model."""
    while True:
        count = legal_slots(state, rules, work)
        if modelled and not _mine(rules, state[CURRENT]):
            i = model_index(state, rules, count, work, obs, mask, est)
        else:
            i = rollout_index(state, rules, work)
        action = state[MOVE_ACTIONS + i]
        if apply_move(state, rules, action // SLOTS_PER_CARD, state[MOVE_CAPTURES + i]):
            return


# ------------------------------------------------------------------------- PIMC
@njit(cache=True)
def _add_world(
    base: np.ndarray,
    n: int,
    world: np.ndarray,
    rules: np.ndarray,
    state: np.ndarray,
    work: np.ndarray,
    sums: np.ndarray,
    modelled: bool,
    equity: np.ndarray,
    obs: np.ndarray,
    mask: np.ndarray,
    est: np.ndarray,
) -> None:
    """Add to ``sums[i]`` the value (``end_value`` with ``equity``) of ``base``'s legal move
    ``i`` (of ``n``, listed by ``legal_slots``) played in ``world`` and rolled out to the
    round's end (``rollout``, with ``modelled`` and its scratch ``obs``, ``mask``, ``est``)."""
    for i in range(n):
        state[:] = world
        action = base[MOVE_ACTIONS + i]
        if not apply_move(state, rules, action // SLOTS_PER_CARD, base[MOVE_CAPTURES + i]):
            rollout(state, rules, work, obs, mask, est, modelled)
        sums[i] += end_value(state, rules, equity)


@njit(cache=True)
def uniform_worlds(
    position: np.ndarray, cards: np.ndarray, sizes: np.ndarray, samples: int, rng: np.ndarray
) -> np.ndarray:
    """``int64[samples, STATE_SIZE]``: ``samples`` determinizations of ``position``
    (``determinize``, one after another on ``rng``)."""
    worlds = np.empty((samples, position.shape[0]), dtype=np.int64)
    for w in range(samples):
        determinize(position, cards, sizes, rng, worlds[w])
    return worlds


@njit(cache=True)
def pimc_worlds(
    position: np.ndarray,
    rules: np.ndarray,
    worlds: np.ndarray,
    sums: np.ndarray,
    modelled: bool,
    equity: np.ndarray,
) -> None:
    """Add to ``sums[i]`` (legal move ``i`` of ``position``, as ``legal_slots`` orders them) its
    value (``end_value``) on each determinization (row of ``worlds``), every move on the same ones
    (``modelled``: the other sides' rollouts by the heuristic player, as ``rollout`` says)."""
    work = np.empty(WORK_SIZE, dtype=np.int64)
    base = position.copy()
    n = legal_slots(base, rules, work)
    state = np.empty_like(position)
    obs = np.empty(OBSERVATION_SIZE if modelled else 1, dtype=np.float32)
    mask = np.empty(NUM_ACTIONS, dtype=np.int8)
    est = np.empty((MAX_LEGAL, NUM_ESTIMATES))
    for w in range(worlds.shape[0]):
        _add_world(base, n, worlds[w], rules, state, work, sums, modelled, equity, obs, mask,
                   est)  # fmt: skip


# ------------------------------------------------------------------------- the modelled endgame
@njit(cache=True)
def _model_moves(
    state: np.ndarray,
    rules: np.ndarray,
    work: np.ndarray,
    obs: np.ndarray,
    mask: np.ndarray,
    est: np.ndarray,
) -> bool:
    """Play the other sides' seats by the opponent model (the heuristic player on each seat's own
    observation) until my side is to move; returns whether the round ended on the way."""
    while not _mine(rules, state[CURRENT]):
        count = legal_slots(state, rules, work)
        i = model_index(state, rules, count, work, obs, mask, est)
        action = state[MOVE_ACTIONS + i]
        if apply_move(state, rules, action // SLOTS_PER_CARD, state[MOVE_CAPTURES + i]):
            return True
    return False


@njit(cache=True)
def banked_difference(state: np.ndarray, rules: np.ndarray) -> float:
    """The points already made this round (card points captured, bastras), my side's less the
    other sides' mean, as ``round_value`` weighs the sides: what the endgame search's point values
    leave out (they are the rest of the round's point difference)."""
    n = rules[R_PLAYERS]
    made = np.zeros(n, dtype=np.int64)
    for seat in range(n):
        made[side_of(rules, seat)] += card_points(state[CAPTURED + seat]) + bastra_points(
            state[BASTRAS + seat], state[JACK_BASTRAS + seat], rules
        )
    return side_difference(made, rules, 0)


@njit(cache=True)
def _chance_or_points(
    state: np.ndarray, rules: np.ndarray, equity: np.ndarray, banked: float
) -> float:
    """The ended round's value as the endgame search gives it: my side's point difference from
    the search's start (``round_value`` less ``banked``) where ``equity`` is empty, else its
    chance (0 to 1) of winning the game from the totals reached."""
    if equity.shape[0] == 0:
        return round_value(state, rules, 0) - banked
    return equity_at(equity, state[SCORES], state[SCORES + 1]) / EQUITY_SCALE


@njit(cache=True)
def _list_moves(
    state: np.ndarray,
    rules: np.ndarray,
    work: np.ndarray,
    actions: np.ndarray,
    captures: np.ndarray,
) -> int:
    """Copy ``state``'s legal moves (``legal_slots``) into ``actions`` and ``captures``."""
    n = legal_slots(state, rules, work)
    actions[:n] = state[MOVE_ACTIONS : MOVE_ACTIONS + n]
    captures[:n] = state[MOVE_CAPTURES : MOVE_CAPTURES + n]
    return n


@njit(cache=True)
def modelled_endgame(world: np.ndarray, rules: np.ndarray, equity: np.ndarray,
                     out: np.ndarray) -> int:  # fmt: skip
    """``out[i]``: the value (``_chance_or_points``: as ``agents.search.endgame.solve`` gives it,
    the rest of the round's point difference or the chance of winning the game) of ``world``'s legal
    move ``i`` (seat 0 to move, as ``legal_slots`` orders them) when the other sides play the
    opponent model to the round's end and my side (my partner too) answers with the best plays
    against it, every hand of ``world`` known: a depth-first search over my side's plays alone,
    the model's plays forced between them. Returns the number of legal moves. Meant for the
    round's last deal, where a search over my side's plays is small."""
    work = np.empty(WORK_SIZE, dtype=np.int64)
    obs = np.empty(OBSERVATION_SIZE, dtype=np.float32)
    mask = np.empty(NUM_ACTIONS, dtype=np.int8)
    est = np.empty((MAX_LEGAL, NUM_ESTIMATES))
    depth_cap = PLAYS_PER_ROUND + 1
    states = np.empty((depth_cap, world.shape[0]), dtype=np.int64)
    actions = np.empty((depth_cap, MAX_LEGAL), dtype=np.int64)
    captures = np.empty((depth_cap, MAX_LEGAL), dtype=np.int64)
    count = np.zeros(depth_cap, dtype=np.int64)
    at = np.zeros(depth_cap, dtype=np.int64)
    best = np.full(depth_cap, -np.inf)
    states[0] = world
    banked = banked_difference(world, rules)
    count[0] = _list_moves(states[0], rules, work, actions[0], captures[0])
    depth = 0
    while True:
        if at[depth] == count[depth]:  # every move of this node searched: back up its best
            if depth == 0:
                return count[0]
            depth -= 1
            value = best[depth + 1]
        else:
            i = at[depth]
            at[depth] += 1
            child = states[depth + 1]
            child[:] = states[depth]
            action = actions[depth, i]
            ended = apply_move(child, rules, action // SLOTS_PER_CARD, captures[depth, i])
            if not ended:
                ended = _model_moves(child, rules, work, obs, mask, est)
            if not ended:  # my side to move again: search its moves
                depth += 1
                count[depth] = _list_moves(child, rules, work, actions[depth], captures[depth])
                at[depth] = 0
                best[depth] = -np.inf
                continue
            value = _chance_or_points(child, rules, equity, banked)
        if depth == 0:
            out[at[0] - 1] = value
        best[depth] = max(best[depth], value)


# ------------------------------------------------------------------------- inference
# What the other seats' plays of this deal say of their hands: a world (every hand dealt) is
# rewound play by play through the deal's public history (the DEAL_ block of the position), and
# each play of another seat is scored by an opponent model, the heuristic player's estimates
# (``agents.players.heuristic``: gain minus the next player's expected best reply) as a softmax at
# temperature ``tau`` mixed with ``eps`` of a uniform choice. A hand that would have made a
# bastra its holder passed up is unlikely; a hand that holds the card played is required.
@njit(cache=True)
def _undo(state: np.ndarray, rules: np.ndarray, k: int, seat: int) -> None:
    """Take back the deal's ``k``-th play (by ``seat``), the latest one made in ``state``."""
    card = state[DEAL_CARDS + k]
    capture = state[DEAL_CAPTURES + k]
    bit = 1 << card
    state[HANDS + seat] |= bit
    if capture != 0:
        board = state[BOARD] | capture  # the board the play was made on
        kind = scored_bastra(card, capture, board, state[PLAYS] - 1, rules)
        if kind == JACK_BASTRA and state[JACK_BASTRAS + seat] > 0:
            state[JACK_BASTRAS + seat] -= 1
        elif kind != 0 and state[BASTRAS + seat] > 0:  # observed positions count both kinds
            state[BASTRAS + seat] -= 1
        state[BOARD] = board
        state[CAPTURED + seat] &= ~(capture | bit)
    else:
        state[BOARD] &= ~bit
    state[PLAYS] -= 1
    state[CURRENT] = seat


@njit(cache=True)
def rewind_play(
    state: np.ndarray,
    rules: np.ndarray,
    k: int,
    first: int,
    obs: np.ndarray,
    mask: np.ndarray,
    work: np.ndarray,
) -> tuple[int, int]:
    """Undo the deal's play ``k`` (made by seat ``(first + k) % n``) in ``state``, which holds
    the deal's plays up to it. Where another seat than 0 made it, the state before it is encoded
    for that seat into ``obs``/``mask`` and the return is (its legal moves' count, the slot of the
    play made among them, -1 for a capture past the encoding's slots); seat 0's own play: (0, -1)
    with nothing encoded (my plays tell nothing of the other hands)."""
    n = rules[R_PLAYERS]
    seat = (first + k) % n
    _undo(state, rules, k, seat)
    if seat == 0:
        return 0, -1
    last = -1  # who captured last before this play, as far as this deal shows
    for j in range(k - 1, -1, -1):
        if state[DEAL_CAPTURES + j] != 0:
            last = (first + j) % n
            break
    state[LAST_CAPTURER] = last
    count = legal_slots(state, rules, work)
    encode(state, rules, seat, obs, mask)
    card = state[DEAL_CARDS + k]
    capture = state[DEAL_CAPTURES + k]
    chosen = -1
    for i in range(count):
        if (
            state[MOVE_ACTIONS + i] // SLOTS_PER_CARD == card
            and state[MOVE_CAPTURES + i] == capture
        ):
            chosen = i
    return count, chosen


@njit(cache=True)
def deal_log_likelihood(
    world: np.ndarray,
    position: np.ndarray,
    rules: np.ndarray,
    tau: float,
    eps: float,
    state: np.ndarray,
    obs: np.ndarray,
    mask: np.ndarray,
    est: np.ndarray,
    work: np.ndarray,
) -> float:
    """Log-probability, under the opponent model (module notes), of the other seats' plays since
    the latest deal, had their hands been ``world``'s (a determinization of ``position``, seat 0
    to move). ``state``, ``obs``, ``mask``, ``est``, ``work``: scratch."""
    n = rules[R_PLAYERS]
    made = position[PLAYS] % (HAND_SIZE * n)
    if made == 0:
        return 0.0
    first = (position[CURRENT] - made) % n
    state[:] = world
    total = 0.0
    for k in range(made - 1, -1, -1):
        count, chosen = rewind_play(state, rules, k, first, obs, mask, work)
        if count == 0:
            continue
        if chosen < 0:  # a capture past the encoding's slots: the uniform share alone
            total += np.log(eps / count)
            continue
        if _play_estimates(obs, state[MOVE_ACTIONS : MOVE_ACTIONS + count], CARD_VALUE,
                           JACK_KEEP, est) != 0:  # fmt: skip
            total += np.log(1.0 / count)
            continue
        top = -1e300
        for i in range(count):
            top = max(top, est[i, 0] - est[i, 1])
        z = 0.0
        for i in range(count):
            z += np.exp((est[i, 0] - est[i, 1] - top) / tau)
        p = np.exp((est[chosen, 0] - est[chosen, 1] - top) / tau) / z
        total += np.log((1.0 - eps) * p + eps / count)
    return total


@njit(cache=True)
def _likelihood_scratch(
    position: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The scratch arrays ``deal_log_likelihood`` takes: state, obs, mask, est, work."""
    return (
        np.empty_like(position),
        np.empty(OBSERVATION_SIZE, dtype=np.float32),
        np.empty(NUM_ACTIONS, dtype=np.int8),
        np.empty((MAX_LEGAL, NUM_ESTIMATES)),
        np.empty(WORK_SIZE, dtype=np.int64),
    )


@njit(cache=True)
def inferred_worlds(
    position: np.ndarray,
    rules: np.ndarray,
    cards: np.ndarray,
    sizes: np.ndarray,
    candidates: int,
    rng: np.ndarray,
    tau: float,
    eps: float,
    out: np.ndarray,
) -> None:
    """Fill the rows of ``out`` with determinizations of ``position`` drawn in proportion to the
    likelihood of the deal's plays (``deal_log_likelihood``): ``candidates`` uniform ones are
    weighed, ``len(out)`` are resampled from them (systematic resampling), and each resampled
    world's deck is shuffled anew (the likelihood does not depend on it)."""
    worlds = np.empty((candidates, position.shape[0]), dtype=np.int64)
    logp = np.empty(candidates)
    state, obs, mask, est, work = _likelihood_scratch(position)
    for c in range(candidates):
        determinize(position, cards, sizes, rng, worlds[c])
        logp[c] = deal_log_likelihood(worlds[c], position, rules, tau, eps, state, obs, mask,
                                      est, work)  # fmt: skip
    resample_worlds(worlds, logp, rng, out)


@njit(cache=True)
def resample_worlds(worlds: np.ndarray, logp: np.ndarray, rng: np.ndarray, out: np.ndarray) -> None:
    """Fill the rows of ``out`` from the candidate ``worlds`` in proportion to ``exp(logp)``
    (systematic resampling on ``rng``), each row's deck shuffled anew."""
    top = logp.max()
    cumulative = np.cumsum(np.exp(logp - top))
    samples = out.shape[0]
    candidates = worlds.shape[0]
    step = cumulative[-1] / samples
    u = (_next(rng) >> np.uint64(11)) * (1.0 / 9007199254740992.0) * step
    c = 0
    for s in range(samples):
        while c < candidates - 1 and cumulative[c] < u:
            c += 1
        out[s] = worlds[c]
        u += step
        _shuffle(out[s, DECK + out[s, DECK_POS] : DECK + out[s, DECK_LEN]], rng)


@njit(cache=True)
def deal_fit(
    position: np.ndarray,
    rules: np.ndarray,
    cards: np.ndarray,
    sizes: np.ndarray,
    candidates: int,
    rng: np.ndarray,
    tau: float,
    eps: float,
) -> float:
    """How much better the opponent model (``tau``, ``eps``) explains the other seats' plays of
    this deal than a uniform choice among their legal plays: the log of the ratio of the two
    likelihoods (``deal_log_likelihood``), each averaged over the same ``candidates`` uniform
    determinizations (a log Bayes factor; 0 where no other seat has played since the deal)."""
    state, obs, mask, est, work = _likelihood_scratch(position)
    world = np.empty_like(position)
    model = np.empty(candidates)
    uniform = np.empty(candidates)
    for c in range(candidates):
        determinize(position, cards, sizes, rng, world)
        model[c] = deal_log_likelihood(world, position, rules, tau, eps, state, obs, mask, est,
                                       work)  # fmt: skip
        uniform[c] = deal_log_likelihood(world, position, rules, tau, 1.0, state, obs, mask, est,
                                         work)  # fmt: skip
    return _log_mean_exp(model) - _log_mean_exp(uniform)


@njit(cache=True)
def _log_mean_exp(values: np.ndarray) -> float:
    top = values.max()
    return top + np.log(np.mean(np.exp(values - top)))


# ------------------------------------------------------------------------- IS-MCTS
# the tree: one row per node
N_ACTION, N_PARENT, N_CHILD, N_NEXT, N_MOVER = range(5)
F_VISITS, F_VALUE, F_AVAIL, F_PRIOR = range(4)


def new_tree(capacity: int) -> tuple[np.ndarray, np.ndarray]:
    """Empty tree arrays for ``capacity`` nodes: the root is node 0."""
    links = np.full((capacity + 1, 5), -1, dtype=np.int64)
    stats = np.zeros((capacity + 1, 4), dtype=np.float64)
    return links, stats


@njit(cache=True)
def ismcts(
    position: np.ndarray,
    rules: np.ndarray,
    cards: np.ndarray,
    sizes: np.ndarray,
    iterations: int,
    rng: np.ndarray,
    links: np.ndarray,
    stats: np.ndarray,
    used: int,
    exploration: float,
    prior: np.ndarray,
    prior_weight: float,
) -> int:
    """Run ``iterations`` more iterations of single-observer IS-MCTS from ``position`` (seat 0
    to move) on the tree ``links``/``stats`` holding ``used`` nodes; returns the nodes in use.

    Each iteration draws one determinization, descends the tree over the moves legal in it
    (UCB1 with availability counts: a child's exploration term uses how often it was available,
    not its parent's visits; at the root, with ``prior_weight`` > 0, a PUCT term from ``prior``
    over the 208 actions), adds one node, rolls out to the end of the round and backs the round
    value up, each node scoring it for the side that chose its move."""
    work = np.empty(WORK_SIZE, dtype=np.int64)
    state = np.empty_like(position)
    obs = np.empty(1, dtype=np.float32)  # the rollouts' scratch for a model they do not use
    mask = np.empty(NUM_ACTIONS, dtype=np.int8)
    est = np.empty((MAX_LEGAL, NUM_ESTIMATES))
    path = np.empty(PLAYS_PER_ROUND + 2, dtype=np.int64)
    child_of = np.empty(MAX_LEGAL, dtype=np.int64)
    capacity = links.shape[0]
    team = rules[R_TEAMS] != 0
    for _ in range(iterations):
        determinize(position, cards, sizes, rng, state)
        node = 0
        depth = 0
        path[0] = 0
        ended = False
        while True:
            n = legal_slots(state, rules, work)
            untried = -1
            for i in range(n):
                action = state[MOVE_ACTIONS + i]
                child = links[node, N_CHILD]
                while child >= 0 and links[child, N_ACTION] != action:
                    child = links[child, N_NEXT]
                child_of[i] = child
                if child >= 0:
                    stats[child, F_AVAIL] += 1.0
                elif untried < 0:
                    untried = i
            mover = state[CURRENT]
            if untried >= 0 and used < capacity:
                if node == 0 and prior_weight > 0:  # expand the root in the prior's order
                    best = -1.0
                    for i in range(n):
                        p = prior[state[MOVE_ACTIONS + i]]
                        if child_of[i] < 0 and p > best:
                            best = p
                            untried = i
                child = used
                used += 1
                links[child, N_ACTION] = state[MOVE_ACTIONS + untried]
                links[child, N_PARENT] = node
                links[child, N_NEXT] = links[node, N_CHILD]
                links[child, N_MOVER] = mover
                links[node, N_CHILD] = child
                stats[child, F_AVAIL] = 1.0
                stats[child, F_PRIOR] = prior[state[MOVE_ACTIONS + untried]] if node == 0 else 0.0
                pick = untried
                expanded = True
            else:
                best = -1e18
                pick = 0
                for i in range(n):
                    child = child_of[i]
                    if child < 0:
                        continue
                    visits = stats[child, F_VISITS]
                    mean = stats[child, F_VALUE] / visits
                    score = mean + exploration * np.sqrt(np.log(stats[child, F_AVAIL]) / visits)
                    if node == 0 and prior_weight > 0:
                        score += (
                            prior_weight
                            * stats[child, F_PRIOR]
                            * np.sqrt(stats[child, F_AVAIL])
                            / (1.0 + visits)
                        )
                    if score > best:
                        best = score
                        pick = i
                child = child_of[pick]
                expanded = False
            action = state[MOVE_ACTIONS + pick]
            ended = apply_move(state, rules, action // SLOTS_PER_CARD, state[MOVE_CAPTURES + pick])
            depth += 1
            path[depth] = child
            node = child
            if ended or expanded:
                break
        if not ended:
            rollout(state, rules, work, obs, mask, est)
        value = round_value(state, rules, 0) / VALUE_SCALE
        for k in range(1, depth + 1):
            child = path[k]
            mover = links[child, N_MOVER]
            mine = (mover % 2 == 0) if team else (mover == 0)
            stats[child, F_VISITS] += 1.0
            stats[child, F_VALUE] += value if mine else -value
    return used


@njit(cache=True)
def root_visits(links: np.ndarray, stats: np.ndarray) -> np.ndarray:
    """``float64[208]``: the root's children's visits by action (0 where none)."""
    visits = np.zeros(NUM_ACTIONS)
    child = links[0, N_CHILD]
    while child >= 0:
        visits[links[child, N_ACTION]] = stats[child, F_VISITS]
        child = links[child, N_NEXT]
    return visits


@njit(cache=True)
def root_means(links: np.ndarray, stats: np.ndarray) -> np.ndarray:
    """``float64[208]``: the root's children's mean values (round points), NaN where none."""
    means = np.full(NUM_ACTIONS, np.nan)
    child = links[0, N_CHILD]
    while child >= 0:
        visits = stats[child, F_VISITS]
        if visits > 0:
            means[links[child, N_ACTION]] = VALUE_SCALE * stats[child, F_VALUE] / visits
        child = links[child, N_NEXT]
    return means
