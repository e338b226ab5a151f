"""Training settings: the ``Config`` dataclass (every field a YAML key and a ``--field-name``
option), the shipped configs, and the command line of ``train.py``, ``python -m agents.train`` and
``bastra train``.

``--config`` takes a YAML file or the name of a shipped config (``SHIPPED_CONFIGS``: the files of
``agents/configs/``, also reachable as ``configs/`` in a checkout). Every field can be set in the
YAML file and overridden on the command line (``--total-env-steps 200000`` or
``total_env_steps=200000``; lists comma-separated: ``--hidden 128,128``). A bad value or an
unknown field is named, with the closest field.
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import difflib
import inspect
import itertools
import textwrap
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from agents.learning.expert import LEAVES
from agents.learning.network import read_checkpoint
from agents.learning.policy import PRETRAINED
from agents.registry import BASELINES, policy_problem
from agents.search.players import is_search_spec
from agents.training.options import SuggestingParser
from bastra_env import Rules

DESCRIPTION = (
    "Self-play training for Bastra: PPO (one network for every seat, an opponent pool of past "
    "snapshots), expert iteration (algorithm: exit: the network learns its search's values), or "
    "the endgame (algorithm: endgame: the network learns the endgame search's values)."
)
"""The first line of the trainer's ``--help``."""

REWARDS = ("points", "equity")
"""What training rewards (``Config.reward``)."""


CRITICS = ("shared", "privileged")
"""``Config.critic``'s values."""

ALGORITHMS = ("ppo", "exit", "endgame")
"""``Config.algorithm``'s values: self-play PPO, expert iteration (``agents.training.exit``), or
learning the endgame search's values (``agents.training.endgame``)."""


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
    critic: str = "shared"
    """The values PPO's advantages come from: "shared" (the network's own value head) or
    "privileged" (a separate critic that also reads every hand and the deck's order, during
    training only; the network's value head then learns without moving its trunk)."""
    threads: int | str = "auto"
    """CPU threads for torch, numba and BLAS: a count, or "auto" (the cores this process may use,
    at most 4, fewer where other work keeps some busy)."""
    device: str = "auto"
    """"auto" (a GPU when there is one), "cpu" or "cuda"."""
    algorithm: str = "ppo"
    """"ppo": self-play PPO (the fields above); "exit": expert iteration (the ``exit_`` fields,
    with ``seed``, the table, ``hidden``, ``pair_width``, ``init_from``, ``learning_rate``,
    ``minibatch_size``, ``vf_coef``, ``reward_scale``, ``eval_*``, ``threads``); "endgame": the
    network from ``init_from`` learns the endgame search's value of every move (the
    ``endgame_`` fields, with ``seed``, the table, ``learning_rate``, ``minibatch_size``,
    ``max_grad_norm``, ``eval_*``, ``threads``)."""
    exit_iterations: int = 10
    """Expert iteration: iterations of self-play, learning and gating."""
    exit_games: int = 64
    """Self-play games (rounds under ``train_rounds: 1``) an iteration, in shards of
    ``exit_shard_games``."""
    exit_shard_games: int = 8
    """Games a shard: the unit of work of one actor, with its own fixed seed."""
    exit_worlds: int = 32
    """The expert's PIMC worlds a decision (inferred from the deal's plays)."""
    exit_temperature: float = 1.0
    """Round points a unit of the policy target's logits: the target and the move played are
    the softmax of the search's values over this."""
    exit_network_weight: float = 0.3
    """Points a nat of the network's log-probability added to each move's PIMC value."""
    exit_leaf: str = "rollout"
    """PIMC's leaf: "rollout" (the rollout policy to the round's end) or "value" (one play deep,
    then the perfect-information critic)."""
    exit_buffer: int = 4
    """Iterations of self-play data the learner trains on (the newest)."""
    exit_epochs: int = 2
    """Passes over the buffer an iteration."""
    exit_gate_deals: int = 200
    """Duplicate deals (x2 rounds) of the gate: the learner's network against the best one's."""
    exit_gate_win_rate: float = 0.5
    """The learner becomes the self-play player when it wins at least this share of the gate."""
    endgame_rounds: int = 50_000
    """Learning the endgame: self-play rounds of data (each gives about 6 searched decisions in
    2p, 8 in the team game)."""
    endgame_epochs: int = 6
    """Learning the endgame: passes over the data."""
    ray_workers: int = 0
    """Expert iteration's self-play on this many Ray actors (``ray.init()`` here, or
    ``RAY_ADDRESS``'s cluster); 0 plays the shards in this process."""

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
        positive += ("eval_deals",)
        bad_threads = f'config threads must be "auto" or a positive int, got {self.threads!r}'
        if isinstance(self.threads, str) and self.threads != "auto":
            try:
                self.threads = int(self.threads)
            except ValueError:
                raise ValueError(bad_threads) from None
        if self.threads != "auto" and (
            isinstance(self.threads, bool) or not isinstance(self.threads, int) or self.threads < 1
        ):
            raise ValueError(bad_threads)
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
        if self.critic not in CRITICS:
            raise ValueError(f"config critic must be one of {CRITICS}, got {self.critic!r}")
        if self.algorithm not in ALGORITHMS:
            raise ValueError(
                f"config algorithm must be one of {ALGORITHMS}, got {self.algorithm!r}"
            )
        for name in ("exit_iterations", "exit_games", "exit_shard_games", "exit_worlds",
                     "exit_buffer", "exit_epochs", "exit_gate_deals", "endgame_rounds",
                     "endgame_epochs"):  # fmt: skip
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"config {name} must be a positive int, got {value!r}")
        if (
            isinstance(self.ray_workers, bool)
            or not isinstance(self.ray_workers, int)
            or (self.ray_workers < 0)
        ):
            raise ValueError(
                f"config ray_workers must be an int >= 0 (0: no Ray), got {self.ray_workers!r}"
            )
        for name in ("exit_temperature", "exit_network_weight"):
            value = getattr(self, name)
            if (
                isinstance(value, bool)
                or not isinstance(value, (int, float))
                or not (value > 0 or (value == 0 and name == "exit_network_weight"))
            ):
                raise ValueError(f"config {name} must be a positive number, got {value!r}")
        if self.exit_leaf not in LEAVES:
            raise ValueError(f"config exit_leaf must be one of {LEAVES}, got {self.exit_leaf!r}")
        if not 0.0 <= self.exit_gate_win_rate <= 1.0:
            raise ValueError(
                f"config exit_gate_win_rate must be in [0, 1], got {self.exit_gate_win_rate!r}"
            )
        if self.algorithm in ("exit", "endgame") and self.train_rounds != 1:
            raise ValueError(
                f"config algorithm {self.algorithm} plays single rounds: train_rounds must be 1, "
                f"got {self.train_rounds}"
            )
        if self.algorithm == "endgame":
            if not self.init_from:
                raise ValueError(
                    "config algorithm endgame teaches a trained network its endgame: set "
                    "init_from (a checkpoint path or a packaged model)"
                )
            if not (self.num_players == 2 or self.teams):
                raise ValueError(
                    "config algorithm endgame needs a table the endgame search plays: 2 players "
                    "or the team game"
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


SHIPPED_CONFIGS = Path(__file__).resolve().parents[1] / "configs"
"""The shipped configs (``2p``, ``4p_teams``, ``quick``, ``smoke``): package data of ``agents``,
and ``configs/`` of a source checkout (a link to this folder)."""

EXAMPLES = """examples:
  bastra train --config smoke --run-dir runs/smoke       # every part of training, in seconds
  bastra train --config 2p                               # the pretrained 2p model's run
  bastra train --config configs/4p_teams.yaml --seed 3   # a YAML path works too
  bastra train --config quick total_env_steps=100000 hidden=128,128
  bastra train --resume runs/<run>/checkpoint_000200.pt  # continue a run exactly
  bastra train --config exit_smoke --run-dir runs/exit   # expert iteration on local Ray actors
  bastra train --config endgame_smoke --run-dir runs/eg  # the network learns the endgame's values
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


def read_run_checkpoint(path: str) -> dict[str, Any]:
    """A checkpoint a training run wrote (``--resume``); a policy file (weights only, as
    ``bastra export`` writes and the packaged models are) raises ``ValueError`` saying what to do
    instead, before any run folder is made."""
    payload = read_checkpoint(path)
    if "optimizer" not in payload:
        raise ValueError(
            f"{path} is a policy file (a model's weights, as `bastra export` writes them and the "
            "packaged models are), not a run's checkpoint: --resume continues a run from a "
            "checkpoint it wrote (RUN_DIR/final.pt or RUN_DIR/checkpoint_*.pt); the endgame "
            f"learning starts from a model's weights: --config endgame_2p init_from={path}"
        )
    return payload


def build_parser() -> argparse.ArgumentParser:
    """The command line of ``train.py``, ``python -m agents.train`` and ``bastra train``."""
    parser = SuggestingParser(
        usage="%(prog)s [--config CONFIG] [--run-dir DIR] [--resume CKPT] [--FIELD VALUE ...] "
        "[FIELD=VALUE ...]",
        description=DESCRIPTION,
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
        values.update(read_run_checkpoint(args.resume).get("config", {}))
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
