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
NETWORK_ALONE = ":network"
"""After a model's name or path (``bastra_2p:network``): its network without the endgame search."""
LAST_DEAL_ONLY = ":last-deal"
"""After a model's name or path (``bastra_2p:last-deal``): its endgame search on the last deal
only (``endgame_deals=1``), not the two-player two-deal search."""
POINTS_OBJECTIVE = ":points"
"""After a model's name or path (``bastra_2p:points``): its endgame search maximising the round's
point difference (``objective="points"``) rather than the chance of winning the game."""
INFERENCE = ":infer"
"""After a model's name or path (``bastra_2p:infer``): before the endgame search takes over, a
PIMC search on worlds inferred from the deal's plays (``LearnedPolicy(infer_worlds=64)``), the
network's log-probability added to each move's value (``LearnedPolicy.network_weight``), instead
of the network alone."""
MODEL_SUFFIXES: dict[str, dict[str, Any]] = {
    NETWORK_ALONE: {"endgame": False},
    INFERENCE: {"infer_worlds": 64},
    LAST_DEAL_ONLY: {"endgame_deals": 1},
    POINTS_OBJECTIVE: {"objective": "points"},
}
"""What each suffix after a model asks of ``load_policy``."""


def _split_suffix(spec: str) -> tuple[str, tuple[str, ...]]:
    """``(model, suffixes)`` of ``MODEL:network``, ``MODEL:last-deal``, ``MODEL:points`` or
    several of them (``MODEL:last-deal:points``); ``(spec, ())`` else."""
    model = spec
    found: tuple[str, ...] = ()
    while not is_search_spec(model):
        suffix = next((s for s in MODEL_SUFFIXES if model.endswith(s)), None)
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


def make_policy(spec: str, seed: int | None = None, endgame: bool = True) -> Any:
    """A baseline name (``random``, ``greedy``, ``heuristic``), a search player (``pimc:64``,
    ``ismcts:400``, ``ismcts:80ms:bastra_2p``: see ``agents.search``), a packaged model's name
    (``bastra_2p``, ``bastra_4p_teams``) or a checkpoint path (``endgame``: see
    ``LearnedPolicy``; ``:network`` after a model, e.g. ``bastra_2p:network``, is the network
    without the endgame search, ``:last-deal`` its search on the last deal only, ``:points`` its
    search maximising the round's point difference, not the game's chance; they combine:
    ``bastra_2p:last-deal:points``). An unknown name
    raises ``ValueError`` naming the known ones."""
    if spec in BASELINES:
        return RandomPolicy(seed) if spec == "random" else BASELINES[spec]()
    if is_search_spec(spec):
        return make_search_policy(spec, seed=seed, load=load_policy)
    problem = policy_problem(spec)
    if problem:
        raise ValueError(problem)
    model, suffixes = _split_suffix(spec)
    if suffixes:
        options: dict[str, Any] = {}
        for suffix in suffixes:
            options.update(MODEL_SUFFIXES[suffix])
        policy = load_policy(model, **options)
        policy.name = spec
        return policy
    return load_policy(spec, endgame=endgame)


def load_policy(
    path: str | Path, sample: bool = False, seed: int | None = None, **search: Any
) -> LearnedPolicy | RLlibPolicy:
    """The policy of a checkpoint (``final.pt``, a periodic one), of a packaged model by name
    (``"bastra_2p"``, ``"bastra_4p_teams"``), or of an RLlib checkpoint directory
    (``agents.integrations.rllib``; needs ``ray[rllib]``)."""
    found = checkpoint_path(path)
    if found.is_dir():
        try:
            from agents.integrations.rllib import load_rllib_policy
        except ImportError as error:
            raise ImportError(
                f"{found} is a directory, read as an RLlib checkpoint: that needs ray[rllib] "
                '(pip install -e ".[rllib]")'
            ) from error
        return load_rllib_policy(found, sample=sample, seed=seed)
    return load_learned(found, sample=sample, seed=seed, **search)
