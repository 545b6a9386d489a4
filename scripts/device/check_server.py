"""The inference server on the GPU answers as the net on the CPU (issue 40; the CI has no GPU).

    python3 scripts/device/check_server.py [DEVICE]   # cuda (default); cpu checks the check

One server on ``cuda`` (bf16, a CUDA graph per bucket, the workers' slots registered as pinned
memory where the driver allows) serves three clients that keep two batches in flight each, of sizes
from 1 to 700, so that rounds join several requests and run in several buckets. Every answer must
match the float32 net on the CPU under the same symmetries (the worker's own turning) within bf16's
rounding; prints the worst differences and the server's stats, exit 1 if any is off.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import numpy as np
import torch

from zero9.games import make_game
from zero9.nn.checkpoint import load_net, save_checkpoint
from zero9.nn.features import back_index, point_maps
from zero9.nn.inference import InferenceServer
from zero9.nn.net import make_net


def turned_planes(planes: np.ndarray, syms: np.ndarray, size: int) -> np.ndarray:
    maps = np.array(point_maps(size))
    flat = planes.reshape(len(planes), planes.shape[1], -1)
    return np.stack([flat[b][:, maps[s]] for b, s in enumerate(syms)]).reshape(planes.shape)


def main(device: str = "cuda") -> int:
    game = make_game("go", 9)
    torch.manual_seed(0)
    net = make_net(game, blocks=2, filters=32)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "net.pt"
        save_checkpoint(path, net, {"game": game.to_dict()})
        cpu_net, _ = load_net(path, device="cpu")
        rng = np.random.default_rng(0)
        worst_p = worst_v = 0.0
        with InferenceServer(str(path), device, workers=3, max_batch=700) as server:
            clients = [server.client(w) for w in range(3)]
            for _ in range(8 if device == "cpu" else 40):
                asked = []
                for c in clients:
                    for _ in range(2):
                        n = int(rng.integers(1, 701))
                        planes = (rng.random((n, 18, 9, 9)) < 0.3).astype(np.uint8)
                        planes[:, 16], planes[:, 17] = 1, 0
                        syms = rng.integers(0, 8, n).astype(np.uint8)
                        asked.append((c, c.submit(planes, syms), planes, syms))
                for c, ticket, planes, syms in asked:
                    probs, value = c.collect(ticket)
                    want_p, want_v = cpu_net.predict(turned_planes(planes, syms, 9).astype(np.float32))
                    for b, s in enumerate(syms):
                        want_p[b] = want_p[b][back_index(int(s), 9, want_p.shape[1])]
                    worst_p = max(worst_p, float(np.abs(probs - want_p).max()))
                    worst_v = max(worst_v, float(np.abs(value - want_v).max()))
            stats = server.stats()
        if device == "cuda":  # the forward in this process, its memory wanted by other tensors meanwhile
            from zero9.nn.graphed import compiled_forward

            gpu_net = load_net(path, device="cpu")[0]
            forward = compiled_forward(gpu_net, torch.device(device), buckets=(256, 1024))
            for n in (1, 200, 256, 700, 1024):
                clutter = [torch.rand(int(k), device=device) * 1000  # noqa: F841 (big and small blocks)
                           for k in [1 << 20] * 16 + rng.integers(100, 20_000, 500).tolist()]
                planes = (rng.random((n, 18, 9, 9)) < 0.3).astype(np.uint8)
                planes[:, 16], planes[:, 17] = 1, 0
                answer = forward(torch.as_tensor(planes, device=device))
                probs, value = (t.float().cpu().numpy() for t in answer)
                want_p, want_v = cpu_net.predict(planes.astype(np.float32))
                worst_p = max(worst_p, float(np.abs(probs - want_p).max()))
                worst_v = max(worst_v, float(np.abs(value - want_v).max()))
    print(f"server stats: {stats}")
    print(f"worst difference from the CPU net: policy {worst_p:.4f}, value {worst_v:.4f} (bf16 on the GPU)")
    ok = worst_p < 0.02 and worst_v < 0.05 and stats["positions"] > 0
    print("OK" if ok else "MISMATCH")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
