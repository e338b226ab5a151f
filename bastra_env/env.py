"""
# Bastra

| Import             | `from bastra_env import env`                                |
|--------------------|-------------------------------------------------------------|
| Registered as      | `pettingzoo.make("aec", "bastra/bastra-v0")`                |
| Actions            | Discrete                                                    |
| Parallel API       | No (turn-based; `turn_based_aec_to_parallel` works)         |
| Manual Control     | No                                                          |
| Agents             | `agents = ['player_0', ..., 'player_{n-1}']`, n = 2, 3, 4    |
| Action Shape       | (1,)                                                        |
| Action Values      | Discrete(208): 52 cards x 4 capture slots                   |
| Observation Shape  | (1125,) float32, plus `action_mask` (208,) int8             |
| Observation Values | [0, 1] for card planes and flags; see the layout table      |

Bastra is the Cypriot fishing card game: play a card from hand to capture board cards of the same
rank (pairing) or numeric cards that add up to its value (combining), sweep the board with a jack,
and score aces, jacks, the 2 of clubs, the 10 of diamonds, the most cards and bastras (clearing the
board). The rules are those of the project's `RULES.md`; every variant is a keyword (`Rules` field).

### Observation Space

`observe(agent)` returns `{"observation": float32[1125], "action_mask": int8[208]}`, the same
spaces for every agent and every table size. Everything is seat-relative: slot 0 is the observing
seat, then its left neighbour (who plays next), the seat opposite (the partner in the team game),
and its right neighbour. With 2 players the opponent is "left"; with 3, the others are "left" and
"right"; unused slots stay 0. The layout is one table, `OBSERVATION_LAYOUT`, which also builds the
space, so the two cannot drift:

| piece            | size | meaning                                                            |
|------------------|------|--------------------------------------------------------------------|
{layout_rows}

Card planes use the engine's card order: index `4 * rank + suit`, ranks A 2 .. 10 J Q K, suits
C D H S. The observation never holds another seat's hand or the deck order: `unseen` is the union
of the other hands and the deck, which the observer cannot tell apart. `deal_played` and
`deal_taken` are the public history of the current deal, play by play (the seat of the deal's k-th
play follows from the dealer and `plays`): what the other seats chose from the hands they were
dealt, which is what a player reasons about their hands from. They were added in version 0.3, at
the layout's end: a network trained on the 0.2 layout (1021 entries) reads its first entries.

#### Legal Actions Mask

`action_mask[a] == 1` exactly when action `a` is legal for the agent to move; it is all zeros for
every other agent and once the game is over. Capturing is compulsory for the card played (R7), so a
card that can capture has no trail action, and a card with several maximal captures (R9) has one
action for each.

### Action Space

`action = 4 * card + slot`. The card is the card played (its identity, not a hand position, so an
action means the same thing all game). The slot picks among that card's legal captures in the
canonical order: most cards taken, then most points, then the lowest card mask; slot 0 is also the
trail when the card cannot capture. With `capture="auto"` only slot 0 is ever legal.

A card can have more than 4 maximal captures; then only the first 4 of that order (the biggest)
get an action. In random play this happens about once in 40,000 capturing choices
(`tests/test_env.py` measures it). `decode_action(a)` and `encode_action(card, capture)` translate.

### Rewards

- `reward="win"` (default): at the end of the game +1 to every agent of the winning side, -1 to
  every other agent, 0 to all on a draw.
- `reward="points"`: after each round, every agent receives its side's points that round minus the
  mean points of the other sides (in two-sided games: the point difference).

Partners always receive the same reward. An illegal action through `env()` ends the game with -1
for every agent of the offender's side, 0 for the others (PettingZoo's `TerminateIllegalWrapper`,
with partners sharing the reward as in `VectorEnv`); `raw_env.step` raises `ValueError`.

At the end of each round, `infos[agent]["round_result"]` holds that round's breakdown (keyed by
agent, partners sharing their side's numbers); an agent sees it in `last()` at its next turn.

### Variants

`env(num_players=3)`, `env(num_players=4, teams=True)`, `env(max_rounds=1)` for single-round
episodes, and any other `Rules` field as a keyword, or `rules=Rules(...)`. `reset(seed=s,
options={"deck": [52 card names, top first]})` deals round 1 from that deck.

### Version History

* v0: Initial release.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, ClassVar

import numpy as np
from gymnasium import spaces
from gymnasium.utils import seeding
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from . import compiled_rules as K
from .cards import Mask, card_name, iter_cards, parse_card, parse_deck
from .game import Game, Move, RoundResult
from .layout import (
    NUM_ACTIONS,
    OBSERVATION_LAYOUT,
    OBSERVATION_SIZE,
    OFFSETS,
    REWARD_MODES,
    SLOTS_PER_CARD,
    observation_high,
)
from .render import render_image, render_text
from .rules import FIELD_NAMES, Rules

__doc__ = __doc__.replace(
    "{layout_rows}",
    "\n".join(
        f"| `{name}` | {size} | {meaning} |" for name, size, _, meaning in OBSERVATION_LAYOUT
    ),
)


def env(**kwargs: Any) -> AECEnv:
    """The Bastra AEC environment, wrapped the PettingZoo way (see the module docstring)."""
    environment = raw_env(**kwargs)
    environment = _TerminateIllegalWrapper(environment, illegal_reward=-1)
    environment = _AssertOutOfBoundsWrapper(environment)
    environment = _OrderEnforcingWrapper(environment)
    return environment


# PettingZoo's wrappers reach the base env's attributes through ``__getattr__`` at every level: with
# three wrappers each read of ``agent_selection`` or ``terminations`` costs three failed lookups,
# about a third of a random-play step. These subclasses behave exactly like PettingZoo's (same
# classes by ``isinstance``, same checks) but read the per-step attributes straight from the base.
_HOT_ATTRIBUTES = (
    "agent_selection",
    "agents",
    "terminations",
    "truncations",
    "rewards",
    "infos",
    "_cumulative_rewards",
)


def _direct(name: str, needs_reset: bool) -> property:
    def read(self: Any) -> Any:
        if needs_reset and not self._has_reset and name != "_cumulative_rewards":
            raise AttributeError(f"{name} cannot be accessed before reset")
        return getattr(self._base, name)

    return property(read)


def _fast_wrapper(wrapper: type[Any]) -> type:
    """``wrapper`` with direct reads of the hot attributes, importable (so picklable) here as
    ``_<its name>``."""
    needs_reset = issubclass(wrapper, wrappers.OrderEnforcingWrapper)

    def __init__(self: Any, environment: AECEnv, *args: Any, **kwargs: Any) -> None:
        self._base = environment.unwrapped
        wrapper.__init__(self, environment, *args, **kwargs)

    namespace: dict[str, Any] = {name: _direct(name, needs_reset) for name in _HOT_ATTRIBUTES}
    namespace["__init__"] = __init__
    namespace["__doc__"] = wrapper.__doc__
    namespace["__module__"] = __name__
    namespace["__qualname__"] = f"_{wrapper.__name__}"
    return type(wrapper.__name__, (wrapper,), namespace)


class _TerminateIllegalWrapper(_fast_wrapper(wrappers.TerminateIllegalWrapper)):  # type: ignore[misc]
    """PettingZoo's ``TerminateIllegalWrapper``, with the offender's partners sharing its reward:
    an illegal action gives every seat of the offending side the illegal reward (0 to the others),
    the same rule as ``VectorEnv``'s."""

    def step(self, action: Any) -> None:
        offender = self.agent_selection
        was_terminated = self._terminated
        super().step(action)
        if self._terminated and not was_terminated:
            base = self._base
            side = base.rules.side_of
            seat = base.possible_agents.index(offender)
            for i, agent in enumerate(base.possible_agents):
                if agent != offender and side(i) == side(seat):
                    base.rewards[agent] = float(self._illegal_value)
                    base._cumulative_rewards[agent] += float(self._illegal_value)


_TerminateIllegalWrapper.__name__ = "TerminateIllegalWrapper"
_AssertOutOfBoundsWrapper = _fast_wrapper(wrappers.AssertOutOfBoundsWrapper)
_OrderEnforcingWrapper = _fast_wrapper(wrappers.OrderEnforcingWrapper)


class raw_env(AECEnv):
    """The unwrapped Bastra AEC environment. ``step`` raises ``ValueError`` on an illegal action."""

    metadata: ClassVar[dict[str, Any]] = {
        "render_modes": ["human", "ansi", "rgb_array"],
        "name": "bastra_v0",
        "is_parallelizable": False,
        "render_fps": 1,
    }

    def __init__(
        self,
        rules: Rules | None = None,
        *,
        reward: str = "win",
        render_mode: str | None = None,
        reveal_hands: bool = False,
        **rule_fields: Any,
    ) -> None:
        """``rules`` or any ``Rules`` field as a keyword (not both); ``reward`` is "win" or
        "points"; ``reveal_hands`` shows every hand when rendering."""
        super().__init__()
        if rules is not None and rule_fields:
            raise TypeError(
                f"pass rules=Rules(...) or Rules fields, not both: {sorted(rule_fields)}"
            )
        if rules is None:
            unknown = sorted(set(rule_fields) - set(FIELD_NAMES))
            if unknown:
                raise TypeError(
                    f"unknown keyword(s) {unknown}; the env takes rules, reward, render_mode, "
                    f"reveal_hands and the Rules fields {list(FIELD_NAMES)}"
                )
            rules = Rules(**rule_fields)
        elif not isinstance(rules, Rules):
            raise TypeError(f"rules must be a Rules, got {type(rules).__name__}")
        if reward not in REWARD_MODES:
            raise ValueError(f"reward must be one of {REWARD_MODES}, got {reward!r}")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(
                f"render_mode must be one of {self.metadata['render_modes']} or None, "
                f"got {render_mode!r}"
            )
        self.rules = rules
        self.reward_mode = reward
        self._reward_code = REWARD_MODES.index(reward)
        self.render_mode = render_mode
        self.reveal_hands = reveal_hands
        n = rules.num_players
        self.possible_agents = [f"player_{i}" for i in range(n)]
        self.agent_name_mapping = {a: i for i, a in enumerate(self.possible_agents)}
        self._observation_space = spaces.Dict(
            {
                "observation": spaces.Box(
                    low=0.0, high=observation_high(), shape=(OBSERVATION_SIZE,), dtype=np.float32
                ),
                "action_mask": spaces.Box(low=0, high=1, shape=(NUM_ACTIONS,), dtype=np.int8),
            }
        )
        self._action_space: spaces.Discrete = spaces.Discrete(NUM_ACTIONS)
        self.observation_spaces = {a: self._observation_space for a in self.possible_agents}
        self.action_spaces = {a: self._action_space for a in self.possible_agents}
        self._work = K.capture_work()
        self.game: Game | None = None
        self._move_cache: dict[int, Move] | None = None
        self._rewarded = False
        self.np_random, _ = seeding.np_random(None)

    # --------------------------------------------------------------------------- spaces
    def observation_space(self, agent: str) -> spaces.Dict:
        return self._observation_space

    def action_space(self, agent: str) -> spaces.Discrete:
        return self._action_space

    # --------------------------------------------------------------------------- reset / step
    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """Shuffle with ``seed``; ``options={"deck": [...]}`` (52 card names, top first) deals
        round 1 from that order. Other option keys are ignored."""
        deck = None
        if options and options.get("deck") is not None:
            deck = parse_deck(options["deck"])  # raises before anything changes
        if seed is not None:
            self.np_random, _ = seeding.np_random(seed)
            game_seed = int(seed)  # the seeding rule the vector env shares: game seed = seed
        else:
            game_seed = int(self.np_random.integers(0, 2**63 - 1))
        self.game = Game(self.rules, seed=game_seed, deck=deck)
        self.agents = self.possible_agents[:]
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos: dict[str, dict[str, Any]] = {a: {} for a in self.agents}
        self.agent_selection = self.possible_agents[self.game.current]
        self._rewarded = False
        self._move_cache = None

    def step(self, action: Any) -> None:
        game = self._require_game()
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        move = self._moves().get(action if type(action) is int else _as_action(action))
        if move is None:
            raise ValueError(self._illegal_message(action))
        self._cumulative_rewards[agent] = 0.0
        if self.infos[agent]:
            self.infos[agent] = {}
        rounds_before = len(game.results)
        game.apply(*move)
        self._move_cache = None
        if len(game.results) == rounds_before:  # the common case: nothing scored
            if self._rewarded:
                self.rewards = dict.fromkeys(self.agents, 0.0)
                self._rewarded = False
            self.agent_selection = self.possible_agents[game.current]
        else:
            self._score_round(game, agent)
        if self.render_mode == "human":
            self.render()

    def _score_round(self, game: Game, agent: str) -> None:
        """A round ended on this step: infos, rewards, and perhaps the end of the game."""
        result = game.results[-1]
        info = self._round_info(result)
        for a in self.agents:
            self.infos[a] = {"round_result": info}
        values = np.zeros(self.rules.num_players)
        K.step_rewards(game.state, game.rules_row, self._reward_code, values)
        rewards = dict(zip(self.agents, values.tolist(), strict=True))
        if game.done:
            self.terminations = dict.fromkeys(self.agents, True)
            seat = self.agent_name_mapping[agent]
            self.agent_selection = self.agents[(seat + 1) % len(self.agents)]
        else:
            self.agent_selection = self.possible_agents[game.current]
        self.rewards = rewards
        self._rewarded = True
        self._accumulate_rewards()

    def _round_info(self, result: RoundResult) -> dict[str, Any]:
        side = self.rules.side_of

        def per_agent(values: tuple[int, ...]) -> dict[str, int]:
            return {a: values[side(i)] for i, a in enumerate(self.possible_agents)}

        return {
            "round": result.round,
            "points": per_agent(result.total),
            "cards": per_agent(result.cards),
            "card_points": per_agent(result.card_points),
            "most_cards": per_agent(result.most_cards),
            "bastras": per_agent(result.bastras),
            "jack_bastras": per_agent(result.jack_bastras),
            "bastra_points": per_agent(result.bastra_points),
            "scores": per_agent(result.scores),
            "leftover": result.leftover,
        }

    # --------------------------------------------------------------------------- observing
    def observe(self, agent: str) -> dict[str, np.ndarray]:
        game = self._require_game()
        observation, action_mask = self._encode(game, self.agent_name_mapping[agent])
        return {"observation": observation, "action_mask": action_mask}

    def _encode(self, game: Game, seat: int) -> tuple[np.ndarray, np.ndarray]:
        """The observation and mask of one seat: one compiled call (``compiled_rules.encode``)."""
        self._moves()  # the legal moves in the state are current
        obs = np.empty(OBSERVATION_SIZE, dtype=np.float32)
        mask = np.empty(NUM_ACTIONS, dtype=np.int8)
        K.encode(game.state, game.rules_row, seat, obs, mask)
        return obs, mask

    def _moves(self) -> dict[int, Move]:
        """Legal actions of the agent to move -> engine moves (cached until the next step)."""
        if self._move_cache is None:
            game = self._require_game()
            state = game.state
            count = K.legal_slots(state, game.rules_row, self._work)
            actions = state[K.MOVE_ACTIONS : K.MOVE_ACTIONS + count].tolist()
            captures = state[K.MOVE_CAPTURES : K.MOVE_CAPTURES + count].tolist()
            self._move_cache = {
                a: (a // SLOTS_PER_CARD, c) for a, c in zip(actions, captures, strict=True)
            }
        return self._move_cache

    # --------------------------------------------------------------------------- codec
    def legal_actions(self) -> list[int]:
        """The legal actions of the agent to move, ascending."""
        return sorted(self._moves())

    def decode_action(self, action: int) -> tuple[str, frozenset[str]]:
        """``action`` -> (card played, board cards it takes) for the agent to move now."""
        move = self._moves().get(_as_action(action))
        if move is None:
            raise ValueError(self._illegal_message(action))
        card, capture = move
        return card_name(card), frozenset(card_name(c) for c in iter_cards(capture))

    def encode_action(self, card: str, capture: Iterable[str] | None = None) -> int:
        """(card played, board cards taken: names, empty or None for a trail) -> action.
        ``ValueError`` when that play is not legal now."""
        played = parse_card(card)
        if isinstance(capture, str):
            raise TypeError(
                f"capture must be a collection of card names, not one string {capture!r}"
            )
        taken: Mask = 0
        for name in capture or ():
            taken |= 1 << parse_card(name)
        for action, move in self._moves().items():
            if move == (played, taken):
                return action
        names = sorted(card_name(c) for c in iter_cards(taken))
        legal = ", ".join(
            f"{card_name(c)}->[{' '.join(card_name(x) for x in iter_cards(m))}]"
            for c, m in self._moves().values()
        )
        raise ValueError(
            f"playing {card_name(played)} taking {names} is not legal now; legal: {legal}"
        )

    def _illegal_message(self, action: Any) -> str:
        game = self._require_game()
        legal = sorted(self._moves())
        if game.done:
            return "the game is over; call reset()"
        try:
            a = _as_action(action)
        except (TypeError, ValueError):
            return f"an action is an int in [0, {NUM_ACTIONS}), got {action!r}; legal: {legal}"
        if not 0 <= a < NUM_ACTIONS:
            return f"action {a} is out of range [0, {NUM_ACTIONS}); legal: {legal}"
        card, slot = divmod(a, SLOTS_PER_CARD)
        return (
            f"action {a} ({card_name(card)}, capture slot {slot}) is not legal for "
            f"{self.agent_selection} now; legal actions: {legal}"
        )

    # --------------------------------------------------------------------------- reading
    def snapshot(self) -> dict[str, Any]:
        """The whole true state, JSON-serialisable, card names only (see the API docs)."""
        game = self._require_game()
        names = self.possible_agents

        def cards(mask: Mask) -> list[str]:
            return [card_name(c) for c in iter_cards(mask)]

        return {
            "round": game.round,
            "dealer": names[game.dealer],
            "current": None if game.done else names[game.current],
            "hands": {a: cards(game.hands[i]) for i, a in enumerate(names)},
            "board": cards(game.board),
            "deck": [card_name(c) for c in game.deck[game.deck_pos :]],
            "captured": {a: cards(game.captured[i]) for i, a in enumerate(names)},
            "scores": {a: game.scores[self.rules.side_of(i)] for i, a in enumerate(names)},
        }

    def render(self) -> str | np.ndarray | None:
        if self.render_mode is None:
            import gymnasium

            gymnasium.logger.warn("render() called without a render_mode; pass render_mode=...")
            return None
        if self.render_mode == "rgb_array":
            return render_image(self._require_game(), self.possible_agents, self.reveal_hands)
        text = render_text(self._require_game(), self.possible_agents, self.reveal_hands)
        if self.render_mode == "ansi":
            return text
        print(text + "\n")
        return None

    def close(self) -> None:
        pass

    def _require_game(self) -> Game:
        if self.game is None:
            raise RuntimeError("call reset() before using the environment")
        return self.game


def _as_action(action: Any) -> int:
    if isinstance(action, (bool, np.bool_)) or action is None:
        raise TypeError(f"an action is an int, got {action!r}")
    if isinstance(action, np.ndarray):
        if action.size != 1:
            raise TypeError(f"an action is one int, got an array of shape {action.shape}")
        action = action.item()
    if isinstance(action, (int, np.integer)):
        return int(action)
    raise TypeError(f"an action is an int, got {type(action).__name__} {action!r}")


__all__ = ["NUM_ACTIONS", "OBSERVATION_LAYOUT", "OBSERVATION_SIZE", "OFFSETS", "env", "raw_env"]
