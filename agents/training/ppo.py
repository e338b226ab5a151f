"""Self-play PPO for Bastra: one network for every seat, an opponent pool of past snapshots.

    bastra train --config 2p [--run-dir DIR] [--resume CKPT] [--FIELD VALUE ...] [FIELD=VALUE ...]
    python train.py --config configs/2p.yaml ...       # the same, from a source checkout
    python -m agents.train --config 2p ...             # the same, from an installed package

``--config`` takes a YAML file or the name of a shipped config (``SHIPPED_CONFIGS``: the files of
``agents/configs/``, also reachable as ``configs/`` in a checkout). Every field of ``Config``
below can be set in the YAML file and overridden on the command line (``--total-env-steps
200000`` or ``total_env_steps=200000``; lists comma-separated: ``--hidden 128,128``). The run
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
- Rewards are each round's point difference (``reward="points"``), scaled by ``reward_scale``,
  or each round's change in the side's chance of winning the game (``reward="equity"``,
  ``agents.search.equity``: a game's rewards add up to +1 for a win, -1 for a loss). Episodes are
  ``train_rounds`` rounds (default 1; 0: whole games to the target). Rollouts hold whole
  episodes only, so nothing is bootstrapped across updates and a resumed run continues exactly.
"""

from __future__ import annotations

import argparse
import ast
import csv
import dataclasses
import difflib
import inspect
import itertools
import json
import random
import sys
import textwrap
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
import yaml
from tqdm import tqdm

import bastra_env
from agents.evaluation.matches import duplicate_match
from agents.learning.features import action_inputs
from agents.learning.network import (
    NetworkConfig,
    PolicyValueNet,
    build_model,
    read_checkpoint,
    save_checkpoint,
)
from agents.learning.policy import PRETRAINED, LearnedPolicy, checkpoint_path
from agents.players.kernels import action_inputs_batch
from agents.registry import BASELINES, make_policy, policy_problem
from agents.search.equity import chance, game_equity
from agents.search.players import is_search_spec
from bastra_env import Rules
from bastra_env.kernels import SCORES
from bastra_env.vector import VectorEnv, batch_actor

REWARDS = ("points", "equity")
"""What training rewards (``Config.reward``)."""


def equity_reward(
    equity: np.ndarray, before: np.ndarray, after: np.ndarray, ended: bool, winner: int
) -> float:
    """``reward="equity"``: side 0's reward for a round that took the sides' totals from
    ``before`` to ``after``: twice its change in the chance of winning (``equity``, an
    ``agents.search.equity`` table), up to the game's result where the round ``ended`` it
    (``winner`` side 0, 1 or -1 for a draw). Side 1's is the opposite; a game's rewards add up to
    its result, +1, -1 or 0."""
    start = chance(equity, before[0], before[1])
    if ended:
        end = 0.5 if winner == -1 else float(winner == 0)
    else:
        end = chance(equity, after[0], after[1])
    return 2.0 * (end - start)


@dataclass
class Config:
    """Training settings. Every field is a YAML key and a ``--field-name`` option."""

    seed: int = 0
    """Seeds the network, the games and the pool: the same seed gives the same run."""
    num_players: int = 2
    """2 for the two-player game, 4 with ``teams: true`` for the team game."""
    teams: bool = False
    train_rounds: int = 1
    """Rounds per training episode (the rules' ``max_rounds``; 0: whole games to the target)."""
    reward: str = "points"
    """"points": each round's point difference, times ``reward_scale``; "equity": each round's
    change in the side's chance of winning the game (``agents.search.equity``), doubled, the game's
    last round paying up to its result (a game adds up to +1 won, -1 lost, 0 drawn): score-aware
    play, with whole games (``train_rounds: 0``)."""
    total_env_steps: int = 2_000_000
    """Stop after this many plays (all seats, pool seats included)."""
    num_envs: int = 32
    """Games stepped together on the vector env, batched through the network."""
    rollout_steps: int = 4096
    """Plays collected per update (rounded up to whole episodes)."""
    hidden: list[int] = field(default_factory=lambda: [256, 256])
    """Widths of the network's hidden layers."""
    pair_width: int = 64
    """Width of the network's (state, action) layer."""
    init_from: str = ""
    """Start the learner from this checkpoint's weights (a path or a packaged model's name, e.g.
    ``bastra_2p``); its network shape then replaces ``hidden`` and ``pair_width``. "" starts
    from scratch."""
    learning_rate: float = 5e-4
    anneal_lr: bool = True
    """Decay the learning rate linearly to 0 over the run."""
    gamma: float = 1.0
    gae_lambda: float = 0.95
    clip_coef: float = 0.2
    update_epochs: int = 3
    minibatch_size: int = 512
    ent_coef: float = 0.01
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5
    reward_scale: float = 0.05
    """Round point differences are multiplied by this (about 1/20) before learning."""
    pool_size: int = 10
    """Past snapshots kept as opponents."""
    snapshot_every: int = 10
    """Updates between snapshots added to the pool."""
    pool_prob: float = 0.3
    """Share of games in which the opposing side is a pool snapshot instead of the latest net."""
    baseline_opponents: list[str] = field(default_factory=list)
    """Fixed players that may take the opposing side (a league beside the pool): built-in names,
    search players (``pimc:16``), packaged models (``bastra_2p``) or checkpoint paths, frozen."""
    baseline_prob: float = 0.0
    """Share of games in which the opposing side is one of ``baseline_opponents``."""
    imitation_samples: int = 0
    """Warm start: before self-play, learn to copy ``imitation_teacher`` on this many of its
    moves (and its round results as values). 0 starts from scratch."""
    imitation_teacher: str = "heuristic"
    imitation_epochs: int = 3
    eval_every: int = 25
    """Updates between evaluations against the baselines (0: only at the end)."""
    eval_deals: int = 100
    """Duplicate deals per baseline per evaluation (x2 games)."""
    eval_mode: str = "round"
    """Evaluate on single rounds ("round", fast) or full games to 100 ("game")."""
    eval_opponents: list[str] = field(default_factory=lambda: ["random", "greedy", "heuristic"])
    checkpoint_every: int = 50
    """Updates between checkpoints in the run directory."""
    threads: int = 1
    """Torch CPU threads."""
    device: str = "auto"
    """"auto" (a GPU when there is one), "cpu" or "cuda"."""

    def __post_init__(self) -> None:
        if (
            isinstance(self.train_rounds, bool)
            or not isinstance(self.train_rounds, int)
            or (self.train_rounds < 0)
        ):
            raise ValueError(
                f"config train_rounds must be an int >= 0 (0: whole games), got "
                f"{self.train_rounds!r}"
            )
        self.rules  # noqa: B018 (building the Rules refuses an impossible table)
        if self.reward not in REWARDS:
            raise ValueError(f"config reward must be one of {REWARDS}, got {self.reward!r}")
        if self.reward == "equity" and not (self.num_players == 2 or self.teams):
            raise ValueError('config reward "equity" needs two sides: 2 players, or teams')
        positive: tuple[str, ...] = ("total_env_steps", "num_envs", "rollout_steps")
        positive += ("update_epochs",)
        positive += ("minibatch_size", "pool_size", "snapshot_every", "checkpoint_every")
        positive += ("eval_deals", "threads")
        for name in positive:
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"config {name} must be a positive int, got {value!r}")
        if not self.hidden or any(not isinstance(h, int) or h < 1 for h in self.hidden):
            raise ValueError(f"config hidden must be a list of positive ints, got {self.hidden!r}")
        for name in ("pool_prob", "baseline_prob"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ValueError(f"config {name} must be in [0, 1], got {getattr(self, name)}")
        if self.pool_prob + self.baseline_prob > 1.0:
            raise ValueError("config pool_prob + baseline_prob must be at most 1")
        if self.baseline_prob > 0 and not self.baseline_opponents:
            raise ValueError("config baseline_prob > 0 needs baseline_opponents")
        if self.imitation_samples < 0 or self.imitation_epochs < 1:
            raise ValueError("config imitation_samples must be >= 0 and imitation_epochs >= 1")
        if self.eval_mode not in ("round", "game"):
            raise ValueError(f'config eval_mode must be "round" or "game", got {self.eval_mode!r}')
        for name in ("eval_opponents", "baseline_opponents"):
            for spec in getattr(self, name):
                problem = policy_problem(spec)
                if problem:
                    raise ValueError(f"config {name}: {problem}")
        if self.init_from:
            problem = policy_problem(self.init_from)
            if problem or self.init_from in BASELINES or is_search_spec(self.init_from):
                raise ValueError(
                    f"config init_from {self.init_from!r} must be a checkpoint path or a packaged "
                    f"model ({', '.join(PRETRAINED)})"
                )
        if self.imitation_teacher not in BASELINES:
            raise ValueError(
                f"config imitation_teacher {self.imitation_teacher!r} is not among "
                f"{list(BASELINES)}"
            )
        if self.device not in ("auto", "cpu", "cuda"):
            raise ValueError(f'config device must be "auto", "cpu" or "cuda", got {self.device!r}')

    @property
    def rules(self) -> Rules:
        rounds = self.train_rounds or None
        return Rules(num_players=self.num_players, teams=self.teams, max_rounds=rounds)

    @property
    def table(self) -> str:
        return "4p_teams" if self.teams else "2p"


# --------------------------------------------------------------------------- configuration
SHIPPED_CONFIGS = Path(__file__).resolve().parents[1] / "configs"
"""The shipped configs (``2p``, ``4p_teams``, ``quick``, ``smoke``): package data of ``agents``,
and ``configs/`` of a source checkout (a link to this folder)."""

EXAMPLES = """examples:
  bastra train --config smoke --run-dir runs/smoke       # every part of training, in seconds
  bastra train --config 2p                               # the pretrained 2p model's run
  bastra train --config configs/4p_teams.yaml --seed 3   # a YAML path works too
  bastra train --config quick total_env_steps=100000 hidden=128,128
  bastra train --resume runs/<run>/checkpoint_000200.pt  # continue a run exactly
(python train.py ... in a checkout and python -m agents.train ... take the same arguments)"""


def shipped_configs() -> list[str]:
    """The names ``--config`` accepts besides a path."""
    return sorted(p.stem for p in SHIPPED_CONFIGS.glob("*.yaml"))


def resolve_config(spec: str) -> Path:
    """A YAML path, or the file of a shipped config named ``spec``; ``ValueError`` otherwise,
    with the shipped names and the closest one."""
    path = Path(spec)
    if path.is_file():
        return path
    names = shipped_configs()
    if spec in names:
        return SHIPPED_CONFIGS / f"{spec}.yaml"
    close = difflib.get_close_matches(path.stem, names, n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    raise ValueError(
        f"--config {spec!r}: no such file, and not a shipped config ({', '.join(names)}){hint}"
    )


def _field_docs() -> dict[str, str]:
    """The docstring under each ``Config`` field, for ``--help`` (empty if the source is gone)."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(Config)))
    except (OSError, TypeError, SyntaxError):
        return {}
    body = tree.body[0].body  # type: ignore[attr-defined]
    docs = {}
    for node, after in itertools.pairwise(body):
        field_name = isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)
        if field_name and isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant):
            text = str(after.value.value).replace("``", "")
            docs[node.target.id] = " ".join(text.split())
    return docs


def _unknown_field(name: str, fields: Iterable[str]) -> str:
    close = difflib.get_close_matches(name, list(fields), n=1)
    return f"; did you mean {close[0]!r}?" if close else ""


def build_parser() -> argparse.ArgumentParser:
    """The command line of ``train.py``, ``python -m agents.train`` and ``bastra train``."""
    from agents.cli import SuggestingParser

    parser = SuggestingParser(
        usage="%(prog)s [--config CONFIG] [--run-dir DIR] [--resume CKPT] [--FIELD VALUE ...] "
        "[FIELD=VALUE ...]",
        description=__doc__.splitlines()[0],
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--config",
        help=f"a YAML file of Config fields, or a shipped config: {', '.join(shipped_configs())}",
    )
    parser.add_argument("--run-dir", help="output directory (default: a fresh one under runs/)")
    parser.add_argument("--resume", help="checkpoint to continue from (its run's config is used)")
    parser.add_argument(
        "overrides",
        nargs="*",
        metavar="FIELD=VALUE",
        help="a Config field set on the command line, as --FIELD VALUE does",
    )
    group = parser.add_argument_group("Config fields (each also a YAML key)")
    docs = _field_docs()
    for f in dataclasses.fields(Config):
        default = f.default if f.default_factory is dataclasses.MISSING else f.default_factory()
        shown = ",".join(map(str, default)) if isinstance(default, list) else default
        group.add_argument(
            "--" + f.name.replace("_", "-"),
            dest=f.name,
            default=None,
            metavar=f.name.upper(),
            help=f"{docs.get(f.name, '')} (default: {shown})".lstrip(),
        )
    return parser


def parse_config(argv: list[str]) -> tuple[Config, Path, str | None]:
    """The config, run directory and checkpoint to resume of a command line. A bad value or an
    unknown field raises ``ValueError``/``TypeError`` naming it (and the closest field)."""
    fields = {f.name: f for f in dataclasses.fields(Config)}
    args = build_parser().parse_intermixed_args(argv)

    values: dict[str, Any] = {}
    if args.resume:
        values.update(read_checkpoint(args.resume).get("config", {}))
    if args.config:
        path = resolve_config(args.config)
        loaded = yaml.safe_load(path.read_text()) or {}
        if not isinstance(loaded, dict):
            raise ValueError(f"{path} must hold a mapping of Config fields")
        unknown = sorted(set(loaded) - set(fields))
        if unknown:
            raise ValueError(
                f"{path}: unknown config field(s) {unknown}{_unknown_field(unknown[0], fields)}"
            )
        values.update(loaded)
    for name, f in fields.items():
        text = getattr(args, name)
        if text is not None:
            values[name] = _parse_value(name, text, f)
    for item in args.overrides:
        name, equals, text = item.partition("=")
        name = name.replace("-", "_")
        if not equals or not name:
            looks_like_config = item.endswith((".yaml", ".yml")) or item in shipped_configs()
            hint = f"; did you mean --config {item}?" if looks_like_config else ""
            raise ValueError(f"{item!r}: expected FIELD=VALUE (a Config field){hint}")
        if name not in fields:
            raise ValueError(
                f"{item!r}: unknown config field {name!r}{_unknown_field(name, fields)}"
            )
        values[name] = _parse_value(name, text, fields[name])
    config = Config(**values)
    stem = Path(args.config).stem if args.config else "run"
    run_dir = (
        Path(args.run_dir)
        if args.run_dir
        else Path("runs") / f"{stem}-{time.strftime('%Y%m%d-%H%M%S')}"
    )
    return config, run_dir, args.resume


def _parse_value(name: str, text: str, f: dataclasses.Field[Any]) -> Any:
    """A command-line string in the type of the field (lists: comma-separated)."""
    default: Any = f.default if f.default_factory is dataclasses.MISSING else f.default_factory()
    try:
        if isinstance(default, bool):
            if text.lower() not in ("true", "false", "1", "0", "yes", "no"):
                raise ValueError(text)
            return text.lower() in ("true", "1", "yes")
        if isinstance(default, list):
            items = [t for t in text.split(",") if t]
            return [int(t) for t in items] if str(f.type) == "list[int]" else items
        return type(default)(text)
    except ValueError:
        raise ValueError(
            f"--{name.replace('_', '-')}: cannot read {text!r} as {type(default).__name__}"
        ) from None


# --------------------------------------------------------------------------- self-play
class Pool:
    """Frozen past snapshots, played as the opposing side in some games."""

    def __init__(self, config: Config, device: torch.device, network: NetworkConfig) -> None:
        self.size = config.pool_size
        self.device = device
        self.states: list[dict[str, torch.Tensor]] = []
        self.models: list[PolicyValueNet] = []
        self.network = network

    def add(self, model: PolicyValueNet) -> None:
        self.add_state({k: v.detach().cpu().clone() for k, v in model.state_dict().items()})

    def add_state(self, state: dict[str, torch.Tensor]) -> None:
        frozen = PolicyValueNet(self.network).to(self.device)
        frozen.load_state_dict(state)
        self.states = (self.states + [state])[-self.size :]
        self.models = (self.models + [frozen.eval()])[-self.size :]


def main(argv: list[str] | None = None) -> dict[str, Any]:
    """Train from a command line (``sys.argv[1:]`` by default) and return the run's summary. A
    bad command line prints what is wrong and exits with status 2."""
    try:
        config, run_dir, resume = parse_config(sys.argv[1:] if argv is None else argv)
    except (ValueError, TypeError) as error:
        print(f"{build_parser().prog}: error: {error}", file=sys.stderr)
        raise SystemExit(2) from None

    # ---- seeding and devices
    random.seed(config.seed)
    np.random.seed(config.seed)
    torch.manual_seed(config.seed)
    torch.set_num_threads(config.threads)
    device = torch.device(
        "cuda"
        if config.device == "cuda" or (config.device == "auto" and torch.cuda.is_available())
        else "cpu"
    )
    rng = np.random.default_rng(config.seed)

    # ---- the run directory
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "config.yaml").write_text(
        yaml.safe_dump(dataclasses.asdict(config), sort_keys=False)
    )
    from torch.utils.tensorboard import SummaryWriter  # slow to import: not for --help

    writer = SummaryWriter(str(run_dir / "tensorboard"))

    # ---- model, optimiser, pool
    if config.init_from:  # a best response, or fine-tuning: the given weights and their shape
        model = build_model(read_checkpoint(checkpoint_path(config.init_from))).to(device)
    else:
        model = PolicyValueNet(
            NetworkConfig(hidden=tuple(config.hidden), pair_width=config.pair_width)
        ).to(device)
    optimizer = torch.optim.Adam(
        model.parameters(), lr=config.learning_rate, eps=1e-5, foreach=True
    )
    pool = Pool(config, device, model.config)
    update, env_steps, samples, train_seconds = 0, 0, 0, 0.0
    if resume:
        payload = read_checkpoint(resume)
        model.load_state_dict(build_model(payload).state_dict())
        optimizer.load_state_dict(payload["optimizer"])
        for state in payload["pool"]:
            pool.add_state(state)
        update, env_steps = payload["update"], payload["env_steps"]
        samples, train_seconds = payload["samples"], payload["train_seconds"]
        rng.bit_generator.state = payload["rng"]
        torch.set_rng_state(payload["torch_rng"])
        if device.type == "cuda" and payload.get("cuda_rng"):
            torch.cuda.set_rng_state_all(payload["cuda_rng"])

    rules = config.rules
    n = rules.num_players
    venv = VectorEnv(config.num_envs, rules=rules, reward="points", copy=False)
    metrics_path = run_dir / "metrics.csv"
    eval_path = run_dir / "eval.csv"
    metrics_fields = ["update", "env_steps", "samples", "steps_per_s", "samples_per_s"]
    metrics_fields += ["mean_round_reward", "policy_loss", "value_loss", "entropy", "approx_kl"]
    metrics_fields += ["learning_rate"] + [f"{part}_s" for part in TIMED_PARTS]
    eval_fields = ["update", "env_steps", "opponent", "games", "win_rate", "ci_low", "ci_high"]
    eval_fields += ["point_diff"]
    for path, names in ((metrics_path, metrics_fields), (eval_path, eval_fields)):
        if not (resume and path.exists()):
            with path.open("w", newline="") as f:
                csv.writer(f).writerow(names)

    def evaluate_now() -> dict[str, float]:
        # the network alone (no endgame search): the curves show what training changes
        policy = LearnedPolicy(_cpu_copy(model), name="learner", endgame=False)
        found = {}
        for name in config.eval_opponents:
            opponent = make_policy(name, seed=config.seed)
            result = duplicate_match(
                policy,
                opponent,
                table=config.table,
                deals=config.eval_deals,
                mode=config.eval_mode,
                seed=10_000_000 + config.seed,
                names=("learner", name),
            )
            found[name] = result.win_rate
            writer.add_scalar(f"eval/win_rate_vs_{name}", result.win_rate, env_steps)
            writer.add_scalar(f"eval/point_diff_vs_{name}", result.point_diff, env_steps)
            with eval_path.open("a", newline="") as f:
                csv.writer(f).writerow(
                    [
                        update,
                        env_steps,
                        name,
                        result.games,
                        f"{result.win_rate:.4f}",
                        f"{result.ci_low:.4f}",
                        f"{result.ci_high:.4f}",
                        f"{result.point_diff:.3f}",
                    ]
                )
        return found

    def checkpoint(path: Path) -> None:
        save_checkpoint(
            path,
            model,
            config=dataclasses.asdict(config),
            rules=rules.to_dict(),
            optimizer=optimizer.state_dict(),
            pool=pool.states,
            update=update,
            env_steps=env_steps,
            samples=samples,
            train_seconds=train_seconds,
            rng=rng.bit_generator.state,
            torch_rng=torch.get_rng_state(),
            cuda_rng=torch.cuda.get_rng_state_all() if device.type == "cuda" else [],
        )

    # ---- per-game state of the vector env's games
    controllers = np.full((config.num_envs, n), -1, dtype=np.int64)  # -1 learner, k pool model k
    totals = np.zeros((config.num_envs, 2), dtype=np.int64)  # each side's score (equity reward)
    equity = np.zeros((0, 0), dtype=np.int64)
    if config.reward == "equity":
        equity = game_equity(config.table, rules.target_score)
    live = np.zeros(config.num_envs, dtype=bool)
    trajectory_of: list[list[list[int]]] = [[[] for _ in range(n)] for _ in range(venv.num_envs)]

    baselines = [
        make_policy(name, seed=config.seed + i) for i, name in enumerate(config.baseline_opponents)
    ]
    baseline_actors = [batch_actor(policy) for policy in baselines]

    def start_game(e: int) -> None:
        """Who plays the game now in slot ``e``: self-play, or a pool snapshot or a baseline on
        one side."""
        controllers[e] = -1
        draw = rng.random()
        if pool.models and draw < config.pool_prob:
            opponent = int(rng.integers(len(pool.models)))
        elif baselines and draw < config.pool_prob + config.baseline_prob:
            opponent = BASELINE_CODE + int(rng.integers(len(baselines)))
        else:
            opponent = -1
        if opponent != -1:
            frozen_side = int(rng.integers(2))
            for s in range(n):
                if rules.side_of(s) == frozen_side:
                    controllers[e, s] = opponent
        trajectory_of[e] = [[] for _ in range(n)]
        live[e] = True

    def credit_rewards(rows: np.ndarray, paid: np.ndarray, buffer: Rollout) -> None:
        """A round was scored in some games: add each seat's reward to its latest move."""
        scale = config.reward_scale if config.reward == "points" else 1.0
        for r in np.flatnonzero(paid.any(axis=1)):
            e = rows[r]
            for s in range(n):
                reward = float(paid[r, s])
                if reward and trajectory_of[e][s]:
                    buffer.rewards[trajectory_of[e][s][-1]] += reward * scale
                    buffer.round_rewards.append(reward)

    def equity_rewards(rows: np.ndarray, state: dict[str, np.ndarray]) -> np.ndarray:
        """``reward="equity"``: each seat's reward for the steps that ended a round, twice its
        side's change in the chance of winning (the finished game's result where it ended)."""
        paid = np.zeros((len(rows), n), dtype=np.float64)
        for r in np.flatnonzero(state["round_ended"][rows]).tolist():
            e = rows[r]
            after = venv.states[e, SCORES : SCORES + 2]
            ended = bool(state["terminated"][e])
            change = equity_reward(equity, totals[e], after, ended, int(state["winner"][e]))
            totals[e] = 0 if ended else after  # an ended game's slot holds its next game
            for s in range(n):
                paid[r, s] = change if rules.side_of(s) == 0 else -change
        return paid

    def finish_game(e: int, buffer: Rollout, again: bool) -> None:
        for s in range(n):
            if trajectory_of[e][s]:
                buffer.trajectories.append(trajectory_of[e][s])
        if again:
            start_game(e)  # the vector env has already dealt the slot's next game
        else:
            live[e] = False

    # ---- warm start: copy the teacher's moves (optional)
    if config.imitation_samples and not resume:
        imitation = imitate(model, optimizer, config, device, rng)
        train_seconds += imitation["seconds"]
        writer.add_scalar("imitation/accuracy", imitation["accuracy"], 0)
        print(
            f"imitation: {imitation['samples']:,} moves of {config.imitation_teacher}, "
            f"accuracy {imitation['accuracy']:.1%}, {imitation['seconds']:.0f} s"
        )

    # ---- the training loop
    last_eval: dict[str, float] = {}
    total_updates = -(-config.total_env_steps // config.rollout_steps)
    bar = tqdm(total=config.total_env_steps, initial=env_steps, unit="step", dynamic_ncols=True)
    while env_steps < config.total_env_steps:
        started = time.perf_counter()
        if config.anneal_lr:
            fraction = 1.0 - update / total_updates
            for group in optimizer.param_groups:
                group["lr"] = config.learning_rate * max(fraction, 0.0)

        # -- rollout: whole episodes from every game of the vector env
        buffer = Rollout()
        plays = 0
        timer = dict.fromkeys(TIMED_PARTS, 0.0)
        clock = time.perf_counter()
        state = venv.reset(seed=int(rng.integers(2**62)))
        totals[:] = 0
        for e in range(venv.num_envs):
            start_game(e)
        timer["env"] += time.perf_counter() - clock
        while live.any():
            rows = np.flatnonzero(live)
            movers = controllers[rows, state["current_player"][rows]]
            actions = np.empty(len(rows), dtype=np.int64)
            for who in np.unique(movers).tolist():
                pick = movers == who
                chosen = rows[pick]
                seen, masks = state["observation"][chosen], state["action_mask"][chosen]
                clock = time.perf_counter()
                if who >= BASELINE_CODE:  # a built-in player: nothing recorded
                    actions[pick] = baseline_actors[who - BASELINE_CODE](seen, masks)
                    timer["baselines"] += time.perf_counter() - clock
                    continue
                action_ids, features = action_inputs_batch(seen, masks)
                timer["features"] += time.perf_counter() - clock
                clock = time.perf_counter()
                obs = torch.from_numpy(seen).to(device)
                ids_t = torch.from_numpy(action_ids).to(device)
                features_t = torch.from_numpy(features).to(device)
                net = model if who == -1 else pool.models[who]
                with torch.no_grad():
                    logits, values = net.slot_logits(obs, ids_t, features_t)
                    dist = torch.distributions.Categorical(logits=logits, validate_args=False)
                    slots = dist.sample()  # a slot of action_ids: a legal action
                    logps = dist.log_prob(slots)
                actions[pick] = ids_t.gather(1, slots[:, None])[:, 0].cpu().numpy()
                if who == -1:
                    first = buffer.add(obs, ids_t, features_t, slots, logps, values)
                    seats = state["current_player"][chosen].tolist()
                    for k, (e, seat) in enumerate(zip(chosen.tolist(), seats, strict=True)):
                        trajectory_of[e][seat].append(first + k)
                timer["forward"] += time.perf_counter() - clock
            clock = time.perf_counter()
            state = venv.step_some(rows, actions)
            plays += len(rows)
            if config.reward == "equity":
                credit_rewards(rows, equity_rewards(rows, state), buffer)
            else:
                credit_rewards(rows, state["rewards"][rows], buffer)
            for e in rows[state["terminated"][rows]].tolist():
                finish_game(e, buffer, plays < config.rollout_steps)
            timer["env"] += time.perf_counter() - clock

        # -- advantages per seat trajectory (whole episodes: no bootstrap)
        batch = buffer.tensors()
        values_np = batch["values"].cpu().numpy()
        advantages_np = np.zeros_like(values_np)
        for trajectory in buffer.trajectories:
            last_gae, next_value = 0.0, 0.0
            for index in reversed(trajectory):
                delta = buffer.rewards[index] + config.gamma * next_value - values_np[index]
                last_gae = delta + config.gamma * config.gae_lambda * last_gae
                advantages_np[index] = last_gae
                next_value = values_np[index]
        advantages = torch.from_numpy(advantages_np).to(device)
        returns = advantages + batch["values"]

        # -- PPO update
        clock = time.perf_counter()
        size = len(buffer)
        stats = {"policy_loss": 0.0, "value_loss": 0.0, "entropy": 0.0, "approx_kl": 0.0}
        count = 0
        for _ in range(config.update_epochs):
            order = torch.randperm(size)
            for start in range(0, size, config.minibatch_size):
                mb = order[start : start + config.minibatch_size]
                logits, values = model.slot_logits(
                    batch["obs"][mb], batch["action_ids"][mb], batch["features"][mb]
                )
                dist = torch.distributions.Categorical(logits=logits, validate_args=False)
                new_logp = dist.log_prob(batch["actions"][mb])
                log_ratio = new_logp - batch["logps"][mb]
                ratio = log_ratio.exp()
                adv = advantages[mb]
                adv = (adv - adv.mean()) / (adv.std() + 1e-8)
                policy_loss = torch.max(
                    -adv * ratio, -adv * ratio.clamp(1 - config.clip_coef, 1 + config.clip_coef)
                ).mean()
                value_loss = 0.5 * (values - returns[mb]).pow(2).mean()
                entropy = dist.entropy().mean()
                loss = policy_loss + config.vf_coef * value_loss - config.ent_coef * entropy
                optimizer.zero_grad()
                loss.backward()
                torch.nn.utils.clip_grad_norm_(model.parameters(), config.max_grad_norm)
                optimizer.step()
                with torch.no_grad():
                    stats["approx_kl"] += ((ratio - 1) - log_ratio).mean().item()
                stats["policy_loss"] += policy_loss.item()
                stats["value_loss"] += value_loss.item()
                stats["entropy"] += entropy.item()
                count += 1
        stats = {k: v / count for k, v in stats.items()}
        timer["update"] += time.perf_counter() - clock

        # -- bookkeeping
        update += 1
        env_steps += plays
        samples += size
        seconds = time.perf_counter() - started
        train_seconds += seconds
        if update % config.snapshot_every == 0:
            pool.add(model)
        mean_reward = float(np.mean(buffer.round_rewards)) if buffer.round_rewards else 0.0
        row = {
            "update": update,
            "env_steps": env_steps,
            "samples": samples,
            "steps_per_s": plays / seconds,
            "samples_per_s": size / seconds,
            "mean_round_reward": mean_reward,
            **stats,
            "learning_rate": optimizer.param_groups[0]["lr"],
            **{f"{part}_s": seconds for part, seconds in timer.items()},
        }
        with metrics_path.open("a", newline="") as f:
            csv.writer(f).writerow(
                [f"{row[k]:.6g}" if isinstance(row[k], float) else row[k] for k in metrics_fields]
            )
        for key, value in row.items():
            if key not in ("update", "env_steps"):
                writer.add_scalar(f"train/{key}", value, env_steps)
        if config.eval_every and update % config.eval_every == 0:
            last_eval = evaluate_now()
        if update % config.checkpoint_every == 0:
            checkpoint(run_dir / f"checkpoint_{update:06d}.pt")
        bar.update(plays)
        bar.set_postfix(
            upd=update,
            sps=f"{plays / seconds:,.0f}",
            ent=f"{stats['entropy']:.2f}",
            **{f"vs_{k}": f"{v:.0%}" for k, v in last_eval.items()},
        )
    bar.close()

    # ---- the end: final checkpoint, final evaluation, curves
    checkpoint(run_dir / "final.pt")
    final = evaluate_now()
    writer.close()
    from agents.evaluation.matches import plot_curves

    curves = plot_curves([run_dir])
    summary = {
        "run_dir": str(run_dir),
        "updates": update,
        "env_steps": env_steps,
        "samples": samples,
        "train_seconds": round(train_seconds, 1),
        "final_eval": final,
        "eval_mode": config.eval_mode,
    }
    (run_dir / "summary.json").write_text(json.dumps(summary, indent=2))
    print(f"\ntrained {env_steps:,} plays ({samples:,} learner samples) in {train_seconds:.0f} s")
    for name, rate in final.items():
        print(
            f"  win rate vs {name:<9} {rate:6.1%}  "
            f"({2 * config.eval_deals} {config.eval_mode}s, duplicate deals)"
        )
    print(f"wrote {run_dir / 'final.pt'}, {curves}")
    return summary


BASELINE_CODE = 1000
"""Controller codes from here on are built-in players (``baseline_opponents``)."""


def imitate(
    model: PolicyValueNet,
    optimizer: torch.optim.Optimizer,
    config: Config,
    device: torch.device,
    rng: np.random.Generator,
) -> dict[str, float]:
    """Behaviour cloning of ``config.imitation_teacher`` playing every seat: cross-entropy on its
    moves, and its seat's scaled round reward as the value target."""
    started = time.perf_counter()
    teacher = make_policy(config.imitation_teacher, seed=config.seed)
    env = bastra_env.raw_env(rules=config.rules, reward="points")
    obs: list[np.ndarray] = []
    ids: list[np.ndarray] = []
    feats: list[np.ndarray] = []
    moves: list[int] = []
    targets: list[float] = []
    bar = tqdm(total=config.imitation_samples, desc="imitation data", unit="move", leave=False)
    while len(moves) < config.imitation_samples:
        env.reset(seed=int(rng.integers(2**62)))
        seat_rows: dict[str, list[int]] = {a: [] for a in env.possible_agents}
        returns = dict.fromkeys(env.possible_agents, 0.0)
        game = env.game
        assert game is not None  # reset deals it
        while not game.done:
            agent = env.agent_selection
            seen = env.observe(agent)
            action_ids, features = action_inputs(seen["observation"], seen["action_mask"])
            move = teacher.act(seen, env=env)
            seat_rows[agent].append(len(moves))
            obs.append(seen["observation"])
            ids.append(action_ids)
            feats.append(features)
            moves.append(move)
            targets.append(0.0)
            env.step(move)
            for a in env.possible_agents:
                returns[a] += env.rewards[a]
        for a, rows in seat_rows.items():
            for row in rows:
                targets[row] = returns[a] * config.reward_scale
        bar.update(48)
    bar.close()
    data = {
        "obs": torch.from_numpy(np.stack(obs)).to(device),
        "ids": torch.from_numpy(np.stack(ids)).to(device),
        "feats": torch.from_numpy(np.stack(feats)).to(device),
        "moves": torch.tensor(moves, device=device),
        "targets": torch.tensor(targets, dtype=torch.float32, device=device),
    }
    size = len(moves)
    for _ in tqdm(range(config.imitation_epochs), desc="imitation epochs", leave=False):
        order = torch.randperm(size)
        for start in range(0, size, config.minibatch_size):
            mb = order[start : start + config.minibatch_size]
            logits, values = model(data["obs"][mb], data["ids"][mb], data["feats"][mb])
            loss = torch.nn.functional.cross_entropy(logits, data["moves"][mb])
            loss = loss + config.vf_coef * 0.5 * (values - data["targets"][mb]).pow(2).mean()
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), config.max_grad_norm)
            optimizer.step()
    with torch.no_grad():
        hits = 0
        for start in range(0, size, 4096):
            logits, _ = model(
                data["obs"][start : start + 4096],
                data["ids"][start : start + 4096],
                data["feats"][start : start + 4096],
            )
            hits += int((logits.argmax(-1) == data["moves"][start : start + 4096]).sum())
    return {"samples": size, "accuracy": hits / size, "seconds": time.perf_counter() - started}


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
        action_ids: torch.Tensor,
        features: torch.Tensor,
        actions: torch.Tensor,
        logps: torch.Tensor,
        values: torch.Tensor,
    ) -> int:
        """A batch of transitions; returns the index of the first."""
        first = len(self.rewards)
        for name, part in zip(
            ROLLOUT_FIELDS, (obs, action_ids, features, actions, logps, values), strict=True
        ):
            self.parts[name].append(part)
        self.rewards += [0.0] * len(actions)
        return first

    def __len__(self) -> int:
        return len(self.rewards)

    def tensors(self) -> dict[str, torch.Tensor]:
        """The transitions stacked, on the device they were made on (the training device)."""
        return {name: torch.cat(parts) for name, parts in self.parts.items()}


ROLLOUT_FIELDS = ("obs", "action_ids", "features", "actions", "logps", "values")
"""A rollout's tensors; ``actions`` are the slots of ``action_ids`` that were played."""
TIMED_PARTS = ("env", "baselines", "features", "forward", "update")
"""Where an update's time goes: the vector env's steps, built-in opponents' moves, the network's
per-action inputs, the rollout's forward passes, and the PPO update (logged per update)."""


def _cpu_copy(model: PolicyValueNet) -> PolicyValueNet:
    copy = PolicyValueNet(model.config)
    copy.load_state_dict({k: v.detach().cpu() for k, v in model.state_dict().items()})
    return copy


__all__ = [
    "BASELINE_CODE",
    "ROLLOUT_FIELDS",
    "SHIPPED_CONFIGS",
    "TIMED_PARTS",
    "Config",
    "Pool",
    "Rollout",
    "build_parser",
    "imitate",
    "main",
    "parse_config",
    "resolve_config",
    "shipped_configs",
]


if __name__ == "__main__":
    main()
