"""The trainer's command line: ``bastra train``, ``python -m agents.train`` and ``python train.py``
in a checkout. It reads the config (``agents.training.config``) and runs its ``algorithm``:
self-play PPO (``agents.training.ppo``), expert iteration (``agents.training.exit``) or learning
the endgame search (``agents.training.endgame``)."""

from __future__ import annotations

import sys
from typing import Any

from agents.training.config import build_parser, parse_config
from agents.training.endgame import train_endgame
from agents.training.exit import train_exit
from agents.training.ppo import train_ppo


def main(argv: list[str] | None = None) -> dict[str, Any]:
    """Train from a command line (``sys.argv[1:]`` by default) and return the run's summary. A
    bad command line prints what is wrong and exits with status 2."""
    try:
        config, run_dir, resume = parse_config(sys.argv[1:] if argv is None else argv)
    except (ValueError, TypeError) as error:
        print(f"{build_parser().prog}: error: {error}", file=sys.stderr)
        raise SystemExit(2) from None
    if config.algorithm == "exit":
        return train_exit(config, run_dir, resume)
    if config.algorithm == "endgame":
        return train_endgame(config, run_dir, resume)
    return train_ppo(config, run_dir, resume)


if __name__ == "__main__":
    main()
