"""Self-play: one game's visible loop, G games in lockstep, the worker process, the pool, the
records they write."""
