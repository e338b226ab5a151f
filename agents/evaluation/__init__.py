"""Honest evaluation: duplicate deals, Wilson intervals, variance-reduced estimates, the frozen
rating ladder, round-robin ratings, curves, replays.

``from agents.evaluation import duplicate_match`` (and the other names of ``__all__``) imports the
module that defines the name when it is first asked for.
"""

from __future__ import annotations

import importlib
from typing import Any

_NAMES = {
    "duplicate_match": "agents.evaluation.matches",
    "play_games": "agents.evaluation.matches",
    "MatchResult": "agents.evaluation.matches",
    "cross_fitted": "agents.evaluation.matches",
    "luck_corrections": "agents.evaluation.luck",
    "rate": "agents.evaluation.ladder",
    "Rating": "agents.evaluation.ladder",
    "load_ladder": "agents.evaluation.ladder",
    "RatingStore": "agents.evaluation.store",
    "round_robin": "agents.evaluation.ratings",
}

__all__ = sorted(_NAMES)


def __getattr__(name: str) -> Any:
    if name not in _NAMES:
        raise AttributeError(f"module 'agents.evaluation' has no attribute {name!r}")
    return getattr(importlib.import_module(_NAMES[name]), name)
