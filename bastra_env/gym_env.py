"""Single-agent Gymnasium Bastra: one seat learns, the other seats are played by given policies.

    env = gymnasium.make("Bastra-v0", num_players=2, opponents=my_policy, seat=None)
    obs, info = env.reset(seed=0)
    obs, reward, terminated, truncated, info = env.step(action)
    env.unwrapped.action_masks()  # for sb3-contrib's MaskablePPO

The observation is the flat ``observation`` vector of the AEC env (see ``bastra_env.env``), the
action space the same ``Discrete(208)``. ``action_masks()`` and ``info["action_mask"]`` give the
legal actions. A policy is anything with ``act(observation, env=...) -> int`` (the ``agents``
package's policies) or a plain callable ``observation -> int``, where ``observation`` is the AEC
observation dict; it is handed the unwrapped AEC env as ``env``; or a player's name
(``opponents="heuristic"``, ``"bastra_2p:network"``, ...). The default opponent plays a
uniformly random legal action.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces

from .env import NUM_ACTIONS, raw_env
from .policy_names import named_opponents
from .rules import Rules

Policy = Any
"""An object with ``act(observation, env=None) -> int``, or a callable ``observation -> int``."""


class RandomLegal:
    """Uniformly random legal action, from a generator the env seeds on ``reset``."""

    def __init__(self, rng: np.random.Generator) -> None:
        self.rng = rng

    def act(self, observation: dict[str, np.ndarray], env: Any = None) -> int:
        legal = np.flatnonzero(observation["action_mask"])
        return int(legal[self.rng.integers(len(legal))])


class BastraGymEnv(gymnasium.Env):
    """One learning seat against fixed policies (registered as ``"Bastra-v0"``)."""

    # not a ClassVar: gymnasium.Env declares metadata an instance attribute
    metadata: dict[str, Any] = {"render_modes": ["human", "ansi"], "render_fps": 1}  # noqa: RUF012

    def __init__(
        self,
        rules: Rules | None = None,
        *,
        opponents: Policy | Sequence[Policy] | Mapping[int, Policy] | None = None,
        seat: int | None = 0,
        reward: str = "win",
        illegal_action: str = "lose",
        render_mode: str | None = None,
        **rule_fields: Any,
    ) -> None:
        """``seat``: the learner's seat, or ``None`` for a random seat each episode.
        ``opponents``: one policy for every other seat, a list with one per other seat (in seat
        order), or a ``{seat: policy}`` mapping; ``None`` plays random legal actions. A policy
        may be given by name, as everywhere else (``"heuristic"``, ``"pimc:64"``,
        ``"bastra_2p:network"``, a checkpoint path: ``bastra_env.policy_names``)
        ``illegal_action``: "lose" ends the episode with reward -1 and ``info["illegal_action"]``
        (as PettingZoo's wrapped env does), "raise" raises ``ValueError`` and changes nothing."""
        self.aec = raw_env(rules, reward=reward, render_mode=render_mode, **rule_fields)
        self.rules = self.aec.rules
        n = self.rules.num_players
        if seat is not None and (isinstance(seat, bool) or seat not in range(n)):
            raise ValueError(f"seat must be None or a seat in 0..{n - 1}, got {seat!r}")
        self.seat = seat
        if illegal_action not in ("lose", "raise"):
            raise ValueError(f'illegal_action must be "lose" or "raise", got {illegal_action!r}')
        self.illegal_action = illegal_action
        self._lost_by_illegal = False
        self.render_mode = render_mode
        self._opponents = named_opponents(opponents)
        self._random = RandomLegal(np.random.default_rng())
        self.observation_space = self.aec.observation_space("player_0")["observation"]
        self.action_space = spaces.Discrete(NUM_ACTIONS)
        self.learner = 0
        self._agent = "player_0"
        self._policies: dict[int, Policy] = {}
        self._mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
        self._check_opponents()

    def _check_opponents(self) -> None:
        """Read ``opponents`` once: a ``{seat: policy}`` mapping, a list for the other seats in
        seat order, or one policy for all of them (``None``: random legal)."""
        n = self.rules.num_players
        given = self._opponents
        if isinstance(given, Mapping):
            unknown = sorted(set(given) - set(range(n)))
            if unknown:
                raise ValueError(f"opponents names seats {unknown} outside 0..{n - 1}")
            policies = list(given.values())
        elif isinstance(given, Sequence) and not isinstance(given, str):
            if len(given) != n - 1:
                raise ValueError(
                    f"opponents as a list needs one policy per other seat ({n - 1}), "
                    f"got {len(given)}"
                )
            policies = list(given)
        else:
            policies = [given]
        for policy in policies:
            if policy is not None and not (hasattr(policy, "act") or callable(policy)):
                raise TypeError(
                    f"a policy needs act(observation, env=...) or to be callable, got {policy!r}"
                )

    def _seat_policies(self) -> dict[int, Policy]:
        """Who plays each other seat this episode (the list form follows the learner's seat)."""
        given = self._opponents
        others = [s for s in range(self.rules.num_players) if s != self.learner]
        if isinstance(given, Mapping):
            chosen = [given.get(s) for s in others]
        elif isinstance(given, Sequence) and not isinstance(given, str):
            chosen = list(given)
        else:
            chosen = [given] * len(others)
        return {s: self._random if p is None else p for s, p in zip(others, chosen, strict=True)}

    # ------------------------------------------------------------------------------- API
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=seed)
        self._random.rng = np.random.default_rng(int(self.np_random.integers(2**63 - 1)))
        n = self.rules.num_players
        self.learner = int(self.np_random.integers(n)) if self.seat is None else self.seat
        self._agent = self.aec.possible_agents[self.learner]
        self._policies = self._seat_policies()
        self.aec.reset(seed=int(self.np_random.integers(2**63 - 1)), options=options)
        self._lost_by_illegal = False
        self._play_others()
        return self._observe()

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        if self._lost_by_illegal or self.aec.terminations.get(self._agent, True):
            raise RuntimeError("the episode is over; call reset()")
        try:
            self.aec.step(action)  # ValueError on an illegal action, with nothing changed
        except (ValueError, TypeError):
            if self.illegal_action == "raise":
                raise
            self._lost_by_illegal = True
            observation, info = self._observe()
            info["illegal_action"] = True
            return observation, -1.0, True, False, info
        reward = float(self.aec.rewards.get(self._agent, 0.0)) + self._play_others()
        observation, info = self._observe()
        return observation, reward, self.aec.terminations[self._agent], False, info

    def action_masks(self) -> np.ndarray:
        """Legal actions of the learner now, as booleans (sb3-contrib's MaskablePPO reads this)."""
        return self._mask.astype(bool)

    # gymnasium.Env.render returns a TypeVar bound to nothing, which no concrete type overrides
    def render(self) -> str | np.ndarray | None:  # type: ignore[override]
        return self.aec.render()

    # ------------------------------------------------------------------------------- inside
    def _play_others(self) -> float:
        """Let the other seats play until the learner is to move or the game ends; returns the
        learner's reward collected meanwhile."""
        aec = self.aec
        reward = 0.0
        while not aec.terminations[self._agent] and aec.agent_selection != self._agent:
            agent = aec.agent_selection
            policy = self._policies[aec.agent_name_mapping[agent]]
            observation = aec.observe(agent)
            if hasattr(policy, "act"):
                aec.step(policy.act(observation, env=aec))
            else:
                aec.step(policy(observation))
            reward += float(aec.rewards.get(self._agent, 0.0))
        return reward

    def _observe(self) -> tuple[np.ndarray, dict[str, Any]]:
        seen = self.aec.observe(self._agent)
        self._mask = seen["action_mask"]
        info = dict(self.aec.infos.get(self._agent, {}))
        info["seat"] = self.learner
        info["action_mask"] = self._mask
        return seen["observation"], info
