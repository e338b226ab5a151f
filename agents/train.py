"""``python -m agents.train``: training, self-play PPO or expert iteration.

The command of ``agents.training.command``; it re-exports ``agents.training.ppo``'s names.
"""

from agents.training.command import main
from agents.training.ppo import *  # noqa: F403

if __name__ == "__main__":
    main()
