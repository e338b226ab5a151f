"""``python -m agents.evaluate``: duplicate matches, round-robin ratings and training curves.

The command of ``agents.evaluation.cli``; the names of ``agents.evaluation``'s modules (matches,
ratings, curves) stay importable from here.
"""

from agents.evaluation.cli import main
from agents.evaluation.curves import *  # noqa: F403
from agents.evaluation.matches import *  # noqa: F403
from agents.evaluation.ratings import *  # noqa: F403

if __name__ == "__main__":
    main()
