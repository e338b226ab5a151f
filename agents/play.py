"""``python -m agents.play``: terminal play (``agents.apps.play``, whose names it re-exports)."""

from agents.apps.play import *  # noqa: F403
from agents.apps.play import main

if __name__ == "__main__":
    main()
