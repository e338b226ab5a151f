"""Training: self-play PPO from a YAML config (``agents.training.ppo``)."""
