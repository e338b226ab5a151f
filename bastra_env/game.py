"""A whole game of Bastra: deal, play, score, game end (RULES.md R3-R17).

:class:`Game` is the engine's Python face. Its state is one ``int64`` row of
``bastra_env.compiled_rules``, so a play, a deal and a round's scoring each run as one compiled
call, and :meth:`~Game.copy` is one array copy (a search agent copies, plays ahead,
and throws the copy away). It knows nothing of any RL library. A move is a ``(card, capture)``
pair of ints: the card played and the mask of board cards it takes, ``0`` for a trail.

State, read (and for tests and tools, written) through attributes (seats are ``0..n-1`` in play
order; a side is a seat, or ``seat % 2`` with teams):

====================  ==========================================================================
``rules``             the :class:`~bastra_env.rules.Rules` in force
``seed``              int; round ``k``'s deck is ``compiled_rules.shuffled_deck(seed, k)``
``round``             1-based number of the round being played
``dealer``            seat that dealt this round (round 1: the last seat, R4)
``current``           seat to move, ``-1`` once the game is over
``hands``             one mask per seat (a list-like view of the state)
``board``             mask of the cards on the board
``deck``, ``deck_pos`` tuple of this round's deck, top first; the cards from ``deck_pos`` on are
                      still to be dealt (board jacks went to the end of it, R5)
``captured``          one mask per seat: each seat's pile this round
``bastras``           each seat's bastras (R12, non-jack) this round
``jack_bastras``      each seat's jack-on-lone-jack bastras this round
``last_capturer``     seat that captured last this round, ``-1`` if none yet
``plays``             plays made this round, ``0..48``
``scores``            cumulative score of each side
``results``           tuple of :class:`RoundResult`, one per finished round
``winner``            winning side, ``None`` while playing or for a draw; see ``done``
``done``              whether the game is over
``last_move``         ``(seat, card, capture)`` of the latest play this round, or ``None``
====================  ==========================================================================
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, cast

import numpy as np

from . import compiled_rules as K
from .captures import CACHE_LIMIT, RELEVANT, captures
from .cards import NUM_CARDS, Card, Mask, card_name, iter_cards, mask_str, parse_deck
from .compiled_rules import BOARD_SIZE, HAND_SIZE, PLAYS_PER_ROUND
from .rules import Rules

Move = tuple[Card, Mask]
"""``(card played, mask of the board cards it takes)``; capture ``0`` is a trail."""

NO_BASTRA, BASTRA, JACK_BASTRA = K.NO_BASTRA, K.BASTRA, K.JACK_BASTRA
SEED_LIMIT = 1 << 63
"""Game seeds are ints in ``[0, 2**63)``; larger ones are taken modulo this."""
_NO_DECK = np.empty(0, dtype=np.int64)


@dataclass(frozen=True, slots=True)
class RoundResult:
    """The scoring of one round (R13-R16). Every tuple has one entry per side."""

    round: int
    dealer: int
    cards: tuple[int, ...]
    """Cards each side captured, leftovers included."""
    card_points: tuple[int, ...]
    """R14: aces, jacks, 2C, 10D; sums to 13 when somebody captured."""
    most_cards: tuple[int, ...]
    """R15: ``most_cards_points`` to every side tied for the most cards."""
    bastras: tuple[int, ...]
    """Number of bastras (R12, not the jack kind)."""
    jack_bastras: tuple[int, ...]
    """Number of jack-on-lone-jack bastras."""
    bastra_points: tuple[int, ...]
    """Points from both kinds of bastra."""
    leftover: int
    """Cards left on the board after the 48th play (R13)."""
    leftover_side: int | None
    """Side that took them: the last capturer's, or ``None`` when nobody captured."""
    total: tuple[int, ...]
    """This round's points: card points + most cards + bastra points."""
    scores: tuple[int, ...]
    """Cumulative scores after this round."""

    @classmethod
    def from_state(cls, state: np.ndarray, sides: int) -> RoundResult:
        """The result a kernel left in a state's ``RES_`` block."""

        def block(at: int) -> tuple[int, ...]:
            return tuple(state[at : at + sides].tolist())

        side = int(state[K.RES_LEFTOVER_SIDE])
        return cls(
            round=int(state[K.RES_ROUND]),
            dealer=int(state[K.RES_DEALER]),
            cards=block(K.RES_CARDS),
            card_points=block(K.RES_CARD_POINTS),
            most_cards=block(K.RES_MOST_CARDS),
            bastras=block(K.RES_BASTRAS),
            jack_bastras=block(K.RES_JACK_BASTRAS),
            bastra_points=block(K.RES_BASTRA_POINTS),
            leftover=int(state[K.RES_LEFTOVER]),
            leftover_side=None if side < 0 else side,
            total=block(K.RES_TOTAL),
            scores=block(K.SCORES),
        )


def bastra_kind(card: Card, capture: Mask, board: Mask) -> int:
    """R12: ``BASTRA`` when a card other than a jack clears ``board``, ``JACK_BASTRA`` when a
    jack takes a board of one jack, else ``NO_BASTRA`` (before the last-play rule)."""
    return K.bastra_kind(card, capture, board)


def round_seed_deck(seed: int, round_number: int) -> list[Card]:
    """The shuffled deck (top first) of one round of the game with this seed."""
    return K.shuffled_deck(seed % SEED_LIMIT, round_number)


class SeatValues:
    """A list-like view of one per-seat (or per-side) block of a game's state: reads give ints,
    writes go to the state."""

    __slots__ = ("_at", "_len", "_state")

    def __init__(self, state: np.ndarray, at: int, length: int) -> None:
        self._state = state
        self._at = at
        self._len = length

    def __len__(self) -> int:
        return self._len

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return self.tolist()[index]
        if not -self._len <= index < self._len:
            raise IndexError(f"seat index {index} out of range for {self._len} entries")
        return int(self._state[self._at + index % self._len])

    def __setitem__(self, index: int, value: int) -> None:
        if not -self._len <= index < self._len:
            raise IndexError(f"seat index {index} out of range for {self._len} entries")
        self._state[self._at + index % self._len] = value

    def __iter__(self) -> Iterator[int]:
        return iter(self.tolist())

    def tolist(self) -> list[int]:
        return self._state[self._at : self._at + self._len].tolist()

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (SeatValues, list, tuple)):
            return self.tolist() == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return repr(self.tolist())


def _block(name: str, per_side: bool = False) -> property:
    at = K.FIELD_OFFSETS[name]

    def read(self: Game) -> SeatValues:
        length = self.rules.num_sides if per_side else self.rules.num_players
        return SeatValues(self._s, at, length)

    def write(self: Game, values: Sequence[int]) -> None:
        length = self.rules.num_sides if per_side else self.rules.num_players
        values = list(values)
        if len(values) != length:
            raise ValueError(f"{name.lower()} needs {length} entries, got {len(values)}")
        self._s[at : at + length] = values

    return property(read, write)


def _scalar(index: int) -> property:
    def read(self: Game) -> int:
        return self._s.item(index)

    def write(self: Game, value: int) -> None:
        self._s[index] = value

    return property(read, write)


class Game:
    """One game of Bastra, from the first deal to the winner."""

    __slots__ = ("_r", "_s", "results", "rules")

    def __init__(
        self,
        rules: Rules | None = None,
        seed: int | None = None,
        deck: Sequence[Card] | Sequence[str] | None = None,
    ) -> None:
        """Start a game. ``deck`` (52 card ints or names, top first) fixes round 1's deal; later
        rounds, and round 1 without a deck, are shuffled from ``seed`` (random when ``None``)."""
        if rules is None:
            rules = Rules()
        elif not isinstance(rules, Rules):
            raise TypeError(f"rules must be a Rules, got {type(rules).__name__}")
        if seed is None:
            seed = secrets.randbits(63)
        elif isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
            raise TypeError(f"seed must be an int or None, got {type(seed).__name__} {seed!r}")
        cards = _NO_DECK
        if deck is not None:
            given = list(deck)
            if any(isinstance(c, str) for c in given):
                # card names, as the env's reset options take them (parse_card refuses an int)
                ints = parse_deck(cast("list[str]", given))
            else:
                ints = cast("list[Card]", given)
                if sorted(ints) != list(range(NUM_CARDS)):
                    raise ValueError(
                        "deck must hold each of the 52 cards (ints 0..51) exactly once"
                    )
            cards = np.array(ints, dtype=np.int64)
        self.rules = rules
        self._r = K.rules_array(rules)
        self._s = np.zeros(K.STATE_SIZE, dtype=np.int64)
        self.results: tuple[RoundResult, ...] = ()
        K.new_game(self._s, self._r, int(seed) % SEED_LIMIT, cards)

    # ----------------------------------------------------------------------------- state
    hands = _block("HANDS")
    captured = _block("CAPTURED")
    bastras = _block("BASTRAS")
    jack_bastras = _block("JACK_BASTRAS")
    scores = _block("SCORES", per_side=True)
    board = _scalar(K.BOARD)
    deck_pos = _scalar(K.DECK_POS)
    plays = _scalar(K.PLAYS)
    current = _scalar(K.CURRENT)
    dealer = _scalar(K.DEALER)
    round = _scalar(K.ROUND)
    last_capturer = _scalar(K.LAST_CAPTURER)
    seed = _scalar(K.SEED)

    @property
    def state(self) -> np.ndarray:
        """The kernels' state row (``bastra_env.compiled_rules``): read it, do not resize it."""
        return self._s

    @property
    def rules_row(self) -> np.ndarray:
        """The kernels' rules row for ``rules``."""
        return self._r

    @property
    def deck(self) -> tuple[Card, ...]:
        return tuple(self._s[K.DECK : K.DECK + self._s[K.DECK_LEN]].tolist())

    @deck.setter
    def deck(self, cards: Sequence[Card]) -> None:
        cards = list(cards)
        if len(cards) > K.DECK_CAPACITY:
            raise ValueError(f"a round's deck holds at most {K.DECK_CAPACITY} entries")
        self._s[K.DECK : K.DECK + len(cards)] = cards
        self._s[K.DECK_LEN] = len(cards)

    @property
    def done(self) -> bool:
        return bool(self._s.item(K.DONE))

    @property
    def winner(self) -> int | None:
        return None if self._s[K.WINNER] < 0 else int(self._s[K.WINNER])

    @property
    def last_move(self) -> tuple[int, Card, Mask] | None:
        s = self._s
        if s[K.LAST_SEAT] < 0:
            return None
        return (int(s[K.LAST_SEAT]), int(s[K.LAST_CARD]), int(s[K.LAST_CAPTURE]))

    # ----------------------------------------------------------------------------- moves
    def legal_moves(self) -> list[Move]:
        """Every legal ``(card, capture)`` of the seat to move, cards low to high, captures in
        canonical order (most cards, most points, lowest mask). ``[]`` once the game is over."""
        s = self._s
        if s.item(K.DONE):
            return []
        board = s.item(K.BOARD)
        hand = s.item(K.HANDS + s.item(K.CURRENT))
        cards = _HAND_CARDS.get(hand)
        if cards is None:
            cards = _hand_cards(hand)
        auto = self.rules.capture == "auto"
        moves: list[Move] = []
        for card in cards:
            key = board & _CARD_RELEVANT[card]
            found = _MOVE_CACHE[card].get(key)
            if found is None:
                found = _card_moves(card, key)
            if auto:
                moves.append(found[0])
            else:
                moves += found
        return moves

    def captures_for(self, card: Card) -> tuple[Mask, ...]:
        """Legal captures of ``card`` on the current board (``()``: it would trail)."""
        caps = captures(card, int(self._s[K.BOARD]))
        return caps[:1] if self.rules.capture == "auto" else caps

    def is_legal(self, move: Move) -> bool:
        if self.done or not isinstance(move, tuple) or len(move) != 2:
            return False
        card, capture = move
        if not (isinstance(card, int) and isinstance(capture, int)):
            return False
        if not 0 <= card < NUM_CARDS or not (self.hands[self.current] >> card) & 1:
            return False
        caps = self.captures_for(card)
        return capture in caps if caps else capture == 0

    def play(self, move: Move) -> None:
        """Play a legal move; ``ValueError`` (and nothing changes) when it is not legal now."""
        if not self.is_legal(move):
            raise ValueError(self._illegal_reason(move))
        self.apply(move[0], move[1])

    def _illegal_reason(self, move: object) -> str:
        if self.done:
            return "the game is over; no move is legal"
        if not isinstance(move, tuple) or len(move) != 2:
            return f"a move is a (card, capture mask) pair of ints, got {move!r}"
        card, capture = move
        if not (isinstance(card, int) and isinstance(capture, int)) or not 0 <= card < NUM_CARDS:
            return f"a move is a (card 0..51, capture mask) pair of ints, got {move!r}"
        seat = self.current
        if not (self.hands[seat] >> card) & 1:
            return (
                f"seat {seat} does not hold {card_name(card)} (hand: {mask_str(self.hands[seat])})"
            )
        caps = self.captures_for(card)
        if not caps:
            return (
                f"{card_name(card)} cannot capture on board [{mask_str(self.board)}]; "
                f"it must be trailed (capture 0), not take [{mask_str(capture)}]"
            )
        options = "; ".join(f"[{mask_str(c)}]" for c in caps)
        return (
            f"{card_name(card)} on board [{mask_str(self.board)}] must take one of {options}, "
            f"not [{mask_str(capture)}]"
        )

    def apply(self, card: Card, capture: Mask) -> None:
        """Play without checking legality: the fast path for callers that took the move from
        :meth:`legal_moves`. An illegal move here corrupts the state."""
        if K.apply_move(self._s, self._r, card, capture):  # True: a round was scored
            self.results += (RoundResult.from_state(self._s, self.rules.num_sides),)

    # ----------------------------------------------------------------------------- reading
    def copy(self) -> Game:
        """An independent copy (shares only immutable parts: rules, results)."""
        return Game.from_state(self.rules, self._s, self.results, self._r)

    @classmethod
    def from_state(
        cls,
        rules: Rules,
        state: np.ndarray,
        results: tuple[RoundResult, ...] = (),
        rules_row: np.ndarray | None = None,
    ) -> Game:
        """A game holding a copy of a kernels' state row (``Game.state``, a row of
        ``VectorEnv.states``) played under ``rules``; ``results`` are its finished rounds."""
        game = cls.__new__(cls)
        game.rules = rules
        game._r = K.rules_array(rules) if rules_row is None else rules_row
        game._s = np.asarray(state, dtype=np.int64).copy()
        game.results = results
        return game

    @property
    def num_players(self) -> int:
        return self.rules.num_players

    def side_of(self, seat: int) -> int:
        return self.rules.side_of(seat)

    def deck_remaining(self) -> Mask:
        """Cards still to be dealt this round."""
        m = 0
        for c in self.deck[self.deck_pos :]:
            m |= 1 << c
        return m

    def accounted(self) -> Mask:
        """Union of every place a card can be: 52 bits set in every reachable state."""
        m = self.board | self.deck_remaining()
        for h in self.hands:
            m |= h
        for p in self.captured:
            m |= p
        return m

    def is_draw(self) -> bool:
        return self.done and self.winner is None

    def __repr__(self) -> str:
        hands = " | ".join(mask_str(h) for h in self.hands)
        return (
            f"Game(round={self.round}, play={self.plays}/{PLAYS_PER_ROUND}, "
            f"current={self.current}, board=[{mask_str(self.board)}], hands=[{hands}], "
            f"scores={list(self.scores)})"
        )


_CARD_RELEVANT: tuple[Mask, ...] = tuple(RELEVANT[c >> 2] for c in range(NUM_CARDS))
_MOVE_CACHE: tuple[dict[Mask, tuple[Move, ...]], ...] = tuple({} for _ in range(NUM_CARDS))
"""Per card: ``board & _CARD_RELEVANT[card]`` -> its legal moves (a trail if it cannot capture)."""
_HAND_CARDS: dict[Mask, tuple[Card, ...]] = {}
"""Hand mask -> its cards, low to high."""


def _card_moves(card: Card, key: Mask) -> tuple[Move, ...]:
    cache = _MOVE_CACHE[card]
    if len(cache) >= CACHE_LIMIT:
        cache.clear()
    moves = cache[key] = tuple((card, cap) for cap in captures(card, key)) or ((card, 0),)
    return moves


def _hand_cards(hand: Mask) -> tuple[Card, ...]:
    if len(_HAND_CARDS) >= CACHE_LIMIT:
        _HAND_CARDS.clear()
    cards = _HAND_CARDS[hand] = tuple(iter_cards(hand))
    return cards


__all__ = [
    "BOARD_SIZE",
    "HAND_SIZE",
    "PLAYS_PER_ROUND",
    "Game",
    "Move",
    "RoundResult",
    "round_seed_deck",
]
