"""Search of the round's last plays, once the deck is empty (and, asked, in the deal before).

Then every unseen card is in another player's hand, and the rest of the round can be searched to
its end: minimax on the round's point difference (card points and bastras still to come, the
leftovers to the last capturer, the most-cards points), my side maximising, the other side
minimising.

- Two players: the unseen cards are exactly the opponent's hand, so the search is exact (the
  whole last deal, 8 plays: a few thousand positions, under a millisecond).
- Four players in teams: the unseen cards are split among three hands I cannot tell apart, so the
  search is run on ``samples`` random splits (sizes as the observation says) and each action's
  values are averaged (perfect-information Monte Carlo). Only when my hand holds at most
  ``max_team_cards`` cards (3: each search is then a few thousand positions; with the whole last
  deal, 4, a search takes about 50 ms and plays no better: measured on 2,000 rounds).
- Two players, ``deals=2``: in the last-but-one deal (8 cards still in the deck) the unseen cards
  are the opponent's hand and the last deal. Each of ``deal_samples`` random deals of them (the
  opponent's hand, then 4 cards to each seat) is searched exactly through both deals, the deal
  between them made once every hand is empty, and the values are averaged (perfect-information
  Monte Carlo: each sample's play is solved as if its cards were known).

With ``objective="game"`` the end of the round is scored instead by my side's chance of winning
the game from the totals it reaches (``agents.search.equity``): what a game to 100 is won by.

It reads the observation only, never the env; the same observation gives the same answer. The
search itself is the compiled kernels of ``agents.search.endgame_kernels``.
Limits: the observation does not say whether captures are chosen or automatic, so the search
assumes ``capture="choose"`` (the default; with ``"auto"`` its values are those of a game with
choice); it declines when a scoring rule is beyond what the observation encodes (over 10 times
its scale, where the "rules" piece is capped).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence

import numpy as np

from agents.players.basic import Observation
from agents.search import world_kernels as S
from agents.search.endgame_kernels import (
    EQUITY_SCALE,
    I_DECK,
    I_RULES,
    I_SEARCH,
    I_SEATS,
    I_SIZES,
    I_TOTAL_MINE,
    I_TOTAL_THEIRS,
    LAYOUT_PIECES,
    POINTS_ONLY,
    read_position,
    search,
)
from agents.search.equity import objective_table
from agents.search.positions import decision_seed, inferred_worlds, position_of
from bastra_env import compiled_rules as K
from bastra_env.cards import iter_cards
from bastra_env.layout import MAX_LEGAL, OBSERVED_CAP, OFFSETS, SCORING_SCALES

POSITION_LAYOUT = np.array([OFFSETS[name].start for name in LAYOUT_PIECES], dtype=np.int64)
"""``read_position``'s ``layout``: the observation's offsets of ``LAYOUT_PIECES``."""
POSITION_SCALES = np.array(list(SCORING_SCALES.values()), dtype=np.float64)
"""``read_position``'s ``scales``: the scoring rules' scales in the observation."""
TEAM_CARDS = 3
"""In the team game the endgame search takes over with this many cards in my hand (``solve``'s
``max_team_cards``): the docs' experiments page, "Endgame search"."""
LAST_DEAL = 8
"""Cards in the two-player round's last deal: what may still be in the deck for ``deals=2``."""
DEAL_PLAYS = 400_000
"""The plays the two-deal search may search a move: at most about 75 ms on one core here."""
MODEL_WEIGHT = 0.5
"""Where the players model the other sides (``opponent_model``), the weight of the value against
the model in their endgame search (``solve``'s ``model_weight``), the rest minimax's."""
OBJECTIVES = ("points", "game")
"""What the search maximises: the round's point difference, or the chance of winning the game
(``agents.search.equity``)."""


def checked_model_weight(weight: float | None, opponent_model: bool) -> float:
    """A player's ``model_weight`` for ``solve``: ``MODEL_WEIGHT`` where it models the other sides
    and none is given, else 0 unless given; ``ValueError`` outside [0, 1]."""
    if weight is None:
        return MODEL_WEIGHT if opponent_model else 0.0
    if not 0.0 <= weight <= 1.0:
        raise ValueError(f"model_weight must be in [0, 1], got {weight!r}")
    return float(weight)


def _inferred_orders(obs: np.ndarray, count: int) -> np.ndarray:
    """``count`` rows of the unseen cards as ``search`` takes them (seat 1's hand, seat 2's, ...,
    then the deck's rest), from worlds drawn by inference from the deal's plays."""
    position, rules, cards, sizes = position_of(obs)
    worlds = inferred_worlds(position, rules, cards, sizes, count, decision_seed(0, obs))
    n = len(sizes)
    orders = np.empty((count, len(cards)), dtype=np.int64)
    start, stop = position[K.DECK_POS], position[K.DECK_LEN]
    for row, world in zip(orders, worlds, strict=True):
        hands = [c for seat in range(1, n) for c in iter_cards(int(world[K.HANDS + seat]))]
        row[:] = hands + world[K.DECK + start : K.DECK + stop].tolist()
    return orders


def solve(
    observation: Observation,
    samples: int = 64,
    max_team_cards: int = TEAM_CARDS,
    deals: int = 1,
    deal_samples: int = 64,
    max_plays: int = DEAL_PLAYS,
    objective: str = "points",
    infer: bool = False,
    model_weight: float = 0.0,
) -> dict[int, float] | None:
    """``{action: expected round point difference for my side under best play}`` over the legal
    actions, or ``None`` where this module does not search (cards left in the deck, three
    players, a team game with more than ``max_team_cards`` cards in my hand). With ``deals=2``
    a two-player position of the last-but-one deal (8 cards in the deck) is searched too, on
    ``deal_samples`` random deals of the unseen cards (the opponent's hand, then the last deal),
    searched in turn until ``max_plays`` plays were searched (the first deal always whole: a
    bound on the time a move takes, the same for the same observation).

    ``objective="game"``: each action's value is instead my side's chance of winning the game
    (0 to 1) from the totals the round ends at (``agents.search.equity``: the game scores, this
    round's points so far, the rest under best play), where the scoring rules are those the equity
    table was measured under; elsewhere the round's point difference, as ``"points"``. The
    observation counts a round's bastras of both kinds together: each is counted at the bastra
    rule's points (a jack bastra, rare, at 10 rather than 50).

    ``infer=True``: where the search samples (the team game's splits, the two-deal search's
    deals), the samples are drawn in proportion to how likely the other seats' plays of this
    deal were with those hands (``agents.search.positions.inferred_worlds``) rather than uniformly.

    ``model_weight`` > 0: once the deck is empty, each action's value is ``1 - model_weight``
    times the minimax value plus ``model_weight`` times its value against the opponent model
    (``agents.search.world_kernels.modelled_endgame``: the other sides play the heuristic player on
    their own observations, my side the best answers to that), on the same samples (all of them,
    where the two-deal minimax may stop short of the last at ``max_plays``). Minimax
    assumes the other side finds its best play knowing my hand; the model is what the inference
    and the modelled rollouts already take the other sides to be, and a search against it takes
    the points such a player leaves. In the two-deal search's earlier deal the value against the
    model is each move rolled out in each sample, the other side playing the model (PIMC with
    modelled rollouts, as ``pimc:N:infer`` plays that deal)."""
    if deals not in (1, 2):
        raise ValueError(f"deals must be 1 (the last deal) or 2 (the last two), got {deals!r}")
    if objective not in OBJECTIVES:
        raise ValueError(f"objective must be one of {OBJECTIVES}, got {objective!r}")
    checked_model_weight(model_weight, False)
    obs = np.asarray(observation["observation"])
    info, legal, unseen = read_position(
        obs,
        np.asarray(observation["action_mask"]),
        max_team_cards,
        LAST_DEAL if deals == 2 else 0,
        POSITION_LAYOUT,
        POSITION_SCALES,
        OBSERVED_CAP,
    )
    if not info[I_SEARCH]:
        return None
    left = int(info[I_DECK])
    if info[I_SEATS] == 2 and left == 0:
        orders = unseen.reshape(1, -1)  # exactly the opponent's hand
    elif infer:
        orders = _inferred_orders(obs, deal_samples if left else samples)
    else:
        digest = hashlib.sha256(obs.tobytes()).digest()
        rng = np.random.default_rng(int.from_bytes(digest[:8], "big"))  # "big": needed on 3.10
        orders = np.tile(unseen, (deal_samples if left else samples, 1))
        for order in orders:  # as rng.permutation(unseen), one deal after the other
            rng.shuffle(order)
    equity, scale = POINTS_ONLY, 1
    if objective == "game":
        seats = int(info[I_SEATS])  # the search plays two players or the team game
        rules = info[I_RULES : I_RULES + K.RULES_SIZE]  # the rules row, as observed
        scoring = rules[[K.R_BASTRA, K.R_JACK_BASTRA, K.R_MOST_CARDS]].tolist()
        equity = objective_table(seats, seats == 4, scoring, int(rules[K.R_TARGET]))
        scale = EQUITY_SCALE if equity.size else 1
    totals = info[[I_TOTAL_MINE, I_TOTAL_THEIRS]]
    sums, used = search(info, orders, legal, left // int(info[I_SEATS]),
                        max_plays if left else 0, equity, totals)  # fmt: skip
    values = {a: v / (used * scale) for a, v in zip(legal.tolist(), sums.tolist(), strict=True)}
    if model_weight > 0:
        modelled = _modelled_values(obs, orders, equity)
        values = {a: (1 - model_weight) * v + model_weight * modelled[a] for a, v in values.items()}
    return values


def world_values(
    observation: Observation,
    hands: Sequence[Iterable[int]],
    deck: Sequence[int] = (),
    max_team_cards: int = TEAM_CARDS,
) -> dict[int, float] | None:
    """``{action: round point difference for my side under best play}`` in one known world: the
    other seats' hands ``hands`` (card ids, the seats after mine in turn order) and the cards
    still in the deck ``deck`` (top first: the engine deals them one at a time from the dealer's
    left). Where ``solve(observation, deals=2)`` searches (the deck empty, or a two-player
    last-but-one deal) and ``None`` elsewhere. Together the hands and the deck must be exactly the
    cards the observation has not seen (``ValueError`` otherwise). Every seat plays knowing every
    card, so the value is the game's own only where nothing is hidden (the two-player last deal).

    What ``agents.training.endgame`` learns from: in self-play the true hidden cards are a draw
    from what the seat's observation leaves possible, so over many decisions a move's value in
    the true world averages to its value in ``solve``'s perfect-information Monte Carlo, with the
    true posterior (inference included) and no sampling error in the mean."""
    obs = np.asarray(observation["observation"])
    info, legal, unseen = read_position(obs, np.asarray(observation["action_mask"]),
                                        max_team_cards, LAST_DEAL, POSITION_LAYOUT, POSITION_SCALES,
                                        OBSERVED_CAP)  # fmt: skip
    if not info[I_SEARCH]:
        return None
    seats = int(info[I_SEATS])
    if len(hands) != seats - 1:
        raise ValueError(f"world_values needs the hands of the other {seats - 1} seats, "
                         f"got {len(hands)}")  # fmt: skip
    order: list[int] = []
    for seat, hand in enumerate(hands, start=1):
        cards = [int(c) for c in hand]
        if len(cards) != int(info[I_SIZES + seat]):
            raise ValueError(f"seat {seat} after mine holds {int(info[I_SIZES + seat])} cards, "
                             f"the world gives it {len(cards)}")  # fmt: skip
        order += cards
    deck = [int(c) for c in deck]
    if deck:  # ``search`` takes the last deal as my four cards, then the other seat's four
        mine_first = not obs[OFFSETS["dealer"].start]  # the dealer's left is dealt first
        deck = deck[0::2] + deck[1::2] if mine_first else deck[1::2] + deck[0::2]
    order += deck
    if sorted(order) != sorted(unseen.tolist()):
        raise ValueError("the world's hands and deck are not the cards this seat has not seen")
    left = int(info[I_DECK])
    totals = info[[I_TOTAL_MINE, I_TOTAL_THEIRS]]
    orders = np.array(order, dtype=np.int64).reshape(1, -1)
    sums, used = search(info, orders, legal, left // seats, 0, POINTS_ONLY, totals)
    return {a: v / used for a, v in zip(legal.tolist(), sums.tolist(), strict=True)}


def _modelled_values(obs: np.ndarray, orders: np.ndarray, equity: np.ndarray) -> dict[int, float]:
    """``{action: mean value against the opponent model}``, in ``solve``'s units, over the worlds
    ``orders`` deal (rows as ``search`` takes them: seat 1's hand, seat 2's, ..., then the deck's
    rest). With the deck empty each world is searched by ``world_kernels.modelled_endgame``;
    in the last-but-one deal each move is rolled out to the round's end in each world, the other
    sides playing the model (``world_kernels.pimc_worlds`` with modelled rollouts, what
    ``pimc:N:infer`` plays there), and the values brought to ``solve``'s units: the chance of
    winning (with a ten-thousandth of the round's points in it), or the rest of the round's
    point difference."""
    position, rules, _, sizes = position_of(obs)
    n = K.legal_slots(position, rules, np.empty(S.WORK_SIZE, dtype=np.int64))
    actions = position[K.MOVE_ACTIONS : K.MOVE_ACTIONS + n].tolist()  # the same in every world
    worlds = np.repeat(position[None], len(orders), axis=0)
    for world, order in zip(worlds, orders, strict=True):
        at = 0
        for seat in range(1, len(sizes)):
            world[K.HANDS + seat] = sum(1 << int(card) for card in order[at : at + sizes[seat]])
            at += sizes[seat]
        # the deck's rest in the rules' dealing order (``search`` deals it four to a hand: a
        # relabelling of a uniformly shuffled rest, the same in distribution)
        world[K.DECK + world[K.DECK_POS] : K.DECK + world[K.DECK_LEN]] = order[at:]
    total = np.zeros(MAX_LEGAL)
    if position[K.DECK_POS] == position[K.DECK_LEN]:
        out = np.zeros(MAX_LEGAL)
        for world in worlds:
            S.modelled_endgame(world, rules, equity, out)
            total[:n] += out[:n]
    else:
        S.pimc_worlds(position, rules, worlds, total, True, equity)
        if equity.size:
            total /= 100.0  # end_value's 100 x chance + points / 100
        else:
            total -= len(worlds) * S.banked_difference(position, rules)
    return {a: v / len(orders) for a, v in zip(actions, total[:n].tolist(), strict=True)}
