"""Ray self-play with a node server (one copy of the net per node) against actors with a copy each.

    python3 scripts/bench_ray_server.py --workers 2 --games 16 --repeats 3
    python3 scripts/bench_ray_server.py --net example-data/go_9x9_best.pt --visits 32 --games 8

Both modes play the same games with the same net on this machine's CPU (the GPU is hidden),
on one Ray instance started here: a :class:`zero9.learn.cluster.pool.RayPool` of ``--workers``
actors that each load the net (``--ray-server off``), and one of as many actors served by a
node server (``--ray-server on``: one more process, which holds the net and computes every
actor's batches). After a warm-up round each, the two alternate ``--repeats`` times. Prints
seconds per game and games/s per repeat, their means, ``shared/own`` (games/s), and the net
copies of each mode: nets found in the actors' processes plus nets the servers loaded, with
their bytes, and the resident memory of the processes that hold them.

On a GPU node the point is the GPU: one compiled net and large batches instead of many
small uncompiled ones. On a CPU node one server process computes what every actor computed
for itself, so expect it to be slower there (that is why ``--ray-server auto`` shares only
GPU nodes).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench_ray import add_workload_arguments  # noqa: E402  (scripts/ is on the path when this runs as a script)


def rss_mib(pid: int) -> float:
    """Resident memory of a local process (Linux), MiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--workers", type=int, default=2, help="Ray actors in each mode")
    p.add_argument("--net", default=None, help="a net file (default: a fresh net of the shape below)")
    add_workload_arguments(p, games=16, games_parallel=8)
    args = p.parse_args(argv)
    os.environ["CUDA_VISIBLE_DEVICES"] = ""  # before torch and Ray look for GPUs

    import ray
    import torch

    from zero9.games import make_game
    from zero9.learn.cluster.pool import RayPool
    from zero9.nn.checkpoint import game_from_meta, load_net, save_checkpoint
    from zero9.nn.net import make_net
    from zero9.settings import SelfPlayConfig

    tmp = Path(tempfile.mkdtemp())
    if args.net:
        net_path = Path(args.net)
        net, meta = load_net(net_path, device="cpu")
    else:
        torch.manual_seed(0)
        params = {"connect": args.connect} if args.game == "gomoku" else {}
        game = make_game(args.game, args.size, **params)
        net_path = tmp / "net.pt"
        save_checkpoint(net_path, make_net(game, args.blocks, args.filters), {"game": game.to_dict()})
        net, meta = load_net(net_path, device="cpu")
    net_mib = sum(t.numel() * t.element_size() for t in net.state_dict().values()) / 2**20
    cfg = SelfPlayConfig(visits=args.visits, parallel_games=args.games_parallel, leaves_per_tree=args.leaves)
    shape = f"{net.config.get('blocks')}x{net.config.get('filters')}"
    print(f"{game_from_meta(meta)}: {shape} net ({net_mib:.2f} MiB of weights), {args.visits} visits, "
          f"{args.workers} actors, {args.games} games per round, {os.cpu_count()} CPUs")
    del net

    # Both pools at once on one instance: own-net actors, and a node server (1 CPU) with its actors.
    ray.init(num_cpus=2 * args.workers + 1, include_dashboard=False, log_to_driver=False)
    try:
        t = time.monotonic()
        with RayPool("auto", workers=args.workers, server="off") as own, \
                RayPool("auto", workers=args.workers, server="on") as shared:
            print(f"pools ready in {time.monotonic() - t:.1f} s")
            pools = {"own": own, "shared": shared}
            for mode, pool in pools.items():
                pool.play_round(net_path, args.workers * 2, cfg, tmp / f"warm-{mode}", None, progress=False)
            rates: dict[str, list[float]] = {mode: [] for mode in pools}
            for rep in range(args.repeats):
                for mode, pool in pools.items():
                    t = time.monotonic()
                    stats = pool.play_round(net_path, args.games, cfg, tmp / f"{mode}{rep}", None,
                                            progress=False)
                    rate = stats.games / (time.monotonic() - t)
                    rates[mode].append(rate)
                    print(f"{mode} rep {rep}: {1 / rate:.3f} s/game, {rate:.2f} games/s", flush=True)
            for mode, pool in pools.items():
                held = ray.get([s.handle.holds_net.remote() for s in pool.slots])
                servers = [x for stats in pool.servers.stats().values() for x in stats]
                copies = sum(h["nets"] for h in held) + len(servers)
                loads = sum(x["loads"] for x in servers)
                actor_rss = [rss_mib(h["pid"]) for h in held]
                server_rss = [rss_mib(x["pid"]) for x in servers]
                print(f"{mode}: {copies} net copies ({copies * net_mib:.2f} MiB of weights): "
                      f"{sum(h['nets'] for h in held)} in {len(held)} actors, {len(servers)} in servers "
                      f"(which read a net {loads} times in {1 + 2 * args.repeats} rounds); resident memory: "
                      f"actors {', '.join(f'{r:.0f}' for r in actor_rss)} MiB"
                      + (f", server {', '.join(f'{r:.0f}' for r in server_rss)} MiB" if servers else ""))
    finally:
        ray.shutdown()
    own_rate, shared_rate = (sum(r) / len(r) for r in rates.values())
    print(f"mean: own nets {1 / own_rate:.3f} s/game ({own_rate:.2f} games/s), "
          f"node server {1 / shared_rate:.3f} s/game ({shared_rate:.2f} games/s)")
    print(f"shared/own = {shared_rate / own_rate:.3f} (games/s)")
    return 0


if __name__ == "__main__":
    from zero9.util.logs import configure_logging

    configure_logging()  # the library logs its progress lines (no CLI here to set that up)
    raise SystemExit(main())
