"""Self-play training from a source checkout: ``python train.py --config configs/2p.yaml ...``.

A thin front: the trainer is ``agents.train`` (also ``bastra train`` and ``python -m
agents.train``), and ``import train`` gives its names.
"""

from agents.train import main
from agents.training.ppo import *  # noqa: F403

if __name__ == "__main__":
    main()
