"""Training together over a network: the Leela Zero style server, its client and trainer."""
