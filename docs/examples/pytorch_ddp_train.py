#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Example training script for gsched's local executor: checkpoint on SIGTERM, resume.

NOT YET VERIFIED ON REAL HARDWARE (see docs/daemon.md).  Runs with torchrun (one
process per GPU, see pytorch-ddp.yaml) or alone (`python pytorch_ddp_train.py`, which
uses the RANK / WORLD_SIZE / MASTER_ADDR / MASTER_PORT gsched sets for the task).

gsched's preemption protocol: SIGTERM to the whole task, GSCHED_GRACE_SECONDS to finish,
then SIGKILL; the job is requeued and started again with GSCHED_RUN incremented.  So:
  - never die on SIGTERM mid-step: set a flag, finish the step, checkpoint, exit 0;
  - write the checkpoint to a temporary file and rename it (a kill leaves the old one);
  - at start, load the checkpoint if there is one.
"""
import argparse
import os
import signal

import torch
import torch.distributed as dist
import torch.nn as nn

stop = False


def on_sigterm(signum, frame):
    global stop
    stop = True  # finish the current step, then checkpoint (see the loop)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=1000)
    args = ap.parse_args()
    signal.signal(signal.SIGTERM, on_sigterm)

    rank = int(os.environ.get("RANK", "0"))
    world = int(os.environ.get("WORLD_SIZE", "1"))
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    cuda = torch.cuda.is_available()
    device = torch.device(f"cuda:{local_rank}" if cuda else "cpu")
    if cuda:
        torch.cuda.set_device(device)
    if world > 1:
        dist.init_process_group("nccl" if cuda else "gloo")  # env:// rendezvous

    model = nn.Sequential(nn.Linear(1024, 4096), nn.ReLU(), nn.Linear(4096, 10)).to(device)
    if world > 1:
        model = nn.parallel.DistributedDataParallel(model, device_ids=[local_rank] if cuda else None)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)

    ckdir = os.environ.get("GSCHED_CHECKPOINT_DIR", ".")
    ckpt = os.path.join(ckdir, "checkpoint.pt")
    step = 0
    if os.path.exists(ckpt):
        state = torch.load(ckpt, map_location=device)
        (model.module if world > 1 else model).load_state_dict(state["model"])
        opt.load_state_dict(state["opt"])
        step = state["step"]
        print(f"rank {rank}: run {os.environ.get('GSCHED_RUN')} resumed at step {step}", flush=True)

    while step < args.steps:
        x = torch.randn(64, 1024, device=device)
        y = torch.randint(0, 10, (64,), device=device)
        loss = nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        step += 1
        # every rank must agree to stop at the same step, or DDP would hang
        flag = torch.tensor([1.0 if stop else 0.0], device=device)
        if world > 1:
            dist.all_reduce(flag)
        if flag.item() > 0:
            if rank == 0:
                os.makedirs(ckdir, exist_ok=True)
                tmp = ckpt + ".tmp"
                torch.save({"model": (model.module if world > 1 else model).state_dict(),
                            "opt": opt.state_dict(), "step": step}, tmp)
                os.replace(tmp, ckpt)
                print(f"SIGTERM: saving checkpoint at step {step}", flush=True)
            if world > 1:
                dist.barrier()
                dist.destroy_process_group()
            return 0
        if rank == 0 and step % 100 == 0:
            print(f"step {step} loss {loss.item():.3f}", flush=True)
    if world > 1:
        dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
