"""The network, its per-action inputs, and the learned player with the search around it."""
