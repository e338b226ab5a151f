"""Self-play PPO for Bastra: one network for every seat, an opponent pool of past snapshots.

    bastra train --config 2p [--run-dir DIR] [--resume CKPT] [--FIELD VALUE ...] [FIELD=VALUE ...]
    python train.py --config configs/2p.yaml ...       # the same, from a source checkout
    python -m agents.train --config 2p ...             # the same, from an installed package

``--config`` takes a YAML file or the name of a shipped config (``SHIPPED_CONFIGS``: the files of
``agents/configs/``, also reachable as ``configs/`` in a checkout). Every field of ``Config`` and
its ``ppo:`` section can be set in the YAML file and overridden on the command line
(``ppo.total_env_steps=200000`` or ``--total-env-steps 200000``; lists comma-separated:
``--hidden 128,128``). The run
directory gets the resolved config, ``metrics.csv``, ``eval.csv``, TensorBoard logs, periodic
checkpoints, ``final.pt`` and ``curves.png``.

How it learns (see the README for the figures behind these choices):
- ``num_envs`` games run on the vector env (``bastra_env.vector``); at each step the seats to
  move are grouped by who plays them and each group goes through its network (or built-in
  player) in one batch, with the per-action inputs computed by compiled kernels. In a
  self-play game every seat is the learner; in a pool game (``pool_prob``) one side is a frozen
  past snapshot and only the learner's side is recorded.
- Each seat's moves form its own trajectory, so returns and advantages never mix one seat's
  future with another's; partners receive the same team reward.
- Rewards are each round's point difference, scaled by ``reward_scale``. Episodes are
  ``train_rounds`` rounds (default 1; 0: whole games to the target). Rollouts hold whole
  episodes only, so nothing is bootstrapped across updates and a resumed run continues exactly.
"""

from __future__ import annotations

import csv
import dataclasses
import json
import random
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
import yaml
from tqdm import tqdm

from agents.evaluation.curves import plot_curves
from agents.evaluation.matches import duplicate_match
from agents.learning.config import SearchConfig
from agents.learning.features import MAX_LEGAL
from agents.learning.network import (
    NetworkConfig,
    PolicyValueNet,
    build_model,
    read_checkpoint,
    save_checkpoint,
)
from agents.learning.policy import LearnedPolicy, checkpoint_path
from agents.registry import make_policy
from agents.training.config import (
    SHIPPED_CONFIGS,
    Config,
    build_parser,
    parse_config,
    resolve_config,
    shipped_configs,
)
from agents.training.imitation import imitate
from agents.training.rollout import (
    BASELINE_CODE,
    ROLLOUT_FIELDS,
    TIMED_PARTS,
    Chooser,
    Pool,
    Rollout,
    SelfPlayGames,
    collect_rollout,
    sample_policy,
)
from agents.training.threads import apply_threads, choose_threads
from bastra_env.vector import VectorEnv, batch_actor

PPO_STATS = ("policy_loss", "value_loss", "entropy", "approx_kl")
"""What a PPO update reports (``ppo_update``)."""


def metric_columns(stats: tuple[str, ...]) -> list[str]:
    """The columns of ``metrics.csv``, one row an update, for a learner reporting ``stats``."""
    return ["update", "env_steps", "samples", "steps_per_s", "samples_per_s",
            "mean_round_reward", *stats, "learning_rate",
            *(f"{part}_s" for part in TIMED_PARTS)]  # fmt: skip


METRICS = metric_columns(PPO_STATS)
"""The columns of a PPO run's ``metrics.csv``."""
EVALS = ["update", "env_steps", "opponent", "games", "win_rate", "ci_low", "ci_high", "point_diff"]
"""The columns of ``eval.csv``, one row an opponent an evaluation."""


@dataclass
class Progress:
    """How far the run is: what a checkpoint stores and a resumed run continues from."""

    update: int = 0
    env_steps: int = 0
    samples: int = 0
    train_seconds: float = 0.0
    threads: int = 0
    """The CPU threads the run trains on (``threads: auto`` resolved once; a resume keeps it)."""


@dataclass(frozen=True)
class Learner:
    """What a self-play algorithm brings to the loop of ``train_self_play``: how its network's
    logits choose the moves, and how it learns from a rollout."""

    stats: tuple[str, ...]
    """The figures ``learn`` reports (columns of ``metrics.csv``)."""
    choose: Chooser
    """The networks' moves from their logits (``rollout.sample_policy`` for PPO)."""
    learn: Callable[[PolicyValueNet, torch.optim.Optimizer, Rollout, Config], dict[str, float]]
    """One update from a rollout: the figures named in ``stats``."""
    start: Callable[[PolicyValueNet, Config], None] | None = None
    """What a fresh network (neither ``init_from`` nor resumed) needs before the first move."""
    pool: Callable[[Config, torch.device, NetworkConfig], Pool] = Pool
    """The opponents' pool (``rollout.Pool``: past snapshots; a league adds exploiters)."""


def learn_ppo(
    model: PolicyValueNet, optimizer: torch.optim.Optimizer, buffer: Rollout, config: Config
) -> dict[str, float]:
    """PPO's update: GAE advantages along each seat's trajectory, then ``ppo_update``."""
    batch = buffer.tensors()
    advantages = compute_advantages(
        buffer, batch["values"], config.section.gamma, config.section.gae_lambda
    )
    returns = advantages + batch["values"]
    return ppo_update(model, optimizer, batch, advantages, returns, config)


PPO = Learner(stats=PPO_STATS, choose=sample_policy, learn=learn_ppo)


def train_ppo(config: Config, run_dir: Path, resume: str | None = None) -> dict[str, Any]:
    """Self-play PPO (module docs) into ``run_dir``, continuing ``resume`` where given; the run's
    summary. The command line is ``agents.training.command.main``'s."""
    return train_self_play(config, run_dir, PPO, resume)


def train_self_play(
    config: Config, run_dir: Path, learner: Learner, resume: str | None = None
) -> dict[str, Any]:
    """The self-play loop (module docs) of ``learner``'s algorithm, whose section of ``config``
    (``config.section``) gives the games, the pool, the schedule and the logs."""
    section = config.section
    device = seed_everything(config)
    threads = set_up_threads(config, read_checkpoint(resume).get("threads", 0) if resume else 0)
    rng = np.random.default_rng(config.seed)
    writer = open_run_dir(run_dir, config)
    model, optimizer = build_learner(config, device)
    pool = learner.pool(config, device, model.config)
    progress = Progress()
    if resume:
        progress = restore(resume, model, optimizer, pool, rng, device)
    elif learner.start and not config.init_from:
        learner.start(model, config)
    progress.threads = threads
    venv = VectorEnv(section.num_envs, rules=config.rules, reward="points", copy=False,
                     num_threads=threads)  # fmt: skip
    columns = metric_columns(learner.stats)
    start_logs(run_dir, resumed=bool(resume), metrics=columns)
    games = SelfPlayGames(config, pool, len(section.baseline_opponents), rng)
    baselines = [make_policy(name, seed=config.seed + i)
                 for i, name in enumerate(section.baseline_opponents)]  # fmt: skip
    actors = [batch_actor(policy) for policy in baselines]
    if getattr(section, "imitation_samples", 0) and not resume:
        warm_start(model, optimizer, config, device, rng, writer, progress)

    last_eval: dict[str, float] = {}
    total_updates = -(-section.total_env_steps // section.rollout_steps)
    bar = tqdm(total=section.total_env_steps, initial=progress.env_steps, unit="step",
               dynamic_ncols=True)  # fmt: skip
    while progress.env_steps < section.total_env_steps:
        started = time.perf_counter()
        if section.anneal_lr:
            set_learning_rate(optimizer, config, progress.update, total_updates)
        buffer, plays, timer = collect_rollout(venv, games, model, actors, device, learner.choose)
        clock = time.perf_counter()
        stats = learner.learn(model, optimizer, buffer, config)
        timer["update"] += time.perf_counter() - clock

        seconds = time.perf_counter() - started
        progress.update += 1
        progress.env_steps += plays
        progress.samples += len(buffer)
        progress.train_seconds += seconds
        if progress.update % section.snapshot_every == 0:
            pool.add(model)
        pool.tend(progress.update, progress.env_steps, model, venv, run_dir)
        row = metrics_row(progress, buffer, plays, seconds, stats, optimizer, timer)
        log_metrics(run_dir, writer, row, columns)
        if section.eval_every and progress.update % section.eval_every == 0:
            last_eval = evaluate_learner(model, config, run_dir, writer, progress, threads)
        if progress.update % section.checkpoint_every == 0:
            name = f"checkpoint_{progress.update:06d}.pt"
            save_run_checkpoint(run_dir / name, model, optimizer, pool, config, progress, rng,
                                device)  # fmt: skip
        bar.update(plays)
        shown = "entropy" if "entropy" in stats else learner.stats[0]
        bar.set_postfix(upd=progress.update, sps=f"{plays / seconds:,.0f}",
                        **{shown[:3]: f"{stats[shown]:.2f}"},
                        **{f"vs_{k}": f"{v:.0%}" for k, v in last_eval.items()})  # fmt: skip
    bar.close()

    save_run_checkpoint(run_dir / "final.pt", model, optimizer, pool, config, progress, rng,
                        device)  # fmt: skip
    final = evaluate_learner(model, config, run_dir, writer, progress, threads)
    writer.close()
    return summarise(run_dir, config, progress, final)


# --------------------------------------------------------------------------- setting up
def seed_everything(config: Config) -> torch.device:
    """Seed Python's, NumPy's and torch's global streams; the device to train on (a GPU where
    ``device`` allows and one exists)."""
    random.seed(config.seed)
    np.random.seed(config.seed)
    torch.manual_seed(config.seed)
    wants_cuda = config.device == "cuda" or (config.device == "auto" and torch.cuda.is_available())
    return torch.device("cuda" if wants_cuda else "cpu")


def set_up_threads(config: Config, resumed: int = 0) -> int:
    """``threads`` resolved (``agents.training.threads``: ``auto`` takes the free cores, at most
    ``AUTO_CAP``, and says so in one line where other work keeps some busy) and set once for
    torch, numba and BLAS; the count. Torch's sums can round differently on another count, so a
    resumed run (``resumed``: the count its checkpoint trained on) keeps its count under
    ``auto``, and continues exactly."""
    if config.threads == "auto" and resumed:
        threads = resumed
    else:
        choice = choose_threads(config.threads)
        if choice.note:
            print(choice.note)
        threads = choice.threads
    apply_threads(threads)
    return threads


def open_run_dir(run_dir: Path, config: Config) -> Any:
    """The run directory with the resolved ``config.yaml``; its TensorBoard writer."""
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "config.yaml").write_text(yaml.safe_dump(config.to_dict(), sort_keys=False))
    from torch.utils.tensorboard import SummaryWriter  # slow to import: not for --help

    return SummaryWriter(str(run_dir / "tensorboard"))


def build_learner(
    config: Config, device: torch.device
) -> tuple[PolicyValueNet, torch.optim.Optimizer]:
    """The network (fresh from the seeded stream with the algorithm section's ``hidden`` and
    ``pair_width``, or ``init_from``'s weights and shape) and its Adam optimizer at the section's
    ``learning_rate``."""
    section = config.section
    if config.init_from:  # a best response, or fine-tuning: the given weights and their shape
        model = build_model(read_checkpoint(checkpoint_path(config.init_from))).to(device)
    else:
        network = NetworkConfig(hidden=tuple(section.hidden), pair_width=section.pair_width)
        model = PolicyValueNet(network).to(device)
    parameters = list(model.parameters())
    optimizer = torch.optim.Adam(parameters, lr=section.learning_rate, eps=1e-5, fused=True)
    return model, optimizer


def restore(
    path: str,
    model: PolicyValueNet,
    optimizer: torch.optim.Optimizer,
    pool: Pool,
    rng: np.random.Generator,
    device: torch.device,
) -> Progress:
    """A checkpoint's weights, optimizer, pool and random streams, and how far its run was."""
    payload = read_checkpoint(path)
    model.load_state_dict(build_model(payload).state_dict())
    optimizer.load_state_dict(payload["optimizer"])
    pool.load(payload["pool"])
    rng.bit_generator.state = payload["rng"]
    torch.set_rng_state(payload["torch_rng"])
    if device.type == "cuda" and payload.get("cuda_rng"):
        torch.cuda.set_rng_state_all(payload["cuda_rng"])
    return Progress(payload["update"], payload["env_steps"], payload["samples"],
                    payload["train_seconds"])  # fmt: skip


def start_logs(run_dir: Path, resumed: bool, metrics: list[str] = METRICS) -> None:
    """``metrics.csv`` (columns ``metrics``) and ``eval.csv`` with their headers (a resumed run
    appends to its own)."""
    for name, columns in (("metrics.csv", metrics), ("eval.csv", EVALS)):
        path = run_dir / name
        if not (resumed and path.exists()):
            with path.open("w", newline="") as f:
                csv.writer(f).writerow(columns)


def warm_start(
    model: PolicyValueNet,
    optimizer: torch.optim.Optimizer,
    config: Config,
    device: torch.device,
    rng: np.random.Generator,
    writer: Any,
    progress: Progress,
) -> None:
    """Copy the teacher's moves before self-play (``imitation_samples``)."""
    imitation = imitate(model, optimizer, config, device, rng)
    progress.train_seconds += imitation["seconds"]
    writer.add_scalar("imitation/accuracy", imitation["accuracy"], 0)
    print(
        f"imitation: {imitation['samples']:,} moves of {config.section.imitation_teacher}, "
        f"accuracy {imitation['accuracy']:.1%}, {imitation['seconds']:.0f} s"
    )


# --------------------------------------------------------------------------- one update
def set_learning_rate(
    optimizer: torch.optim.Optimizer, config: Config, update: int, total_updates: int
) -> None:
    """``anneal_lr``: the learning rate decays linearly to 0 over the run."""
    fraction = 1.0 - update / total_updates
    for group in optimizer.param_groups:
        group["lr"] = config.section.learning_rate * max(fraction, 0.0)


def compute_advantages(
    buffer: Rollout, values: torch.Tensor, gamma: float, gae_lambda: float
) -> torch.Tensor:
    """GAE along each seat's trajectory (``values float32[N]``, the rollout's value estimates)
    -> ``advantages float32[N]`` on ``values``' device. Trajectories are whole episodes: nothing
    is bootstrapped past their end."""
    values_np = values.cpu().numpy()
    advantages = np.zeros_like(values_np)
    for trajectory in buffer.trajectories:
        last_gae, next_value = 0.0, 0.0
        for index in reversed(trajectory):
            delta = buffer.rewards[index] + gamma * next_value - values_np[index]
            last_gae = delta + gamma * gae_lambda * last_gae
            advantages[index] = last_gae
            next_value = values_np[index]
    return torch.from_numpy(advantages).to(values.device)


def minibatch_pairs(
    counts: torch.Tensor, firsts: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """The pairs of a minibatch whose transitions have ``counts`` pairs starting at ``firsts``
    (``[M]``): (the minibatch row of each ``[P]``, its index in the rollout's pairs ``[P]``), in
    :func:`~agents.learning.network.real_pairs`' order."""
    rows = torch.repeat_interleave(torch.arange(len(counts), device=counts.device), counts)
    starts = torch.cumsum(counts, 0) - counts
    within = torch.arange(len(rows), device=counts.device) - starts[rows]
    return rows, firsts[rows] + within


def minibatch_passes(
    model: PolicyValueNet, batch: dict[str, torch.Tensor], epochs: int, size: int
) -> Iterator[tuple[torch.Tensor, torch.Tensor, torch.Tensor]]:
    """``epochs`` passes over a rollout (``batch``: ``Rollout.tensors()``) in shuffled
    minibatches of ``size`` transitions: ``(their indices [M], the network's logits
    [M, MAX_LEGAL], its values [M])``, with gradients, for the caller's step."""
    counts = batch["pair_counts"]
    firsts = torch.cumsum(counts, 0) - counts  # where each transition's pairs start
    # the observation's columns that are not 0 in every transition (about half): the first layer
    # reads only those, the same function at half the work
    observations = batch["obs"][:, : model.config.observation_size]
    columns = torch.nonzero(observations.ne(0).any(0))[:, 0]
    observations = observations.index_select(1, columns)
    total = len(batch["actions"])
    for _ in range(epochs):
        order = torch.randperm(total)
        for start in range(0, total, size):
            mb = order[start : start + size]
            rows, pairs = minibatch_pairs(counts[mb], firsts[mb])
            logits, values = model.pair_logits(
                observations[mb], rows, batch["pair_slots"][pairs], batch["pair_inputs"][pairs],
                (len(mb), MAX_LEGAL), columns,
            )  # fmt: skip
            yield mb, logits, values


def ppo_update(
    model: PolicyValueNet,
    optimizer: torch.optim.Optimizer,
    batch: dict[str, torch.Tensor],
    advantages: torch.Tensor,
    returns: torch.Tensor,
    config: Config,
) -> dict[str, float]:
    """``update_epochs`` passes of clipped PPO over the rollout in shuffled minibatches
    (``batch``: ``Rollout.tensors()``, first dimension N; ``advantages`` and ``returns``
    ``float32[N]``), advantages normalised per minibatch. Returns the mean losses, entropy and
    approximate KL."""
    stats: dict[str, Any] = dict.fromkeys(PPO_STATS, 0.0)
    count = 0
    section = config.section
    clip = section.clip_coef
    passes = minibatch_passes(model, batch, section.update_epochs, section.minibatch_size)
    for mb, logits, values in passes:
        log_probs = logits.log_softmax(-1)  # [M, MAX_LEGAL]; padding slots about -1e9
        new_logp = log_probs.gather(1, batch["actions"][mb][:, None])[:, 0]
        log_ratio = new_logp - batch["logps"][mb]
        ratio = log_ratio.exp()
        adv = advantages[mb]
        adv = (adv - adv.mean()) / (adv.std() + 1e-8)
        policy_loss = torch.max(-adv * ratio, -adv * ratio.clamp(1 - clip, 1 + clip)).mean()
        value_loss = 0.5 * (values - returns[mb]).pow(2).mean()
        entropy = -(log_probs.exp() * log_probs).sum(-1).mean()
        loss = policy_loss + section.vf_coef * value_loss - section.ent_coef * entropy
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), section.max_grad_norm)
        optimizer.step()
        with torch.no_grad():
            kl = ((ratio - 1) - log_ratio).mean()
            for name, value in zip(stats, (policy_loss, value_loss, entropy, kl), strict=True):
                stats[name] += value.detach()
        count += 1
    return {k: float(v) / count for k, v in stats.items()}


# --------------------------------------------------------------------------- bookkeeping
def metrics_row(
    progress: Progress,
    buffer: Rollout,
    plays: int,
    seconds: float,
    stats: dict[str, float],
    optimizer: torch.optim.Optimizer,
    timer: dict[str, float],
) -> dict[str, Any]:
    """One update's row of ``metrics.csv``."""
    mean_reward = float(np.mean(buffer.round_rewards)) if buffer.round_rewards else 0.0
    return {
        "update": progress.update,
        "env_steps": progress.env_steps,
        "samples": progress.samples,
        "steps_per_s": plays / seconds,
        "samples_per_s": len(buffer) / seconds,
        "mean_round_reward": mean_reward,
        **stats,
        "learning_rate": optimizer.param_groups[0]["lr"],
        **{f"{part}_s": spent for part, spent in timer.items()},
    }


def log_metrics(
    run_dir: Path, writer: Any, row: dict[str, Any], columns: list[str] = METRICS
) -> None:
    """Append ``row`` to ``metrics.csv`` (its ``columns``) and to TensorBoard."""
    with (run_dir / "metrics.csv").open("a", newline="") as f:
        csv.writer(f).writerow(
            [f"{row[k]:.6g}" if isinstance(row[k], float) else row[k] for k in columns]
        )
    for key, value in row.items():
        if key not in ("update", "env_steps"):
            writer.add_scalar(f"train/{key}", value, row["env_steps"])


def network_player(model: PolicyValueNet, name: str = "learner") -> LearnedPolicy:
    """The learner's network alone (no search), on the CPU: what the curves follow."""
    copy = PolicyValueNet(model.config)
    copy.load_state_dict({k: v.detach().cpu() for k, v in model.state_dict().items()})
    return LearnedPolicy(copy, SearchConfig(endgame=False), name=name)


def evaluate_learner(
    model: PolicyValueNet,
    config: Config,
    run_dir: Path,
    writer: Any,
    progress: Progress,
    threads: int | None = None,
) -> dict[str, float]:
    """The network alone against each of ``eval.opponents`` on ``eval.deals`` duplicate deals
    (the same deals every time); rows of ``eval.csv`` and TensorBoard. ``{opponent: win rate}``."""
    policy = network_player(model)
    found = {}
    for name in config.eval.opponents:
        opponent = make_policy(name, seed=config.seed)
        result = duplicate_match(policy, opponent, table=config.table, deals=config.eval.deals,
                                 mode=config.eval.mode, seed=10_000_000 + config.seed,
                                 names=("learner", name), num_threads=threads)  # fmt: skip
        found[name] = result.win_rate
        writer.add_scalar(f"eval/win_rate_vs_{name}", result.win_rate, progress.env_steps)
        writer.add_scalar(f"eval/point_diff_vs_{name}", result.point_diff, progress.env_steps)
        with (run_dir / "eval.csv").open("a", newline="") as f:
            csv.writer(f).writerow([
                progress.update, progress.env_steps, name, result.games,
                f"{result.win_rate:.4f}", f"{result.ci_low:.4f}", f"{result.ci_high:.4f}",
                f"{result.point_diff:.3f}",
            ])  # fmt: skip
    return found


def save_run_checkpoint(
    path: Path,
    model: PolicyValueNet,
    optimizer: torch.optim.Optimizer,
    pool: Pool,
    config: Config,
    progress: Progress,
    rng: np.random.Generator,
    device: torch.device,
) -> None:
    """Everything a resumed run needs to continue exactly: weights, optimizer, pool, progress
    and every random stream."""
    save_checkpoint(
        path,
        model,
        config=config.to_dict(),
        rules=config.rules.to_dict(),
        optimizer=optimizer.state_dict(),
        pool=pool.dump(),
        **dataclasses.asdict(progress),
        rng=rng.bit_generator.state,
        torch_rng=torch.get_rng_state(),
        cuda_rng=torch.cuda.get_rng_state_all() if device.type == "cuda" else [],
    )


def summarise(
    run_dir: Path, config: Config, progress: Progress, final: dict[str, float]
) -> dict[str, Any]:
    """``curves.png`` and ``summary.json`` of the finished run; what it achieved, printed."""
    curves = plot_curves([run_dir])
    summary = {
        "run_dir": str(run_dir),
        "updates": progress.update,
        "env_steps": progress.env_steps,
        "samples": progress.samples,
        "train_seconds": round(progress.train_seconds, 1),
        "threads": progress.threads,
        "final_eval": final,
        "eval_mode": config.eval.mode,
    }
    (run_dir / "summary.json").write_text(json.dumps(summary, indent=2))
    print(f"\ntrained {progress.env_steps:,} plays ({progress.samples:,} learner samples) in "
          f"{progress.train_seconds:.0f} s on {progress.threads} thread"
          f"{'s' * (progress.threads != 1)}")  # fmt: skip
    for name, rate in final.items():
        print(
            f"  win rate vs {name:<9} {rate:6.1%}  "
            f"({2 * config.eval.deals} {config.eval.mode}s, duplicate deals)"
        )
    print(f"wrote {run_dir / 'final.pt'}, {curves}")
    return summary


__all__ = [
    "BASELINE_CODE",
    "EVALS",
    "METRICS",
    "ROLLOUT_FIELDS",
    "SHIPPED_CONFIGS",
    "TIMED_PARTS",
    "Config",
    "Pool",
    "Progress",
    "Rollout",
    "build_parser",
    "compute_advantages",
    "evaluate_learner",
    "imitate",
    "parse_config",
    "ppo_update",
    "resolve_config",
    "shipped_configs",
    "train_ppo",
]
