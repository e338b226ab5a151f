"""``python -m agents.train``: training, self-play PPO or the endgame learning.

The command of ``agents.training.command``; it re-exports ``agents.training.ppo``'s names. The
front also loads the experiments of ``agents.experimental`` (``exit``, expert iteration, which
measured no better, ``dmc``, Deep Monte-Carlo, and ``league``, exploiters in the pool;
docs/experiments.md), whose algorithms stay runnable by their configs' names.
"""

import agents.experimental.dmc  # registers algorithm: dmc and its configs
import agents.experimental.exit  # registers algorithm: exit and its configs
import agents.experimental.league  # noqa: F401  (registers algorithm: league and its configs)
from agents.training.command import main
from agents.training.ppo import *  # noqa: F403

if __name__ == "__main__":
    main()
