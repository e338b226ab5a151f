"""EXPERIMENTAL: what was tried and measured no better than what ships, kept runnable for the
research log (docs/experiments.md). Nothing that ships imports it (an import-linter contract);
the training front loads it so that its configs run by name.

- ``exit``, ``expert``: expert iteration (``algorithm: exit``; configs ``exit_smoke``,
  ``exit_2p``, ``exit_4p_teams`` in ``configs/``).
- ``dmc``: Deep Monte-Carlo (``algorithm: dmc``; configs ``dmc_smoke``, ``dmc_2p``), on the
  self-play loop of PPO.
- ``league``: exploiters in PPO's opponent pool, and the main network's exploitability over
  training (``algorithm: league``; configs ``league_smoke``, ``league_2p``).
"""
