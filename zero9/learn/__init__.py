"""Learning: self-play, training, supervised chunks, the autotrain loop and its run directory."""
