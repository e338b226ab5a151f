"""Self-play PPO for Bastra with Ray RLlib's new API stack (RLModule, Learner, EnvRunner).

    from agents.integrations.rllib import train_rllib, load_rllib_policy
    run = train_rllib(table="2p", iterations=50, num_env_runners=1, checkpoint_dir="runs/rllib")
    policy = load_rllib_policy(run.checkpoint_dir)  # no Ray cluster needed
    policy.act(observation)  # a legal action: the argmax of the masked logits

Pieces, all built on RLlib's public classes:

- **Environment.** ``BastraMultiAgentEnv`` is RLlib's ``PettingZooEnv`` around
  ``bastra_env.env(...)`` (the AEC env: only the seat to move gets an observation; every seat gets
  its reward when the round is scored). Training episodes are single rounds (``max_rounds=1``, 48
  plays) with ``reward="points"``, the round's point difference, scaled by ``reward_scale``
  (0.05, as ``train.py`` does) so value targets stay near [-1, 1]. ``register_bastra_env()``
  registers it under ``ENV_NAME``; ``env_config={"table": "2p" | "4p_teams", ...}`` picks the table.
- **Model.** ``MaskedPPOTorchModule``: a torch RLModule with the ``ValueFunctionAPI`` (so the PPO
  Learner can use it) and the ``InferenceOnlyAPI`` (EnvRunners drop the value network). It reads
  the Dict observation ``{"observation": float32[1125], "action_mask": int8[208]}``; illegal
  logits are replaced by ``MASKED_LOGIT`` (-1e9), a finite number, so softmax, log-probabilities,
  entropy and KL stay finite even for an all-zero mask (the terminal observation the Learner also
  sees). The value comes from the observation alone.
- **League.** Every seat of the learning side plays the shared module ``"main"``. Each episode,
  ``LeagueMapping`` picks the side that plays ``main`` and the opponent side's module: ``main``
  itself (with probability ``self_play_prob``; both sides' plays then train it) or a random frozen
  snapshot. ``SnapshotPoolCallback`` copies main's weights into a frozen snapshot every
  ``snapshot_every`` iterations. Snapshots live in at most ``pool_size`` modules ``main_v1`` ..
  ``main_v{pool_size}``, added with ``Algorithm.add_module`` while the pool fills; once it is full,
  each new snapshot overwrites the weights of the oldest slot. Slots are never removed: RLlib
  keeps an ongoing episode (whose chunks span ``sample()`` calls) on the modules it was mapped to,
  so removing a module can break sampling. Only ``main`` is in ``policies_to_train``.
- **Checkpoints.** ``Algorithm.save_to_path`` writes the whole algorithm; the main module is under
  ``learner_group/learner/rl_module/main`` and ``load_rllib_policy`` restores it with
  ``RLModule.from_checkpoint`` (plain torch, no ``ray.init``). ``agents.load_policy(directory)``
  calls it for any directory.
- **Clusters.** ``train_rllib`` calls ``ray.init``: with ``RAY_ADDRESS`` set it connects to that
  cluster and ships this project with ``cluster_runtime_env()``: the two packages
  (``bastra_env``, ``agents``, without the pretrained models) as ``py_modules``, uploaded once and
  put on every worker's ``sys.path`` without changing the workers' directory. ``py_modules``
  rather than ``working_dir``: it ships only the importable code, not run folders or checkpoints;
  rather than a ``pip`` install of the project: it needs neither a package index nor a build on
  the nodes. Nodes need the driver's third-party packages (``ray[rllib]``, torch, pettingzoo);
  ``cluster_runtime_env(pip=[...])`` adds a per-job pip install of anything missing. Without
  ``RAY_ADDRESS`` it starts a local Ray instance.
"""

from __future__ import annotations

import functools
import inspect
import random
import sys
import time
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import torch
from ray.rllib.algorithms.ppo import PPOConfig
from ray.rllib.callbacks.callbacks import RLlibCallback
from ray.rllib.core import (
    COMPONENT_LEARNER,
    COMPONENT_LEARNER_GROUP,
    COMPONENT_RL_MODULE,
)
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.apis import InferenceOnlyAPI, ValueFunctionAPI
from ray.rllib.core.rl_module.multi_rl_module import MultiRLModule, MultiRLModuleSpec
from ray.rllib.core.rl_module.rl_module import RLModule, RLModuleSpec
from ray.rllib.core.rl_module.torch import TorchRLModule
from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv
from ray.rllib.utils.typing import MultiAgentDict
from ray.tune.registry import register_env
from torch import nn

import bastra_env
from agents.integrations.ray_cluster import ROOT, cluster_runtime_env, init_ray  # noqa: F401 (re-exported)
from agents.learning.network import MASKED_LOGIT, tied_summary_logits
from agents.players.basic import Observation, legal_actions
from bastra_env.layout import ACTION_SUMMARIES, OBSERVATION_SIZE
from bastra_env.rules import TABLES

ENV_NAME = "bastra_pettingzoo"
"""The name ``register_bastra_env`` gives the environment in RLlib's registry."""

MAIN = "main"
"""The module every seat of the learning side plays."""

SNAPSHOT_PREFIX = "main_v"
"""Frozen snapshot modules are ``main_v1`` .. ``main_v{pool_size}`` (pool slots)."""


CHECKPOINT_MODULE_DIR = Path(COMPONENT_LEARNER_GROUP) / COMPONENT_LEARNER / COMPONENT_RL_MODULE
"""Where an Algorithm checkpoint keeps its RLModules (one folder per module ID)."""


# RLlib checkpoints of 0.2.0 name this module's classes by its old path (``agents.rllib``): once
# this module is loaded (``load_policy`` of a checkpoint directory loads it first), that name
# finds it, so those checkpoints keep loading as the masked module they were trained as.
sys.modules.setdefault("agents.rllib", sys.modules[__name__])


# --------------------------------------------------------------------------- environment


def check_table(table: str) -> dict[str, Any]:
    if table not in TABLES:
        raise ValueError(f"table must be one of {list(TABLES)}, got {table!r}")
    return TABLES[table]


class BastraMultiAgentEnv(PettingZooEnv):
    """RLlib's PettingZoo wrapper around ``bastra_env.env``, configured by an ``env_config``.

    ``env_config`` keys: ``table`` ("2p" or "4p_teams"), ``reward`` ("points" or "win"),
    ``max_rounds`` (1: single-round episodes; ``None``: whole games), ``reward_scale``.
    """

    def __init__(self, config: dict[str, Any] | None = None) -> None:
        config = dict(config or {})
        table = config.pop("table", "2p")
        fields = dict(check_table(table))
        fields["max_rounds"] = config.pop("max_rounds", 1)
        fields["reward"] = config.pop("reward", "points")
        self.reward_scale = float(config.pop("reward_scale", 0.05))
        if config:
            raise ValueError(
                f"unknown env_config key(s) {sorted(config)}; "
                "known: table, reward, max_rounds, reward_scale"
            )
        self.table = table
        super().__init__(bastra_env.env(**fields))

    # RLlib's MultiAgentEnv subclasses gymnasium.Env with a different step(): no override of
    # step satisfies both
    def step(  # type: ignore[override]
        self, action: MultiAgentDict
    ) -> tuple[MultiAgentDict, MultiAgentDict, MultiAgentDict, MultiAgentDict, MultiAgentDict]:
        observations, rewards, terminateds, truncateds, infos = super().step(action)
        if self.reward_scale != 1.0:
            rewards = {agent: r * self.reward_scale for agent, r in rewards.items()}
        return observations, rewards, terminateds, truncateds, infos


def env_creator(env_config: dict[str, Any] | None = None) -> BastraMultiAgentEnv:
    """The RLlib env creator: ``env_config`` as for ``BastraMultiAgentEnv``."""
    return BastraMultiAgentEnv(env_config)


def register_bastra_env(name: str = ENV_NAME) -> str:
    """Registers the env creator with RLlib (Tune's registry, shared by the whole cluster)."""
    register_env(name, env_creator)
    return name


def bastra_spaces() -> tuple[gym.Space, gym.Space]:
    """(observation space, action space): the same for every seat and every table."""
    raw = bastra_env.raw_env()
    return raw.observation_space("player_0"), raw.action_space("player_0")


# --------------------------------------------------------------------------- model


def _mlp(inputs: int, hidden: Sequence[int], outputs: int, last_gain: float) -> nn.Sequential:
    layers: list[nn.Module] = []
    width = inputs
    for size in hidden:
        linear = nn.Linear(width, size)
        nn.init.orthogonal_(linear.weight, gain=float(np.sqrt(2)))
        nn.init.zeros_(linear.bias)
        layers += [linear, nn.ReLU()]
        width = size
    head = nn.Linear(width, outputs)
    nn.init.orthogonal_(head.weight, gain=last_gain)
    nn.init.zeros_(head.bias)
    layers.append(head)
    return nn.Sequential(*layers)


def mask_logits(logits: torch.Tensor, action_mask: torch.Tensor) -> torch.Tensor:
    """Illegal actions get ``MASKED_LOGIT``; legal ones keep their logit."""
    return logits.masked_fill(action_mask <= 0, MASKED_LOGIT)


class MaskedPPOTorchModule(TorchRLModule, ValueFunctionAPI, InferenceOnlyAPI):
    """Policy and value MLPs over the flat observation; the policy's logits masked by the env.

    ``model_config``: ``hidden`` (hidden widths of both networks, default ``[256, 256]``) and
    ``action_summaries`` (default True): each action's logit also gets ``w . summary[action]``,
    where the summary is the observation's cards, points and bastra flag of that action and one
    3-vector ``w`` is shared by all 208 actions, so what is learnt about one card's captures
    carries over to every card (``examples/sb3_maskable_ppo.py`` shows why a plain MLP head
    learns little at small budgets).
    """

    def setup(self) -> None:
        model_config = self.model_config or {}
        if not isinstance(model_config, dict):
            raise TypeError(f"model_config must be a dict here, got {model_config!r}")
        config = dict(model_config)
        hidden = [int(h) for h in config.get("hidden", (256, 256))]
        space = self.observation_space
        if not isinstance(space, gym.spaces.Dict) or set(space.spaces) != {
            "observation",
            "action_mask",
        }:
            raise ValueError(
                "MaskedPPOTorchModule needs the Dict observation space "
                f"{{'observation', 'action_mask'}} of the Bastra env, got {space}"
            )
        width = int(np.prod(space["observation"].shape or ()))
        action_space = self.action_space
        if not isinstance(action_space, gym.spaces.Discrete):
            raise ValueError(f"MaskedPPOTorchModule needs a Discrete action space: {action_space}")
        actions = int(action_space.n)
        if space["action_mask"].shape != (actions,):
            raise ValueError(
                f"action_mask shape {space['action_mask'].shape} does not match {actions} actions"
            )
        self._policy_net = _mlp(width, hidden, actions, last_gain=0.01)
        self._value_net = _mlp(width, hidden, 1, last_gain=1.0)
        self._summary_weights = None
        if config.get("action_summaries", True):
            if width != OBSERVATION_SIZE:
                raise ValueError("action_summaries needs the Bastra observation layout")
            self._summary_weights = nn.Parameter(torch.zeros(len(ACTION_SUMMARIES)))

    def get_non_inference_attributes(self) -> list[str]:
        return ["_value_net"]

    @staticmethod
    def _unpack(batch: dict[str, Any]) -> tuple[torch.Tensor, torch.Tensor]:
        obs = batch[Columns.OBS]
        return obs["observation"].float(), obs["action_mask"]

    def _forward(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        observation, action_mask = self._unpack(batch)
        logits = self._policy_net(observation)
        if self._summary_weights is not None:
            logits = logits + tied_summary_logits(observation, self._summary_weights)
        return {Columns.ACTION_DIST_INPUTS: mask_logits(logits, action_mask)}

    def compute_values(self, batch: dict[str, Any], embeddings: Any = None) -> torch.Tensor:
        observation, _ = self._unpack(batch)
        return self._value_net(observation).squeeze(-1)


def module_spec(hidden: Sequence[int] = (256, 256), action_summaries: bool = True) -> RLModuleSpec:
    """The spec of ``main`` and of every snapshot (explicit spaces: buildable anywhere)."""
    observation_space, action_space = bastra_spaces()
    return RLModuleSpec(
        module_class=MaskedPPOTorchModule,
        observation_space=observation_space,
        action_space=action_space,
        model_config={"hidden": [int(h) for h in hidden], "action_summaries": action_summaries},
    )


# --------------------------------------------------------------------------- league


def seat_side(agent_id: str) -> int:
    """The side of ``player_k``: k mod 2 (2 players; or seats 0+2 against 1+3 in teams)."""
    return int(str(agent_id).rsplit("_", 1)[1]) % 2


class LeagueMapping:
    """Agent-to-module mapping: per episode, one side plays ``main``, the other ``main`` or a
    frozen snapshot. The choice is a function of the episode's ID (all seats agree on it)."""

    def __init__(self, pool: Sequence[str] = (), self_play_prob: float = 0.5, seed: int = 0):
        self.pool = tuple(pool)
        self.self_play_prob = float(self_play_prob)
        self.seed = seed

    def matchup(self, episode: Any) -> tuple[int, str]:
        """(the side that plays ``main``, the opponent side's module)."""
        rng = random.Random(f"{self.seed}/{episode.id_}")
        learner_side = rng.randrange(2)
        if not self.pool or rng.random() < self.self_play_prob:
            return learner_side, MAIN
        return learner_side, self.pool[rng.randrange(len(self.pool))]

    def __call__(self, agent_id: Hashable, episode: Any, **kwargs: Any) -> str:
        learner_side, opponent = self.matchup(episode)
        return MAIN if seat_side(str(agent_id)) == learner_side else opponent


class SnapshotPoolCallback(RLlibCallback):
    """Freezes main into the snapshot pool every ``snapshot_every`` iterations (driver side) and
    logs main's score against frozen snapshots, ``score_vs_pool`` (1 win, 0.5 draw, 0 loss),
    from the episodes (EnvRunner side)."""

    def __init__(
        self,
        snapshot_every: int = 10,
        pool_size: int = 5,
        self_play_prob: float = 0.5,
        seed: int = 0,
    ) -> None:
        super().__init__()
        self.snapshot_every = snapshot_every
        self.pool_size = pool_size
        self.self_play_prob = self_play_prob
        self.seed = seed
        self.iterations = 0
        self.pool: list[str] = []
        self.versions: dict[str, int] = {}
        """Each slot's snapshot: the training iteration it was taken after."""
        self._next_slot = 0

    def on_episode_end(
        self,
        *,
        episode: Any,
        metrics_logger: Any = None,
        prev_episode_chunks: list[Any] | None = None,
        **kw: Any,
    ) -> None:
        if metrics_logger is None:
            return
        sides: dict[int, float] = {0: 0.0, 1: 0.0}
        modules: dict[int, str] = {}
        for chunk in [*(prev_episode_chunks or []), episode]:
            for agent_id, agent_episode in chunk.agent_episodes.items():
                side = seat_side(agent_id)
                modules[side] = chunk.module_for(agent_id)
                sides[side] += float(agent_episode.get_return())
        if len(modules) != 2 or (modules[0] == MAIN) == (modules[1] == MAIN):
            return  # main against main: nothing to score
        main_side = 0 if modules[0] == MAIN else 1
        diff = sides[main_side] - sides[1 - main_side]
        score = 1.0 if diff > 0 else 0.0 if diff < 0 else 0.5
        metrics_logger.log_value("score_vs_pool", score, reduce="mean", window=200)

    def on_train_result(
        self, *, algorithm: Any, metrics_logger: Any = None, result: dict[str, Any], **kwargs: Any
    ) -> None:
        self.iterations += 1
        if self.iterations % self.snapshot_every == 0:
            self.snapshot(algorithm)
        result["snapshot_pool"] = list(self.pool)

    def snapshot(self, algorithm: Any) -> str:
        """Copies main's current weights into a pool slot; returns the slot's module ID."""
        path = f"{COMPONENT_LEARNER}/{COMPONENT_RL_MODULE}/{MAIN}"
        state = algorithm.learner_group.get_state(components=path)
        main_state = state[COMPONENT_LEARNER][COMPONENT_RL_MODULE][MAIN]
        if len(self.pool) < self.pool_size:
            module_id = f"{SNAPSHOT_PREFIX}{len(self.pool) + 1}"
            self.pool.append(module_id)
            spec = algorithm.config.rl_module_spec.rl_module_specs[MAIN]
            algorithm.add_module(
                module_id=module_id,
                module_spec=RLModuleSpec(
                    module_class=spec.module_class,
                    observation_space=spec.observation_space,
                    action_space=spec.action_space,
                    model_config=spec.model_config,
                ),
                new_agent_to_module_mapping_fn=LeagueMapping(
                    self.pool, self.self_play_prob, self.seed
                ),
            )
        else:
            module_id = self.pool[self._next_slot]
            self._next_slot = (self._next_slot + 1) % self.pool_size
        modules = {module_id: main_state}
        algorithm.set_state(
            {COMPONENT_LEARNER_GROUP: {COMPONENT_LEARNER: {COMPONENT_RL_MODULE: modules}}}
        )
        self.versions[module_id] = self.iterations
        return module_id


# --------------------------------------------------------------------------- training


@dataclass
class RLlibRun:
    """What ``train_rllib`` did."""

    checkpoint_dir: Path
    iterations: int
    env_steps: int
    """Environment steps sampled (one step: one play by any seat)."""
    train_seconds: float
    """Wall time inside ``algo.train()``."""
    snapshot_pool: list[str]
    history: list[dict[str, Any]] = field(default_factory=list)
    """Per iteration: env_steps, seconds, steps_per_s, episode_return_mean, score_vs_pool."""


def _positive(name: str, value: Any, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def build_config(
    table: str = "2p",
    num_env_runners: int = 1,
    envs_per_runner: int = 8,
    seed: int = 0,
    snapshot_every: int = 5,
    pool_size: int = 5,
    self_play_prob: float = 0.5,
    train_batch_size: int = 4096,
    minibatch_size: int = 512,
    num_epochs: int = 4,
    lr: float = 3e-4,
    entropy_coeff: float = 0.01,
    hidden: Sequence[int] = (256, 256),
    action_summaries: bool = True,
    reward_scale: float = 0.05,
    num_learners: int = 0,
) -> PPOConfig:
    """The PPO config of ``train_rllib`` (new API stack), with its arguments checked."""
    check_table(table)
    _positive("num_env_runners", num_env_runners, minimum=0)
    _positive("envs_per_runner", envs_per_runner)
    _positive("snapshot_every", snapshot_every)
    _positive("pool_size", pool_size)
    _positive("train_batch_size", train_batch_size)
    _positive("minibatch_size", minibatch_size)
    _positive("num_epochs", num_epochs)
    _positive("num_learners", num_learners, minimum=0)
    if minibatch_size > train_batch_size:
        raise ValueError(
            f"minibatch_size ({minibatch_size}) must not exceed train_batch_size "
            f"({train_batch_size})"
        )
    if not 0.0 <= self_play_prob <= 1.0:
        raise ValueError(f"self_play_prob must be in [0, 1], got {self_play_prob!r}")
    if not hidden or any(int(h) < 1 for h in hidden):
        raise ValueError(f"hidden must be a non-empty list of positive widths, got {hidden!r}")

    register_bastra_env()
    return (
        PPOConfig()
        .api_stack(enable_rl_module_and_learner=True, enable_env_runner_and_connector_v2=True)
        .environment(
            ENV_NAME,
            env_config={
                "table": table,
                "max_rounds": 1,
                "reward": "points",
                "reward_scale": reward_scale,
            },
            # RLlib's checker steps random (mostly illegal) actions; PettingZoo's api_test
            # covers the env in tests/test_env.py.
            disable_env_checking=True,
        )
        .env_runners(
            num_env_runners=num_env_runners,
            num_envs_per_env_runner=envs_per_runner,
            num_cpus_per_env_runner=1,
        )
        .learners(num_learners=num_learners)
        .training(
            train_batch_size_per_learner=train_batch_size,
            minibatch_size=minibatch_size,
            num_epochs=num_epochs,
            lr=lr,
            gamma=1.0,
            lambda_=0.95,
            clip_param=0.2,
            vf_clip_param=10.0,
            entropy_coeff=entropy_coeff,
            grad_clip=0.5,
        )
        .rl_module(
            rl_module_spec=MultiRLModuleSpec(
                rl_module_specs={MAIN: module_spec(hidden, action_summaries)}
            ),
        )
        .multi_agent(
            policies={MAIN},
            policy_mapping_fn=LeagueMapping((), self_play_prob, seed),
            policies_to_train=[MAIN],
        )
        .callbacks(
            functools.partial(  # type: ignore[arg-type]  # RLlib calls any factory
                SnapshotPoolCallback,
                snapshot_every=snapshot_every,
                pool_size=pool_size,
                self_play_prob=self_play_prob,
                seed=seed,
            )
        )
        .debugging(seed=seed)
    )


CONFIG_DEFAULTS: dict[str, Any] = {
    name: parameter.default
    for name, parameter in inspect.signature(build_config).parameters.items()
}
"""``build_config``'s defaults by name (the command-line tools take theirs from here)."""


def _iteration_summary(result: dict[str, Any]) -> dict[str, Any]:
    runners = result.get("env_runners", {})
    return {
        "env_steps": int(runners.get("num_env_steps_sampled", 0)),
        "env_steps_lifetime": int(runners.get("num_env_steps_sampled_lifetime", 0)),
        "episode_return_mean": float(runners.get("episode_return_mean", float("nan"))),
        "main_return_mean": float(
            runners.get("module_episode_returns_mean", {}).get(MAIN, float("nan"))
        ),
        "score_vs_pool": float(runners.get("score_vs_pool", float("nan"))),
        "snapshot_pool": list(result.get("snapshot_pool", [])),
    }


def train_rllib(
    iterations: int = 10,
    checkpoint_dir: str | Path = "runs/rllib",
    runtime_env: dict[str, Any] | None = None,
    torch_threads: int | None = 1,
    verbose: bool = True,
    **settings: Any,
) -> RLlibRun:
    """Self-play PPO for ``iterations`` ``algo.train()`` calls; saves the algorithm to
    ``checkpoint_dir`` (``load_rllib_policy`` / ``agents.load_policy`` read it back).

    ``settings``: any argument of ``build_config`` (``table``, ``num_env_runners``,
    ``train_batch_size``, ...), with its defaults; ``train_batch_size`` counts env steps (plays of
    any seat, the frozen side's included).
    Ray: see ``init_ray``; a Ray instance this call started is shut down at the end.
    ``torch_threads``: the driver's torch threads while training (it runs the local learner and,
    with ``num_env_runners=0``, the sampling; Ray gives each EnvRunner one). One thread avoids
    oversubscribing a busy CPU (about 7x faster sampling on a shared 2-core machine); ``None``
    keeps torch's setting.
    """
    _positive("iterations", iterations)
    if torch_threads is not None:
        _positive("torch_threads", torch_threads)
    config = build_config(**settings)
    table = config.env_config["table"]
    checkpoint_dir = Path(checkpoint_dir).resolve()
    import ray

    started = init_ray(runtime_env)
    threads = torch.get_num_threads()
    if torch_threads is not None:
        torch.set_num_threads(torch_threads)
    algo = None
    try:
        algo = config.build_algo()
        history: list[dict[str, Any]] = []
        total_seconds = 0.0
        total_steps = 0
        for iteration in range(1, iterations + 1):
            start = time.perf_counter()
            result = algo.train()
            seconds = time.perf_counter() - start
            summary = _iteration_summary(result)
            summary["seconds"] = seconds
            summary["steps_per_s"] = summary["env_steps"] / seconds if seconds > 0 else 0.0
            history.append(summary)
            total_seconds += seconds
            total_steps += summary["env_steps"]
            if verbose:
                print(
                    f"[{table}] iter {iteration:4d}/{iterations}  "
                    f"env steps {summary['env_steps_lifetime']:>9,d}  "
                    f"{summary['steps_per_s']:7.0f} steps/s  "
                    f"episode return mean {summary['episode_return_mean']:+.3f}  "
                    f"main {summary['main_return_mean']:+.3f}  "
                    f"score vs pool {summary['score_vs_pool']:.3f}  "
                    f"pool {len(summary['snapshot_pool'])}",
                    flush=True,
                )
        checkpoint_dir.mkdir(parents=True, exist_ok=True)
        algo.save_to_path(str(checkpoint_dir))
        if verbose:
            print(f"saved RLlib checkpoint to {checkpoint_dir}", flush=True)
        return RLlibRun(
            checkpoint_dir=checkpoint_dir,
            iterations=iterations,
            env_steps=total_steps,
            train_seconds=total_seconds,
            snapshot_pool=list(history[-1]["snapshot_pool"]),
            history=history,
        )
    finally:
        if algo is not None:
            algo.stop()
        torch.set_num_threads(threads)
        if started:
            ray.shutdown()


# --------------------------------------------------------------------------- inference


class RLlibPolicy:
    """An RLlib RLModule as a project policy: ``act`` returns the argmax of the masked logits
    (or a sample from them with ``sample=True``), always a legal action."""

    def __init__(
        self, module: RLModule, sample: bool = False, seed: int | None = None, name: str = ""
    ) -> None:
        self.module = module
        if isinstance(module, nn.Module):
            module.eval()
        self.sample = sample
        self.generator = torch.Generator().manual_seed(seed if seed is not None else 0)
        self.name = name or "rllib"

    @torch.no_grad()
    def act(self, observation: Observation, env: Any = None) -> int:
        legal = legal_actions(observation)  # refuses an observation with no legal action
        flat = torch.as_tensor(np.asarray(observation["observation"], dtype=np.float32))
        mask = torch.as_tensor(np.asarray(observation["action_mask"], dtype=np.int8))
        batch = {Columns.OBS: {"observation": flat[None], "action_mask": mask[None]}}
        logits = self.module.forward_inference(batch)[Columns.ACTION_DIST_INPUTS][0]
        legal_logits = logits[torch.as_tensor(legal)]
        if self.sample:
            probs = torch.softmax(legal_logits, dim=-1)
            return int(legal[int(torch.multinomial(probs, 1, generator=self.generator))])
        return int(legal[int(torch.argmax(legal_logits))])


def find_module_dir(path: str | Path, module_id: str = MAIN) -> Path:
    """The folder of ``module_id`` in an Algorithm checkpoint (or that folder itself)."""
    path = Path(path)
    for candidate in (
        path / CHECKPOINT_MODULE_DIR / module_id,
        path / COMPONENT_RL_MODULE / module_id,
        path / module_id,
    ):
        if (candidate / "class_and_ctor_args.pkl").is_file():
            return candidate
    if path.name == module_id and (path / "class_and_ctor_args.pkl").is_file():
        return path  # the module's own folder
    raise ValueError(
        f"no RLlib checkpoint of module {module_id!r} under {path}: expected "
        f"{CHECKPOINT_MODULE_DIR / module_id}/class_and_ctor_args.pkl (a folder that "
        "train_rllib / Algorithm.save_to_path wrote)"
    )


def load_rllib_policy(
    path: str | Path, sample: bool = False, seed: int | None = None, module_id: str = MAIN
) -> RLlibPolicy:
    """The ``main`` module of an RLlib checkpoint directory as a policy (no Ray cluster)."""
    module = RLModule.from_checkpoint(find_module_dir(path, module_id))
    if not isinstance(module, RLModule) or isinstance(module, MultiRLModule):
        raise ValueError(f"{path} does not hold a single RLModule {module_id!r}")
    return RLlibPolicy(module, sample=sample, seed=seed, name=f"rllib:{Path(path).name}")
