"""The nets of a run: their shape (fixed for life), the first one, each trained candidate.

- **identity**: the game and the net's shape (blocks, filters, the ownership and score
  heads, fixed or pooled heads) are written into ``config.json`` when the run is created; a later invocation
  that asks for another is an error (:func:`check_config`).
- **the first net** (generation 0): random, or started from another net's tower
  (:func:`transplant_tower`: ``--init-from``, heads rebuilt when the board differs).
  With pooled heads (``--heads pooled``, :mod:`zero9.nn.net`) the run's nets play every
  board size, though the run plays and trains on its own.
- **a candidate**: the trainer's latest net after one round on the window
  (:func:`train_candidate`), saved as ``nets/<hash>.pt`` with its optimizer state.
- **Leela Zero weights**: for Go, every fixed-head net is also written as ``nets/<hash>.txt.gz``
  (without the heads Leela Zero cannot hold), so Leela Zero, Sabaki and Lizzie load it
  (Leela Zero's format has no pooled heads: those nets live in ``.pt`` only).

A net is saved under a temporary name and renamed to its hash, which is known only
after saving: a crash never leaves a half-written net under a real name.
"""

from __future__ import annotations

import json
import logging
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from zero9.games import Game
from zero9.learn.rundir import RunDir
from zero9.learn.training.train import StateHolder, train_generation
from zero9.learn.training.window import ChunkCache
from zero9.nn.checkpoint import load_checkpoint, load_net, save_checkpoint
from zero9.nn.heads import FIXED_HEADS, POOLED_HEADS, make_net
from zero9.nn.weights import save_lz_weights
from zero9.settings import NetConfig, TrainOptions

log = logging.getLogger(__name__)

IDENTITY_KEYS = ("game", "net")  # fixed at creation; a rerun that disagrees is an error
# The net shape's keys as ``zero9 autotrain`` spells them, and their values when a config lacks them
NET_OPTIONS = {"blocks": "--blocks", "filters": "--filters", "ownership": "--ownership",
               "score": "--score-head", "heads": "--heads"}
NET_KEY_DEFAULTS = {"score": False, "heads": FIXED_HEADS}


@dataclass
class NetShape:
    """The net a run is created with (fixed for life) and where its first net starts."""

    blocks: int = NetConfig.run_blocks
    filters: int = NetConfig.run_filters
    ownership: bool | None = None  # KataGo's ownership head; None: on for Go (a resumed run keeps its own)
    score: bool = False  # Go with ownership: a score-lead head too
    init_from: str | None = None  # start from this net's tower (and heads, on the same board)
    heads: str = FIXED_HEADS  # "pooled": size-independent heads (zero9.nn.net), a net for every board


def identity_config(game: Game, shape: NetShape) -> dict[str, Any]:
    """The parts of the config a run keeps for life: the game and the net's shape."""
    if shape.ownership and game.name != "go":
        raise ValueError("--ownership is for Go only")
    ownership = game.name == "go" if shape.ownership is None else shape.ownership
    net = {"blocks": shape.blocks, "filters": shape.filters, "ownership": ownership}
    if shape.score:
        if not ownership:
            raise ValueError("--score-head needs the ownership head (Go; its target is the ownership sum)")
        net["score"] = True  # only when on: runs made before it compare equal
    if shape.heads != FIXED_HEADS:
        net["heads"] = shape.heads  # likewise: fixed-head runs' configs carry no key
    return {"game": game.to_dict(), "net": net}


def check_config(stored: dict, wanted: dict, root: Path) -> None:
    """ValueError when the run at ``root`` was created with another game or net shape than ``wanted``
    (naming the options that differ)."""
    for key in IDENTITY_KEYS:
        if stored.get(key) != wanted.get(key):
            differ = _options_that_differ(stored.get(key), wanted.get(key)) if key == "net" else ""
            raise ValueError(f"run directory {root} was created with {key} {json.dumps(stored.get(key))}, "
                             f"but this command asks for {json.dumps(wanted.get(key))}{differ}: use another "
                             f"--dir, or repeat the original options")


def _options_that_differ(stored: dict | None, wanted: dict | None) -> str:
    """`` (--heads: the run's pooled, this command's fixed)`` for the net keys that differ."""
    stored, wanted = stored or {}, wanted or {}
    parts = []
    for key in sorted(set(stored) | set(wanted)):
        old, new = (d.get(key, NET_KEY_DEFAULTS.get(key)) for d in (stored, wanted))
        if old != new:
            parts.append(f"{NET_OPTIONS.get(key, key)}: the run's {json.dumps(old)}, this command's "
                         f"{json.dumps(new)}")
    return f" ({'; '.join(parts)})" if parts else ""


def initial_net(run_dir: RunDir, game: Game, shape: dict[str, Any], *, seed: int | None = None,
                init_from: str | None = None) -> str:
    """Create the run's generation-0 net (``shape``: config.json's ``net``), saved with Go's LZ weights;
    its hash."""
    if seed is not None:
        torch.manual_seed(seed)
    net = make_net(game, shape["blocks"], shape["filters"], ownership=shape["ownership"],
                   score=shape.get("score", False), heads=shape.get("heads", FIXED_HEADS))
    if init_from:
        transplant_tower(net, init_from)
    meta = save_checkpoint(run_dir.nets_dir / ".initial.pt", net, {"game": game.to_dict(), "generation": 0})
    os.replace(run_dir.nets_dir / ".initial.pt", run_dir.net_path(meta["hash"]))
    write_lz_weights(run_dir, game, net, meta["hash"])
    heads = " (pooled heads)" if net.size_independent else ""
    log.info("created %s: %s, net %sx%s%s %s", run_dir.root, game.to_dict(), shape["blocks"],
             shape["filters"], heads, meta["hash"])
    return meta["hash"]


def write_lz_weights(run_dir: RunDir, game, net, net_hash: str) -> None:
    """Go: the net as Leela Zero weights beside its checkpoint (without the heads LZ cannot hold)."""
    if game.name != "go" or net.size_independent:
        return  # Leela Zero's text format is a Go format of fixed heads; other nets live in .pt only
    save_lz_weights(net, run_dir.lz_weights_path(net_hash), drop_ownership=True)  # atomic itself


def train_candidate(run_dir: RunDir, game: Game, device: str, opts: TrainOptions, trainer: str, *,
                    generation: int, global_step: int, cache: ChunkCache | None = None,
                    progress: bool = True):
    """Train net ``trainer`` one round on the run's window (resuming a saved state of this round)
    and save the result as ``nets/<hash>.pt`` (and Go's LZ weights): ``(hash, RoundResult)``.

    The candidate is generation ``generation + 1``. The caller names it in status.json and
    then clears the train state; both loops (alternating and concurrent) train through here.
    """
    ckpt = load_checkpoint(run_dir.net_path(trainer), device)
    if ckpt.optimizer_state is not None and ckpt.meta.get("optimizer") not in (None, opts.optimizer):
        log.info("optimizer changed from %s to %s: fresh optimizer state", ckpt.meta.get("optimizer"),
                 opts.optimizer)
        ckpt.optimizer_state = None
    result = train_generation(run_dir, ckpt.net, ckpt.meta, opts, generation=generation,
                              optimizer_state=ckpt.optimizer_state, global_step=global_step, cache=cache,
                              progress=progress)
    meta = save_checkpoint(run_dir.nets_dir / ".candidate.pt", result.net,
                           {"game": game.to_dict(), "generation": generation + 1, "parent": trainer,
                            "step": result.global_step, "optimizer": opts.optimizer,
                            "train": result.last_train, "test": result.last_test},
                           StateHolder(result.optimizer_state))
    # named by the hash only known after saving, so save then rename (still atomic)
    os.replace(run_dir.nets_dir / ".candidate.pt", run_dir.net_path(meta["hash"]))
    write_lz_weights(run_dir, game, result.net, meta["hash"])
    test = result.last_test or {}
    nan = float("nan")
    score = (f", score error {test['score_error']:.2f} points "
             f"(ownership sum {test['ownership_sum_error']:.2f})" if "score_error" in test else "")
    log.info("round %s trained net generation %s: %s, test loss %.4f (policy %.4f, value %.4f)%s", generation,
             generation + 1, meta["hash"], test.get("total", nan), test.get("policy_loss", nan),
             test.get("value_loss", nan), score)
    return meta["hash"], result


def transplant_tower(net, path: str) -> None:
    """Start ``net`` from the net at ``path``: its input block and residual tower, and its heads too
    when every tensor fits (the same board size: the run continues that net).

    Convolutions do not care about the board size, so a 7x7 tower starts a 9x9 run;
    the heads' fully connected layers do, so on another board they are rebuilt. Pooled heads fit
    every board: a pooled net starts a pooled run of any size whole; fixed heads never go into
    pooled ones (nor back), so across kinds only the tower is copied.
    """

    source, _ = load_net(path, device="cpu")
    src, dst = source.config, net.config
    if src["filters"] != dst["filters"] or src["in_planes"] != dst["in_planes"]:
        raise ValueError(f"--init-from {path}: its tower ({src['filters']} filters, {src['in_planes']} input "
                         f"planes) does not fit {dst['filters']} filters, {dst['in_planes']} planes")
    own, theirs = net.state_dict(), source.state_dict()
    # The same board: every tensor both nets have (a head only one has, e.g. a new score head, starts fresh).
    # Fixed heads into pooled ones (or back): the tower only; pooled into pooled: the whole net, any board.
    same_heads = src.get("heads") == dst.get("heads")
    same_board = same_heads and (dst.get("heads") == POOLED_HEADS or (
        src["size"] == dst["size"] and src["num_actions"] == dst["num_actions"]))
    copied = 0
    for key, value in theirs.items():
        tower = key.startswith(("input_block.", "tower."))
        if (same_board or tower) and key in own and own[key].shape == value.shape:
            own[key] = value
            copied += 1
    net.load_state_dict(own)
    fresh = sorted({k.split(".")[0] for k in own if k not in theirs})
    log.info("--init-from %s: copied %s tensors; %s%s", path, copied,
             "the whole net (same board, or pooled heads)" if same_board else "the tower; heads start fresh",
             f"; new: {', '.join(fresh)}" if fresh else "")
