"""Helpers every layer may use: atomic files (the bottom layer; imports nothing of zero9)."""
