"""Bastra under PettingZoo's naming convention (``from pettingzoo.classic import chess_v6``):

    from bastra_env import bastra_v0

    env = bastra_v0.env(num_players=4, teams=True)
    bastra_v0.OBSERVATION_LAYOUT     # the observation's table: (name, size, high, meaning)

``env``, ``raw_env`` and the observation and action layout, as ``bastra_env.env`` (the module
that holds them) defines them; the version in the name is the one ``raw_env.metadata["name"]``
gives. ``bastra_env.env`` itself is the function, so the module's names are read here.
"""

from .env import NUM_ACTIONS, OBSERVATION_LAYOUT, OBSERVATION_SIZE, OFFSETS, env, raw_env

__all__ = ["NUM_ACTIONS", "OBSERVATION_LAYOUT", "OBSERVATION_SIZE", "OFFSETS", "env", "raw_env"]
