"""EXPERIMENTAL. A league (``algorithm: league``): PPO self-play whose opponent pool also holds
exploiters, networks trained only to beat the main network, and whose exploiters' gains track the
main network's exploitability over training. It runs on PPO's self-play loop
(``agents.training.ppo.train_self_play``) with PPO's learner; only the pool differs. Its
exploiters found no weakness to train against and, after the same minutes of training, its
network is no stronger than PPO's (docs/experiments.md, "A league"), so nothing that ships leads
here; it stays runnable by its configs' names.

    bastra train --config league_smoke --run-dir runs/league     # a tiny run
    bastra train --config league_2p                               # the 2p run (PPO's settings)

Every ``league.exploiter_every`` updates of the main network:

1. **An exploiter trains.** It starts as a copy of the main network (a fresh Adam) and learns
   with PPO (the section's settings) for ``league.exploiter_updates`` updates of games against the
   main network, frozen, on one side (drawn a game), and nothing else: a best response, as
   ``benchmarks/best_response.py`` trains one.
2. **It is measured.** Both networks alone play ``league.probe_deals`` duplicate deals of single
   rounds, variance-reduced: the exploiter's win rate and points a round over the main network are
   the main network's exploitability at that update (``league.csv``, TensorBoard ``league/``).
3. **It joins the league.** The newest ``league.exploiters`` are kept; of the main network's pool
   games (``pool_prob``), ``league.exploiter_share`` are against an exploiter drawn uniformly,
   the rest against a past snapshot as in PPO. Search players join as built-in opponents
   (``baseline_opponents``, e.g. ``pimc:8``), as they can in PPO.

The exploiters' plays and seconds are their own (``league.csv``): ``env_steps`` and the schedule
count the main network's plays only. A checkpoint keeps the exploiters and a resumed run continues
exactly (an exploiter's games draw from a stream of the seed and its number; its phase falls
between two updates, never across a checkpoint).
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
from agents.learning.network import NetworkConfig, PolicyValueNet, cpu_state_dict
from agents.training import ppo
from agents.training.command import register_trainer
from agents.training.config import Config, PPOConfig, register_algorithm, setting
from agents.training.rollout import Pool, SelfPlayGames, collect_rollout, sample_policy
from bastra_env.vector import VectorEnv

LEAGUE_COLUMNS = ["phase", "update", "env_steps", "exploiter_plays", "exploiter_seconds",
                  "train_points", "probe_rounds", "win_rate", "ci_low", "ci_high", "point_diff",
                  "point_diff_ci"]  # fmt: skip
"""The columns of ``league.csv``, one row an exploiter: the main network's update and plays when
it was forked, the exploiter's training plays and seconds, its mean round points over the main
network in its last training update (sampled moves), and the probe's figures (both networks
alone, greedy, variance-reduced)."""
PROBE_FIGURES = ("win_rate", "ci_low", "ci_high", "point_diff", "point_diff_ci")
"""The probe's figures in ``league.csv`` (``MatchResult`` fields)."""


@dataclasses.dataclass
class LeagueSection(PPOConfig):
    """``league:``: a league (experimental): PPO's self-play settings, and the exploiters'."""

    exploiter_every: int = setting(200, "int>0")
    """Updates of the main network between two exploiters."""
    exploiter_updates: int = setting(40, "int>0")
    """PPO updates an exploiter trains against the frozen main network."""
    exploiters: int = setting(4, "int>0")
    """Exploiters kept in the league (the newest)."""
    exploiter_share: float = setting(0.5, "[0,1]")
    """Share of the pool games (``pool_prob``) played against an exploiter, once one exists."""
    probe_deals: int = setting(200, "int>0")
    """Duplicate deals (x2 single rounds) of the exploiter against the main network."""


@dataclasses.dataclass
class LeagueConfig(Config):
    """A ``Config`` with the ``league:`` section (``algorithm: league``)."""

    league: LeagueSection = dataclasses.field(default_factory=LeagueSection)

    SECTIONS: ClassVar[dict[str, str]] = {**Config.SECTIONS, "league": "league"}
    EXTRA_SECTIONS: ClassVar[dict[str, type]] = {"league": LeagueSection}


class ExploiterGames(SelfPlayGames):
    """Every game: the exploiter (the learner) against the pool's one network, the frozen main
    network, on a side drawn a game."""

    def start(self, e: int) -> None:
        self.seat(e, 0)


class League(Pool):
    """Past snapshots and exploiters: ``models`` lists the snapshots, then the exploiters."""

    def __init__(self, config: Config, device: torch.device, network: NetworkConfig) -> None:
        super().__init__(config, device, network)
        self.config = config
        self.snapshots: list[PolicyValueNet] = []
        self.exploiter_states: list[dict[str, torch.Tensor]] = []
        self.exploiter_models: list[PolicyValueNet] = []
        self.phases = 0

    def add_state(self, state: dict[str, torch.Tensor]) -> None:
        self.states = (self.states + [state])[-self.size :]
        self.snapshots = (self.snapshots + [self.frozen(state)])[-self.size :]
        self.models = self.snapshots + self.exploiter_models

    def add_exploiter(self, state: dict[str, torch.Tensor]) -> None:
        keep = self.config.section.exploiters
        self.exploiter_states = (self.exploiter_states + [state])[-keep:]
        self.exploiter_models = (self.exploiter_models + [self.frozen(state)])[-keep:]
        self.models = self.snapshots + self.exploiter_models

    def pick(self, rng: np.random.Generator) -> int:
        """An exploiter in ``exploiter_share`` of the pool games (all of them while no snapshot
        exists yet), a past snapshot in the others."""
        if self.exploiter_models and (
            not self.snapshots or rng.random() < self.config.section.exploiter_share
        ):
            return len(self.snapshots) + int(rng.integers(len(self.exploiter_models)))
        return int(rng.integers(len(self.snapshots)))

    def dump(self) -> dict[str, Any]:
        return {"snapshots": self.states, "exploiters": self.exploiter_states,
                "phases": self.phases}  # fmt: skip

    def load(self, dumped: Any) -> None:
        if not isinstance(dumped, dict) or set(dumped) != {"snapshots", "exploiters", "phases"}:
            raise ValueError("this checkpoint's pool is not a league's (a checkpoint of "
                             "algorithm: ppo cannot resume as a league)")  # fmt: skip
        for state in dumped["snapshots"]:
            self.add_state(state)
        for state in dumped["exploiters"]:
            self.add_exploiter(state)
        self.phases = int(dumped["phases"])

    def tend(
        self, update: int, plays: int, model: PolicyValueNet, venv: VectorEnv, run_dir: Path
    ) -> None:
        """Every ``exploiter_every`` updates: an exploiter trained, measured and added (module
        docs)."""
        section = self.config.section
        if update % section.exploiter_every:
            return
        self.phases += 1
        row = train_exploiter(self.config, model, venv, self.device, self.phases)
        self.add_exploiter(row.pop("state"))
        row = {"phase": self.phases, "update": update, "env_steps": plays, **row}
        path = run_dir / "league.csv"
        fresh = not path.exists()
        with path.open("a", newline="") as f:
            writer = csv.DictWriter(f, LEAGUE_COLUMNS)
            if fresh:
                writer.writeheader()
            writer.writerow(row)
        tqdm.write(f"league: exploiter {self.phases} at {plays:,} plays: {row['win_rate']:.1%} "
                   f"[{row['ci_low']:.1%}, {row['ci_high']:.1%}] of {row['probe_rounds']} rounds "
                   f"against the main network, {row['point_diff']:+.2f} ± "
                   f"{row['point_diff_ci']:.2f} points a round")  # fmt: skip


def train_exploiter(
    config: Config, main: PolicyValueNet, venv: VectorEnv, device: torch.device, phase: int
) -> dict[str, Any]:
    """Exploiter ``phase`` trained against ``main`` frozen and measured against it (module docs):
    its weights (``state``) and its row of ``league.csv``."""
    section = config.section
    started = time.perf_counter()
    exploiter = copy.deepcopy(main).train()
    optimizer = torch.optim.Adam(exploiter.parameters(), lr=section.learning_rate, eps=1e-5)
    target = Pool(config, device, main.config)
    target.add(main)
    games = ExploiterGames(config, target, 0, np.random.default_rng([config.seed, phase]))
    plays, points = 0, 0.0
    for _ in range(section.exploiter_updates):
        buffer, made, _ = collect_rollout(venv, games, exploiter, [], device)
        ppo.learn_ppo(exploiter, optimizer, buffer, config)
        plays += made
        points = float(np.mean(buffer.round_rewards)) if buffer.round_rewards else 0.0
    seconds = time.perf_counter() - started
    probe = duplicate_match(ppo.network_player(exploiter), ppo.network_player(main),
                            table=config.table, deals=section.probe_deals, mode="round",
                            seed=20_000_000 + config.seed, names=("exploiter", "main"),
                            num_threads=torch.get_num_threads(),
                            variance_reduction=True)  # fmt: skip
    return {
        "state": cpu_state_dict(exploiter),
        "exploiter_plays": plays,
        "exploiter_seconds": round(seconds, 1),
        "train_points": round(points, 3),
        "probe_rounds": probe.games,
        **{name: round(float(getattr(probe, name)), 4) for name in PROBE_FIGURES},
    }


LEAGUE = ppo.Learner(stats=ppo.PPO_STATS, choose=sample_policy, learn=ppo.learn_ppo,
                     pool=League)  # fmt: skip
"""PPO's learner with the league's pool."""


def train_league(config: Config, run_dir: Path, resume: str | None = None) -> dict[str, Any]:
    """League self-play (module docs) into ``run_dir``, continuing ``resume``."""
    return ppo.train_self_play(config, run_dir, LEAGUE, resume)


register_algorithm("league", LeagueConfig, Path(__file__).resolve().parent / "configs")
register_trainer("league", train_league)
