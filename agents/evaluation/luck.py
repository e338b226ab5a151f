"""What luck contributed to a finished game: the corrections of variance-reduced evaluation.

A played game is walked again, event by event, through the engine's kernels (the deck from the
game's seed, the moves as played), and at every event a value function ``V`` of the full state
(``agents.learning.state_value``) is compared with its expectation over what could have happened
(AIVAT, Burch et al., AAAI 2018):

- **a deal** (the round's first deal with the board turned up, R5's jacks going to the bottom;
  each later deal of four cards a hand): the deck is a uniform shuffle, so the deal is any
  arrangement of the cards still unknown with equal chance (the jacks known at the bottom stay
  there). Correction: ``V(after the deal) - mean of V(after d)`` over ``samples`` deals ``d``
  drawn that way from the walk's own random stream (seeded by the game's seed). Each of the
  deal's cards is a chance event of the deck; pricing the deal as one event lets ``V`` see
  every hand at once, and ``V`` of a dealt position plays the deal out with each seat's rollout
  player (greedy for a greedy seat, a learned seat's own network, the heuristic otherwise),
  every card being known, then values where that leaves the game with the value network
  (:func:`_rollout_value`).
- **a seat whose move probabilities are known moves**: correction ``V(after the move) - sum over
  the legal moves m of p(m) V(after m)``. A deterministic seat's correction is 0; a seat whose
  probabilities are unknown gets none.

Each correction has mean zero whatever ``V`` is, so ``outcome - sum of corrections`` is an
unbiased estimate of the expected outcome; the better ``V`` predicts the outcome, the less of the
outcome's spread is left. ``V`` is from side 0's view: points ``scores[0] - scores[1]`` plus the
network's round points (the exact final difference once the game is over), and side 0's win
probability (1, 1/2 or 0 once over).

The walk is one compiled function per game (:func:`walk_game`); :func:`walk_games` runs games in
parallel, each game's figures independent of the others and of the thread count.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numba import njit, prange

from agents.learning.features import ACTION_FEATURES, MAX_LEGAL
from agents.learning.state_value import (
    MAX_ENTRIES,
    SCRATCH,
    V_BASTRA_POINTS,
    V_BOARD,
    V_BOTTOM,
    V_CAPTURED,
    V_CURRENT,
    V_DEALER,
    V_HANDS,
    V_LAST,
    V_PLAYS,
    V_SCORES,
    V_UNKNOWN,
    VIEW_SIZE,
    StateValue,
    first_layer,
    mlp_tail,
)
from agents.players.observation_kernels import (
    CARD_VALUE,
    JACK_KEEP,
    _action_inputs,
    greedy_rows,
    heuristic_rows,
)
from agents.search.endgame import POSITION_LAYOUT, POSITION_SCALES
from agents.search.endgame_kernels import (
    I_SEARCH,
    I_SEATS,
    I_TOTAL_MINE,
    I_TOTAL_THEIRS,
    read_position,
    search,
)
from bastra_env import Rules
from bastra_env.cards import FULL_DECK, NUM_CARDS
from bastra_env.compiled_rules import (
    BASTRAS,
    BOARD,
    CAPTURE_WORK,
    CAPTURED,
    CURRENT,
    DEALER,
    DECK,
    DECK_LEN,
    DECK_POS,
    DONE,
    HAND_SIZE,
    HANDS,
    JACK,
    JACK_BASTRAS,
    LAST_CAPTURER,
    MOVE_ACTIONS,
    MOVE_CAPTURES,
    PLAYS,
    R_BASTRA,
    R_JACK_BASTRA,
    R_PLAYERS,
    R_TARGET,
    RES_TOTAL,
    SCORES,
    STATE_SIZE,
    WINNER,
    apply_move,
    encode,
    find_move,
    legal_slots,
    new_game,
    rules_array,
    side_of,
    splitmix64,
    start_round,
)
from bastra_env.layout import (
    NUM_ACTIONS,
    OBSERVATION_SIZE,
    OBSERVED_CAP,
    OFFSETS,
    SLOTS_PER_CARD,
)
from bastra_env.vector import start_threading_layer

# the per-game figures walk_game returns (row of ``int`` FIGURES floats)
CHANCE_POINTS, CHANCE_WIN, DECISION_POINTS, DECISION_WIN = 0, 1, 2, 3
OUTCOME_POINTS, OUTCOME_WIN, CHANCE_EVENTS, DECISION_EVENTS, ROUNDS, STATUS = 4, 5, 6, 7, 8, 9
STAGES = 4
"""The chance corrections again, split by the deal's stage in its round (``STAGE_POINTS + i``,
``STAGE_WIN + i``): 0 the round's first deal, 1 a deal in the middle, 2 the last-but-one deal,
3 the last; they add up to ``CHANCE_POINTS`` and ``CHANCE_WIN``."""
STAGE_POINTS, STAGE_WIN = 10, 10 + STAGES
FIGURES = 10 + 2 * STAGES
"""``STATUS``: 0 the walk replayed the game; 1 a move was not legal in the replay (the moves do
not belong to this seed); 2 the moves ended before the game did."""
MAX_ROUNDS_RECORDED = 64
ROLLOUT_HEURISTIC, ROLLOUT_GREEDY, ROLLOUT_NETWORK = 0, 1, 2
"""The rollout players of the value function (``players`` of :func:`walk_game`):
``ROLLOUT_NETWORK + k`` is the policy network ``policies[k]`` (``k`` 0 or 1), played greedily."""
ENDGAME_NONE, ENDGAME_POINTS, ENDGAME_GAME = 0, 1, 2
"""What a seat's rollout plays once a two-player round's deck is empty (``endgames`` of
:func:`walk_game`): its rollout player; the endgame search on the round's points (minimax, as
the search players play it, the lowest action on a tie); the endgame search on the game's chance
(``objective="game"``, as the learned players with search play it, the network's logit breaking
a tie). With the deck empty every unseen card is in the other hand, so the rollout's search is
the player's own, move for move, where the player's endgame is minimax alone; a player that also
weighs the opponent model there (``:infer``, ``model_weight``) gets minimax alone, near its
move, and a learned seat whose network the walk does not hold breaks ties by the lowest action."""
_DECK_LEFT = OFFSETS["deck_left"].start
"""The observation's cards still to be dealt: 0 once the deck is empty."""
POLICY_ARRAYS = 13
"""The arrays of a policy network as the walk reads it (:func:`policy_arrays`)."""


def policy_arrays(model: Any) -> tuple | None:
    """A ``PolicyValueNet`` with two trunk layers as the walk's rollout player reads it: 13
    float32 arrays (the first layer and the action layer transposed, to read only the rows of the
    inputs that are not 0). ``None`` for a network of another shape (its seats roll out with the
    heuristic)."""
    import torch

    trunk = [m for m in model.trunk if isinstance(m, torch.nn.Linear)]
    if len(trunk) != 2:
        return None

    def f32(t: torch.Tensor) -> np.ndarray:
        return np.ascontiguousarray(t.detach().cpu().numpy(), dtype=np.float32)

    m = model
    return (
        f32(trunk[0].weight.T), f32(trunk[0].bias), f32(trunk[1].weight), f32(trunk[1].bias),
        f32(m.state_to_pair.weight), f32(m.state_to_pair.bias),
        f32(m.action_to_pair.weight.T), f32(m.action_to_pair.bias),
        f32(m.pair_head[1].weight), f32(m.pair_head[1].bias),
        f32(m.score.weight[0]), f32(m.score.bias), f32(m.summary_weights),
    )  # fmt: skip


def pack_policies(policies: Sequence[tuple]) -> tuple[np.ndarray, np.ndarray]:
    """At most two ``policy_arrays`` as the walk takes them: one flat float32 buffer and
    ``int64[2, POLICY_ARRAYS, 3]`` (offset, rows, columns of each array; network ``k`` of
    ``ROLLOUT_NETWORK + k``)."""
    if len(policies) > 2:
        raise ValueError(f"at most two rollout networks, got {len(policies)}")
    meta = np.zeros((2, POLICY_ARRAYS, 3), dtype=np.int64)
    parts: list[np.ndarray] = []
    offset = 0
    for k, arrays in enumerate(policies):
        for i, a in enumerate(arrays):
            rows, cols = (a.shape[0], a.shape[1]) if a.ndim == 2 else (a.shape[0], 1)
            meta[k, i] = offset, rows, cols
            parts.append(np.ascontiguousarray(a, dtype=np.float32).ravel())
            offset += a.size
    flat = np.concatenate(parts) if parts else np.zeros(0, dtype=np.float32)
    return flat, meta


@njit(cache=True)
def _part2(flat: np.ndarray, meta: np.ndarray, k: int, i: int) -> np.ndarray:
    o, r, c = meta[k, i, 0], meta[k, i, 1], meta[k, i, 2]
    return flat[o : o + r * c].reshape(r, c)


@njit(cache=True)
def _part1(flat: np.ndarray, meta: np.ndarray, k: int, i: int) -> np.ndarray:
    o, r = meta[k, i, 0], meta[k, i, 1]
    return flat[o : o + r]


@njit(cache=True, fastmath=True)
def _policy_scores(obs: np.ndarray, mask: np.ndarray, flat: np.ndarray, meta: np.ndarray,
                   k: int, actions: np.ndarray, scores: np.ndarray) -> None:  # fmt: skip
    """The logits of the policy network ``k`` of ``pack_policies`` in the flat observation
    ``obs [1, N]`` with ``mask [1, 208]``: ``actions [1, MAX_LEGAL]`` the legal actions (padded
    as ``action_inputs``), ``scores [MAX_LEGAL]`` their logits (``-inf`` on padding)."""
    w1t, b1, w2, b2 = _part2(flat, meta, k, 0), _part1(flat, meta, k, 1), \
        _part2(flat, meta, k, 2), _part1(flat, meta, k, 3)
    wsp, bsp, wapt, bap = _part2(flat, meta, k, 4), _part1(flat, meta, k, 5), \
        _part2(flat, meta, k, 6), _part1(flat, meta, k, 7)
    wph, bph, ws, bs = _part2(flat, meta, k, 8), _part1(flat, meta, k, 9), \
        _part1(flat, meta, k, 10), _part1(flat, meta, k, 11)
    summary = _part1(flat, meta, k, 12)
    features = np.empty((1, MAX_LEGAL, ACTION_FEATURES), dtype=np.float32)
    _action_inputs(obs, mask, CARD_VALUE, JACK_KEEP, actions, features)
    h1 = b1.copy()
    for i in range(w1t.shape[0]):
        x = obs[0, i]
        if x != 0.0:
            for j in range(h1.shape[0]):
                h1[j] += x * w1t[i, j]
    for j in range(h1.shape[0]):
        h1[j] = max(h1[j], 0.0)
    h2 = b2.copy()
    for j in range(h2.shape[0]):
        acc = h2[j]
        for i in range(h1.shape[0]):
            acc += w2[j, i] * h1[i]
        h2[j] = max(acc, 0.0)
    pair = bsp.copy()
    for j in range(pair.shape[0]):
        acc = pair[j]
        for i in range(h2.shape[0]):
            acc += wsp[j, i] * h2[i]
        pair[j] = acc
    width = pair.shape[0]
    p = np.empty(width, dtype=np.float32)
    tail = ACTION_FEATURES - summary.shape[0]
    for row in range(MAX_LEGAL):
        scores[row] = -np.inf
        action = actions[0, row]
        if action < 0 or action >= NUM_ACTIONS:
            continue
        for j in range(width):
            p[j] = pair[j] + bap[j]
        for k in range(ACTION_FEATURES):
            x = features[0, row, k]
            if x != 0.0:
                for j in range(width):
                    p[j] += x * wapt[k, j]
        for j in range(width):
            p[j] = max(p[j], 0.0)
        score = bs[0]
        for j in range(width):
            acc = bph[j]
            for i in range(width):
                acc += wph[j, i] * p[i]
            score += ws[j] * max(acc, 0.0)
        for k in range(summary.shape[0]):
            score += features[0, row, tail + k] * summary[k]
        scores[row] = score


@njit(cache=True)
def _policy_choice(obs: np.ndarray, mask: np.ndarray, flat: np.ndarray, meta: np.ndarray,
                   k: int) -> int:  # fmt: skip
    """The action the policy network ``k`` of ``pack_policies`` plays greedily in the flat
    observation ``obs [1, N]`` with ``mask [1, 208]``: its largest logit, the lowest action on a
    tie."""
    actions = np.empty((1, MAX_LEGAL), dtype=np.int64)
    scores = np.empty(MAX_LEGAL, dtype=np.float32)
    _policy_scores(obs, mask, flat, meta, k, actions, scores)
    best = -1
    best_score = -np.inf
    for row in range(MAX_LEGAL):
        action = actions[0, row]
        if action < 0 or action >= NUM_ACTIONS:
            continue
        score = scores[row]
        if score > best_score or (score == best_score and action < best):
            best_score = score
            best = action
    return best


@njit(cache=True)
def _endgame_choice(obs: np.ndarray, mask: np.ndarray, mode: int, equity: np.ndarray,
                    player: int, policies: tuple) -> int:  # fmt: skip
    """The move the endgame search ``mode`` (``ENDGAME_POINTS`` or ``ENDGAME_GAME``, whose
    table is ``equity``) makes in the flat observation ``obs [1, N]`` with ``mask [1, 208]``, as
    ``agents.search.endgame.solve`` searches the last deal; -1 where it does not search (cards in
    the deck, another table). A tie goes to the larger logit of the seat's network where
    ``player`` is one (``ROLLOUT_NETWORK + k``), else to the lowest action."""
    if obs[0, _DECK_LEFT] != 0.0:  # most rollout moves: no search, and nothing to allocate
        return -1
    info, legal, unseen = read_position(obs[0], mask[0], 0, 0, POSITION_LAYOUT, POSITION_SCALES,
                                        OBSERVED_CAP)  # fmt: skip
    if info[I_SEARCH] == 0 or info[I_SEATS] != 2:
        return -1
    totals = np.empty(2, dtype=np.int64)
    totals[0] = info[I_TOTAL_MINE]
    totals[1] = info[I_TOTAL_THEIRS]
    table = equity if mode == ENDGAME_GAME else np.zeros((0, 0), dtype=np.int64)
    sums, _ = search(info, unseen.reshape((1, unseen.shape[0])), legal, 0, 0, table, totals)
    logits = np.zeros(legal.shape[0], dtype=np.float32)
    if player >= ROLLOUT_NETWORK:
        actions = np.empty((1, MAX_LEGAL), dtype=np.int64)
        scores = np.empty(MAX_LEGAL, dtype=np.float32)
        _policy_scores(obs, mask, policies[0], policies[1], player - ROLLOUT_NETWORK, actions,
                       scores)  # fmt: skip
        for i in range(legal.shape[0]):
            for row in range(MAX_LEGAL):
                if actions[0, row] == legal[i]:
                    logits[i] = scores[row]
    best = 0
    for i in range(1, legal.shape[0]):  # ascending: the first of equals is the lowest action
        if sums[i] > sums[best] or (sums[i] == sums[best] and logits[i] > logits[best]):
            best = i
    return legal[best]


@njit(cache=True)
def _view_of(
    state: np.ndarray, rules: np.ndarray, hidden: int, unknown: int, bottom: int, view: np.ndarray
) -> None:
    """The view of the engine's ``state`` with the cards of ``hidden`` not dealt yet."""
    n = rules[R_PLAYERS]
    for s in range(4):
        view[V_HANDS + s] = (state[HANDS + s] & ~hidden) if s < n else 0
    view[V_BOARD] = state[BOARD] & ~hidden
    view[V_CAPTURED] = 0
    view[V_CAPTURED + 1] = 0
    view[V_BASTRA_POINTS] = 0
    view[V_BASTRA_POINTS + 1] = 0
    for seat in range(n):
        side = side_of(rules, seat)
        view[V_CAPTURED + side] |= state[CAPTURED + seat]
        view[V_BASTRA_POINTS + side] += (
            state[BASTRAS + seat] * rules[R_BASTRA]
            + state[JACK_BASTRAS + seat] * rules[R_JACK_BASTRA]
        )
    view[V_UNKNOWN] = unknown
    view[V_BOTTOM] = bottom
    view[V_CURRENT] = state[CURRENT]
    view[V_DEALER] = state[DEALER]
    view[V_LAST] = state[LAST_CAPTURER]
    view[V_PLAYS] = state[PLAYS]
    view[V_SCORES] = state[SCORES]
    view[V_SCORES + 1] = state[SCORES + 1]


@njit(cache=True)
def _round_start_view(state: np.ndarray, rules: np.ndarray, view: np.ndarray) -> None:
    """The view of a round about to be dealt: every card unknown, the scores as they stand."""
    _view_of(state, rules, FULL_DECK, FULL_DECK, 0, view)
    for s in range(4):
        view[V_HANDS + s] = 0
    view[V_BOARD] = 0
    view[V_CAPTURED] = 0
    view[V_CAPTURED + 1] = 0
    view[V_BASTRA_POINTS] = 0
    view[V_BASTRA_POINTS + 1] = 0
    view[V_LAST] = -1
    view[V_PLAYS] = 0


@njit(cache=True)
def _network_value(view: np.ndarray, rules: np.ndarray, net: tuple, buf: tuple) -> tuple:
    """(points for side 0, side 0's win probability) of a view by the network: ``net`` holds
    its six weight arrays, ``buf`` the scratch of :func:`_buffers`."""
    w1, b1, w2, b2, w3, b3 = net
    pre, hidden, index, value, scratch = buf[0], buf[1], buf[2], buf[3], buf[4]
    first_layer(view, rules[R_PLAYERS], rules[R_TARGET], w1, b1, pre, index, value, scratch)
    points, win = mlp_tail(pre, w2, b2, w3, b3, hidden)
    return view[V_SCORES] - view[V_SCORES + 1] + points, win


@njit(cache=True)
def _buffers(net: tuple) -> tuple:
    return (
        np.empty(net[1].shape[0], dtype=np.float32),
        np.empty(net[3].shape[0], dtype=np.float32),
        np.empty(MAX_ENTRIES, dtype=np.int64),
        np.empty(MAX_ENTRIES, dtype=np.float32),
        np.empty(SCRATCH, dtype=np.int64),
        np.zeros((1, OBSERVATION_SIZE), dtype=np.float32),
        np.zeros((1, NUM_ACTIONS), dtype=np.bool_),
        np.zeros(1, dtype=np.int64),
        np.zeros(VIEW_SIZE, dtype=np.int64),
    )


@njit(cache=True)
def _terminal_value(state: np.ndarray) -> tuple:
    winner = state[WINNER]
    win = 1.0 if winner == 0 else (0.5 if winner < 0 else 0.0)
    return float(state[SCORES] - state[SCORES + 1]), win


@njit(cache=True)
def _settled_value(
    trial: np.ndarray, rules: np.ndarray, over: bool, dealt_from: int, unknown: int, bottom: int,
    net: tuple, buf: tuple,
) -> tuple:  # fmt: skip
    """The value of ``trial`` just after a play: exact once the game is over; the network's at
    the next round's start once the round is over; else the network's with the cards the play's
    deal brought (deck positions from ``dealt_from``) not yet dealt."""
    view = buf[8]
    if over and trial[DONE]:
        return _terminal_value(trial)
    if over:
        _round_start_view(trial, rules, view)
    else:
        dealt = 0
        for q in range(dealt_from, trial[DECK_POS]):
            dealt |= 1 << trial[DECK + q]
        _view_of(trial, rules, dealt, unknown, bottom, view)
    return _network_value(view, rules, net, buf)


@njit(cache=True)
def _rollout_value(
    trial: np.ndarray, rules: np.ndarray, unknown: int, bottom: int, net: tuple, buf: tuple,
    work: np.ndarray, players: np.ndarray, policies: tuple, endgames: np.ndarray,
    equity: np.ndarray,
) -> tuple:  # fmt: skip
    """The value of a position whose deal is fully dealt (nothing left to chance until the next
    deal): each seat's rollout player (``players[seat]``: ``ROLLOUT_HEURISTIC``,
    ``ROLLOUT_GREEDY`` or a network; once a two-player deck is empty, the endgame search
    ``endgames[seat]`` if it has one) plays until the hands are empty (``trial`` is played
    on), then :func:`_settled_value` of where that leaves the game. Every card being known, this
    sees the deal's captures and bastras that the network alone would have to guess."""
    obs, mask, chosen = buf[5], buf[6], buf[7]
    start = trial[DECK_POS]
    while True:
        legal_slots(trial, rules, work)
        encode(trial, rules, trial[CURRENT], obs[0], mask[0])
        player = players[trial[CURRENT]]
        mode = endgames[trial[CURRENT]]
        searched = -1
        if mode != ENDGAME_NONE:
            searched = _endgame_choice(obs, mask, mode, equity, player, policies)
        if searched >= 0:
            chosen[0] = searched
        elif player == ROLLOUT_GREEDY:
            greedy_rows(obs, mask, chosen)
        elif player >= ROLLOUT_NETWORK:
            chosen[0] = _policy_choice(obs, mask, policies[0], policies[1],
                                       player - ROLLOUT_NETWORK)  # fmt: skip
        else:
            heuristic_rows(obs, mask, CARD_VALUE, JACK_KEEP, chosen)
        m = find_move(trial, chosen[0])
        over = apply_move(trial, rules, chosen[0] // SLOTS_PER_CARD, trial[MOVE_CAPTURES + m])
        if over or trial[DECK_POS] > start:
            return _settled_value(trial, rules, over, start, unknown, bottom, net, buf)


@njit(cache=True)
def _dealt_value(
    dealt: np.ndarray, rules: np.ndarray, deal_from: int, unknown: int, bottom: int,
    net: tuple, buf: tuple, work: np.ndarray, trial: np.ndarray, players: np.ndarray,
    policies: tuple, endgames: np.ndarray, equity: np.ndarray,
) -> tuple:  # fmt: skip
    """The value of the state ``dealt`` just after a deal (deck positions ``deal_from`` on;
    ``unknown``/``bottom`` as before it): every card of the deal now known, the deal played out
    (:func:`_rollout_value`) on ``trial``, a copy of ``dealt``."""
    now_unknown = unknown
    now_bottom = bottom
    for pos in range(deal_from, dealt[DECK_POS]):
        bit = 1 << dealt[DECK + pos]
        if pos < NUM_CARDS:
            now_unknown &= ~bit
            if deal_from == 0 and pos >= HAND_SIZE * rules[R_PLAYERS] and (
                dealt[DECK + pos] >> 2
            ) == JACK:
                now_bottom |= bit
        else:
            now_bottom &= ~bit
    trial[:] = dealt
    return _rollout_value(trial, rules, now_unknown, now_bottom, net, buf, work, players,
                          policies, endgames, equity)  # fmt: skip


@njit(cache=True)
def _redeal(
    state: np.ndarray, rules: np.ndarray, deal_from: int, first: int, x: np.uint64,
    trial: np.ndarray,
) -> np.uint64:  # fmt: skip
    """``trial`` = ``state`` with the deal that brought deck positions ``deal_from`` on dealt
    again from the unknown cards in a fresh uniform order (the jacks known at
    the deck's bottom stay there): a draw of what the deal could have been. ``x``: the walk's
    own splitmix64 stream, returned advanced."""
    n = rules[R_PLAYERS]
    trial[:] = state
    if deal_from == 0:
        for i in range(NUM_CARDS):
            trial[DECK + i] = i
        for i in range(NUM_CARDS - 1, 0, -1):
            x, z = splitmix64(x)
            j = np.int64(z % np.uint64(i + 1))
            t = trial[DECK + i]
            trial[DECK + i] = trial[DECK + j]
            trial[DECK + j] = t
        start_round(trial, rules)
        return x
    deal_to = state[DECK_POS]
    for pos in range(deal_from, deal_to):
        trial[HANDS + (first + pos - deal_from) % n] ^= 1 << trial[DECK + pos]
    for i in range(NUM_CARDS - 1, deal_from, -1):
        x, z = splitmix64(x)
        j = deal_from + np.int64(z % np.uint64(i - deal_from + 1))
        t = trial[DECK + i]
        trial[DECK + i] = trial[DECK + j]
        trial[DECK + j] = t
    for pos in range(deal_from, deal_to):
        trial[HANDS + (first + pos - deal_from) % n] |= 1 << trial[DECK + pos]
    return x


@njit(cache=True)
def walk_game(
    rules: np.ndarray, seed: int, actions: np.ndarray, prob_rows: np.ndarray,
    prob_table: np.ndarray, net: tuple, samples: int, players: np.ndarray, figures: np.ndarray,
    views: np.ndarray, view_rounds: np.ndarray, round_points: np.ndarray, policies: tuple,
    endgames: np.ndarray, equity: np.ndarray,
) -> int:  # fmt: skip
    """Walk the game with ``seed`` whose moves were ``actions`` (env encoding, in order).
    ``prob_rows[t]``: the row of ``prob_table [K, 208]`` holding the mover's probabilities of
    every action at move ``t``, or -1 (no decision correction). ``net``: the value network's
    six weight arrays (of size 0: no corrections); ``samples``: the deals drawn at each deal;
    ``players[seat]``: the seat's rollout player, ``policies`` the networks of
    ``ROLLOUT_NETWORK + k`` (``pack_policies``); ``endgames[seat]``: the seat's endgame search
    once a two-player deck is empty (``ENDGAME_NONE``, ``ENDGAME_POINTS`` or ``ENDGAME_GAME``,
    whose table is ``equity``). Writes ``figures`` (``FIGURES`` floats, see
    the constants). With ``views`` of more than 0 rows, the view after every event goes there
    (its round's index in ``view_rounds``) and each round's points for side 0 minus side 1 in
    ``round_points``: the value network's training data. Returns the views written.

    The value of a position is the network's, except where every card of the current deal is
    dealt: there the deal is played out first by each seat's rollout player
    (:func:`_rollout_value`): the seat's own player where it is greedy or a network (a learned
    player's network, played greedily), else the heuristic one; in the last deal of a two-player
    round, a seat's own endgame search where it has one."""
    n = rules[R_PLAYERS]
    valued = net[1].shape[0] > 0  # no value function: the walk only records views
    x = np.uint64(seed) * np.uint64(0x9E3779B97F4A7C15) ^ np.uint64(0x5851F42D4C957F2D)
    buf = _buffers(net)
    view = np.zeros(VIEW_SIZE, dtype=np.int64)
    state = np.zeros(STATE_SIZE, dtype=np.int64)
    trial = np.zeros(STATE_SIZE, dtype=np.int64)
    other = np.zeros(STATE_SIZE, dtype=np.int64)
    work = np.zeros(CAPTURE_WORK + SLOTS_PER_CARD, dtype=np.int64)
    new_game(state, rules, seed, np.empty(0, dtype=np.int64))
    for k in range(FIGURES):
        figures[k] = 0.0
    recorded = 0
    record = views.shape[0] > 0
    t = 0
    rounds = 0
    while True:
        # ---- a round: its deal, card by card, then its plays
        _round_start_view(state, rules, view)
        if record and recorded < views.shape[0]:
            views[recorded] = view
            view_rounds[recorded] = rounds
            recorded += 1
        unknown = FULL_DECK
        bottom = 0
        hidden = 0
        for s in range(n):
            hidden |= state[HANDS + s]
        hidden |= state[BOARD]
        deal_from = 0
        deal_to = state[DECK_POS]
        first = (state[DEALER] + 1) % n
        ended = False
        while True:
            if valued:
                # a chance event: the deal, against ``samples`` deals drawn like it
                actual_points, actual_win = _dealt_value(state, rules, deal_from, unknown,
                                                         bottom, net, buf, work, trial,
                                                         players, policies, endgames,
                                                         equity)  # fmt: skip
                total_points = 0.0
                total_win = 0.0
                for _ in range(samples):
                    x = _redeal(state, rules, deal_from, first, x, other)
                    points, win = _dealt_value(other, rules, deal_from, unknown, bottom, net,
                                               buf, work, trial, players, policies, endgames,
                                               equity)  # fmt: skip
                    total_points += points
                    total_win += win
                luck_points = actual_points - total_points / samples
                luck_win = actual_win - total_win / samples
                left = state[DECK_LEN] - deal_to
                stage = (0 if deal_from == 0 else 3 if left <= 0
                         else 2 if left <= HAND_SIZE * n else 1)  # fmt: skip
                figures[CHANCE_POINTS] += luck_points
                figures[CHANCE_WIN] += luck_win
                figures[STAGE_POINTS + stage] += luck_points
                figures[STAGE_WIN + stage] += luck_win
                figures[CHANCE_EVENTS] += 1
            for pos in range(deal_from, deal_to):
                card = state[DECK + pos]
                bit = 1 << card
                i = pos - deal_from
                to_board = deal_from == 0 and i >= HAND_SIZE * n
                jack = (card >> 2) == JACK
                if pos < NUM_CARDS:
                    unknown &= ~bit
                hidden &= ~bit
                if to_board and jack:
                    bottom |= bit
                elif not to_board and pos >= NUM_CARDS:
                    bottom &= ~bit
                if record and recorded < views.shape[0]:
                    _view_of(state, rules, hidden, unknown, bottom, views[recorded])
                    view_rounds[recorded] = rounds
                    recorded += 1
            # ---- the plays until the next deal or the round's end
            while True:
                if t >= actions.shape[0]:
                    figures[STATUS] = 2
                    return recorded
                moves = legal_slots(state, rules, work)
                chosen = find_move(state, actions[t])
                if chosen < 0:
                    figures[STATUS] = 1
                    return recorded
                old_pos = state[DECK_POS]
                if valued and prob_rows[t] >= 0:
                    probs = prob_table[prob_rows[t]]
                    expected_points = 0.0
                    expected_win = 0.0
                    mass = 0.0
                    actual_points = 0.0
                    actual_win = 0.0
                    for m in range(moves):
                        p = probs[state[MOVE_ACTIONS + m]]
                        trial[:] = state
                        over = apply_move(trial, rules, trial[MOVE_ACTIONS + m] // SLOTS_PER_CARD,
                                          trial[MOVE_CAPTURES + m])  # fmt: skip
                        if over or trial[DECK_POS] > old_pos:
                            points, win = _settled_value(trial, rules, over, old_pos, unknown,
                                                         bottom, net, buf)  # fmt: skip
                        else:
                            points, win = _rollout_value(trial, rules, unknown, bottom, net, buf,
                                                         work, players, policies, endgames,
                                                         equity)  # fmt: skip
                        expected_points += p * points
                        expected_win += p * win
                        mass += p
                        if m == chosen:
                            actual_points = points
                            actual_win = win
                    if mass > 0.0:
                        figures[DECISION_POINTS] += actual_points - expected_points / mass
                        figures[DECISION_WIN] += actual_win - expected_win / mass
                        figures[DECISION_EVENTS] += 1
                card = state[MOVE_ACTIONS + chosen] // SLOTS_PER_CARD
                over = apply_move(state, rules, card, state[MOVE_CAPTURES + chosen])
                t += 1
                if over:
                    if rounds < round_points.shape[0]:
                        round_points[rounds] = state[RES_TOTAL] - state[RES_TOTAL + 1]
                    rounds += 1
                    ended = True
                    break
                if state[DECK_POS] > old_pos:
                    deal_from = old_pos
                    deal_to = state[DECK_POS]
                    first = (state[DEALER] + 1) % n
                    hidden = 0
                    for q in range(deal_from, deal_to):
                        hidden |= 1 << state[DECK + q]
                    if record and recorded < views.shape[0]:
                        _view_of(state, rules, hidden, unknown, bottom, views[recorded])
                        view_rounds[recorded] = rounds
                        recorded += 1
                    break
                if record and recorded < views.shape[0]:
                    _view_of(state, rules, 0, unknown, bottom, views[recorded])
                    view_rounds[recorded] = rounds
                    recorded += 1
            if ended:
                break
        if state[DONE]:
            break
    points, win = _terminal_value(state)
    figures[OUTCOME_POINTS] = points
    figures[OUTCOME_WIN] = win
    figures[ROUNDS] = rounds
    if t != actions.shape[0]:
        figures[STATUS] = 2
    return recorded


@njit(cache=True, parallel=True)
def walk_games(
    rules: np.ndarray, seeds: np.ndarray, action_starts: np.ndarray, actions: np.ndarray,
    prob_rows: np.ndarray, prob_table: np.ndarray, w1: np.ndarray, b1: np.ndarray,
    w2: np.ndarray, b2: np.ndarray, w3: np.ndarray, b3: np.ndarray, samples: int,
    players: np.ndarray, policy_flat: np.ndarray, policy_meta: np.ndarray, endgames: np.ndarray,
    equity: np.ndarray,
) -> np.ndarray:  # fmt: skip
    """``walk_game`` of every game (game ``g``'s moves are ``actions[action_starts[g]:
    action_starts[g + 1]]``), in parallel: ``float64[games, FIGURES]``."""
    games = seeds.shape[0]
    out = np.zeros((games, FIGURES), dtype=np.float64)
    for g in prange(games):
        lo = action_starts[g]
        hi = action_starts[g + 1]
        walk_game(rules, seeds[g], actions[lo:hi], prob_rows[lo:hi], prob_table,
                  (w1, b1, w2, b2, w3, b3), samples, players[g], out[g],
                  np.empty((0, VIEW_SIZE), dtype=np.int64),
                  np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64),
                  (policy_flat, policy_meta), endgames[g], equity)  # fmt: skip
    return out


@njit(cache=True, parallel=True)
def collect_views(
    rules: np.ndarray, seeds: np.ndarray, action_starts: np.ndarray, actions: np.ndarray,
    per_game: int,
) -> tuple:  # fmt: skip
    """The value network's training data: every game walked with no value function, the view
    after each event kept (at most ``per_game`` a game). Returns (views ``[games, per_game,
    VIEW_SIZE]``, their rounds ``[games, per_game]``, views kept ``[games]``, each round's
    points for side 0 minus side 1 ``[games, MAX_ROUNDS_RECORDED]``, figures ``[games,
    FIGURES]``)."""
    games = seeds.shape[0]
    views = np.zeros((games, per_game, VIEW_SIZE), dtype=np.int64)
    rounds = np.zeros((games, per_game), dtype=np.int64)
    kept = np.zeros(games, dtype=np.int64)
    points = np.zeros((games, MAX_ROUNDS_RECORDED), dtype=np.int64)
    figures = np.zeros((games, FIGURES), dtype=np.float64)
    z1 = np.zeros((0, 0), dtype=np.float32)
    z0 = np.zeros(0, dtype=np.float32)
    for g in prange(games):
        lo = action_starts[g]
        hi = action_starts[g + 1]
        none = np.full(hi - lo, -1, dtype=np.int64)
        kept[g] = walk_game(rules, seeds[g], actions[lo:hi], none, np.zeros((0, NUM_ACTIONS)),
                            (z1, z0, z1, z0, z1, z0), 0, np.zeros(4, dtype=np.int64),
                            figures[g], views[g], rounds[g], points[g],
                            (z0, np.zeros((2, POLICY_ARRAYS, 3), dtype=np.int64)),
                            np.zeros(4, dtype=np.int64),
                            np.zeros((0, 0), dtype=np.int64))  # fmt: skip
    return views, rounds, kept, points, figures


def luck_corrections(
    rules: Rules,
    game_seeds: Sequence[int],
    actions: Sequence[Sequence[int]],
    prob_rows: Sequence[Sequence[int]],
    prob_table: Sequence[np.ndarray],
    value: StateValue,
    samples: int = 32,
    players: np.ndarray | None = None,
    policies: Sequence[tuple] = (),
    endgames: np.ndarray | None = None,
    equity: np.ndarray | None = None,
) -> np.ndarray:
    """``float64[games, FIGURES]``: each game walked again (its seed, its moves) with ``value``;
    ``prob_rows[g][t]`` indexes ``prob_table`` (rows of 208 move probabilities) or is -1;
    ``players[g, seat]``: each seat's rollout player (default: the heuristic one);
    ``policies``: at most two ``policy_arrays``, the networks ``ROLLOUT_NETWORK + k``;
    ``endgames[g, seat]``: each seat's endgame search in a two-player round's last deal
    (default: none), ``equity`` the table of ``ENDGAME_GAME`` (``objective_table``). Raises
    ``ValueError`` if ``value`` is for another table or a game's moves do not replay."""
    if (value.rules.num_players, value.rules.teams) != (rules.num_players, rules.teams):
        raise ValueError(
            f"the value function is for the {value.table} table, these games are "
            f"{rules.num_players} players{' in teams' if rules.teams else ''}"
        )
    rollout = np.zeros((len(actions), 4), dtype=np.int64)
    if players is not None:
        rollout[:, : rules.num_players] = players
    searches = np.zeros((len(actions), 4), dtype=np.int64)
    if endgames is not None:
        searches[:, : rules.num_players] = endgames
    table = np.zeros((0, 0), dtype=np.int64) if equity is None else np.asarray(equity, np.int64)
    starts = np.zeros(len(actions) + 1, dtype=np.int64)
    starts[1:] = np.cumsum([len(a) for a in actions])
    flat = np.fromiter((a for game in actions for a in game), dtype=np.int64, count=int(starts[-1]))
    rows = np.fromiter((r for game in prob_rows for r in game), dtype=np.int64,
                       count=int(starts[-1]))  # fmt: skip
    probs = (np.asarray(prob_table, dtype=np.float64).reshape(-1, NUM_ACTIONS) if len(prob_table)
             else np.zeros((0, NUM_ACTIONS), dtype=np.float64))  # fmt: skip
    w1, b1, w2, b2, w3, b3 = value.weights
    start_threading_layer()
    figures = walk_games(rules_array(rules), np.asarray(game_seeds, dtype=np.int64), starts, flat,
                         rows, probs, w1, b1, w2, b2, w3, b3, samples, rollout,
                         *pack_policies(policies), searches, table)  # fmt: skip
    bad = np.flatnonzero(figures[:, STATUS] != 0)
    if bad.size:
        g = int(bad[0])
        why = "an illegal move" if figures[g, STATUS] == 1 else "the moves and the game end apart"
        raise ValueError(f"game {g} (seed {game_seeds[g]}) does not replay from its moves ({why})")
    return figures
