"""Every player by name: ``make_policy(spec)``, ``load_policy(path)`` and the names they take.

The one place that knows every floor below it: the baselines (``agents.players``), the search
players (``agents.search``), the learned models (``agents.learning``) and RLlib checkpoints
(``agents.integrations.rllib``, imported only for a checkpoint directory). The floors below never
import it: where a search player wants a network prior it is handed this module's ``load_policy``.
"""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agents.learning.config import NETWORK_ALONE, SUFFIXES, SearchConfig
from agents.learning.policy import PRETRAINED, LearnedPolicy, checkpoint_path, load_learned
from agents.players.basic import GreedyPolicy, RandomPolicy
from agents.players.heuristic import HeuristicPolicy
from agents.search.players import SPEC as SEARCH_SPEC
from agents.search.players import is_search_spec, make_search_policy

if TYPE_CHECKING:
    from agents.integrations.rllib import RLlibPolicy

BASELINES = {"random": RandomPolicy, "greedy": GreedyPolicy, "heuristic": HeuristicPolicy}
"""Built-in policies by name, as the command-line tools accept them."""


POLICY_NAMES = (*BASELINES, *PRETRAINED)
"""Every policy name ``make_policy`` takes besides a checkpoint path."""


def _split_suffix(spec: str) -> tuple[str, tuple[str, ...]]:
    """``(model, suffixes)`` of ``MODEL:network``, ``MODEL:last-deal``, ``MODEL:points`` or
    several of them (``MODEL:last-deal:points``); ``(spec, ())`` else."""
    model = spec
    found: tuple[str, ...] = ()
    while not is_search_spec(model):
        suffix = next((s for s in SUFFIXES if model.endswith(s)), None)
        if suffix is None:
            break
        model, found = model[: -len(suffix)], (suffix, *found)
    return (model, found) if found else (spec, ())


def policy_problem(spec: str) -> str | None:
    """What is wrong with a policy name, without loading it (``None``: ``make_policy`` takes it):
    the message ``make_policy`` would raise."""
    if spec in BASELINES or spec in PRETRAINED:
        return None
    model, suffixes = _split_suffix(spec)
    if suffixes:
        if model in BASELINES:
            return f"{spec!r}: {''.join(suffixes)} follows a model (name or path), not a built-in"
        return policy_problem(model)
    if is_search_spec(spec):
        match = SEARCH_SPEC.match(spec)
        if match is None or int(match.group(2)) < 1:
            return f"not a search player: {spec!r} (e.g. pimc:64, ismcts:400, pimc:50ms:bastra_2p)"
        if match.group(4) and match.group(1) != "pimc":
            return f"{spec!r}: inference (:infer) is a PIMC option (pimc:64:infer)"
        return policy_problem(match.group(5)) if match.group(5) else None
    if Path(spec).exists():
        return None
    close = difflib.get_close_matches(spec, POLICY_NAMES, n=1)
    hint = f" Did you mean {close[0]!r}?" if close else ""
    return (
        f"unknown policy {spec!r}: not a built-in name ({', '.join(POLICY_NAMES)}), not a "
        f"search player (pimc:N, ismcts:N) and no checkpoint file or directory at that "
        f"path.{hint}"
    )


def make_policy(spec: str, seed: int | None = None) -> Any:
    """A player by name: a baseline (``random``, ``greedy``, ``heuristic``), a search player
    (``pimc:64``, ``ismcts:400``, ``pimc:64:infer``, ``ismcts:80ms:bastra_2p``: see
    ``agents.search.players``), a packaged model's name (``bastra_2p``, ``bastra_4p_teams``) or a
    checkpoint path, a model optionally followed by suffixes that pick its search
    (``agents.learning.config``: ``:network``, ``:last-deal``, ``:points``, ``:infer``,
    combinable: ``bastra_2p:last-deal:points``). ``seed``: the player's random stream (random
    play, search, sampling). An unknown name raises ``ValueError`` naming the known ones and the
    closest."""
    if spec in BASELINES:
        return RandomPolicy(seed) if spec == "random" else BASELINES[spec]()
    if is_search_spec(spec):
        problem = policy_problem(spec)
        if problem:
            raise ValueError(problem)
        return make_search_policy(spec, seed=seed, load=lambda model: make_policy(model, seed))
    problem = policy_problem(spec)
    if problem:
        raise ValueError(problem)
    model, suffixes = _split_suffix(spec)
    path = checkpoint_path(model)
    if path.is_dir():
        if suffixes:
            raise ValueError(f"{spec!r}: an RLlib checkpoint directory takes no search suffix")
        return load_policy(path, seed=seed)
    return load_learned(path, suffixes=suffixes, seed=seed, name=spec if suffixes else "")


def network_alone(spec: str) -> str:
    """The spec of a model's network without any search (``MODEL:network``) for a model named
    without suffixes (a packaged model's name or a checkpoint file); any other spec as it is."""
    if spec in BASELINES or is_search_spec(spec) or _split_suffix(spec)[1]:
        return spec
    path = checkpoint_path(spec)
    return spec + NETWORK_ALONE if path.is_file() else spec


def load_policy(
    path: str | Path,
    search: SearchConfig | None = None,
    sample: bool = False,
    seed: int | None = None,
) -> LearnedPolicy | RLlibPolicy:
    """The policy of a checkpoint (``final.pt``, a periodic one), of a packaged model by name
    (``"bastra_2p"``, ``"bastra_4p_teams"``), or of an RLlib checkpoint directory
    (``agents.integrations.rllib``; needs ``ray[rllib]``). ``search``: what a learned player
    searches (``SearchConfig``; by default its table's, ``agents.learning.config``); ``sample``:
    sample moves rather than take the most probable (never searching); ``seed``: its random
    stream."""
    if isinstance(path, str) and path not in PRETRAINED and not Path(path).exists():
        close = difflib.get_close_matches(_split_suffix(path)[0], list(PRETRAINED), n=1)
        hint = f" Did you mean {close[0]!r}?" if close else ""
        raise ValueError(
            f"no checkpoint at {path}: no such file, and not a packaged model "
            f"({', '.join(PRETRAINED)}; make_policy takes them with a preset: "
            f"{', '.join(SUFFIXES)}, e.g. bastra_2p:network).{hint}"
        )
    found = checkpoint_path(path)
    if found.is_dir():
        if search is not None:
            raise ValueError(f"{found}: an RLlib checkpoint plays its network; search= is for "
                             "checkpoints that train.py writes")  # fmt: skip
        try:
            from agents.integrations.rllib import load_rllib_policy
        except ImportError as error:
            raise ImportError(
                f"{found} is a directory, read as an RLlib checkpoint: that needs ray[rllib] "
                '(pip install -e ".[rllib]")'
            ) from error
        return load_rllib_policy(found, sample=sample, seed=seed)
    return load_learned(found, search, sample=sample, seed=seed)
