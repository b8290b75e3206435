#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""A tiny elastic DDP training job for gsched (contrib/elastic/README.md): a small MLP learns a
fixed random teacher on synthetic data.  The data of step s is a deterministic function of s
(the same global batch whatever the world size; rank r takes its slice of it), and DDP
averages the gradients, so a rescaled run follows the same trajectory as an unscaled one.

Rank 0 prints one line per step:  step N loss X world W gen G
(N counts from 0; X is the loss of the whole global batch, averaged over the ranks).
Runs alone (python3 train_ddp.py) or under gsched as an elastic job (one process per task).
"""
import argparse, os, sys, time

import torch
import torch.distributed as dist
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gsched_elastic import Elastic  # noqa: E402


def batch(step, n, dim, teacher):
    g = torch.Generator().manual_seed(1_000_003 + step)
    x = torch.randn(n, dim, generator=g)
    return x, 3 * teacher(x) + 0.01 * torch.randn(n, 1, generator=g)


def main():
    ap = argparse.ArgumentParser(description="A tiny elastic DDP training job for gsched (see contrib/elastic/README.md).")
    ap.add_argument("--steps", type=int, default=1000, help="train until this many steps in all")
    ap.add_argument("--global-batch", type=int, default=64, help="samples per step, all ranks together")
    ap.add_argument("--dim", type=int, default=16)
    ap.add_argument("--lr", type=float, default=0.01)
    ap.add_argument("--step-time", type=float, default=0.0, help="sleep this long per step (pacing)")
    ap.add_argument("--device", default=None, help="cpu, cuda (default: cuda when available)")
    ap.add_argument("--log-time", action="store_true", help="end each line with 'time UNIX_SECONDS'")
    ap.add_argument("--start-delay", type=float, default=0.0, help="tests: sleep before the first step")
    ap.add_argument("--exit-delay", type=float, default=0.0, help="tests: sleep after a drain's checkpoint")
    args = ap.parse_args()

    el = Elastic(device=args.device)
    el.exit_delay = args.exit_delay  # a slow exit widens the daemon's DRAINING window (tests)
    if args.global_batch % el.world:
        sys.exit(f"--global-batch {args.global_batch} is not a multiple of WORLD_SIZE {el.world}")
    local = args.global_batch // el.world
    torch.manual_seed(0)  # the same initial weights and teacher on every rank and generation
    teacher = nn.Sequential(nn.Linear(args.dim, 8), nn.Tanh(), nn.Linear(8, 1)).requires_grad_(False)
    net = nn.Sequential(nn.Linear(args.dim, 32), nn.Tanh(), nn.Linear(32, 1)).to(el.device)
    model = nn.parallel.DistributedDataParallel(net) if el.world > 1 else net
    opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.5)
    step, extra = el.restore(model, opt)
    time.sleep(args.start_delay)
    samples = extra.get("samples", step * args.global_batch)  # data position
    stamp = (lambda: f" time {time.time():.6f}") if args.log_time else (lambda: "")
    if el.rank == 0:
        print(f"start at step {step} samples {samples} world {el.world} gen {el.generation}{stamp()}", flush=True)

    while step < args.steps:
        t0 = time.monotonic()
        x, y = batch(step, args.global_batch, args.dim, teacher)
        x, y = x[el.rank * local:(el.rank + 1) * local].to(el.device), y[el.rank * local:(el.rank + 1) * local].to(el.device)
        loss = nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        total = loss.detach().clone()
        if el.world > 1:
            dist.all_reduce(total)
        if el.rank == 0:
            print(f"step {step} loss {total.item() / el.world:.6f} world {el.world} gen {el.generation}{stamp()}", flush=True)
        if args.step_time > 0:
            time.sleep(args.step_time)
        step, samples = step + 1, samples + args.global_batch
        el.hint(step, samples, time.monotonic() - t0, local)
        el.boundary(model, opt, step, {"samples": samples})
    if el.world > 1:
        dist.destroy_process_group()
    if el.rank == 0:
        print(f"done at step {step} samples {samples}", flush=True)


if __name__ == "__main__":
    main()
