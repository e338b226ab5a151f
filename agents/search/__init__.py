"""Search players (PIMC, IS-MCTS), the endgame search, inference from the deal's plays, game
equity, and their compiled kernels. Nothing here needs torch."""
