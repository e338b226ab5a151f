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
names; nothing inside the package imports it.
"""

from pathlib import Path

from bastra_env import _cache

KERNEL_FILES = ("players/kernels.py", "search/endgame_kernels.py", "search/kernels.py")
"""The files of compiled kernels that call each other across files: numba only notices a change
to the file a kernel is defined in, so their cache folder is named by a fingerprint of all of
them together with the rules kernels' (``bastra_env._cache``)."""

_cache.configure(tuple(Path(__file__).resolve().parent / name for name in KERNEL_FILES))

from agents.learning.config import (  # noqa: E402  (after the cache set-up)
    LAST_DEAL_ONLY,
    NETWORK_ALONE,
    POINTS_OBJECTIVE,
    PRESETS,
    SearchConfig,
)
from agents.learning.policy import LearnedPolicy  # noqa: E402
from agents.players.basic import GreedyPolicy, RandomPolicy  # noqa: E402
from agents.players.heuristic import HeuristicPolicy  # noqa: E402
from agents.registry import (  # noqa: E402
    BASELINES,
    POLICY_NAMES,
    load_policy,
    make_policy,
    policy_problem,
)
from agents.search.players import ISMCTSPolicy, PIMCPolicy  # noqa: E402

__all__ = [
    "BASELINES",
    "LAST_DEAL_ONLY",
    "NETWORK_ALONE",
    "POINTS_OBJECTIVE",
    "POLICY_NAMES",
    "PRESETS",
    "GreedyPolicy",
    "HeuristicPolicy",
    "ISMCTSPolicy",
    "LearnedPolicy",
    "PIMCPolicy",
    "RandomPolicy",
    "SearchConfig",
    "load_policy",
    "make_policy",
    "policy_problem",
]
