"""``python -m agents.evaluate``: duplicate matches, ratings and curves.

The command of ``agents.evaluation.matches``, whose names it re-exports.
"""

from agents.evaluation.matches import *  # noqa: F403
from agents.evaluation.matches import main

if __name__ == "__main__":
    main()
