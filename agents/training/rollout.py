"""Collecting a rollout: whole episodes of the vector env's games, the learner's transitions and
each seat's trajectory, with snapshots of the pool and built-in players on the opposing side in
some games.

Each seat's moves form its own trajectory, so returns and advantages never mix one seat's future
with another's; partners receive the same team reward. Rewards are each round's point difference,
scaled by ``reward_scale``. Rollouts hold whole episodes only, so nothing is bootstrapped across
updates and a resumed run continues exactly.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch

from agents.learning.network import NetworkConfig, PolicyValueNet, cpu_state_dict, real_pairs
from agents.players.observation_kernels import action_inputs_batch
from agents.training.config import Config
from bastra_env.vector import VectorEnv

ROLLOUT_FIELDS = ("obs", "pair_counts", "pair_slots", "pair_inputs", "actions", "logps", "values")
"""A rollout's tensors: per transition its observation, how many legal actions it had, the slot
played (``actions``), its log-probability and value; per legal action (``pair_*``, transition by
transition, slots ascending: ``PolicyValueNet.pair_logits``' order) its slot and inputs."""
TIMED_PARTS = ("env", "baselines", "features", "forward", "update")
"""Where an update's time goes: the vector env's steps, built-in opponents' moves, the network's
per-action inputs, the rollout's forward passes, and the PPO update (logged per update)."""
BASELINE_CODE = 1000
"""Controller codes from here on are built-in players (``baseline_opponents``); -1 is the
learner, ``k`` below this the pool's snapshot ``k``."""


class Pool:
    """Frozen past snapshots, played as the opposing side in some games."""

    def __init__(self, config: Config, device: torch.device, network: NetworkConfig) -> None:
        self.size = config.section.pool_size
        self.device = device
        self.states: list[dict[str, torch.Tensor]] = []
        self.models: list[PolicyValueNet] = []
        self.network = network

    def add(self, model: PolicyValueNet) -> None:
        self.add_state(cpu_state_dict(model))

    def add_state(self, state: dict[str, torch.Tensor]) -> None:
        self.states = (self.states + [state])[-self.size :]
        self.models = (self.models + [self.frozen(state)])[-self.size :]

    def frozen(self, state: dict[str, torch.Tensor]) -> PolicyValueNet:
        """A network of the run's shape holding ``state``, in eval mode on the run's device."""
        model = PolicyValueNet(self.network).to(self.device)
        model.load_state_dict(state)
        return model.eval()

    def pick(self, rng: np.random.Generator) -> int:
        """The member (an index of ``models``) that plays a pool game: uniformly drawn."""
        return int(rng.integers(len(self.models)))

    def tend(
        self, update: int, plays: int, model: PolicyValueNet, venv: VectorEnv, run_dir: Path
    ) -> None:
        """Work between the learner's updates (after ``update``, the run at ``plays`` plays,
        before its checkpoint): none for past snapshots; a league trains its exploiters here."""

    def dump(self) -> Any:
        """What a checkpoint keeps of the pool (``load`` reads it back): the snapshots' weights."""
        return self.states

    def load(self, dumped: Any) -> None:
        """The pool of a checkpoint's ``dump``."""
        for state in dumped:
            self.add_state(state)


class Rollout:
    """Learner transitions of one update, indexed in the order they were played."""

    def __init__(self) -> None:
        self.parts: dict[str, list[torch.Tensor]] = {name: [] for name in ROLLOUT_FIELDS}
        self.rewards: list[float] = []
        self.trajectories: list[list[int]] = []
        self.round_rewards: list[float] = []

    def add(
        self,
        obs: torch.Tensor,
        rows: torch.Tensor,
        slots: torch.Tensor,
        inputs: torch.Tensor,
        actions: torch.Tensor,
        logps: torch.Tensor,
        values: torch.Tensor,
    ) -> int:
        """A batch of ``B`` transitions (``obs [B, OBSERVATION_SIZE]``; their legal actions as
        :func:`~agents.learning.network.real_pairs` rows and slots ``[P]`` with their inputs
        ``[P, ACTION_FEATURES]``; the slots played, log-probabilities and values ``[B]``);
        returns the index of the first."""
        first = len(self.rewards)
        counts = torch.bincount(rows, minlength=len(actions))
        for name, part in zip(
            ROLLOUT_FIELDS, (obs, counts, slots, inputs, actions, logps, values), strict=True
        ):
            self.parts[name].append(part)
        self.rewards += [0.0] * len(actions)
        return first

    def __len__(self) -> int:
        return len(self.rewards)

    def tensors(self) -> dict[str, torch.Tensor]:
        """The transitions stacked, on the device they were made on (the training device)."""
        return {name: torch.cat(parts) for name, parts in self.parts.items()}


class SelfPlayGames:
    """Who plays each game slot of the vector env, and each seat's trajectory in it.

    ``controllers int64[num_envs, num_players]``: -1 the learner, ``k`` pool snapshot ``k``,
    ``BASELINE_CODE + k`` built-in player ``k``; ``live bool[num_envs]``: the slot's game still
    counts for this rollout; ``trajectory_of[e][seat]``: the rollout indices of that seat's
    moves in slot ``e``."""

    def __init__(
        self, config: Config, pool: Pool, baselines: int, rng: np.random.Generator
    ) -> None:
        self.config, self.pool, self.baselines, self.rng = config, pool, baselines, rng
        self.rules = config.rules
        self.seats = self.rules.num_players
        self.controllers = np.full((config.section.num_envs, self.seats), -1, dtype=np.int64)
        self.live = np.zeros(config.section.num_envs, dtype=bool)
        self.trajectory_of: list[list[list[int]]] = [
            [[] for _ in range(self.seats)] for _ in range(config.section.num_envs)
        ]

    def start(self, e: int) -> None:
        """Who plays the game now in slot ``e``: self-play, or a pool snapshot or a baseline on
        one side."""
        config, rng = self.config, self.rng
        draw = rng.random()
        if self.pool.models and draw < config.section.pool_prob:
            opponent = self.pool.pick(rng)
        elif self.baselines and draw < config.section.pool_prob + config.section.baseline_prob:
            opponent = BASELINE_CODE + int(rng.integers(self.baselines))
        else:
            opponent = -1
        self.seat(e, opponent)

    def seat(self, e: int, opponent: int) -> None:
        """Slot ``e``'s new game: ``opponent`` (a controller code; -1: self-play) on a side drawn
        at random, the learner on every other seat."""
        self.controllers[e] = -1
        if opponent != -1:
            frozen_side = int(self.rng.integers(2))
            for s in range(self.seats):
                if self.rules.side_of(s) == frozen_side:
                    self.controllers[e, s] = opponent
        self.trajectory_of[e] = [[] for _ in range(self.seats)]
        self.live[e] = True

    def credit(self, rows: np.ndarray, paid: np.ndarray, buffer: Rollout) -> None:
        """A round was scored in some games (``paid float[len(rows), seats]``): add each seat's
        reward to its latest move."""
        scale = self.config.section.reward_scale
        for r in np.flatnonzero(paid.any(axis=1)):
            e = rows[r]
            for s in range(self.seats):
                reward = float(paid[r, s])
                if reward and self.trajectory_of[e][s]:
                    buffer.rewards[self.trajectory_of[e][s][-1]] += reward * scale
                    buffer.round_rewards.append(reward)

    def finish(self, e: int, buffer: Rollout, again: bool) -> None:
        """Slot ``e``'s game ended: its seats' trajectories join the rollout; ``again``: the
        slot plays on (the vector env has already dealt its next game)."""
        for s in range(self.seats):
            if self.trajectory_of[e][s]:
                buffer.trajectories.append(self.trajectory_of[e][s])
        if again:
            self.start(e)
        else:
            self.live[e] = False


def sample_policy(logits: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """PPO's rule: a slot drawn from the softmax of each row's logits (``[B, MAX_LEGAL]``; the
    padding slots about -1e9, never drawn); ``(slots int64[B], their log-probabilities [B])``."""
    log_probs = logits.log_softmax(-1)
    slots = torch.multinomial(log_probs.exp(), 1)  # a slot of action_ids: legal
    return slots[:, 0], log_probs.gather(1, slots)[:, 0]


Chooser = Callable[[torch.Tensor], tuple[torch.Tensor, torch.Tensor]]
"""How the learner picks its moves from its network's logits: ``sample_policy`` or another
algorithm's rule (``(slots, log-probabilities)``, as ``sample_policy``)."""


def collect_rollout(
    venv: VectorEnv,
    games: SelfPlayGames,
    model: PolicyValueNet,
    actors: Sequence[Callable[[np.ndarray, np.ndarray], Any]],
    device: torch.device,
    choose: Chooser = sample_policy,
) -> tuple[Rollout, int, dict[str, float]]:
    """Play every slot of ``venv`` from a fresh reset, the seats to move grouped by who plays
    them and each group run through its network (or built-in player) in one batch, until
    ``rollout_steps`` plays are made and every game under way has ended. Returns the learner's
    transitions (``ROLLOUT_FIELDS``: ``obs float32[N, OBSERVATION_SIZE]``, each transition's legal
    actions as ``pair_counts int64[N]`` and, over its P pairs, ``pair_slots int64[P]`` and
    ``pair_inputs float32[P, ACTION_FEATURES]``, the slots played, their log-probabilities and
    values ``[N]``), the plays made (every seat) and the seconds spent by part. The networks'
    moves (the learner's and the pool's) are ``choose``'s."""
    config, pool = games.config, games.pool
    buffer = Rollout()
    plays = 0
    timer = dict.fromkeys(TIMED_PARTS, 0.0)
    clock = time.perf_counter()
    state = venv.reset(seed=int(games.rng.integers(2**62)))
    for e in range(venv.num_envs):
        games.start(e)
    timer["env"] += time.perf_counter() - clock
    while games.live.any():
        rows = np.flatnonzero(games.live)
        movers = games.controllers[rows, state["current_player"][rows]]
        actions = np.empty(len(rows), dtype=np.int64)
        for who in np.unique(movers).tolist():
            pick = movers == who
            chosen = rows[pick]
            seen, masks = state["observation"][chosen], state["action_mask"][chosen]
            clock = time.perf_counter()
            if who >= BASELINE_CODE:  # a built-in player: nothing recorded
                actions[pick] = actors[who - BASELINE_CODE](seen, masks)
                timer["baselines"] += time.perf_counter() - clock
                continue
            action_ids, features = action_inputs_batch(seen, masks)
            timer["features"] += time.perf_counter() - clock
            clock = time.perf_counter()
            obs = torch.from_numpy(seen).to(device)
            ids_t = torch.from_numpy(action_ids).to(device)
            net = model if who == -1 else pool.models[who]
            with torch.inference_mode():
                pair_rows, pair_slots = real_pairs(ids_t)
                inputs = torch.from_numpy(features).to(device)[pair_rows, pair_slots]
                logits, values = net.pair_logits(obs, pair_rows, pair_slots, inputs, ids_t.shape)
                slots, logps = choose(logits)
            actions[pick] = ids_t.gather(1, slots[:, None])[:, 0].cpu().numpy()
            if who == -1:
                first = buffer.add(obs, pair_rows, pair_slots, inputs, slots, logps, values)
                seats = state["current_player"][chosen].tolist()
                for k, (e, seat) in enumerate(zip(chosen.tolist(), seats, strict=True)):
                    games.trajectory_of[e][seat].append(first + k)
            timer["forward"] += time.perf_counter() - clock
        clock = time.perf_counter()
        state = venv.step_some(rows, actions)
        plays += len(rows)
        games.credit(rows, state["rewards"][rows], buffer)
        for e in rows[state["terminated"][rows]].tolist():
            games.finish(e, buffer, plays < config.section.rollout_steps)
        timer["env"] += time.perf_counter() - clock
    return buffer, plays, timer
