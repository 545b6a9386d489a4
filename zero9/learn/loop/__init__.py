"""The learning loop: autotrain (alone, or concurrent), the run's nets, gating and ratings, plots,
the multi-size loop."""
