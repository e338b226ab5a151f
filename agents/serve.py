"""``python -m agents.serve``: the web app (``agents.apps.serve``, whose names it re-exports)."""

from agents.apps.serve import *  # noqa: F403
from agents.apps.serve import main

if __name__ == "__main__":
    main()
