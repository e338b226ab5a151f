"""The players that need no search and no network: random, greedy, the heuristic, and the
compiled kernels they (and every floor above) read observations with."""
