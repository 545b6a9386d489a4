"""Arena: players meet. Matches between nets and external engines, Elo, SPRT, ratings."""
