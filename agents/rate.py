"""``python -m agents.rate``: a policy's Elo on the frozen ladder
(``agents.evaluation.rate_cli``)."""

from agents.evaluation.rate_cli import main

if __name__ == "__main__":
    main()
