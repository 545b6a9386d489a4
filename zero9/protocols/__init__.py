"""Protocols other programs speak: GTP (Sabaki, Lizzie, GoGui, autogtp) and Gomocup's pbrain."""
