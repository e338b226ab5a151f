"""EXPERIMENTAL. Deep Monte-Carlo (``algorithm: dmc``), as DouZero learnt DouDizhu: the pair
network's per-action output is read as Q(state, action), learnt by regression on Monte-Carlo
returns, and the moves are epsilon-greedy on it. It runs on PPO's self-play loop
(``agents.training.ppo.train_self_play``): the same vector env, pool, built-in opponents,
evaluation, checkpoints and resume; only the learner differs. After the same minutes of training
it is as strong as PPO, no stronger (docs/experiments.md, "Deep Monte-Carlo"), so nothing that
ships leads here; it stays runnable by its configs' names.

    bastra train --config dmc_smoke --run-dir runs/dmc     # a tiny run
    bastra train --config dmc_2p                           # the 2p run (PPO's settings)

- **Moves.** Every network seat (the learner's and the pool's snapshots) takes the legal action of
  highest Q, or with probability ``dmc.epsilon`` one drawn uniformly among the legal ones.
- **Targets.** Each seat's trajectory is its own: the target of a move is the seat's return from
  it to the episode's end (its side's round point differences after the move, scaled by
  ``reward_scale``, discounted by ``gamma``), with nothing bootstrapped.
- **Start.** A fresh network's outputs are the heuristic player's score of each move (its
  learned linear term on the move's summary, as PPO starts) in the returns' unit: round points
  times ``reward_scale``, so Q starts as the heuristic's estimate and the regression refines it.
- **Update.** ``update_epochs`` passes over the rollout in minibatches: the played action's Q and
  the value head toward the return (squared error; the value weighted by ``vf_coef``), the
  gradients clipped to ``max_grad_norm``.

A DMC network plays greedily on its Q values like any learned model (``load_policy`` acts on the
highest output). The ``ppo:`` fields DMC does not read (``gae_lambda``, ``clip_coef``,
``ent_coef``, the imitation warm start) are refused in its section.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any, ClassVar

import torch

from agents.learning.network import HEURISTIC_TEMPERATURE, PolicyValueNet
from agents.training import ppo
from agents.training.command import register_trainer
from agents.training.config import Config, PPOConfig, register_algorithm, setting
from agents.training.rollout import Chooser, Rollout

PAD_LOGIT = -1e8
"""Below this a logit is a padding slot (``PolicyValueNet.pair_logits`` fills them with about
-1e9); Q values are round points scaled by ``reward_scale``, far above it."""


@dataclasses.dataclass
class DMCSection(PPOConfig):
    """``dmc:``: Deep Monte-Carlo (experimental): PPO's self-play settings, and the exploration
    rate."""

    epsilon: float = setting(0.01, "[0,1]")
    """Share of the network seats' moves drawn uniformly among the legal ones; the others take
    the action of highest Q."""


PPO_ONLY = ("gae_lambda", "clip_coef", "ent_coef", "imitation_samples", "imitation_teacher",
            "imitation_epochs")  # fmt: skip
"""Fields of the ``ppo:`` settings that DMC does not read: refused in ``dmc:``."""


@dataclasses.dataclass
class DMCConfig(Config):
    """A ``Config`` with the ``dmc:`` section (``algorithm: dmc``)."""

    dmc: DMCSection = dataclasses.field(default_factory=DMCSection)

    SECTIONS: ClassVar[dict[str, str]] = {**Config.SECTIONS, "dmc": "dmc"}
    EXTRA_SECTIONS: ClassVar[dict[str, type]] = {"dmc": DMCSection}

    def __post_init__(self) -> None:
        super().__post_init__()
        defaults = DMCSection()
        for name in PPO_ONLY:
            if getattr(self.dmc, name) != getattr(defaults, name):
                raise ValueError(f"config dmc.{name}: Deep Monte-Carlo does not read it "
                                 "(a PPO setting); remove it")  # fmt: skip


def epsilon_greedy(epsilon: float) -> Chooser:
    """The rule that takes each row's highest logit (Q), or with probability ``epsilon`` a legal
    slot drawn uniformly; ``(slots, zeros)`` (DMC keeps no log-probabilities)."""

    def choose(logits: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        greedy = logits.argmax(-1)
        legal = (logits > PAD_LOGIT).float()
        uniform = torch.multinomial(legal, 1)[:, 0]
        explore = torch.rand(len(logits), device=logits.device) < epsilon
        return torch.where(explore, uniform, greedy), torch.zeros(len(logits), device=logits.device)

    return choose


DMC_STATS = ("q_loss", "value_loss", "q_mean", "return_mean")
"""What a DMC update reports: the played actions' squared error and the value head's, the mean
Q of the played actions and the mean target."""


def learn_dmc(
    model: PolicyValueNet, optimizer: torch.optim.Optimizer, buffer: Rollout, config: Config
) -> dict[str, float]:
    """One DMC update from a rollout (module docs)."""
    section = config.section
    batch = buffer.tensors()
    values = batch["values"]
    # GAE with lambda 1 is the Monte-Carlo return less the value: the return, nothing bootstrapped
    returns = ppo.compute_advantages(buffer, values, section.gamma, 1.0) + values
    stats: dict[str, Any] = dict.fromkeys(DMC_STATS, 0.0)
    count = 0
    passes = ppo.minibatch_passes(model, batch, section.update_epochs, section.minibatch_size)
    for mb, logits, predicted in passes:
        target = returns[mb]
        q = logits.gather(1, batch["actions"][mb][:, None])[:, 0]
        q_loss = 0.5 * (q - target).pow(2).mean()
        value_loss = 0.5 * (predicted - target).pow(2).mean()
        loss = q_loss + section.vf_coef * value_loss
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), section.max_grad_norm)
        optimizer.step()
        with torch.no_grad():
            for name, value in zip(stats, (q_loss, value_loss, q.mean(), target.mean()),
                                   strict=True):  # fmt: skip
                stats[name] += value.detach()
        count += 1
    return {k: float(v) / count for k, v in stats.items()}


def start_in_points(model: PolicyValueNet, config: Config) -> None:
    """A fresh network's outputs in the returns' unit: its heuristic term, which PPO's
    initialisation sets to logits (the heuristic's points over ``HEURISTIC_TEMPERATURE``), scaled
    to the heuristic's points times ``reward_scale``."""
    with torch.no_grad():
        model.summary_weights.mul_(HEURISTIC_TEMPERATURE * config.section.reward_scale)


def train_dmc(config: Config, run_dir: Path, resume: str | None = None) -> dict[str, Any]:
    """Deep Monte-Carlo self-play (module docs) into ``run_dir``, continuing ``resume``."""
    learner = ppo.Learner(stats=DMC_STATS, choose=epsilon_greedy(config.section.epsilon),
                          learn=learn_dmc, start=start_in_points)  # fmt: skip
    return ppo.train_self_play(config, run_dir, learner, resume)


register_algorithm("dmc", DMCConfig, Path(__file__).resolve().parent / "configs")
register_trainer("dmc", train_dmc)
