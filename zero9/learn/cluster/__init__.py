"""Self-play across machines on Ray: the node's inference servers, the actors, the pool."""
