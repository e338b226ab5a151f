"""Bastra players: rule-based baselines, search players and learned policies.

The package is built in floors, each importing only the ones below it (``lint-imports`` checks
the contracts written in ``pyproject.toml``):

==================  =====================================================================
``apps``            terminal play, the web app and its page, export (``python -m agents.X``)
``training``        self-play PPO (``agents.training.ppo``)
``evaluation``      duplicate matches, ratings, curves, replays
``registry``        ``make_policy`` / ``load_policy``: every player by name
``integrations``    RLlib
``learning``        the network, its per-action inputs, the learned player and its search
``search``          PIMC, IS-MCTS, the endgame search, inference, game equity, their kernels
``players``         random, greedy, heuristic and their compiled kernels
==================  =====================================================================

This module only configures numba's cache (before any kernel is defined) and gathers the public
names, each imported when first used (``import agents.cli`` or ``import agents.players.heuristic``
need no torch); nothing inside the package imports it.
"""

import importlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bastra_env import _cache

KERNEL_FILES = (
    "players/observation_kernels.py",
    "search/endgame_kernels.py",
    "search/world_kernels.py",
)
"""The files of compiled kernels that call each other across files: numba only notices a change
to the file a kernel is defined in, so their cache folder is named by a fingerprint of all of
them together with the rules kernels' (``bastra_env._cache``)."""

_cache.configure(tuple(Path(__file__).resolve().parent / name for name in KERNEL_FILES))

_HOMES = {
    "BASELINES": "agents.registry",
    "POLICY_NAMES": "agents.registry",
    "load_policy": "agents.registry",
    "make_policy": "agents.registry",
    "policy_problem": "agents.registry",
    "LAST_DEAL_ONLY": "agents.learning.config",
    "NETWORK_ALONE": "agents.learning.config",
    "POINTS_OBJECTIVE": "agents.learning.config",
    "PRESETS": "agents.learning.config",
    "SearchConfig": "agents.learning.config",
    "LearnedPolicy": "agents.learning.policy",
    "GreedyPolicy": "agents.players.basic",
    "RandomPolicy": "agents.players.basic",
    "HeuristicPolicy": "agents.players.heuristic",
    "ISMCTSPolicy": "agents.search.players",
    "PIMCPolicy": "agents.search.players",
}
"""Where each public name lives (the module that defines it)."""

if TYPE_CHECKING:  # the same names for type checkers (``X as X``: re-exported)
    from agents.learning.config import LAST_DEAL_ONLY as LAST_DEAL_ONLY
    from agents.learning.config import NETWORK_ALONE as NETWORK_ALONE
    from agents.learning.config import POINTS_OBJECTIVE as POINTS_OBJECTIVE
    from agents.learning.config import PRESETS as PRESETS
    from agents.learning.config import SearchConfig as SearchConfig
    from agents.learning.policy import LearnedPolicy as LearnedPolicy
    from agents.players.basic import GreedyPolicy as GreedyPolicy
    from agents.players.basic import RandomPolicy as RandomPolicy
    from agents.players.heuristic import HeuristicPolicy as HeuristicPolicy
    from agents.registry import BASELINES as BASELINES
    from agents.registry import POLICY_NAMES as POLICY_NAMES
    from agents.registry import load_policy as load_policy
    from agents.registry import make_policy as make_policy
    from agents.registry import policy_problem as policy_problem
    from agents.search.players import ISMCTSPolicy as ISMCTSPolicy
    from agents.search.players import PIMCPolicy as PIMCPolicy


def __getattr__(name: str) -> Any:
    """A public name, imported from its module the first time it is asked for."""
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'agents' has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_HOMES})


__all__ = sorted(_HOMES, key=lambda name: (not name.isupper(), name))
