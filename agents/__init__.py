"""Bastra players: rule-based baselines and learned policies."""

from .heuristic import HeuristicPolicy
from .learned import LearnedPolicy, load_policy
from .policies import GreedyPolicy, RandomPolicy

BASELINES = {"random": RandomPolicy, "greedy": GreedyPolicy, "heuristic": HeuristicPolicy}
"""Built-in policies by name, as the command-line tools accept them."""


def make_policy(spec: str, seed: int | None = None, endgame: bool = True):
    """A baseline name (``random``, ``greedy``, ``heuristic``) or a checkpoint path (``endgame``:
    see ``LearnedPolicy``)."""
    if spec in BASELINES:
        return RandomPolicy(seed) if spec == "random" else BASELINES[spec]()
    return load_policy(spec, endgame=endgame)


__all__ = [
    "BASELINES",
    "GreedyPolicy",
    "HeuristicPolicy",
    "LearnedPolicy",
    "RandomPolicy",
    "load_policy",
    "make_policy",
]
