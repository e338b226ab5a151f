"""The rules in plain, deliberately simple Python: the reference the compiled kernels of
``bastra_env.compiled_rules`` are checked against (tests only; nothing in the package imports it).

It is the engine as it was before the kernels, with no caches: captures by recursive search over
combining groups, a ``Game`` of Python ints and lists, the same seeding rule (splitmix64).
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from dataclasses import dataclass

from bastra_env.cards import (
    JACK,
    JACKS,
    NUM_CARDS,
    RANK_MASKS,
    Card,
    Mask,
    card_name,
    iter_cards,
    mask_str,
    parse_deck,
    points,
)
from bastra_env.rules import Rules

M64 = (1 << 64) - 1
BELOW = tuple(sum(RANK_MASKS[:r]) if r < JACK else 0 for r in range(13))
Move = tuple[Card, Mask]
HAND_SIZE = 4
BOARD_SIZE = 4
PLAYS_PER_ROUND = NUM_CARDS - BOARD_SIZE


def canonical_key(mask: Mask) -> tuple[int, int, int]:
    """Capture order used everywhere: most cards, then most points, then the lowest mask."""
    return (-mask.bit_count(), -points(mask), mask)


def combining_groups(value: int, cards: list[Card]) -> list[Mask]:
    """Every set of two or more of ``cards`` (all numeric) whose values sum to ``value``."""
    values = [(c >> 2) + 1 for c in cards]
    groups: list[Mask] = []

    def extend(i: int, total: int, mask: Mask, size: int) -> None:
        if total == value:
            if size >= 2:
                groups.append(mask)
            return
        for j in range(i, len(cards)):
            t = total + values[j]
            if t <= value:
                extend(j + 1, t, mask | (1 << cards[j]), size + 1)

    extend(0, 0, 0, 0)
    return groups


def maximal_unions(groups: list[Mask]) -> list[Mask]:
    """Unions of pairwise disjoint groups after which no group fits in what is left (R9)."""
    found: set[Mask] = set()

    def extend(start: int, used: Mask) -> None:
        grew = False
        for i in range(start, len(groups)):
            g = groups[i]
            if not g & used:
                grew = True
                extend(i + 1, used | g)
        if not grew and all(g & used for g in groups):
            found.add(used)

    extend(0, 0)
    found.discard(0)
    return sorted(found, key=canonical_key)


def _compute(rank: int, board: Mask) -> tuple[Mask, ...]:
    if rank == JACK:  # R10: a jack takes everything; onto an empty board it trails
        return (board,) if board else ()
    pair = board & RANK_MASKS[rank]
    low = [c for c in iter_cards(board & BELOW[rank])]
    unions = maximal_unions(combining_groups(rank + 1, low)) if len(low) >= 2 else []
    if unions:
        return tuple(pair | u for u in unions)
    return (pair,) if pair else ()


def captures(card: Card, board: Mask) -> tuple[Mask, ...]:
    """Every legal capture of ``card`` on ``board`` in canonical order (R8-R10)."""
    return _compute(card >> 2, board)


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


NO_BASTRA, BASTRA, JACK_BASTRA = 0, 1, 2


def bastra_kind(card: Card, capture: Mask, board: Mask) -> int:
    """R12: ``BASTRA`` when a card other than a jack clears ``board``, ``JACK_BASTRA`` when a
    jack takes a board of one jack, else ``NO_BASTRA`` (before the last-play rule)."""
    if not capture or capture != board:
        return NO_BASTRA
    if card >> 2 != JACK:
        return BASTRA
    return JACK_BASTRA if capture & JACKS and not capture & (capture - 1) else NO_BASTRA


def round_seed_deck(seed: int, round_number: int) -> list[Card]:
    """The seeding rule in plain Python: Fisher-Yates driven by splitmix64."""
    x = (seed ^ (round_number * 0xD1B54A32D192ED03)) & M64
    deck = list(range(NUM_CARDS))
    for i in range(NUM_CARDS - 1, 0, -1):
        x = (x + 0x9E3779B97F4A7C15) & M64
        z = x
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
        z ^= z >> 31
        j = z % (i + 1)
        deck[i], deck[j] = deck[j], deck[i]
    return deck


class Game:
    """One game of Bastra, from the first deal to the winner."""

    __slots__ = (
        "bastras",
        "board",
        "captured",
        "current",
        "dealer",
        "deck",
        "deck_pos",
        "done",
        "hands",
        "jack_bastras",
        "last_capturer",
        "last_move",
        "plays",
        "results",
        "round",
        "rules",
        "scores",
        "seed",
        "winner",
    )

    def __init__(
        self,
        rules: Rules | None = None,
        seed: int | None = None,
        deck: Sequence[Card] | None = None,
    ) -> None:
        """Start a game. ``deck`` (52 card ints or names, top first) fixes round 1's deal; later
        rounds, and round 1 without a deck, are shuffled from ``seed`` (random when ``None``)."""
        if rules is None:
            rules = Rules()
        elif not isinstance(rules, Rules):
            raise TypeError(f"rules must be a Rules, got {type(rules).__name__}")
        if seed is None:
            seed = secrets.randbits(63)
        elif isinstance(seed, bool) or not isinstance(seed, int):
            raise TypeError(f"seed must be an int or None, got {type(seed).__name__} {seed!r}")
        if deck is not None:
            deck = list(deck)
            if any(isinstance(c, str) for c in deck):
                deck = parse_deck(deck)  # card names, as the env's reset options take them
            elif sorted(deck) != list(range(NUM_CARDS)):
                raise ValueError("deck must hold each of the 52 cards (ints 0..51) exactly once")
        n = rules.num_players
        self.rules = rules
        self.seed = seed
        self.round = 1
        self.dealer = n - 1
        self.scores = [0] * rules.num_sides
        self.results: tuple[RoundResult, ...] = ()
        self.winner: int | None = None
        self.done = False
        self._start_round(deck if deck is not None else round_seed_deck(seed, 1))

    # ----------------------------------------------------------------------------- dealing
    def _start_round(self, deck: list[Card]) -> None:
        n = self.rules.num_players
        first = (self.dealer + 1) % n
        self.hands = [0] * n
        self.captured = [0] * n
        self.bastras = [0] * n
        self.jack_bastras = [0] * n
        self.last_capturer = -1
        self.plays = 0
        self.last_move = None
        self.deck = tuple(deck)
        self.deck_pos = 0
        self._deal_hands()
        # R5: turn cards onto the board until it holds 4; a jack goes to the bottom instead.
        deck = list(deck)
        pos = self.deck_pos
        board = count = 0
        while count < BOARD_SIZE:
            card = deck[pos]
            pos += 1
            if card >> 2 == JACK:
                deck.append(card)
            else:
                board |= 1 << card
                count += 1
        self.board = board
        self.deck = tuple(deck)
        self.deck_pos = pos
        self.current = first

    def _deal_hands(self) -> None:
        """R5/R6: one card at a time to each player, from the dealer's left, until each has 4."""
        n = self.rules.num_players
        first = (self.dealer + 1) % n
        hands, deck, pos = self.hands, self.deck, self.deck_pos
        for _ in range(HAND_SIZE):
            for k in range(n):
                hands[(first + k) % n] |= 1 << deck[pos]
                pos += 1
        self.deck_pos = pos

    # ----------------------------------------------------------------------------- moves
    def legal_moves(self) -> list[Move]:
        if self.done:
            return []
        moves: list[Move] = []
        for card in iter_cards(self.hands[self.current]):
            found = captures(card, self.board)
            if not found:
                moves.append((card, 0))
            elif self.rules.capture == "auto":
                moves.append((card, found[0]))
            else:
                moves += [(card, c) for c in found]
        return moves

    def captures_for(self, card: Card) -> tuple[Mask, ...]:
        """Legal captures of ``card`` on the current board (``()``: it would trail)."""
        caps = captures(card, self.board)
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
        seat = self.current
        bit = 1 << card
        self.hands[seat] ^= bit
        self.plays += 1
        if capture:
            board = self.board ^ capture
            self.board = board
            self.captured[seat] |= capture | bit
            self.last_capturer = seat
            if not board and (self.plays < PLAYS_PER_ROUND or self.rules.last_play_bastra):
                kind = bastra_kind(card, capture, capture)  # the board held exactly the capture
                if kind == BASTRA:
                    self.bastras[seat] += 1
                elif kind == JACK_BASTRA:
                    self.jack_bastras[seat] += 1
        else:
            self.board |= bit
        self.last_move = (seat, card, capture)
        n = len(self.hands)
        if self.plays % (HAND_SIZE * n):
            self.current = (seat + 1) % n
        elif self.plays < PLAYS_PER_ROUND:
            self._deal_hands()
            self.current = (seat + 1) % n
        else:
            self._end_round()

    # ----------------------------------------------------------------------------- scoring
    def _end_round(self) -> None:
        rules = self.rules
        n = rules.num_players
        sides = rules.num_sides
        leftover = self.board.bit_count()
        leftover_side = None
        if self.last_capturer >= 0:
            self.captured[self.last_capturer] |= self.board
            leftover_side = rules.side_of(self.last_capturer)
        self.board = 0
        piles = [0] * sides
        bastras = [0] * sides
        jack_bastras = [0] * sides
        for seat in range(n):
            side = rules.side_of(seat)
            piles[side] |= self.captured[seat]
            bastras[side] += self.bastras[seat]
            jack_bastras[side] += self.jack_bastras[seat]
        cards = tuple(p.bit_count() for p in piles)
        card_points = tuple(points(p) for p in piles)
        most = max(cards)
        most_cards = tuple(rules.most_cards_points if c == most else 0 for c in cards)
        bastra_points = tuple(
            b * rules.bastra_points + j * rules.jack_bastra_points
            for b, j in zip(bastras, jack_bastras, strict=True)
        )
        total = tuple(map(sum, zip(card_points, most_cards, bastra_points, strict=True)))
        for side in range(sides):
            self.scores[side] += total[side]
        self.results += (
            RoundResult(
                round=self.round,
                dealer=self.dealer,
                cards=cards,
                card_points=card_points,
                most_cards=most_cards,
                bastras=tuple(bastras),
                jack_bastras=tuple(jack_bastras),
                bastra_points=bastra_points,
                leftover=leftover,
                leftover_side=leftover_side,
                total=total,
                scores=tuple(self.scores),
            ),
        )
        self._check_game_end()
        if self.done:
            self.current = -1
        else:
            self.round += 1
            self.dealer = (self.dealer + 1) % n
            self._start_round(round_seed_deck(self.seed, self.round))

    def _check_game_end(self) -> None:
        """R17, with ``max_rounds`` and ``tie_break`` from the rules."""
        rules = self.rules
        top = max(self.scores)
        leaders = [side for side, score in enumerate(self.scores) if score == top]
        reached = top >= rules.target_score and (len(leaders) == 1 or rules.tie_break == "draw")
        out_of_rounds = rules.max_rounds is not None and self.round >= rules.max_rounds
        if reached or out_of_rounds:
            self.done = True
            self.winner = leaders[0] if len(leaders) == 1 else None

    # ----------------------------------------------------------------------------- reading
    def copy(self) -> Game:
        """An independent copy (shares only immutable parts: rules, deck, results)."""
        new = Game.__new__(Game)
        new.rules = self.rules
        new.seed = self.seed
        new.round = self.round
        new.dealer = self.dealer
        new.current = self.current
        new.hands = self.hands[:]
        new.board = self.board
        new.deck = self.deck
        new.deck_pos = self.deck_pos
        new.captured = self.captured[:]
        new.bastras = self.bastras[:]
        new.jack_bastras = self.jack_bastras[:]
        new.last_capturer = self.last_capturer
        new.plays = self.plays
        new.scores = self.scores[:]
        new.results = self.results
        new.winner = self.winner
        new.done = self.done
        new.last_move = self.last_move
        return new

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
            f"scores={self.scores})"
        )
