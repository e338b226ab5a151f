"""Bastra players: rule-based baselines (and, with training, learned policies)."""

from .policies import GreedyPolicy, RandomPolicy

BASELINES = {"random": RandomPolicy, "greedy": GreedyPolicy}
"""Built-in policies by name, as the command-line tools accept them."""

__all__ = ["BASELINES", "GreedyPolicy", "RandomPolicy"]
