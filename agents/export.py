"""``python -m agents.export``: model export (``agents.apps.export``, whose names it re-exports)."""

from agents.apps.export import *  # noqa: F403
from agents.apps.export import main

if __name__ == "__main__":
    main()
