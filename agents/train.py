"""``python -m agents.train``: self-play training.

The command of ``agents.training.ppo``, whose names it re-exports.
"""

from agents.training.ppo import *  # noqa: F403
from agents.training.ppo import main

if __name__ == "__main__":
    main()
