"""The net compiled for the GPU: a CUDA graph per batch size, captured by hand.

What the inference server (:mod:`zero9.nn.inference`) runs, and the benchmark's ceiling beside it
(``scripts/bench_selfplay.py``): the reference is the forward the server runs.

Vocabulary:

- **bucket**: a batch size compiled and captured; a batch runs in the next bucket up (CUDA graphs
  take fixed shapes).
- **symmetry on the GPU**: a position comes as it stands (symmetry 0) with the symmetry the
  evaluator drew for it; the forward turns the planes and turns the policy back, inside the graph:
  exact permutations, the numbers the worker's own turning gave.
- **graph** (:class:`Graph`): one bucket's CUDA graph and the static tensors it reads and writes.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from zero9.nn import features
from zero9.nn.net import ZeroNet

# batch sizes compiled; a batch runs in the next one up (1536 and 3072: a round of 1,600 positions
# in 2,048 wasted a fifth of the GPU's work)
BUCKETS = (256, 512, 1024, 1536, 2048, 3072, 4096)


def symmetry_maps(size: int, actions: int, device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
    """``(turn [8, N*N], back [8, A])``, long, on ``device``: the planes under symmetry ``s`` read point
    ``turn[s, p]`` at ``p`` (:func:`zero9.nn.features.point_maps`), and a policy computed under ``s``
    reads ``back[s, a]`` at ``a`` (:func:`zero9.nn.features.back_index`)."""
    turn = np.array(features.point_maps(size), np.int64)
    back = np.stack([features.back_index(s, size, actions) for s in range(features.NUM_SYMMETRIES)])
    return torch.as_tensor(turn, device=device), torch.as_tensor(back.astype(np.int64), device=device)


def bucket_for(n: int, buckets: tuple[int, ...]) -> int:
    """The smallest bucket that holds a batch of ``n`` (CUDA graphs take fixed shapes)."""
    size = next((b for b in buckets if b >= n), None)
    if size is None:
        raise ValueError(f"batch {n} is above the largest bucket {buckets[-1]}")
    return size


@dataclass
class Graph:
    """One bucket's CUDA graph and the static tensors it reads and writes on the device: ``x`` uint8
    ``[size, C, N, N]``, ``syms`` uint8 ``[size]`` in; ``probs`` float32 ``[size, A]``, ``value`` float32
    ``[size]`` out. A batch of ``n`` fills the first ``n`` rows; the rows past it keep an earlier
    batch's planes (valid ones: they are answered and the answers ignored)."""

    size: int
    graph: torch.cuda.CUDAGraph
    x: torch.Tensor
    syms: torch.Tensor
    probs: torch.Tensor
    value: torch.Tensor


class GraphedForward:
    """The CUDA forward: a CUDA graph per bucket, captured by hand over the inductor-compiled net.

    ``torch.compile``'s own CUDA graphs (``mode="reduce-overhead"``) check and copy their inputs on
    each call, and the padding to a bucket was two more copies: together over a quarter of the
    inference server's time, the process the Go recipe's workers waited on (py-spy, issue 40). Here a
    batch's rows go straight into the bucket's static input (the server copies each worker's slot
    there), the graph replays, and the outputs are read from its static output.
    """

    def __init__(self, heads, in_shape: tuple[int, int, int], buckets: tuple[int, ...], device: torch.device):
        # The graphs read the net's weights and the symmetry tables where they were at capture: ``heads``
        # holds them, and it must live as long as the graphs (freed, their memory goes to other tensors).
        self.heads, self.buckets, self.graphs = heads, buckets, {}
        side = torch.cuda.Stream(device)
        for b in buckets:  # compile and capture every bucket now, not in the middle of self-play
            x = torch.zeros(b, *in_shape, dtype=torch.uint8, device=device)
            syms = torch.zeros(b, dtype=torch.uint8, device=device)
            side.wait_stream(torch.cuda.current_stream(device))
            with torch.cuda.stream(side), torch.inference_mode():  # warm-up off the capture's stream
                for _ in range(3):
                    heads(x, syms)
            torch.cuda.current_stream(device).wait_stream(side)
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph), torch.inference_mode():
                probs, value = heads(x, syms)
            self.graphs[b] = Graph(b, graph, x, syms, probs, value)
        torch.cuda.synchronize(device)

    def bucket(self, n: int) -> Graph:
        return self.graphs[bucket_for(n, self.buckets)]

    def __call__(self, x: torch.Tensor, syms: torch.Tensor | None = None
                 ) -> tuple[torch.Tensor, torch.Tensor]:
        n = len(x)
        g = self.bucket(n)
        g.x[:n].copy_(x)
        if syms is None:
            g.syms[:n].zero_()
        else:
            g.syms[:n].copy_(syms)
        g.graph.replay()
        return g.probs[:n].clone(), g.value[:n].clone()  # (the graph writes its next answer there)


def compiled_forward(net: ZeroNet, device: torch.device, buckets: tuple[int, ...] = BUCKETS):
    """``forward(planes_uint8_on_device [B, C, N, N], syms [B] or None) -> (probs float32 [B, A], value
    float32 [B])``: each position's planes turned by its symmetry, the net, its policy turned back.

    bf16 weights, channels-last, compiled by ``torch.compile`` and captured in a CUDA graph per
    bucket on CUDA (:class:`GraphedForward`, made here before use: ~15-30 s a bucket); plain float32
    eager on the CPU.
    """
    net = net.to(device).eval()
    turn, back = symmetry_maps(net.size, net.num_actions, device)

    def turned(x: torch.Tensor, syms: torch.Tensor) -> torch.Tensor:
        b, c = x.shape[:2]
        index = turn[syms].unsqueeze(1).expand(b, c, turn.shape[1])
        return x.reshape(b, c, -1).gather(2, index).reshape(x.shape)

    if device.type != "cuda":
        def eager(x: torch.Tensor, syms: torch.Tensor | None = None):
            syms = torch.zeros(len(x), dtype=torch.long, device=x.device) if syms is None else syms.long()
            with torch.inference_mode():
                policy, value = net(turned(x, syms).float())[:2]
                return torch.softmax(policy.float(), dim=1).gather(1, back[syms]), value.float()
        return eager
    net = net.to(torch.bfloat16).to(memory_format=torch.channels_last)  # type: ignore[call-overload]  # stub gap
    torch.backends.cudnn.benchmark = True

    def heads(x: torch.Tensor, syms: torch.Tensor):
        syms = syms.long()
        x = turned(x, syms)
        policy, value = net(x.to(torch.bfloat16).contiguous(memory_format=torch.channels_last))[:2]
        return torch.softmax(policy.float(), dim=1).gather(1, back[syms]), value.float()

    limits = torch._dynamo.config  # one compiled graph per bucket: let dynamo keep them all
    for name in ("recompile_limit", "cache_size_limit"):
        if hasattr(limits, name):
            setattr(limits, name, max(getattr(limits, name), 2 * len(buckets) + 4))
    compiled = torch.compile(heads, dynamic=False)  # inductor's kernels; the CUDA graphs are ours
    return GraphedForward(compiled, (net.config["in_planes"], net.size, net.size), buckets, device)
