"""Bastra, the Cypriot fishing card game: an exact rules engine and RL environments.

``Rules``, ``parse_card``, ``card_name`` and ``legal_captures`` describe the game; ``Game`` is the
engine (on the compiled rules of ``bastra_env.compiled_rules``); ``env``/``raw_env`` are the
PettingZoo AEC environment (also ``bastra_v0.env()``, PettingZoo's naming, with its layout),
``gymnasium.make("Bastra-v0")`` the single-agent one, and ``bastra_env.vector.VectorEnv`` steps
many games per call (``gymnasium.make_vec("Bastra-v0")`` gives its Gymnasium face).
"""

import gymnasium
import pettingzoo

# _cache first: numba's cache folder, before any kernel; bastra_v0: PettingZoo's naming
from . import _cache, bastra_v0  # noqa: F401
from .captures import legal_captures
from .cards import card_name, parse_card
from .env import env, raw_env  # after bastra_v0: the name env is the function, not the module
from .game import Game, Move, RoundResult
from .rules import Rules

__version__ = "0.4.0"
"""The package version: the one place it is written (``pyproject.toml`` reads it)."""

if "bastra/bastra-v0" not in getattr(pettingzoo, "aec_registry", {"bastra/bastra-v0": None}):
    pettingzoo.register("aec", "bastra/bastra-v0", entry_point="bastra_env.env:env")
if "Bastra-v0" not in gymnasium.registry:
    gymnasium.register(
        id="Bastra-v0",
        entry_point="bastra_env.gym_env:BastraGymEnv",
        vector_entry_point="bastra_env.vector:GymVectorEnv",
    )

__all__ = [
    "Game",
    "Move",
    "RoundResult",
    "Rules",
    "bastra_v0",
    "card_name",
    "env",
    "legal_captures",
    "parse_card",
    "raw_env",
]
