"""The endgame search in plain Python: the reference the compiled kernels of
``agents.search.endgame_kernels`` are checked against (tests only; nothing in the package imports
it).

``solve`` and ``_Search`` are the implementation ``agents.search.endgame`` had before the kernels,
unchanged but for their imports.
"""

from __future__ import annotations

import hashlib
from functools import lru_cache

import numpy as np

from agents.players.basic import Observation, plane
from bastra_env.captures import captures
from bastra_env.cards import iter_cards, points
from bastra_env.game import BASTRA, JACK_BASTRA, PLAYS_PER_ROUND, bastra_kind
from bastra_env.layout import OBSERVED_CAP, OFFSETS, SLOTS_PER_CARD, observed_scoring

TWO_PLAYERS, TEAMS = 0, 3
"""Indices of the two-player and the team-game flags in the observation's ``table`` one-hot."""
NOBODY = -1


def solve(
    observation: Observation, samples: int = 16, max_team_cards: int = 2
) -> dict[int, float] | None:
    """``{action: expected round point difference for my side under best play}`` over the legal
    actions, or ``None`` where this module does not search (cards left in the deck, three
    players, a team game with more than ``max_team_cards`` cards in my hand)."""
    obs = np.asarray(observation["observation"])
    table = obs[OFFSETS["table"]]
    if obs[OFFSETS["deck_left"]][0] > 0 or not (table[TWO_PLAYERS] or table[TEAMS]):
        return None
    legal = np.flatnonzero(observation["action_mask"])
    if len(legal) == 0:
        return None
    seats = 2 if table[TWO_PLAYERS] else 4
    mine = plane(obs, "hand")
    unseen = plane(obs, "unseen")
    sizes = [round(float(s) * 4) for s in obs[OFFSETS["hand_sizes"]][:seats]]
    if unseen.bit_count() != sum(sizes[1:]):
        return None  # the unseen cards are not all in hands: not the position searched here
    if seats == 4 and mine.bit_count() > max_team_cards:
        return None
    scoring = observed_scoring(obs)
    if max(obs[OFFSETS["rules"]]) >= OBSERVED_CAP:
        return None  # a scoring rule too large for the observation to tell
    search = _Search(
        seats=seats,
        bastra_points=round(scoring["bastra_points"]),
        jack_bastra_points=round(scoring["jack_bastra_points"]),
        most_cards_points=round(scoring["most_cards_points"]),
        last_play_bastra=scoring["last_play_bastra"] > 0.5,
    )
    piles = obs[OFFSETS["captured"]].reshape(4, -1)[:seats].sum(axis=1)
    counts = (int(piles[0::2].sum()), int(piles[1::2].sum()))  # my side, the other side
    last_one_hot = obs[OFFSETS["last_capturer"]]
    last = int(np.argmax(last_one_hot[:seats])) if last_one_hot[:seats].any() else NOBODY
    plays = round(float(obs[OFFSETS["plays"]][0]) * PLAYS_PER_ROUND)
    board = plane(obs, "board")

    if seats == 2:
        deals = [(mine, unseen)]
    else:
        rng = np.random.default_rng(int.from_bytes(hashlib.sha256(obs.tobytes()).digest()[:8]))
        cards = np.array(list(iter_cards(unseen)))
        deals = []
        for _ in range(samples):
            order = rng.permutation(cards)
            hands, at = [mine], 0
            for size in sizes[1:]:
                hands.append(sum(1 << int(c) for c in order[at : at + size]))
                at += size
            deals.append(tuple(hands))

    values = dict.fromkeys((int(a) for a in legal), 0.0)
    for hands in deals:
        for action in values:
            card, slot = divmod(action, SLOTS_PER_CARD)
            caps = captures(card, board)
            capture = caps[slot] if caps else 0
            values[action] += search.after_play(hands, 0, card, capture, board, last, counts, plays)
    return {a: v / len(deals) for a, v in values.items()}


class _Search:
    """Minimax over (hands, seat to move, board, last capturer, pile sizes per side, plays);
    seat 0 is me, seats play in order, even seats are my side. Values: my side minus the other."""

    def __init__(
        self,
        seats: int,
        bastra_points: int,
        jack_bastra_points: int,
        most_cards_points: int,
        last_play_bastra: bool,
    ) -> None:
        self.seats = seats
        self.bastra_points = bastra_points
        self.jack_bastra_points = jack_bastra_points
        self.most_cards_points = most_cards_points
        self.last_play_bastra = last_play_bastra
        self.value = lru_cache(maxsize=None)(self._value)

    def after_play(
        self,
        hands: tuple[int, ...],
        mover: int,
        card: int,
        capture: int,
        board: int,
        last: int,
        counts: tuple[int, int],
        plays: int,
    ) -> float:
        """Value of ``mover`` playing ``card`` taking ``capture``, then best play to the end."""
        sign = 1 if mover % 2 == 0 else -1
        gain = 0
        if capture:
            after = board ^ capture
            gain = points(capture | 1 << card)
            if not after and (plays + 1 < PLAYS_PER_ROUND or self.last_play_bastra):
                kind = bastra_kind(card, capture, capture)
                if kind == BASTRA:
                    gain += self.bastra_points
                elif kind == JACK_BASTRA:
                    gain += self.jack_bastra_points
            taken = capture.bit_count() + 1
            side = mover % 2
            counts = (counts[0] + taken, counts[1]) if side == 0 else (counts[0], counts[1] + taken)
            board, last = after, mover
        else:
            board |= 1 << card
        hands = hands[:mover] + (hands[mover] & ~(1 << card),) + hands[mover + 1 :]
        return sign * gain + self.value(
            hands, (mover + 1) % self.seats, board, last, counts, plays + 1
        )

    def _value(
        self,
        hands: tuple[int, ...],
        mover: int,
        board: int,
        last: int,
        counts: tuple[int, int],
        plays: int,
    ) -> float:
        if not hands[mover]:  # the round is over: leftovers, then the most cards
            mine, theirs = counts
            diff = 0
            if last != NOBODY and board:
                if last % 2 == 0:
                    diff += points(board)
                    mine += board.bit_count()
                else:
                    diff -= points(board)
                    theirs += board.bit_count()
            most = max(mine, theirs)
            return diff + self.most_cards_points * ((mine == most) - (theirs == most))
        options = (
            self.after_play(hands, mover, card, capture, board, last, counts, plays)
            for card in iter_cards(hands[mover])
            for capture in captures(card, board)[:SLOTS_PER_CARD] or (0,)
        )
        return max(options) if mover % 2 == 0 else min(options)
