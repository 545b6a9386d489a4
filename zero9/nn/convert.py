"""``zero9 convert IN OUT``: between Leela Zero text weights and zero9 checkpoints.

Vocabulary: the **kind** of a file is chosen by its name: ``.pt`` is a zero9
checkpoint (:mod:`zero9.nn.checkpoint`); ``.txt``, ``.txt.gz`` and ``.gz`` are Leela
Zero v1 text weights (:mod:`zero9.nn.weights`), gzip'd when the name ends in ``.gz``.
The input's kind is read from its content. Conversion is exact, so the net keeps its
hash. A Leela Zero file does not say its komi: ``--komi`` sets it (default 7.5).
The command line (``zero9 convert``) is :mod:`zero9.cli.convert`.
"""

from __future__ import annotations

import logging
from pathlib import Path

from zero9.nn.checkpoint import load_net, save_checkpoint
from zero9.nn.weights import save_lz_weights

log = logging.getLogger(__name__)

LZ_SUFFIXES = (".txt", ".txt.gz", ".gz")


def output_kind(path: str) -> str:
    """'pt' or 'lz' from an output file name; ValueError for anything else."""
    name = path.lower()
    if name.endswith(".pt"):
        return "pt"
    if name.endswith(LZ_SUFFIXES):
        return "lz"
    raise ValueError(f"output {path!r}: name it .pt (zero9 checkpoint) or .txt / .txt.gz (Leela Zero text)")


def convert(src: str, dst: str, size: int | None = None, komi: float | None = None,
            drop_ownership: bool = False) -> dict:
    """Convert ``src`` into ``dst``; returns the net's meta (with its hash)."""

    kind = output_kind(dst)
    if Path(src).resolve() == Path(dst).resolve():
        raise ValueError(f"input and output are the same file {src!r}")
    net, meta = load_net(src, device="cpu", expected_size=size)
    if komi is not None:
        if meta["game"].get("game") != "go":
            raise ValueError("--komi applies to Go nets only")
        meta["game"]["komi"] = komi
    if kind == "lz":
        if net.config["ownership"] and not drop_ownership:  # name the flag, not lz_text's argument
            raise ValueError(f"{src} has an ownership head, which Leela Zero weights cannot hold; "
                             "pass --drop-ownership to write the rest")
        if meta["game"].get("game") != "go":
            log.warning("note: %s holds a %s net; Leela Zero itself cannot use it", dst,
                        meta["game"].get("game"))
        save_lz_weights(net, dst, drop_ownership=drop_ownership)
        return meta
    meta.pop("created", None)
    meta.setdefault("converted_from", str(src))
    return save_checkpoint(dst, net, meta)

