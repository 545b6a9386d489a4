"""zero9: a small-board teaching edition of AlphaGo Zero / Leela Zero for 9x9 Go and Gomoku."""

__version__ = "0.1.0"
