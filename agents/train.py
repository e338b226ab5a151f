"""``python -m agents.train``: training, self-play PPO or the endgame learning.

The command of ``agents.training.command``; it re-exports ``agents.training.ppo``'s names. The
front also loads ``agents.experimental.exit``, whose algorithm (``exit``, expert iteration: an
experiment that measured no better, docs/experiments.md) stays runnable by its config's name.
"""

import agents.experimental.exit  # noqa: F401  (registers algorithm: exit and its configs)
from agents.training.command import main
from agents.training.ppo import *  # noqa: F403

if __name__ == "__main__":
    main()
