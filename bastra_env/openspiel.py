"""Bastra as an OpenSpiel game: ``import bastra_env.openspiel`` registers ``python_bastra``.

    import pyspiel
    import bastra_env.openspiel  # noqa: F401  (registers the game)

    game = pyspiel.load_game("python_bastra", {"num_players": 4, "teams": True})
    state = game.new_initial_state()       # chance nodes deal the first cards, one at a time

Needs the ``openspiel`` extra (``pip install "bastra-rl[openspiel]"``: the prebuilt
``open-spiel`` wheel). Every field of :class:`~bastra_env.rules.Rules` is a game parameter with
the default of ``Rules`` (``max_rounds`` 0 stands for no limit).

Chance deals the cards one at a time, in the order R5 and R6 deal them: each hand's cards from
the dealer's left, then the board (a jack turned goes to the bottom of the deck and the next card
is turned, so the first board takes as many chance nodes as it turns cards), then each later deal.
A chance outcome is the card dealt (0..51, the engine's card order); player actions are the AEC
env's 208 actions (``4 * card + slot``). Every state method delegates to the compiled kernels:
the state holds one engine state (``bastra_env.compiled_rules``) whose deck positions not yet dealt
by chance hold the cards still undealt in an arbitrary order, and a chance outcome moves its card
into the position being dealt. Observation tensors are the project's observation encoder
(``bastra_env.layout``, 1,125 floats, the observer's seat first); the information state tensor
adds the current round's plays in order (who played which card and what it took). Returns are
the game's result: +1 for each seat of the winning side, -1 for the others, 0 on a draw (zero-sum
with two sides, general-sum with three or four players on their own). A state can be cloned,
serialized (OpenSpiel replays its history) and re-dealt from a player's information state
(``resample_from_infostate``: the other hands and the undealt cards shuffled together), which
OpenSpiel's Python IS-MCTS bot uses.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pyspiel

from . import compiled_rules as K
from .cards import NUM_CARDS, card_name
from .layout import NUM_ACTIONS, OBSERVATION_SIZE, SLOTS_PER_CARD
from .rules import Rules

GAME_NAME = "python_bastra"
PLAYS = K.PLAYS_PER_ROUND
HISTORY_SIZE = PLAYS * 2 * NUM_CARDS + PLAYS * 4
"""The information state tensor's round history: per play of the round, the card played and the
cards taken (two 52-card planes) and the seat-relative player (4)."""
INFORMATION_STATE_SIZE = OBSERVATION_SIZE + HISTORY_SIZE

_DEFAULTS = Rules()
PARAMETERS: dict[str, Any] = {
    "num_players": _DEFAULTS.num_players,
    "teams": _DEFAULTS.teams,
    "target_score": _DEFAULTS.target_score,
    "max_rounds": 0,
    "tie_break": _DEFAULTS.tie_break,
    "capture": _DEFAULTS.capture,
    "bastra_points": _DEFAULTS.bastra_points,
    "jack_bastra_points": _DEFAULTS.jack_bastra_points,
    "last_play_bastra": _DEFAULTS.last_play_bastra,
    "most_cards_points": _DEFAULTS.most_cards_points,
}
"""The game parameters: the ``Rules`` fields with their defaults (``max_rounds`` 0: no limit)."""
assert set(PARAMETERS) == set(_DEFAULTS.to_dict()), "a Rules field is missing from PARAMETERS"


def _game_type(utility: Any) -> Any:
    return pyspiel.GameType(
        short_name=GAME_NAME,
        long_name="Bastra (bastra_env)",
        dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
        chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
        information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
        utility=utility,
        reward_model=pyspiel.GameType.RewardModel.TERMINAL,
        max_num_players=4,
        min_num_players=2,
        provides_information_state_string=True,
        provides_information_state_tensor=True,
        provides_observation_string=True,
        provides_observation_tensor=True,
        parameter_specification=PARAMETERS,
    )


def rules_of(params: dict[str, Any]) -> Rules:
    """The ``Rules`` of OpenSpiel game parameters (``ValueError`` names a bad one)."""
    fields = dict(PARAMETERS, **params)
    if fields["max_rounds"] == 0:
        fields["max_rounds"] = None
    return Rules.from_dict(fields)


class BastraGame(pyspiel.Game):
    """The game for one set of parameters (``Rules`` fields)."""

    def __init__(self, params: dict[str, Any] | None = None) -> None:
        self.rules = rules_of(dict(params or {}))
        n, sides = self.rules.num_players, self.rules.num_sides
        zero_sum = sides == 2
        utility = (
            pyspiel.GameType.Utility.ZERO_SUM if zero_sum else pyspiel.GameType.Utility.GENERAL_SUM
        )
        # every round deals at least 13 card points, so a side reaches the target within
        # sides * target / 13 rounds; extra rounds after a tie are bounded generously
        rounds = self.rules.max_rounds or math.ceil(sides * self.rules.target_score / 13) + 20
        info = pyspiel.GameInfo(
            num_distinct_actions=NUM_ACTIONS,
            max_chance_outcomes=NUM_CARDS,
            num_players=n,
            min_utility=-1.0,
            max_utility=1.0,
            utility_sum=0.0 if zero_sum else None,
            max_game_length=rounds * (PLAYS + NUM_CARDS),
        )
        params = dict(PARAMETERS, **(params or {}))
        super().__init__(_game_type(utility), info, params)
        self.rules_row = K.rules_array(self.rules)

    def new_initial_state(self) -> BastraState:
        return BastraState(self)

    def make_py_observer(
        self, iig_obs_type: Any = None, params: dict[str, Any] | None = None
    ) -> Observer:
        if params:
            raise ValueError(f"python_bastra's observer takes no parameters, got {params}")
        perfect_recall = iig_obs_type is None or iig_obs_type.perfect_recall
        return Observer(self, perfect_recall)

    def observation_tensor_size(self) -> int:
        return OBSERVATION_SIZE

    def information_state_tensor_size(self) -> int:
        return INFORMATION_STATE_SIZE


class Shared(tuple):
    """A value clones share instead of copying (OpenSpiel clones a Python state by deep-copying
    its attributes): the game's constants, and histories, which only ever grow into new tuples."""

    def __deepcopy__(self, memo: dict[int, Any]) -> Shared:
        return self


class BastraState(pyspiel.State):
    """A game position: one engine state, and how many of the round's deck positions chance has
    dealt (``dealt``); the others hold the undealt cards in an arbitrary order."""

    def __init__(self, game: BastraGame) -> None:
        super().__init__(game)
        self.constants = Shared((game.rules, game.rules_row, K.capture_work()))
        self.state = np.zeros(K.STATE_SIZE, dtype=np.int64)
        K.new_game(self.state, self.row, 0, np.arange(NUM_CARDS, dtype=np.int64))
        self.dealt = 0
        self.round_plays = Shared()
        """This round's plays, in order: (seat, card, cards taken)."""
        self.public = Shared()
        """The game's plays, in order: (seat, action)."""
        self.received = Shared(Shared() for _ in range(self.rules.num_players))
        """Per seat, the cards it was dealt in each deal of the game, in order."""
        self.recorded = (0, 0)
        self._settle()

    @property
    def rules(self) -> Rules:
        return self.constants[0]

    @property
    def row(self) -> np.ndarray:
        return self.constants[1]

    @property
    def work(self) -> np.ndarray:
        return self.constants[2]

    # ---------------------------------------------------------------- the engine's position
    def _undealt(self) -> int:
        """The deck positions (of the top 52) the engine has dealt that chance has not yet."""
        return min(int(self.state[K.DECK_POS]), NUM_CARDS) - self.dealt

    def _settle(self) -> None:
        """After a change: the legal moves and, once a deal is complete, each seat's cards."""
        K.legal_slots(self.state, self.row, self.work)
        n = self.rules.num_players
        deal = (int(self.state[K.ROUND]), int(self.state[K.PLAYS]))
        fresh = self.state[K.PLAYS] % (K.HAND_SIZE * n) == 0 and deal != self.recorded
        if fresh and self._undealt() == 0 and not self.state[K.DONE]:
            self.received = Shared(
                Shared((*self.received[seat], int(self.state[K.HANDS + seat]))) for seat in range(n)
            )
            self.recorded = deal

    def current_player(self) -> int:
        if self.state[K.DONE]:
            return int(pyspiel.PlayerId.TERMINAL)
        if self._undealt() > 0:
            return int(pyspiel.PlayerId.CHANCE)
        return int(self.state[K.CURRENT])

    def _legal_actions(self, player: int) -> list[int]:
        count = int(self.state[K.NUM_MOVES])
        return sorted(int(a) for a in self.state[K.MOVE_ACTIONS : K.MOVE_ACTIONS + count])

    def chance_outcomes(self) -> list[tuple[int, float]]:
        cards = sorted(int(c) for c in self.state[K.DECK + self.dealt : K.DECK + NUM_CARDS])
        return [(c, 1.0 / len(cards)) for c in cards]

    def _apply_action(self, action: int) -> None:
        if self.is_chance_node():
            self._deal(action)
            return
        move = K.find_move(self.state, action)
        if move < 0:
            raise ValueError(f"action {action} is not legal here")
        seat = int(self.state[K.CURRENT])
        capture = int(self.state[K.MOVE_CAPTURES + move])
        self.public = Shared((*self.public, (seat, action)))
        self.round_plays = Shared((*self.round_plays, (seat, action // SLOTS_PER_CARD, capture)))
        if K.apply_move(self.state, self.row, action // SLOTS_PER_CARD, capture):
            self.dealt = 0  # a new round: the engine dealt it from its own shuffle
            self.round_plays = Shared()
        self._settle()

    def _deal(self, card: int) -> None:
        """Chance deals ``card`` into the next deck position the engine has dealt."""
        at = K.DECK + self.dealt
        rest = self.state[at : K.DECK + NUM_CARDS]
        where = np.flatnonzero(rest == card)
        if where.size == 0:
            raise ValueError(f"card {card} is not among the undealt cards")
        other = int(self.state[at])
        j = at + int(where[0])
        self.state[at], self.state[j] = card, other
        if self.state[K.PLAYS] == 0:
            # the round's first deal: the engine deals it again from the deck as now known, since
            # which cards the board takes depends on the jacks turned (R5)
            K.start_round(self.state, self.row)
        else:  # a later deal (R6): the two cards swap places in the hands they went to
            both = (1 << card) | (1 << other)
            for seat in range(self.rules.num_players):
                hand = int(self.state[K.HANDS + seat])
                if ((hand >> card) ^ (hand >> other)) & 1:
                    self.state[K.HANDS + seat] = hand ^ both
        self.dealt += 1
        self._settle()

    # ---------------------------------------------------------------- outcome
    def is_terminal(self) -> bool:
        return bool(self.state[K.DONE])

    def returns(self) -> list[float]:
        n = self.rules.num_players
        if not self.state[K.DONE] or self.state[K.WINNER] < 0:
            return [0.0] * n
        winner = int(self.state[K.WINNER])
        return [1.0 if self.rules.side_of(s) == winner else -1.0 for s in range(n)]

    # ---------------------------------------------------------------- views
    def _seen(self) -> np.ndarray:
        """The engine state as every seat may know it: cards chance has not yet dealt removed
        from the hands and the board (they are dealt only at chance nodes)."""
        if self._undealt() == 0:
            return self.state
        seen = self.state.copy()
        hidden = 0
        for c in self.state[K.DECK + self.dealt : K.DECK + NUM_CARDS]:
            hidden |= 1 << int(c)
        for seat in range(self.rules.num_players):
            seen[K.HANDS + seat] &= ~hidden
        seen[K.BOARD] &= ~hidden
        K.legal_slots(seen, self.row, self.work)
        return seen

    def observation_array(self, player: int) -> np.ndarray:
        """``player``'s observation: the AEC env's, from the engine's encoder."""
        obs = np.zeros(OBSERVATION_SIZE, dtype=np.float32)
        mask = np.zeros(NUM_ACTIONS, dtype=np.uint8)
        K.encode(self._seen(), self.row, player, obs, mask)
        return obs

    def information_state_array(self, player: int) -> np.ndarray:
        """The observation, then the round's plays in order (card played, cards taken, who)."""
        out = np.zeros(INFORMATION_STATE_SIZE, dtype=np.float32)
        out[:OBSERVATION_SIZE] = self.observation_array(player)
        n = self.rules.num_players
        for k, (seat, card, capture) in enumerate(self.round_plays):
            at = OBSERVATION_SIZE + k * (2 * NUM_CARDS + 4)
            out[at + card] = 1.0
            for c in range(NUM_CARDS):
                if (capture >> c) & 1:
                    out[at + NUM_CARDS + c] = 1.0
            out[at + 2 * NUM_CARDS + (seat - player) % n] = 1.0
        return out

    def information_state_string(self, player: int | None = None) -> str:
        """The seat's perfect-recall view: what it was dealt, deal by deal, and every play of
        the game (``player``: the seat to move by default)."""
        if player is None:
            player = self.current_player()
        received = " | ".join(
            " ".join(card_name(c) for c in range(NUM_CARDS) if (mask >> c) & 1)
            for mask in self.received[player]
        )
        plays = " ".join(f"{s}:{a}" for s, a in self.public)
        return f"p{player} received [{received}] plays [{plays}]"

    def observation_string(self, player: int | None = None) -> str:
        """What the seat sees now: its hand, the board, the round, the scores."""
        if player is None:
            player = self.current_player()
        seen = self._seen()
        hand = int(seen[K.HANDS + player])
        board = int(seen[K.BOARD])
        scores = [int(x) for x in seen[K.SCORES : K.SCORES + self.rules.num_sides]]
        return (
            f"p{player} round {int(seen[K.ROUND])} play {int(seen[K.PLAYS])} "
            f"hand {' '.join(card_name(c) for c in range(NUM_CARDS) if (hand >> c) & 1)} "
            f"board {' '.join(card_name(c) for c in range(NUM_CARDS) if (board >> c) & 1)} "
            f"scores {scores}"
        )

    def _action_to_string(self, player: int, action: int) -> str:
        if player == pyspiel.PlayerId.CHANCE:
            return f"deal {card_name(action)}"
        return f"play {card_name(action // SLOTS_PER_CARD)} slot {action % SLOTS_PER_CARD}"

    def __str__(self) -> str:
        n = self.rules.num_players
        hands = [int(self.state[K.HANDS + s]) for s in range(n)]
        return (
            f"round {int(self.state[K.ROUND])} play {int(self.state[K.PLAYS])} "
            f"dealt {self.dealt} hands {hands} board {int(self.state[K.BOARD])} "
            f"scores {[int(x) for x in self.state[K.SCORES : K.SCORES + 4]]}"
        )

    # ---------------------------------------------------------------- re-dealing
    def resample_from_infostate(self, player_id: int, probability_sampler: Any) -> BastraState:
        """A state ``player_id`` cannot tell from this one: the other hands and the undealt
        cards shuffled together (each hand keeps its size), one card at a time with
        ``probability_sampler`` (OpenSpiel's: each call a uniform number in [0, 1))."""
        clone = self.clone()
        state = clone.state
        n = self.rules.num_players
        others = [s for s in range(n) if s != player_id]
        pool = [c for s in others for c in range(NUM_CARDS) if (int(state[K.HANDS + s]) >> c) & 1]
        top = min(int(state[K.DECK_POS]), NUM_CARDS)
        pool += [int(c) for c in state[K.DECK + top : K.DECK + NUM_CARDS]]
        pool.sort()
        drawn: list[int] = []
        while pool:
            pick = min(int(probability_sampler() * len(pool)), len(pool) - 1)
            drawn.append(pool.pop(pick))
        at = 0
        received = [list(r) for r in clone.received]
        for s in others:
            size = bin(int(state[K.HANDS + s])).count("1")
            hand = 0
            for c in drawn[at : at + size]:
                hand |= 1 << c
            before = int(state[K.HANDS + s])
            state[K.HANDS + s] = hand
            if received[s] and received[s][-1] & before == before:  # this deal's cards
                received[s][-1] = (received[s][-1] & ~before) | hand
            at += size
        clone.received = Shared(Shared(r) for r in received)
        state[K.DECK + top : K.DECK + NUM_CARDS] = drawn[at:]
        clone._settle()
        return clone


class Observer:
    """OpenSpiel's Python observer: ``tensor`` and ``dict`` set by ``set_from(state, player)``;
    the information state (``perfect_recall``) or the observation."""

    def __init__(self, game: BastraGame, perfect_recall: bool) -> None:
        self.perfect_recall = perfect_recall
        size = INFORMATION_STATE_SIZE if perfect_recall else OBSERVATION_SIZE
        self.tensor = np.zeros(size, dtype=np.float32)
        self.dict = {"observation": self.tensor[:OBSERVATION_SIZE]}
        if perfect_recall:
            self.dict["round_plays"] = self.tensor[OBSERVATION_SIZE:].reshape(PLAYS, -1)

    def set_from(self, state: BastraState, player: int) -> None:
        if self.perfect_recall:
            self.tensor[:] = state.information_state_array(player)
        else:
            self.tensor[:] = state.observation_array(player)

    def string_from(self, state: BastraState, player: int) -> str:
        if self.perfect_recall:
            return state.information_state_string(player)
        return state.observation_string(player)


pyspiel.register_game(_game_type(pyspiel.GameType.Utility.ZERO_SUM), BastraGame)

__all__ = ["GAME_NAME", "PARAMETERS", "BastraGame", "BastraState", "Observer", "Shared", "rules_of"]
