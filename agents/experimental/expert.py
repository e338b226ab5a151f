"""EXPERIMENTAL (expert iteration, ``agents.experimental.exit``).

The expert of expert iteration: self-play games played by a network with search around it,
recorded with what the search made of every legal move and the true hidden state.

One *shard* is a fixed batch of games: its seed decides every deal and every decision's random
stream, so the same shard gives the same data wherever and however often it is played (the Ray
actors of ``agents.integrations.ray_selfplay`` and the in-process loop run the same
``play_shard``). At each decision with more than one legal move the searching player
(``LearnedPolicy`` with ``ExpertConfig.search()``: PIMC on inferred worlds where the deck still
holds cards, the exact endgame search after, the network's log-probability added to each move's
value) scores every legal move; the move played is drawn from the softmax of those scores over
``temperature`` (points of the round a unit), which is also the policy's training target. Each
decision also keeps the seat's observation, what the seat could not see (``VectorEnv.privileged``)
and, once the round is over, its side's point difference (the value targets).
"""

from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass, fields, replace
from typing import Any

import numpy as np
import torch
from torch import nn

from agents.experimental.privileged import PRIVILEGED_SIZE, ValueLeafPIMC, privileged
from agents.learning.config import INFERENCE, SearchConfig, search_preset
from agents.learning.network import PolicyValueNet, build_model, cpu_state_dict
from agents.learning.policy import LearnedPolicy
from bastra_env import Rules
from bastra_env.layout import NUM_ACTIONS, OBSERVATION_SIZE
from bastra_env.rules import table_of
from bastra_env.vector import VectorEnv


class PrivilegedCritic(nn.Module):
    """A value function that reads the observation and what the seat cannot see
    (``agents.experimental.privileged``: every hand, the deck's order), trained beside the
    policy (``critic: privileged``) to give PPO lower-variance advantages; the policy never reads
    its input, and no player uses it."""

    def __init__(
        self, observation_size: int = OBSERVATION_SIZE, hidden: tuple[int, ...] = (256, 256)
    ) -> None:
        super().__init__()
        self.observation_size = observation_size
        layers: list[nn.Module] = []
        width = observation_size + PRIVILEGED_SIZE
        for size in hidden:
            layers += [nn.Linear(width, size), nn.ReLU()]
            width = size
        layers.append(nn.Linear(width, 1))
        self.net = nn.Sequential(*layers)

    def forward(self, observation: torch.Tensor, privileged: torch.Tensor) -> torch.Tensor:
        """observation ``[B, >= observation_size]``, privileged ``[B, PRIVILEGED_SIZE]`` ->
        values ``[B]``."""
        inputs = torch.cat([observation[:, : self.observation_size], privileged], dim=1)
        return self.net(inputs).squeeze(-1)


LEAVES = ("rollout", "value")
"""``ExpertConfig.leaf``: PIMC's worlds played to the round's end by the rollout policy, or
valued one play deep by the perfect-information critic."""

SHARD_FIELDS = {
    "obs": (np.float16, OBSERVATION_SIZE),
    "privileged": (np.float16, PRIVILEGED_SIZE),
    "mask": (np.bool_, NUM_ACTIONS),
    "target": (np.float16, NUM_ACTIONS),
    "value": (np.float32, 0),
    "searched": (np.bool_, 0),
}
"""What a shard returns, one row a decision: (dtype, width; 0: one value a row). ``target``: the
search's softmax over the legal moves (one-hot where there was one legal move); ``value``: the
seat's side's round point difference times the reward scale; ``searched``: more than one legal
move (the search ran)."""


@dataclass(frozen=True)
class ExpertConfig:
    """How the expert plays and what it records (checked when built)."""

    rules: dict[str, Any]
    """The table's ``Rules`` fields (``Rules.to_dict()``)."""
    worlds: int = 32
    """PIMC's inferred worlds a decision before the endgame."""
    temperature: float = 1.0
    """Points of the round a unit of the target's logits: the target and the move played are
    ``softmax(score / temperature)`` over the legal moves."""
    network_weight: float = 0.3
    """Points a nat of the network's log-probability added to each move's PIMC value."""
    leaf: str = "rollout"
    """``LEAVES``: how PIMC values a world after a move."""
    games: int = 8
    """Games (rounds, under ``rules``) in a shard."""
    reward_scale: float = 0.05
    """The value targets' unit: a round point difference times this (the PPO trainer's)."""

    def __post_init__(self) -> None:
        Rules.from_dict(dict(self.rules))  # an impossible table raises here
        for name in ("worlds", "games"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"ExpertConfig.{name} must be a positive int, got {value!r}")
        for name in ("temperature", "network_weight", "reward_scale"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise TypeError(f"ExpertConfig.{name} must be a number, got {value!r}")
            if not math.isfinite(value) or value < 0 or (value == 0 and name != "network_weight"):
                raise ValueError(f"ExpertConfig.{name} must be positive, got {value!r}")
        if self.leaf not in LEAVES:
            raise ValueError(f"ExpertConfig.leaf must be one of {LEAVES}, got {self.leaf!r}")

    def search(self) -> SearchConfig:
        """The searching player's ``SearchConfig``: the table's ``:infer`` player
        (``search_preset``: in 2p, half rollouts by the rollout policy where the deal's plays
        misfit the opponent model) on ``worlds`` inferred worlds with the network's weight, the
        endgame search after, every value in round points."""
        table = table_of(Rules.from_dict(dict(self.rules)))
        return replace(search_preset(table, (INFERENCE,)), infer_worlds=self.worlds,
                       network_weight=self.network_weight, objective="points")  # fmt: skip

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> ExpertConfig:
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(values) - known)
        if unknown:
            raise TypeError(f"unknown ExpertConfig field(s) {unknown}; valid: {sorted(known)}")
        return cls(**values)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Weights:
    """What an expert needs of the learner, as plain tensors (sent once an iteration)."""

    network: dict[str, Any]
    """``asdict(NetworkConfig)``."""
    model: dict[str, torch.Tensor]
    critic: dict[str, torch.Tensor] | None = None
    """The perfect-information critic's state (``leaf="value"`` needs it)."""
    critic_hidden: tuple[int, ...] = (256, 256)

    @classmethod
    def of(cls, model: PolicyValueNet, critic: PrivilegedCritic | None = None) -> Weights:
        cpu = cpu_state_dict
        hidden = tuple(m.out_features for m in critic.net if isinstance(m, torch.nn.Linear))[:-1] \
            if critic is not None else (256, 256)  # fmt: skip
        return cls(asdict(model.config), cpu(model), cpu(critic) if critic is not None else None,
                   hidden)  # fmt: skip

    def build(self) -> tuple[PolicyValueNet, PrivilegedCritic | None]:
        model = build_model({"network": self.network, "model": self.model})
        critic = None
        if self.critic is not None:
            critic = PrivilegedCritic(model.config.observation_size, self.critic_hidden)
            critic.load_state_dict(self.critic)
            critic.eval()
        return model.eval(), critic


def shard_seed(seed: int, iteration: int, shard: int) -> int:
    """The seed of shard ``shard`` of iteration ``iteration`` of a run seeded ``seed``."""
    mixed = np.random.SeedSequence([seed, iteration, shard]).generate_state(2, np.uint32)
    return int(mixed[0]) << 31 | int(mixed[1]) >> 1


def softmax_target(scores: dict[int, float], temperature: float) -> dict[int, float]:
    """``softmax(score / temperature)`` over the moves of ``scores``."""
    actions = sorted(scores)
    logits = np.array([scores[a] for a in actions]) / temperature
    probs = np.exp(logits - logits.max())
    probs /= probs.sum()
    return dict(zip(actions, probs.tolist(), strict=True))


def play_shard(weights: Weights, config: ExpertConfig, seed: int) -> dict[str, Any]:
    """Play one shard (``config.games`` games seeded by ``seed``) with the searching player on
    every seat; its decisions as ``SHARD_FIELDS`` arrays, plus ``decisions``, ``searched``
    (decisions that ran the search) and ``seconds``. The same arguments give the same arrays."""
    started = time.perf_counter()
    model, critic = weights.build()
    if config.leaf == "value" and critic is None:
        raise ValueError('ExpertConfig.leaf="value" needs the perfect-information critic')
    torch.manual_seed(seed)
    rules = Rules.from_dict(dict(config.rules))
    player = LearnedPolicy(model, config.search(), seed=seed % (1 << 31), name="expert")
    if config.leaf == "value":
        assert player.pimc is not None and critic is not None
        player.pimc = ValueLeafPIMC.around(player.pimc, critic_leaf(critic, config.reward_scale))
    env = VectorEnv(config.games, rules=rules, reward="points", num_threads=1)
    state = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    rows: dict[str, list[Any]] = {name: [] for name in SHARD_FIELDS}
    open_rows: list[list[tuple[int, int]]] = [[] for _ in range(config.games)]  # (row, seat)
    live = np.ones(config.games, dtype=bool)
    searched = 0
    while live.any():
        games = np.flatnonzero(live)
        hidden = privileged(env, games)
        actions = np.empty(len(games), dtype=np.int64)
        for k, g in enumerate(games):
            obs, mask = state["observation"][g], state["action_mask"][g]
            legal = np.flatnonzero(mask)
            target = np.zeros(NUM_ACTIONS, dtype=np.float32)
            if len(legal) == 1:
                target[legal[0]] = 1.0
                actions[k] = legal[0]
            else:
                scores = player.move_values({"observation": obs, "action_mask": mask})
                assert scores is not None  # the player searches every decision with a choice
                probs = softmax_target(scores, config.temperature)
                choices = list(probs)
                shares = np.array([probs[a] for a in choices])
                actions[k] = choices[int(rng.choice(len(choices), p=shares / shares.sum()))]
                target[choices] = shares
                searched += 1
            open_rows[g].append((len(rows["obs"]), int(state["current_player"][g])))
            rows["obs"].append(obs.astype(np.float16))
            rows["privileged"].append(hidden[k].astype(np.float16))
            rows["mask"].append(mask.copy())
            rows["target"].append(target.astype(np.float16))
            rows["value"].append(0.0)
            rows["searched"].append(len(legal) > 1)
        state = env.step_some(games, actions)
        for g in games:
            if state["terminated"][g]:  # one round a game: the round's points are its rewards
                for row, seat in open_rows[g]:
                    rows["value"][row] = float(state["rewards"][g][seat]) * config.reward_scale
                live[g] = False
    out: dict[str, Any] = {
        name: np.asarray(values, dtype=dtype).reshape(len(values), -1) if width
        else np.asarray(values, dtype=dtype)
        for (name, (dtype, width)), values in zip(SHARD_FIELDS.items(), rows.values(), strict=True)
    }  # fmt: skip
    out["decisions"] = len(rows["obs"])
    out["searched_decisions"] = searched
    out["seconds"] = time.perf_counter() - started
    return out


def critic_leaf(critic: PrivilegedCritic, reward_scale: float) -> Any:
    """A PIMC leaf evaluator from the perfect-information critic: given the observations and
    hidden inputs of the seats to move after each (world, move) and whether that seat is on the
    searching side, the searching side's expected round point difference."""

    @torch.no_grad()
    def leaf(obs: np.ndarray, privileged: np.ndarray, mine: np.ndarray) -> np.ndarray:
        values = critic(torch.from_numpy(obs), torch.from_numpy(privileged)).numpy()
        return np.where(mine, values, -values) / reward_scale

    return leaf


def concatenate(shards: list[dict[str, Any]]) -> dict[str, np.ndarray]:
    """The shards' decision arrays one after another, in the order given."""
    return {name: np.concatenate([s[name] for s in shards]) for name in SHARD_FIELDS}


def play_expert_shard(shared: tuple[Weights, ExpertConfig], seed: int) -> dict[str, Any]:
    """``play_shard`` with what every shard shares (the runners' ``play(shared, seed)``)."""
    weights, config = shared
    return play_shard(weights, config, seed)
