"""Every default of zero9, written once: the settings of a search, of play, of self-play, of training.

Vocabulary:

- **visits**: the root's visit count a search stops at (reused subtree visits count, as in
  Leela Zero's ``-v``). **playouts**: new simulations only (Leela Zero's ``-p``).
- **play**: the engine answering a person or another program (``zero9 gtp``, ``pbrain``,
  ``match``, the window, ``review``); **self-play**: the engine playing itself to make
  training data; **training**: gradient steps on the newest window of that data.

Each group of settings is a dataclass; the command-line parsers, GTP's ``lz-setoption``,
the window, the Ray pool and the tutorials take their defaults from these classes
(``PlayConfig().visits``, ``SelfPlayConfig.visits``), never from a number of their own.
This module imports nothing of zero9, so every layer may read it.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class SearchConfig:
    """Knobs of one PUCT search. Defaults are for play; self-play turns on ``noise``."""

    c_puct: float = 3.0
    fpu_reduction: float = 0.5
    fpu_root_reduction: float | None = None  # None: same as fpu_reduction (0 when noise is on)
    fpu_value: float | None = None  # a fixed first-play Q instead (pure MCTS: 0, as AlphaZero_Gomoku)
    noise: bool = False  # root Dirichlet noise: self-play only, never against a person
    noise_eps: float = 0.25
    noise_alpha_scale: float = 0.03 * 361  # alpha = this / number of legal moves (LZ, KataGo)
    virtual_loss: float = 1.0


@dataclass
class PlayConfig:
    """How the engine plays a person or another program."""

    visits: int | None = 400  # per move: the one visits default of play (gtp, pbrain, match, window, review)
    playouts: int | None = None  # new simulations per move instead (Leela Zero's -p); None: no such limit
    time_per_move: float | None = None  # seconds per move, at most (None: no clock)
    randomcnt: int = 0  # the first moves drawn in proportion to visits (Leela Zero's -m)
    lcb: bool = False  # choose the move by its lower confidence bound (Leela Zero's)
    root_parallel: int = 1  # independent trees searched at once, their root counts merged
    resign_threshold: float | None = 0.1  # resign below this winrate (None: never)
    resign_min_moves: int | None = None  # no resignation before this move (None: a quarter of the points)
    resign_min_visits: int = 50  # a resignation needs at least this many visits behind it
    batch_size: int = 8  # leaves per net call
    quick_visits: int = 16  # ``zero9 demo``: a whole console game in about a minute on a laptop
    # Gomoku: prove our wins by fours and spoil the opponent's (search/threats.py). Off: against Rapfi it
    # moved the shipped net from 20.0% to 22.5% only (docs/runs/gomoku15-rapfi), short of the declared bar
    threats: bool = False
    # what threats read at the root: "vcf" fours only, or "vct" fours and threes; the tree's leaves only
    # ever get the cheap VCF test. vcf: against Rapfi 10k reading threes scored 27.9%, fours only 40.0%
    # (the same net and 120 games, docs/runs/gomoku15-rapfi)
    threat_reading: str = "vcf"
    threat_candidates: int = 24  # moves, best first, that may be tried to spoil the opponent's fours


@dataclass
class ReviewConfig:
    """``zero9 review`` and the window's review (zero9/arena/review.py)."""

    visits: int = 200  # per position
    # Go: points lost that start each class, worst first: KaTrain's default eval_thresholds
    points: tuple[float, ...] = (12.0, 6.0, 3.0, 1.5, 0.5)
    # Gomoku: winrate lost (0..1) that starts blunder, mistake, inaccuracy
    winrate: tuple[float, ...] = (0.20, 0.10, 0.05)
    # Losses below these are search noise, never flagged: the 95th percentile of the difference
    # between two reviews of the same moves with different seeds at 200 visits
    # (scripts/bench_review.py --noise: 1.20 points over 398 moves of 4 Go games; --game gomoku:
    # 0.070 winrate over 62 moves of 4 Gomoku games); scaled by sqrt(200 / visits) at other visits.
    noise_points: float = 1.2
    noise_winrate: float = 0.07
    noise_visits: int = 200  # the visits those were measured at
    # Go: a move after which the game stays decided for the judge (the mover's winrate >= this, or
    # <= 1 - this, before and after) is not flagged. On the even half of 32 level games analysed by
    # KataGo (docs/runs/go9-strong), 12 of the shipped net's 13 flags at 800 visits on moves KataGo
    # says lose under 0.5 points came at a winrate of 0.97 or more; this rule took precision from
    # 0.45 to 0.55 there (odd half: 0.50 to 0.57), recall 0.12 to 0.10 (odd: 0.14 to 0.14).
    decided: float = 0.95
    # A played move the search gave fewer visits than this is searched on its own (its position after)
    min_played_visits: int = 10
    played_search_share: float = 0.5  # ... with this share of the visits (half: its value, not a choice)
    leaves_per_tree: int = 8  # per net call and position: a game's positions share each call
    batched: bool = True  # all positions' leaves in shared net calls (False: one position at a time)


@dataclass
class NetConfig:
    """The residual tower's shape."""

    blocks: int = 10  # the design card's net
    filters: int = 64  # 64 plays fast on a CPU; GPU training runs use 128
    run_blocks: int = 6  # a fresh ``train``/``autotrain`` run: small enough to learn on a laptop
    run_filters: int = 32


@dataclass
class SelfPlayConfig:
    """Options of self-play (:func:`zero9.learn.selfplay.lockstep.play_games`)."""

    visits: int = 200
    parallel_games: int = 32  # G: games in flight per worker
    leaves_per_tree: int = 8  # K: leaves per game per net call
    search: SearchConfig = field(default_factory=lambda: SearchConfig(noise=True))
    randomcnt: int = 8  # first moves drawn in proportion to visits (leelaz -m)
    resign_threshold: float | None = 0.05  # winrate of the side to move; None or < 0 disables
    resign_min_moves: int | None = None  # None: a quarter of the board's points (Leela Zero)
    no_resign_share: float = 0.1
    full_search_share: float = 1.0  # playout cap randomisation's p; 1.0 = every move full
    fast_visits: int = 32
    opening_moves: int = 0  # 0 disables the random opening
    opening_visits: int = 16
    move_cap: int | None = None  # None: 2 x number of actions; Go then ends by passing
    gumbel: bool = False  # Gumbel root search (zero9.search.gumbel) instead of PUCT + noise
    gumbel_actions: int = 16  # m, the root actions sampled
    in_flight: int = 2  # batches a worker keeps in flight when its net answers later (inference server)
    eval_cache: int = 100_000  # entries of each worker's evaluator cache (NetEvaluator's LRU); 0: none
    seed: int | None = None

    def __post_init__(self):
        if self.in_flight not in (1, 2):
            raise ValueError(f"in_flight must be 1 or 2, got {self.in_flight}")
        if self.eval_cache < 0:
            raise ValueError(f"eval_cache must be >= 0, got {self.eval_cache}")


PCR_SHARE = 0.25  # KataGo's share of full searches when playout cap randomisation is on


@dataclass
class TrainOptions:
    """Options of one training round (:func:`zero9.learn.training.train.train_generation`)."""

    steps: int = 12000
    batch_size: int = 256
    lr: float = 0.02
    optimizer: str = "sgd"  # 'sgd' (Nesterov) or 'adam'
    momentum: float = 0.9
    l2: float = 1e-4
    warmup: int = -1  # -1: min(200, steps // 4)
    lr_floor: float = 0.1
    window: float = 0.2
    window_min: int = 10_000
    window_max: int = 500_000
    downsample: int = 0
    max_reuse: float = 8.0  # samples drawn per training position per round, at most (shrinks the batch)
    min_batch: int = 16
    ownership_weight: float = 1.0
    score_weight: float = 1.0  # the score head's MSE (lead / board points), when the net has one
    test_every: int = 0  # 0: about 10 test evaluations per round
    test_positions: int = 4096
    save_every: float = 60.0
    max_bad_share: float = 0.1  # stop when more of the window's chunk files than this are unreadable
    seed: int | None = None
    device: str = "auto"
    threads: int = 0  # torch CPU threads; 0 leaves torch's default
    # torch.compile the losses' forward and backward (None: on CUDA, where a small net's eager step waits
    # on kernel launches; the CPU keeps eager mode: compiling takes ~40 s there and a laptop's run is short)
    compile: bool | None = None


ADAM_LR = 0.002  # the learning rate when --optimizer adam is chosen without --lr


@dataclass
class AutotrainConfig:
    """The loop's own options (``zero9 autotrain``); its self-play and training take the classes above."""

    games_per_gen: int = 200
    steps: int = 1000  # training steps per round
    gate_games: int = 100
    eval_games: int = 10  # rating games per opponent per rated round (0: no rating)
    generations: int | None = None  # stop after this many rounds in all (None: no limit)
    hours: float | None = None  # stop after this many hours (None: no limit)
    gate: bool = False  # promote only candidates that pass an SPRT match (leelaz-ninenine: off)
    rate_every: int = 1  # rate the candidate of every K-th round only
    eval_visits: int | None = None  # net visits in rating and gate games (None: self-play's)
    anchors: tuple[str, ...] | None = None  # None: random, mcts:100, and for Go gnugo:1 when installed
    plots: bool = True
    ray: str | None = None  # "auto" or a Ray address: self-play and rating games on a Ray cluster
    ray_server: str = "auto"  # with ray: nodes whose actors share one node server (auto: GPU nodes; on; off)
    straddle: bool = False  # games in flight at a round's end go on into the next round
    concurrent: bool | None = None  # train beside self-play (None: on with 2 or more GPUs)
    gpus: int = 0  # CUDA: self-play on the first N GPUs (0: all)
    train_device: str | None = None  # concurrent: the trainer's device (None: the last GPU, or the CPU)
    threads: int = 0  # torch CPU threads per process (0: 1 for tiny nets in training, else one per core)
    workers: int = 0  # self-play worker processes (0: one per core); Ray: actors per node
    sgf: bool = True  # an SGF file per self-play game
    lz_chunks: bool = False  # also Leela Zero text chunks (Go)
    device: str = "auto"
    seed: int | None = None


# The machine's recipe: what ``zero9 autotrain`` picks for the options a command leaves out, by option
# name (the command line's, dashes as underscores); an option a recipe leaves out keeps the defaults
# above, which are the CPU's recipe (a laptop's run, ./minitrain.sh's). ``cores``: the machine's.
CPU_RECIPE = "cpu"
GPU_GO9_RECIPE = "gpu-go9"


def autotrain_recipe(game: str, size: int, device_type: str, cores: int) -> tuple[str, dict]:
    """The recipe's name and options for ``game`` on ``size`` on a ``device_type`` ("cpu", "cuda")
    machine. On a GPU, 9x9 Go takes the recipe of the run behind the shipped net (94% against GNU Go
    level 10 after 58.9 H100-minutes, docs/training-the-shipped-nets.md): Gumbel search at 32
    simulations (Gumbel needs no playout cap: every move's search is short and recorded), 10 x 64
    blocks, 1,024 games and 400 steps x 512 a round, a window of at least 150,000 positions (about two
    rounds: on one, round 0 overfitted the value head), a worker per core but the inference server's,
    rated every 8th round against GNU Go levels 1 and 10 (the anchors of issue 45's curve)."""
    if device_type != "cuda" or game != "go" or size != 9:
        return CPU_RECIPE, {}
    return GPU_GO9_RECIPE, {
        "blocks": 10, "filters": 64,
        "gumbel": True, "visits": 32, "pcr": 1.0, "opening_moves": 8,
        "games_per_gen": 1024, "games_parallel": 96, "leaves": 4, "workers": max(1, cores - 1),
        "steps": 400, "batch_size": 512, "window_min": 150_000,
        "eval_games": 8, "rate_every": 8, "anchors": "random,gnugo:1,gnugo:10",
    }
