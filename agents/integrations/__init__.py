"""Bastra in other frameworks' own terms: RLlib (``agents.integrations.rllib``, extra ``rllib``)."""
