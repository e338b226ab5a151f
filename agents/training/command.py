"""The trainer's command line: ``bastra train``, ``python -m agents.train`` and ``python train.py``
in a checkout. It reads the config (``agents.training.config``) and runs its ``algorithm``:
self-play PPO (``agents.training.ppo``) or learning the endgame search
(``agents.training.endgame``); an experimental algorithm registers its trainer here
(``register_trainer``) when the front imports it."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agents.training.config import Config, build_parser, parse_config
from agents.training.endgame import train_endgame
from agents.training.ppo import train_ppo

Trainer = Callable[[Any, Path, "str | None"], dict[str, Any]]
"""``(config, run_dir, resume) -> the run's summary``."""
TRAINERS: dict[str, Trainer] = {"ppo": train_ppo, "endgame": train_endgame}
"""Each algorithm's trainer."""


def register_trainer(algorithm: str, trainer: Trainer) -> None:
    """An experimental algorithm's trainer (its config class: ``config.register_algorithm``)."""
    TRAINERS[algorithm] = trainer


def main(argv: list[str] | None = None) -> dict[str, Any]:
    """Train from a command line (``sys.argv[1:]`` by default) and return the run's summary. A
    bad command line prints what is wrong and exits with status 2, before any run folder is
    made."""
    config: Config
    try:
        config, run_dir, resume = parse_config(sys.argv[1:] if argv is None else argv)
    except (ValueError, TypeError) as error:
        print(f"{build_parser().prog}: error: {error}", file=sys.stderr)
        raise SystemExit(2) from None
    return TRAINERS[config.algorithm](config, run_dir, resume)


if __name__ == "__main__":
    main()
