"""EXPERIMENTAL. Expert iteration (``algorithm: exit``): the network learns what its own search
finds. It measured no better than the shipped path (docs/experiments.md, "Expert iteration"), so
nothing that ships leads here; it stays runnable by its configs' names (``exit_smoke``).

    bastra train --config exit_smoke --run-dir runs/exit    # a tiny run on local Ray actors
    bastra train --config exit_2p                           # the 2p run
    bastra train --resume runs/exit/checkpoint_000004.pt    # continue a run exactly

Each iteration:

1. **Self-play.** ``exit.games`` single rounds, in shards of ``exit.shard_games`` with fixed seeds
   (``agents.experimental.expert``), played on every seat by the *best* network so far with search
   around it: PIMC on ``exit.worlds`` inferred worlds (its leaf the rollout policy, or the
   perfect-information critic one play deep: ``exit.leaf``), the exact endgame search once the
   deck is low, the network's log-probability added at ``exit.network_weight`` points a nat.
   Every decision keeps the search's values of every legal move, the seat's observation, the
   hidden cards (every hand, the deck's order) and, at the round's end, its side's points. The
   shards run in this process (``exit.ray_workers: 0``) or on Ray actors
   (``agents.integrations.ray_selfplay``); the data is the same either way.
2. **Learning.** Over the newest ``exit.buffer`` iterations' decisions, ``exit.epochs`` passes:
   the policy toward the softmax of the search's values over ``exit.temperature`` (cross-entropy
   on the legal moves), the value head toward the round's points (``reward_scale``), and a
   perfect-information critic (observation + hidden cards, ``PrivilegedCritic``) toward the same:
   the value ``exit.leaf: value`` searches with.
3. **Gate.** The learner's network against the best one's, both alone, on ``exit.gate_deals``
   duplicate deals (two rounds each): at ``exit.gate_win_rate`` or more the learner becomes the
   best, the self-play player of the next iteration. The figure is logged either way.
4. **Curves.** The learner's network alone against ``eval_opponents`` (``eval.csv`` and
   ``curves.png``, by self-play decisions), the gate in ``metrics.csv``.

``final.pt`` holds the best network (``load_policy`` plays it with the table's default search)
and the learner's state; a checkpoint holds everything a resumed run needs, the data buffer
included, and a resumed run continues exactly (in this process's mode; Ray's actors play the same
shards to the same data).
"""

from __future__ import annotations

import copy
import csv
import dataclasses
import time
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import torch
from tqdm import tqdm

from agents.evaluation.matches import duplicate_match
from agents.experimental.expert import (
    SHARD_FIELDS,
    ExpertConfig,
    PrivilegedCritic,
    Weights,
    concatenate,
    play_expert_shard,
    shard_seed,
)
from agents.learning.features import PAD_ACTION, action_inputs_batch
from agents.learning.network import PolicyValueNet, read_checkpoint
from agents.training import ppo
from agents.training.command import register_trainer
from agents.training.config import Config, register_algorithm, setting


@dataclasses.dataclass
class ExitSection:
    """``exit:``: expert iteration (experimental)."""

    iterations: int = setting(10, "int>0")
    """Iterations of self-play, learning and gating."""
    games: int = setting(64, "int>0")
    """Self-play games (single rounds) an iteration, in shards of ``shard_games``."""
    shard_games: int = setting(8, "int>0")
    """Games a shard: the unit of work of one actor, with its own fixed seed."""
    worlds: int = setting(32, "int>0")
    """The expert's PIMC worlds a decision (inferred from the deal's plays)."""
    temperature: float = setting(1.0, "float>0")
    """Round points a unit of the policy target's logits."""
    network_weight: float = setting(0.3, "float>=0")
    """Points a nat of the network's log-probability added to each move's PIMC value."""
    leaf: str = setting("rollout", "rollout|value")
    """PIMC's leaf: "rollout" (to the round's end) or "value" (one play deep, then the
    perfect-information critic)."""
    buffer: int = setting(4, "int>0")
    """Iterations of self-play data the learner trains on (the newest)."""
    epochs: int = setting(2, "int>0")
    """Passes over the buffer an iteration."""
    gate_deals: int = setting(200, "int>0")
    """Duplicate deals (x2 rounds) of the gate: the learner's network against the best one's."""
    gate_win_rate: float = setting(0.5, "[0,1]")
    """The learner becomes the self-play player when it wins at least this share of the gate."""
    hidden: list[int] = setting([256, 256], "ints>0")
    """Widths of the network's hidden layers (``init_from`` gives its own)."""
    pair_width: int = setting(64, "int>0")
    """Width of the network's (state, action) layer."""
    learning_rate: float = setting(5e-4, "float>0")
    """Adam's step size."""
    minibatch_size: int = setting(512, "int>0")
    """Decisions a gradient step."""
    vf_coef: float = setting(0.5, "float>=0")
    """Weight of the value losses."""
    max_grad_norm: float = setting(0.5, "float>0")
    """Gradients clipped to this norm."""
    reward_scale: float = setting(0.05, "float>0")
    """Round points to value units."""
    eval_every: int = setting(25, "int>=0")
    """Iterations between evaluations (0: only at the end)."""
    checkpoint_every: int = setting(50, "int>0")
    """Iterations between checkpoints."""
    ray_workers: int = setting(0, "int>=0")
    """Self-play on this many Ray actors; 0 plays the shards in this process."""


@dataclasses.dataclass
class ExitConfig(Config):
    """A ``Config`` with the ``exit:`` section (``algorithm: exit``)."""

    exit: ExitSection = dataclasses.field(default_factory=ExitSection)

    SECTIONS: ClassVar[dict[str, str]] = {**Config.SECTIONS, "exit": "exit"}
    EXTRA_SECTIONS: ClassVar[dict[str, type]] = {"exit": ExitSection}


EXIT_METRICS = ["iteration", "plays", "searched", "selfplay_s", "searched_per_s", "samples",
                "learn_s", "samples_per_s", "policy_loss", "target_kl", "agreement",
                "value_loss", "critic_loss", "gate_win_rate", "gate_ci_low", "gate_ci_high",
                "accepted", "best_iteration"]  # fmt: skip
"""The columns of an expert-iteration run's ``metrics.csv``, one row an iteration."""
GATE = "previous best (gate)"
"""The gate's name in ``eval.csv``."""


@dataclasses.dataclass
class ExitProgress:
    """How far an expert-iteration run is (what a checkpoint stores)."""

    iteration: int = 0
    plays: int = 0
    """Self-play decisions recorded (every seat's plays)."""
    samples: int = 0
    """Decisions the learner trained on (with repeats over epochs and the buffer)."""
    train_seconds: float = 0.0
    best_iteration: int = 0
    """The iteration whose learner is the best network (0: the starting one)."""
    threads: int = 0


class LocalSelfPlay:
    """The shards played one after another in this process (``exit.ray_workers: 0``)."""

    replaced = 0

    def run(self, play: Any, shared: Any, seeds: list[int],
            on_result: Any = None) -> list[dict[str, Any]]:  # fmt: skip
        results = []
        for i, seed in enumerate(seeds):
            results.append(play(shared, seed))
            if on_result is not None:
                on_result(i, results[-1])
        return results

    def close(self) -> None:
        pass


class ShardProgress:
    """The progress bar's update as each shard of an iteration comes back: searched decisions
    a second so far, and the latest figures."""

    def __init__(self, bar: Any, iteration: int, figures: dict[str, str]) -> None:
        self.bar, self.iteration, self.figures = bar, iteration, figures
        self.searched = 0
        self.started = time.perf_counter()

    def __call__(self, index: int, result: dict[str, Any]) -> None:
        self.searched += int(result["searched_decisions"])
        rate = self.searched / (time.perf_counter() - self.started)
        self.bar.update(1)
        self.bar.set_postfix(it=self.iteration, dps=f"{rate:,.0f}", **self.figures)


def expert_config(config: ExitConfig) -> ExpertConfig:
    """The self-play player and its record of a run's config."""
    return ExpertConfig(
        rules=config.rules.to_dict(),
        worlds=config.exit.worlds,
        temperature=config.exit.temperature,
        network_weight=config.exit.network_weight,
        leaf=config.exit.leaf,
        games=config.exit.shard_games,
        reward_scale=config.exit.reward_scale,
    )


def make_runner(config: ExitConfig) -> Any:
    """Where the shards run: this process, or ``ray_workers`` Ray actors."""
    if config.exit.ray_workers == 0:
        return LocalSelfPlay()
    from agents.integrations.ray_selfplay import RaySelfPlay

    return RaySelfPlay(config.exit.ray_workers)


def shard_seeds(config: ExitConfig, iteration: int) -> list[int]:
    """The fixed seeds of an iteration's shards (``exit.games`` in ``exit.shard_games``)."""
    shards = -(-config.exit.games // config.exit.shard_games)
    return [shard_seed(config.seed, iteration, s) for s in range(shards)]


def train_exit(config: ExitConfig, run_dir: Path, resume: str | None = None) -> dict[str, Any]:
    """Run expert iteration (module docs) into ``run_dir``; the run's summary."""
    device = ppo.seed_everything(config)
    payload = read_checkpoint(resume) if resume else None
    threads = ppo.set_up_threads(config, payload.get("threads", 0) if payload else 0)
    writer = ppo.open_run_dir(run_dir, config)
    model, _ = ppo.build_learner(config, device)
    critic = PrivilegedCritic(model.config.observation_size, tuple(config.exit.hidden)).to(device)
    parameters = [*model.parameters(), *critic.parameters()]  # the critic always learns here
    optimizer = torch.optim.Adam(parameters, lr=config.exit.learning_rate, eps=1e-5, fused=True)
    best = copy.deepcopy(model)
    progress = ExitProgress(threads=threads)
    buffer: list[dict[str, torch.Tensor]] = []
    generator = torch.Generator().manual_seed(config.seed)
    if payload is not None:
        progress, buffer = restore_exit(payload, model, critic, best, optimizer, generator)
        progress.threads = threads
    ppo.start_logs(run_dir, resumed=payload is not None)  # eval.csv (and PPO's metrics.csv)
    metrics_path = run_dir / "metrics.csv"
    with metrics_path.open(newline="") as f:
        header = next(csv.reader(f), [])
    if header != EXIT_METRICS:  # a fresh run, or a resume into a new folder
        with metrics_path.open("w", newline="") as f:
            csv.writer(f).writerow(EXIT_METRICS)

    expert = expert_config(config)
    runner = make_runner(config)
    shards_per_iteration = len(shard_seeds(config, 0))
    bar = tqdm(total=config.exit.iterations * shards_per_iteration,
               initial=progress.iteration * shards_per_iteration, unit="shard",
               dynamic_ncols=True)  # fmt: skip
    figures: dict[str, Any] = {}
    try:
        while progress.iteration < config.exit.iterations:
            started = time.perf_counter()
            iteration = progress.iteration + 1
            leaf_critic = critic if config.exit.leaf == "value" else None
            weights = Weights.of(best, leaf_critic)
            shard_done = ShardProgress(bar, iteration, figures)

            clock = time.perf_counter()
            seeds = shard_seeds(config, iteration)
            shards = runner.run(play_expert_shard, (weights, expert), seeds, shard_done)
            selfplay_s = time.perf_counter() - clock
            data = to_tensors(concatenate(shards))
            buffer = (buffer + [data])[-config.exit.buffer :]

            clock = time.perf_counter()
            stats = learn(model, critic, optimizer, buffer, config, generator, device)
            learn_s = time.perf_counter() - clock

            gate = duplicate_match(
                ppo.network_player(model, "learner"), ppo.network_player(best, "best"),
                table=config.table, deals=config.exit.gate_deals, mode="round",
                seed=20_000_000 + 1_000 * iteration + config.seed, names=("learner", "best"),
                num_threads=threads,
            )  # fmt: skip
            accepted = gate.win_rate >= config.exit.gate_win_rate
            if accepted:
                best.load_state_dict(model.state_dict())
                progress.best_iteration = iteration

            progress.iteration = iteration
            progress.plays += len(data["value"])
            progress.samples += int(stats["samples"])
            progress.train_seconds += time.perf_counter() - started
            searched = int(data["searched"].sum())
            row = {
                "iteration": iteration, "plays": progress.plays, "searched": searched,
                "selfplay_s": selfplay_s, "searched_per_s": searched / selfplay_s,
                "samples": stats["samples"], "learn_s": learn_s,
                "samples_per_s": stats["samples"] / learn_s,
                **{k: stats[k] for k in ("policy_loss", "target_kl", "agreement", "value_loss",
                                         "critic_loss")},
                "gate_win_rate": gate.win_rate, "gate_ci_low": gate.ci_low,
                "gate_ci_high": gate.ci_high, "accepted": int(accepted),
                "best_iteration": progress.best_iteration,
            }  # fmt: skip
            log_row(metrics_path, writer, row)
            step = ppo.Progress(update=iteration, env_steps=progress.plays)
            eval_row(run_dir, step, GATE, gate)
            if config.exit.eval_every and iteration % config.exit.eval_every == 0:
                found = ppo.evaluate_learner(model, config, run_dir, writer, step, threads)
                figures = {f"vs_{k}": f"{v:.0%}" for k, v in found.items()}
            figures["gate"] = f"{gate.win_rate:.0%}{'+' if accepted else '-'}"
            bar.set_postfix(it=iteration, dps=f"{searched / selfplay_s:,.0f}", **figures)
            if iteration % config.exit.checkpoint_every == 0 or iteration == config.exit.iterations:
                path = run_dir / f"checkpoint_{iteration:06d}.pt"
                save_exit_checkpoint(path, model, critic, best, optimizer, config, progress,
                                     buffer, generator)  # fmt: skip
    finally:
        bar.close()
        runner.close()

    save_exit_checkpoint(run_dir / "final.pt", model, critic, best, optimizer, config, progress,
                         buffer, generator)  # fmt: skip
    final_step = ppo.Progress(update=progress.iteration, env_steps=progress.plays)
    final = ppo.evaluate_learner(best, config, run_dir, writer, final_step, threads)
    writer.close()
    summary = ppo.summarise(
        run_dir, config,
        ppo.Progress(progress.iteration, progress.plays, progress.samples,
                     progress.train_seconds, progress.threads),
        final,
    )  # fmt: skip
    print(f"expert iteration: {progress.iteration} iterations, the best network is iteration "
          f"{progress.best_iteration}'s; actors replaced: {runner.replaced}")  # fmt: skip
    return summary


def to_tensors(data: dict[str, np.ndarray]) -> dict[str, torch.Tensor]:
    return {name: torch.from_numpy(np.ascontiguousarray(values)) for name, values in data.items()}


def learn(
    model: PolicyValueNet,
    critic: PrivilegedCritic,
    optimizer: torch.optim.Optimizer,
    buffer: list[dict[str, torch.Tensor]],
    config: ExitConfig,
    generator: torch.Generator,
    device: torch.device,
) -> dict[str, float]:
    """``exit.epochs`` passes over the buffer's decisions in shuffled minibatches (module docs);
    the mean losses, the target's KL from the policy, the share of searched decisions where the
    network's favourite is the target's, and the samples seen."""
    data = {name: torch.cat([part[name] for part in buffer]) for name in SHARD_FIELDS}
    size = len(data["value"])
    totals = dict.fromkeys(("policy_loss", "target_kl", "value_loss", "critic_loss"), 0.0)
    agree, searched, batches = 0, 0, 0
    pad = torch.zeros(1, dtype=torch.float32)
    model.train()
    for _ in range(config.exit.epochs):
        order = torch.randperm(size, generator=generator)
        for start in range(0, size, config.exit.minibatch_size):
            mb = order[start : start + config.exit.minibatch_size]
            obs = data["obs"][mb].float()
            actions, features = action_inputs_batch(obs.numpy(), data["mask"][mb].numpy())
            actions_t = torch.from_numpy(actions)
            full = torch.cat([data["target"][mb].float(), pad.expand(len(mb), 1)], dim=1)
            target = full.gather(1, actions_t)  # [M, K], 0 on padding (PAD_ACTION's column)
            assert full.shape[1] - 1 == PAD_ACTION
            obs_d, target_d = obs.to(device), target.to(device)
            logits, values = model.slot_logits(obs_d, actions_t.to(device),
                                               torch.from_numpy(features).to(device))  # fmt: skip
            log_probs = logits.log_softmax(-1)
            policy_loss = -(target_d * log_probs).sum(-1).mean()
            entropy = -(target_d * target_d.clamp_min(1e-12).log()).sum(-1).mean()
            returns = data["value"][mb].to(device)
            value_loss = 0.5 * (values - returns).pow(2).mean()
            judged = critic(obs_d, data["privileged"][mb].float().to(device))
            critic_loss = 0.5 * (judged - returns).pow(2).mean()
            loss = policy_loss + config.exit.vf_coef * (value_loss + critic_loss)
            optimizer.zero_grad()
            loss.backward()
            for module in (model, critic):
                torch.nn.utils.clip_grad_norm_(module.parameters(), config.exit.max_grad_norm)
            optimizer.step()
            with torch.no_grad():
                rows = data["searched"][mb].to(device)
                agree += int((log_probs.argmax(-1) == target_d.argmax(-1))[rows].sum())
                searched += int(rows.sum())
                for name, value in (("policy_loss", policy_loss), ("value_loss", value_loss),
                                    ("critic_loss", critic_loss),
                                    ("target_kl", policy_loss - entropy)):  # fmt: skip
                    totals[name] += float(value)
            batches += 1
    model.eval()
    stats = {name: value / max(batches, 1) for name, value in totals.items()}
    stats["agreement"] = agree / max(searched, 1)
    stats["samples"] = size * config.exit.epochs
    return stats


def log_row(path: Path, writer: Any, row: dict[str, Any]) -> None:
    with path.open("a", newline="") as f:
        csv.writer(f).writerow(
            [f"{row[k]:.6g}" if isinstance(row[k], float) else row[k] for k in EXIT_METRICS]
        )
    for key, value in row.items():
        if key not in ("iteration", "plays"):
            writer.add_scalar(f"exit/{key}", value, row["plays"])


def eval_row(run_dir: Path, step: Any, name: str, result: Any) -> None:
    """One row of ``eval.csv`` (the gate's)."""
    with (run_dir / "eval.csv").open("a", newline="") as f:
        csv.writer(f).writerow([
            step.update, step.env_steps, name, result.games, f"{result.win_rate:.4f}",
            f"{result.ci_low:.4f}", f"{result.ci_high:.4f}", f"{result.point_diff:.3f}",
        ])  # fmt: skip


def save_exit_checkpoint(
    path: Path,
    model: PolicyValueNet,
    critic: PrivilegedCritic,
    best: PolicyValueNet,
    optimizer: torch.optim.Optimizer,
    config: ExitConfig,
    progress: ExitProgress,
    buffer: list[dict[str, torch.Tensor]],
    generator: torch.Generator,
) -> None:
    """The best network as the checkpoint's model (what ``load_policy`` plays), and everything a
    resumed run needs: the learner, critic, optimizer, data buffer and random streams."""
    from agents.learning.network import save_checkpoint

    save_checkpoint(
        path,
        best,
        learner=model.state_dict(),
        critic=critic.state_dict(),
        config=dataclasses.asdict(config),
        rules=config.rules.to_dict(),
        optimizer=optimizer.state_dict(),
        exit_progress=dataclasses.asdict(progress),
        threads=progress.threads,
        buffer=buffer,
        generator=generator.get_state(),
        torch_rng=torch.get_rng_state(),
    )


def restore_exit(
    payload: dict[str, Any],
    model: PolicyValueNet,
    critic: PrivilegedCritic,
    best: PolicyValueNet,
    optimizer: torch.optim.Optimizer,
    generator: torch.Generator,
) -> tuple[ExitProgress, list[dict[str, torch.Tensor]]]:
    """A checkpoint's learner, critic, best network, optimizer and streams; its progress and
    data buffer. ``ValueError`` on a checkpoint that is not an expert-iteration run's."""
    if "exit_progress" not in payload:
        raise ValueError("the checkpoint to resume is not an expert-iteration run's (no progress)")
    best.load_state_dict(payload["model"])
    model.load_state_dict(payload["learner"])
    critic.load_state_dict(payload["critic"])
    optimizer.load_state_dict(payload["optimizer"])
    generator.set_state(payload["generator"])
    torch.set_rng_state(payload["torch_rng"])
    return ExitProgress(**payload["exit_progress"]), list(payload["buffer"])


register_algorithm("exit", ExitConfig, Path(__file__).resolve().parent / "configs")
register_trainer("exit", train_exit)
