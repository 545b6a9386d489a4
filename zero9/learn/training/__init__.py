"""Training: the window of chunks, the losses, one training round, supervised chunks from SGF."""
