"""Bastra in other frameworks' own terms: RLlib (``agents.integrations.rllib``, extra ``rllib``)
and OpenSpiel bots (``agents.integrations.openspiel``, extra ``openspiel``)."""
