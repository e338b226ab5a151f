"""Training settings: ``Config`` with a section per stage, the shipped configs, and the command
line of ``train.py``, ``python -m agents.train`` and ``bastra train``.

A config names its ``algorithm`` and holds what every stage reads at the top (the seed, the table,
``init_from``, threads, device), the evaluation in ``eval:``, and the algorithm's own section:
``ppo:`` (self-play PPO, ``agents.training.ppo``) or ``endgame:`` (the network learns the endgame
search, ``agents.training.endgame``). A section of another algorithm is refused, as is an unknown
field, a value of the wrong type or out of range: each field's rule is written once, beside it
(``check=``), and ``check_config`` applies them all.

``--config`` takes a YAML file or the name of a shipped config (the files of ``agents/configs/``,
also reachable as ``configs/`` in a checkout). A file may start from another with ``extends:
NAME`` (the shipped ``ppo_base`` and ``endgame_base`` hold what the 2p and team runs share); its
own keys win, section by section. Every field can be overridden on the command line:
``ppo.total_env_steps=200000`` or ``--ppo.total-env-steps 200000``; a name without its section
is the chosen algorithm's (``--learning-rate 0.001``, ``hidden=128,128``) or the evaluation's,
and ``SECTION_FIELD`` is ``SECTION.FIELD`` (``eval_deals=20``, ``endgame_rounds=5000``).
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import dataclasses
import difflib
import inspect
import itertools
import textwrap
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import yaml

from agents.learning.network import read_checkpoint
from agents.learning.policy import PRETRAINED
from agents.registry import BASELINES, policy_problem
from agents.search.players import is_search_spec
from agents.training.options import SuggestingParser
from bastra_env import Rules

DESCRIPTION = (
    "Self-play training for Bastra: PPO (algorithm: ppo: one network for every seat, an opponent "
    "pool of past snapshots), or the endgame (algorithm: endgame: the network learns the endgame "
    "search's values)."
)
"""The first line of the trainer's ``--help``."""


def setting(default: Any, check: str) -> Any:
    """A config field with its rule (``CHECKS``); a list default is copied for every config."""
    if isinstance(default, list):
        return field(default_factory=lambda: list(default), metadata={"check": check})
    return field(default=default, metadata={"check": check})


# ---------------------------------------------------------------------------------- sections
@dataclass
class EvalConfig:
    """``eval:``: the learner's network against fixed players, on duplicate deals."""

    deals: int = setting(100, "int>0")
    """Duplicate deals per opponent per evaluation (x2 games)."""
    mode: str = setting("round", "round|game")
    """Single rounds ("round", fast) or full games to 100 ("game")."""
    opponents: list[str] = setting(["random", "greedy", "heuristic"], "policies")
    """The players evaluated against: any name ``make_policy`` takes."""


@dataclass
class PPOConfig:
    """``ppo:``: self-play PPO (``agents.training.ppo``)."""

    total_env_steps: int = setting(2_000_000, "int>0")
    """Stop after this many plays (all seats, pool seats included)."""
    num_envs: int = setting(32, "int>0")
    """Games stepped together on the vector env, batched through the network."""
    rollout_steps: int = setting(4096, "int>0")
    """Plays collected per update (rounded up to whole episodes)."""
    hidden: list[int] = setting([256, 256], "ints>0")
    """Widths of the network's hidden layers (``init_from`` gives its own)."""
    pair_width: int = setting(64, "int>0")
    """Width of the network's (state, action) layer (``init_from`` gives its own)."""
    learning_rate: float = setting(5e-4, "float>0")
    """Adam's step size (decayed to 0 over the run where ``anneal_lr``)."""
    anneal_lr: bool = setting(True, "bool")
    """Decay the learning rate linearly to 0 over the run."""
    gamma: float = setting(1.0, "[0,1]")
    """Discount a play (1: a round's points count wherever they fall in it)."""
    gae_lambda: float = setting(0.95, "[0,1]")
    """GAE's lambda: the advantages' trade of bias against variance."""
    clip_coef: float = setting(0.2, "float>0")
    """PPO's clip on the policy ratio."""
    update_epochs: int = setting(3, "int>0")
    """Passes over each rollout."""
    minibatch_size: int = setting(512, "int>0")
    """Transitions a gradient step."""
    ent_coef: float = setting(0.01, "float>=0")
    """Weight of the entropy bonus."""
    vf_coef: float = setting(0.5, "float>=0")
    """Weight of the value loss."""
    max_grad_norm: float = setting(0.5, "float>0")
    """Gradients clipped to this norm."""
    reward_scale: float = setting(0.05, "float>0")
    """Round point differences are multiplied by this (about 1/20) before learning."""
    pool_size: int = setting(10, "int>0")
    """Past snapshots kept as opponents."""
    snapshot_every: int = setting(10, "int>0")
    """Updates between snapshots added to the pool."""
    pool_prob: float = setting(0.3, "[0,1]")
    """Share of games in which the opposing side is a pool snapshot instead of the latest net."""
    baseline_opponents: list[str] = setting([], "policies")
    """Fixed players that may take the opposing side (a league beside the pool): built-in names,
    search players (``pimc:16``), packaged models (``bastra_2p``) or checkpoint paths, frozen."""
    baseline_prob: float = setting(0.0, "[0,1]")
    """Share of games in which the opposing side is one of ``baseline_opponents``."""
    imitation_samples: int = setting(0, "int>=0")
    """Warm start: before self-play, learn to copy ``imitation_teacher`` on this many of its
    moves (and its round results as values). 0 starts from scratch."""
    imitation_teacher: str = setting("heuristic", "baseline")
    """The built-in player the warm start copies."""
    imitation_epochs: int = setting(3, "int>0")
    """Passes over the warm start's moves."""
    eval_every: int = setting(25, "int>=0")
    """Updates between evaluations (``eval:``; 0: only at the end)."""
    checkpoint_every: int = setting(50, "int>0")
    """Updates between checkpoints in the run directory."""


@dataclass
class EndgameConfig:
    """``endgame:``: the network from ``init_from`` learns the endgame search's value of every
    move (``agents.training.endgame``)."""

    rounds: int = setting(50_000, "int>0")
    """Self-play rounds of data (each gives about 6 searched decisions in 2p, 8 in the team
    game)."""
    epochs: int = setting(6, "int>0")
    """Passes over the data."""
    learning_rate: float = setting(3e-4, "float>0")
    """Adam's step size, decayed linearly to 0 over the passes."""
    minibatch_size: int = setting(512, "int>0")
    """Decisions a gradient step."""
    max_grad_norm: float = setting(0.5, "float>0")
    """Gradients clipped to this norm."""
    ray_workers: int = setting(0, "int>=0")
    """The searched self-play on this many Ray actors (``ray.init()`` here, or
    ``RAY_ADDRESS``'s cluster); 0 plays the shards in this process (the same data)."""


# ---------------------------------------------------------------------------------- the config
@dataclass
class Config:
    """Training settings: the top-level fields every algorithm reads, ``eval:``, and one section
    per algorithm (module docs)."""

    algorithm: str = setting("ppo", "algorithm")
    """"ppo" (the ``ppo:`` section) or "endgame" (the ``endgame:`` section)."""
    seed: int = setting(0, "int>=0")
    """Seeds the network, the games and the pool: the same seed gives the same run."""
    num_players: int = setting(2, "int>0")
    """2 for the two-player game, 4 with ``teams: true`` for the team game."""
    teams: bool = setting(False, "bool")
    """The 4-player team game (seats 0+2 against 1+3)."""
    train_rounds: int = setting(1, "int>=0")
    """Rounds per training episode (the rules' ``max_rounds``; 0: whole games to the target)."""
    init_from: str = setting("", "model")
    """Start from this checkpoint's weights (a path or a packaged model's name, e.g.
    ``bastra_2p``); "" starts PPO from scratch. The endgame learning needs it."""
    threads: int | str = setting("auto", "threads")
    """CPU threads for torch, numba and BLAS: a count, or "auto" (the cores this process may use,
    at most 4, fewer where other work keeps some busy)."""
    device: str = setting("auto", "auto|cpu|cuda")
    """"auto" (a GPU when there is one), "cpu" or "cuda"."""
    eval: EvalConfig = field(default_factory=EvalConfig)
    ppo: PPOConfig = field(default_factory=PPOConfig)
    endgame: EndgameConfig = field(default_factory=EndgameConfig)

    SECTIONS: ClassVar[dict[str, str]] = {"ppo": "ppo", "endgame": "endgame"}
    """Each algorithm's own section (the others must stay at their defaults)."""

    def __post_init__(self) -> None:
        check_config(self)

    @property
    def rules(self) -> Rules:
        rounds = self.train_rounds or None
        return Rules(num_players=self.num_players, teams=self.teams, max_rounds=rounds)

    @property
    def table(self) -> str:
        return "4p_teams" if self.teams else "2p"

    @property
    def section(self) -> Any:
        """The chosen algorithm's section."""
        return getattr(self, type(self).SECTIONS[self.algorithm])

    def to_dict(self) -> dict[str, Any]:
        """The config as YAML writes it: the top-level fields, ``eval`` and the algorithm's own
        section (``Config.from_dict`` reads it back)."""
        out = dataclasses.asdict(self)
        for section in set(type(self).SECTIONS.values()) - {type(self).SECTIONS[self.algorithm]}:
            out.pop(section)
        return out

    @classmethod
    def from_dict(cls, values: dict[str, Any], source: str = "config") -> Config:
        """A config from nested values (a YAML file's, a checkpoint's); ``ValueError`` names an
        unknown field or section (with the closest name) and a field of the wrong type."""
        values = dict(values)
        sections = _section_classes(cls)
        top = {f.name for f in dataclasses.fields(cls)} - set(sections)
        unknown = sorted(set(values) - top - set(sections))
        if unknown:
            hint = _moved_hint(unknown[0]) or _suggest(unknown[0], cls, values.get("algorithm"))
            raise ValueError(f"{source}: unknown config field(s) {unknown}{hint}")
        fields = {f.name: f for f in dataclasses.fields(cls)}
        built: dict[str, Any] = {
            name: _coerced(values[name], fields[name]) for name in top if name in values
        }
        for name, section_class in _section_classes(cls).items():
            given = values.get(name) or {}
            if not isinstance(given, dict):
                raise ValueError(f"{source}: {name}: must hold a mapping of its fields")
            names = {f.name for f in dataclasses.fields(section_class)}
            wrong = sorted(set(given) - names)
            if wrong:
                raise ValueError(
                    f"{source}: unknown field(s) {wrong} in the {name}: section"
                    f"{_closest(wrong[0], names)}"
                )
            built[name] = _unchecked(section_class, given)
        return cls(**built)


def _section_classes(cls: type) -> dict[str, type]:
    """Each section field of a config class and its dataclass."""
    hints = {"eval": EvalConfig, "ppo": PPOConfig, "endgame": EndgameConfig}
    hints.update(getattr(cls, "EXTRA_SECTIONS", {}))
    return {f.name: hints[f.name] for f in dataclasses.fields(cls) if f.name in hints}


def _unchecked(section_class: type, values: dict[str, Any]) -> Any:
    """A section built without running ``check_config`` yet (the config checks it whole)."""
    section = section_class()
    fields = {f.name: f for f in dataclasses.fields(section_class)}
    for name, value in values.items():
        setattr(section, name, _coerced(value, fields[name]))
    return section


def _coerced(value: Any, f: dataclasses.Field[Any]) -> Any:
    """A number YAML read as a string (``1e-3``: YAML 1.1 wants ``1.0e-3``) as the number; any
    other value as it is (the checks judge it)."""
    if isinstance(value, str) and f.metadata.get("check", "").startswith(("float", "[0,1]")):
        try:
            return float(value)
        except ValueError:
            return value
    return value


# ---------------------------------------------------------------------------------- checks
CHECKS: dict[str, Callable[[Any], bool]] = {
    "int>0": lambda v: _is_int(v) and v > 0,
    "int>=0": lambda v: _is_int(v) and v >= 0,
    "float>0": lambda v: _is_number(v) and v > 0,
    "float>=0": lambda v: _is_number(v) and v >= 0,
    "[0,1]": lambda v: _is_number(v) and 0.0 <= v <= 1.0,
    "bool": lambda v: isinstance(v, bool),
    "ints>0": lambda v: isinstance(v, list) and bool(v) and all(_is_int(x) and x > 0 for x in v),
    "policies": lambda v: isinstance(v, list) and all(isinstance(x, str) for x in v),
    "model": lambda v: isinstance(v, str),
    "baseline": lambda v: v in BASELINES,
    "threads": lambda v: v == "auto" or (_is_int(v) and v > 0),
}
"""Each rule's test; a rule ``a|b|c`` is a choice among strings."""
MEANINGS = {
    "int>0": "a positive int", "int>=0": "an int >= 0", "float>0": "a positive number",
    "float>=0": "a number >= 0", "[0,1]": "a number in [0, 1]", "bool": "true or false",
    "ints>0": "a list of positive ints", "policies": "a list of player names",
    "model": "a checkpoint path or a packaged model's name",
    "baseline": f"one of {list(BASELINES)}", "threads": '"auto" or a positive int',
    "algorithm": "an algorithm",
}  # fmt: skip
"""What each rule asks for, in the error message."""


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value == value


def _check_field(where: str, value: Any, rule: str, choices: tuple[str, ...] = ()) -> None:
    if rule == "algorithm" or "|" in rule:
        options = choices if rule == "algorithm" else tuple(rule.split("|"))
        if value not in options:
            raise ValueError(f"config {where} must be one of {options}, got {value!r}")
        return
    if not CHECKS[rule](value):
        raise ValueError(f"config {where} must be {MEANINGS[rule]}, got {value!r}")


def check_config(config: Config) -> None:
    """Every field's rule (its ``check``), then the rules between fields; ``ValueError`` names
    the field. The one place a config is validated."""
    if isinstance(config.threads, str) and config.threads != "auto":
        with contextlib.suppress(ValueError):
            config.threads = int(config.threads)
    algorithms = tuple(type(config).SECTIONS)
    sections = _section_classes(type(config))
    for f in dataclasses.fields(config):
        value = getattr(config, f.name)
        if f.name in sections:
            if not isinstance(value, sections[f.name]):
                raise ValueError(f"config {f.name}: must be a {sections[f.name].__name__}")
            for g in dataclasses.fields(sections[f.name]):
                _check_field(f"{f.name}.{g.name}", getattr(value, g.name), g.metadata["check"])
        else:
            _check_field(f.name, value, f.metadata["check"], algorithms)
    own = type(config).SECTIONS[config.algorithm]
    for name in set(type(config).SECTIONS.values()) - {own}:
        if getattr(config, name) != sections[name]():
            raise ValueError(
                f"config algorithm {config.algorithm} reads no {name}: section (its own is "
                f"{own}:); remove it, or set algorithm: {_algorithm_of(type(config), name)}"
            )
    config.rules  # noqa: B018 (building the Rules refuses an impossible table)
    section = config.section
    self_play = isinstance(section, PPOConfig)  # PPO's section, or a self-play algorithm's
    opponents = section.baseline_opponents if self_play else []
    for where, names in (("eval.opponents", config.eval.opponents),
                         (f"{own}.baseline_opponents", opponents)):  # fmt: skip
        for spec in names:
            problem = policy_problem(spec)
            if problem:
                raise ValueError(f"config {where}: {problem}")
    if config.init_from:
        problem = policy_problem(config.init_from)
        if problem or config.init_from in BASELINES or is_search_spec(config.init_from):
            raise ValueError(
                f"config init_from {config.init_from!r} must be a checkpoint path or a packaged "
                f"model ({', '.join(PRETRAINED)})"
            )
    if self_play and section.pool_prob + section.baseline_prob > 1.0:
        raise ValueError(f"config {own}.pool_prob + {own}.baseline_prob must be at most 1")
    if self_play and section.baseline_prob > 0 and not section.baseline_opponents:
        raise ValueError(f"config {own}.baseline_prob > 0 needs {own}.baseline_opponents")
    if not self_play and config.train_rounds != 1:
        raise ValueError(
            f"config algorithm {config.algorithm} plays single rounds: train_rounds must be 1, "
            f"got {config.train_rounds}"
        )
    if config.algorithm == "endgame":
        if not config.init_from:
            raise ValueError(
                "config algorithm endgame teaches a trained network its endgame: set "
                "init_from (a checkpoint path or a packaged model)"
            )
        if not (config.num_players == 2 or config.teams):
            raise ValueError(
                "config algorithm endgame needs a table the endgame search plays: 2 players "
                "or the team game"
            )


def _algorithm_of(cls: type[Config], section: str) -> str:
    return next(a for a, s in cls.SECTIONS.items() if s == section)


def _closest(name: str, names: Any) -> str:
    close = difflib.get_close_matches(name, list(names), n=1)
    return f"; did you mean {close[0]!r}?" if close else ""


REMOVED = {
    "reward": "reward: equity measured within noise and was removed (docs/experiments.md); "
    "rewards are each round's point difference",
    "critic": "critic: privileged measured within noise and was removed (docs/experiments.md)",
}
"""Fields of earlier versions that are gone, and why (named when a config still sets them)."""


def _suggest(name: str, cls: type[Config], algorithm: Any, option: bool = False) -> str:
    """``"; did you mean X?"`` with the closest field: a top-level one, one of the chosen
    algorithm's section or of ``eval:`` (shown as ``section.field``, or as given on the command
    line: ``--learning-rate``), or ``""``."""
    sections = _section_classes(cls)
    own = cls.SECTIONS.get(algorithm if isinstance(algorithm, str) else "ppo", "ppo")
    shown = {f.name: f.name for f in dataclasses.fields(cls) if f.name not in sections}
    for section in ("eval", own):
        for f in dataclasses.fields(sections[section]):
            shown.setdefault(f.name, f.name if option else f"{section}.{f.name}")
    close = difflib.get_close_matches(name.split(".")[-1], list(shown), n=1)
    if not close:
        return ""
    guess = "--" + close[0].replace("_", "-") if option else repr(shown[close[0]])
    return f"; did you mean {guess}?"


def _moved_hint(name: str) -> str:
    if name in REMOVED:
        return f" ({REMOVED[name]})"
    for key, section in _section_classes(Config).items():
        names = {f.name for f in dataclasses.fields(section)}
        for short in (name, name.removeprefix(f"{key}_")):  # eval_deals: the flat name
            if short in names:
                return f" (the {key}: section has it: {key}.{short})"
    return ""


# ---------------------------------------------------------------------------------- registry
ALGORITHMS: dict[str, type[Config]] = {"ppo": Config, "endgame": Config}
"""Each algorithm's config class (``agents.experimental`` registers its own through
``register_algorithm``; the shipped front imports it)."""
EXPERIMENTAL_CONFIGS: list[Path] = []
"""Folders of experimental configs (found by name, never listed among the shipped ones)."""


def register_algorithm(name: str, config_class: type[Config], configs: Path | None = None) -> None:
    """An experimental algorithm's config class (a ``Config`` with its own section) and the
    folder of its configs."""
    ALGORITHMS[name] = config_class
    if configs is not None and configs not in EXPERIMENTAL_CONFIGS:
        EXPERIMENTAL_CONFIGS.append(configs)


SHIPPED_CONFIGS = Path(__file__).resolve().parents[1] / "configs"
"""The shipped configs: package data of ``agents``, and ``configs/`` of a source checkout (a link
to this folder)."""

EXAMPLES = """examples:
  bastra train --config smoke --run-dir runs/smoke       # every part of training, in seconds
  bastra train --config 2p                               # the pretrained 2p model's PPO run
  bastra train --config configs/4p_teams.yaml --seed 3   # a YAML path works too
  bastra train --config quick ppo.total_env_steps=100000 hidden=128,128
  bastra train --resume runs/<run>/checkpoint_000200.pt  # continue a run exactly
  bastra train --config endgame_smoke --run-dir runs/eg  # the network learns the endgame's values
(python train.py ... in a checkout and python -m agents.train ... take the same arguments)"""


def shipped_configs() -> list[str]:
    """The runs ``--config`` takes by name besides a path (the ``*_base`` files are bases that
    configs extend, not runs by themselves)."""
    return sorted(p.stem for p in SHIPPED_CONFIGS.glob("*.yaml") if not p.stem.endswith("_base"))


def resolve_config(spec: str) -> Path:
    """A YAML path, or the file of a shipped (or registered experimental) config named
    ``spec``; ``ValueError`` otherwise, with the shipped names and the closest one."""
    path = Path(spec)
    if path.is_file():
        return path
    names = shipped_configs()
    if spec in names or (SHIPPED_CONFIGS / f"{spec}.yaml").is_file():
        return SHIPPED_CONFIGS / f"{spec}.yaml"
    for folder in EXPERIMENTAL_CONFIGS:
        if (folder / f"{spec}.yaml").is_file():
            return folder / f"{spec}.yaml"
    raise ValueError(
        f"--config {spec!r}: no such file, and not a shipped config ({', '.join(names)})"
        f"{_closest(path.stem, names)}"
    )


def load_yaml(path: Path, seen: tuple[Path, ...] = ()) -> dict[str, Any]:
    """A config file's values, its ``extends:`` chain merged under them (section by section);
    a YAML syntax error, a non-mapping or a loop of ``extends`` raise ``ValueError``."""
    if path.resolve() in seen:
        raise ValueError(f"{path}: extends itself through {[p.name for p in seen]}")
    try:
        loaded = yaml.safe_load(path.read_text())
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark else ""
        problem = getattr(error, "problem", None) or str(error).splitlines()[0]
        raise ValueError(f"{path}: not valid YAML{where}: {problem}") from None
    if loaded is None:
        loaded = {}
    if not isinstance(loaded, dict):
        raise ValueError(f"{path} must hold a mapping of config fields")
    base = loaded.pop("extends", None)
    if base is None:
        return loaded
    if not isinstance(base, str):
        raise ValueError(f"{path}: extends must name a config, got {base!r}")
    parent = Path(base) if Path(base).is_absolute() else path.parent / f"{base}.yaml"
    if not parent.is_file():
        parent = resolve_config(base)
    return merge(load_yaml(parent, (*seen, path.resolve())), loaded)


def merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    """``over`` on ``base``: sections (mappings) merged key by key, other values replaced."""
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = {**out[key], **value}
        else:
            out[key] = value
    return out


def field_docs(cls: type) -> dict[str, str]:
    """The docstring under each field of a dataclass (its bases' fields included), for
    ``--help`` (empty if the source is gone)."""
    docs = {}
    for base in reversed(cls.__mro__):
        if base is not cls and dataclasses.is_dataclass(base):
            docs.update(field_docs(base))
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(cls)))
    except (OSError, TypeError, SyntaxError):
        return docs
    body = tree.body[0].body  # type: ignore[attr-defined]
    for node, after in itertools.pairwise(body):
        field_name = isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)
        if field_name and isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant):
            text = str(after.value.value).replace("``", "")
            docs[node.target.id] = " ".join(text.split())
    return docs


def _fields_help(cls: type[Config]) -> str:
    """Every field, by section, with its default and docstring: the ``--help`` epilogue."""
    lines = ["config fields (YAML keys; on the command line SECTION.FIELD=VALUE or "
             "--SECTION.FIELD VALUE):"]  # fmt: skip
    sections = _section_classes(cls)
    groups: list[tuple[str, type]] = [("", cls), *sections.items()]
    for name, group in groups:
        docs = field_docs(group)
        doc = (inspect.getdoc(group) or "").split("\n\n")[0]
        plain = doc.replace("``", "").replace(":: ", " - ")
        title = " ".join(plain.split()) if name else "top level:"
        lines += ["", f"  {title}"]
        for f in dataclasses.fields(group):
            if f.name in sections:
                continue
            default = f.default if f.default_factory is dataclasses.MISSING else f.default_factory()
            shown = ",".join(map(str, default)) if isinstance(default, list) else default
            key = f"{name}.{f.name}" if name else f.name
            lines.append(f"    {key} (default {shown}): {docs.get(f.name, '')}")
    return "\n".join(lines)


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


def build_parser(config_class: type[Config] = Config) -> argparse.ArgumentParser:
    """The command line of ``train.py``, ``python -m agents.train`` and ``bastra train``."""
    parser = SuggestingParser(
        usage="%(prog)s [--config CONFIG] [--run-dir DIR] [--resume CKPT] [--FIELD VALUE ...] "
        "[FIELD=VALUE ...]",
        description=DESCRIPTION,
        epilog=f"{_fields_help(config_class)}\n\n{EXAMPLES}",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--config",
        help=f"a YAML file of config fields, or a shipped config: {', '.join(shipped_configs())}",
    )
    parser.add_argument("--run-dir", help="output directory (default: a fresh one under runs/)")
    parser.add_argument("--resume", help="checkpoint to continue from (its run's config is used)")
    return parser


def _overrides(tokens: list[str]) -> list[tuple[str, str, bool]]:
    """``(name, text, as_option)`` of every ``--name value``, ``--name=value`` and
    ``name=value``."""
    pairs = []
    k = 0
    while k < len(tokens):
        token = tokens[k]
        if token.startswith("--"):
            name, equals, text = token[2:].partition("=")
            if not equals:
                if k + 1 >= len(tokens):
                    raise ValueError(f"{token}: expects a value")
                k += 1
                text = tokens[k]
            pairs.append((name.replace("-", "_"), text, True))
        else:
            name, equals, text = token.partition("=")
            if not equals or not name:
                looks_like_config = token.endswith((".yaml", ".yml")) or token in shipped_configs()
                hint = f"; did you mean --config {token}?" if looks_like_config else ""
                raise ValueError(f"{token!r}: expected FIELD=VALUE (a config field){hint}")
            pairs.append((name.replace("-", "_"), text, False))
        k += 1
    return pairs


def _place(
    cls: type[Config], algorithm: str, name: str, option: bool = False
) -> tuple[str, dataclasses.Field[Any]]:
    """Where a command-line name goes: ``section.field``, a top-level field, or a bare name of
    the chosen algorithm's section or of ``eval``; ``ValueError`` with the closest name."""
    sections = _section_classes(cls)
    top = {f.name: f for f in dataclasses.fields(cls) if f.name not in sections}
    section, dot, rest = name.partition(".")
    if dot:
        if section not in sections:
            raise ValueError(
                f"{name!r}: no config section {section!r}{_closest(section, sections)}"
            )
        fields = {f.name: f for f in dataclasses.fields(sections[section])}
        if rest not in fields:
            raise ValueError(
                f"{name!r}: unknown field of the {section}: section{_closest(rest, fields)}"
            )
        return name, fields[rest]
    if name in top:
        return name, top[name]
    own = cls.SECTIONS.get(algorithm, "ppo")
    for section in (own, "eval"):
        fields = {f.name: f for f in dataclasses.fields(sections[section])}
        if name in fields:
            return f"{section}.{name}", fields[name]
        rest = name.removeprefix(f"{section}_")  # eval_deals, endgame_rounds: the flat names
        if rest != name and rest in fields:
            return f"{section}.{rest}", fields[rest]
    given = "--" + name.replace("_", "-") if option else name
    hint = _moved_hint(name) or _suggest(name, cls, algorithm, option)
    raise ValueError(f"{given!r}: unknown config field{hint}")


def parse_value(name: str, text: str, f: dataclasses.Field[Any]) -> Any:
    """A command-line string in the type of the field (lists: comma-separated)."""
    default: Any = f.default if f.default_factory is dataclasses.MISSING else f.default_factory()
    try:
        if isinstance(default, bool):
            if text.lower() not in ("true", "false", "1", "0", "yes", "no"):
                raise ValueError(text)
            return text.lower() in ("true", "1", "yes")
        if isinstance(default, list):
            items = [t for t in text.split(",") if t]
            return [int(t) for t in items] if f.metadata.get("check") == "ints>0" else items
        if f.metadata.get("check") == "threads":
            return text if text == "auto" else int(text)
        return type(default)(text)
    except ValueError:
        raise ValueError(
            f"--{name.replace('_', '-')}: cannot read {text!r} as {type(default).__name__}"
        ) from None


def upgrade(values: dict[str, Any]) -> dict[str, Any]:
    """A checkpoint's config from before the sections (every field at the top level) in
    today's shape; a nested one as it is. A removed option that was on raises ``ValueError``."""
    if not any(k in values for k in ("total_env_steps", "endgame_rounds", "eval_deals")):
        return values
    if values.get("reward", "points") != "points" or values.get("critic", "shared") != "shared":
        raise ValueError(f"this run used an option that was removed: {REMOVED}")
    algorithm = values.get("algorithm", "ppo")
    if algorithm not in ("ppo", "endgame"):
        raise ValueError(f"a run of algorithm {algorithm} cannot be resumed by this trainer")
    out: dict[str, Any] = {"eval": {}, algorithm: {}}
    top = {f.name for f in dataclasses.fields(Config)} - {"eval", "ppo", "endgame"}
    ppo_fields = {f.name for f in dataclasses.fields(PPOConfig)}
    endgame_fields = {f.name for f in dataclasses.fields(EndgameConfig)}
    for key, value in values.items():
        if key in top:
            out[key] = value
        elif key in ("eval_deals", "eval_mode", "eval_opponents"):
            out["eval"][key.removeprefix("eval_")] = value
        elif algorithm == "ppo" and key in ppo_fields:
            out["ppo"][key] = value
        elif algorithm == "endgame" and key.removeprefix("endgame_") in endgame_fields:
            out["endgame"][key.removeprefix("endgame_")] = value
    return out


def parse_config(argv: list[str]) -> tuple[Config, Path, str | None]:
    """The config, run directory and checkpoint to resume of a command line (the checkpoint's
    config, then the YAML file's, then the command line's fields). A bad value, an unknown field
    or a YAML error raises ``ValueError`` naming it (and the closest field)."""
    args, rest = build_parser().parse_known_intermixed_args(argv)
    values: dict[str, Any] = {}
    source = "config"
    if args.resume:
        values = upgrade(read_run_checkpoint(args.resume).get("config", {}))
        source = str(args.resume)
    if args.config:
        path = resolve_config(args.config)
        values = merge(values, load_yaml(path))
        source = str(path)
    pairs = _overrides(rest)
    algorithm = values.get("algorithm", "ppo")
    for name, text, _ in pairs:
        if name == "algorithm":
            algorithm = text
    if algorithm not in ALGORITHMS:
        raise ValueError(f"config algorithm must be one of {tuple(ALGORITHMS)}, got {algorithm!r}")
    cls = ALGORITHMS[algorithm]
    for name, text, option in pairs:
        where, f = _place(cls, algorithm, name, option)
        value = parse_value(where, text, f)
        section, dot, key = where.partition(".")
        if dot:
            values[section] = {**(values.get(section) or {}), key: value}
        else:
            values[where] = value
    config = cls.from_dict(values, source)
    stem = Path(args.config).stem if args.config else "run"
    run_dir = (
        Path(args.run_dir)
        if args.run_dir
        else Path("runs") / f"{stem}-{time.strftime('%Y%m%d-%H%M%S')}"
    )
    return config, run_dir, args.resume
