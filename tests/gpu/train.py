#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""train.py - a small, deterministic PyTorch training job for gsched's real-GPU checks
(docs/gpu.md, tests/gpu/run.sh).

It trains an MLP on synthetic data generated from the step number, so two runs with the same
--steps end with bit-identical parameters whatever happened in between - an uninterrupted
run, one preempted with the checkpoint protocol and resumed, one suspended and restored by
the CUDA driver.  --ballast-gib holds that much extra device memory filled with a pattern,
checked at the end (a checkpoint-based suspend must bring GPU memory back intact).

Checkpoint protocol (docs/job-spec.md): on SIGTERM it saves model, optimizer and step to
$GSCHED_CHECKPOINT_DIR/train.pt at the next step boundary and exits 143; at start it resumes
from that file when there is one.
Output: "start step K ...", "step K loss L" every --log-every steps, then
"done steps N loss L params SHA ballast ok|BAD".
"""
import argparse, hashlib, os, signal, sys, time

import torch

ap = argparse.ArgumentParser()
ap.add_argument("--steps", type=int, default=300)
ap.add_argument("--width", type=int, default=2048)
ap.add_argument("--batch", type=int, default=1024)
ap.add_argument("--ballast-gib", type=float, default=0.0)
ap.add_argument("--log-every", type=int, default=50)
ap.add_argument("--step-sleep", type=float, default=0.0, help="seconds of host sleep per step")
ap.add_argument("--ckpt-dir", default=os.environ.get("GSCHED_CHECKPOINT_DIR") or (
    os.path.join(os.environ["GSCHED_JOB_DIR"], "checkpoint") if os.environ.get("GSCHED_JOB_DIR") else ""))
a = ap.parse_args()

os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
torch.use_deterministic_algorithms(True)
torch.manual_seed(0)
dev = torch.device("cuda")
model = torch.nn.Sequential(
    torch.nn.Linear(a.width, a.width), torch.nn.ReLU(),
    torch.nn.Linear(a.width, a.width), torch.nn.ReLU(),
    torch.nn.Linear(a.width, 10)).to(dev)
opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
ckpt = os.path.join(a.ckpt_dir, "train.pt") if a.ckpt_dir else ""

def checksum(t):  # in chunks: a whole-tensor int64 sum would allocate twice its size
    return sum(int(t[i:i + (1 << 26)].sum(dtype=torch.int64).item()) for i in range(0, t.numel(), 1 << 26))

ballast = None
if a.ballast_gib > 0:
    n = int(a.ballast_gib * (1 << 30)) // 4
    ballast = torch.empty(n, dtype=torch.int32, device=dev)
    for i in range(0, n, 1 << 26):  # a pattern, filled in chunks (no full-size temporary)
        j = min(n, i + (1 << 26))
        ballast[i:j] = torch.arange(i, j, dtype=torch.int32, device=dev) % 977
    ballast_sum = checksum(ballast)
    torch.cuda.empty_cache()

step = 0
if ckpt and os.path.exists(ckpt):
    st = torch.load(ckpt, map_location=dev)
    model.load_state_dict(st["model"])
    opt.load_state_dict(st["opt"])
    step = st["step"]
print("start step %d run %s pid %d device %s" % (step, os.environ.get("GSCHED_RUN", "-"), os.getpid(),
      torch.cuda.get_device_name(0)), flush=True)

stop = False
def on_term(sig, frm):
    global stop
    stop = True
signal.signal(signal.SIGTERM, on_term)

t0 = time.time()
loss = torch.zeros(())
while step < a.steps:
    g = torch.Generator(device=dev).manual_seed(1000 + step)
    x = torch.randn(a.batch, a.width, device=dev, generator=g)
    y = torch.randint(0, 10, (a.batch,), device=dev, generator=g)
    loss = torch.nn.functional.cross_entropy(model(x), y)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    step += 1
    if step % a.log_every == 0:
        print("step %d loss %.6f t %.1fs" % (step, loss.item(), time.time() - t0), flush=True)
    if a.step_sleep > 0:
        time.sleep(a.step_sleep)
    if stop:
        if ckpt:
            os.makedirs(a.ckpt_dir, exist_ok=True)
            torch.save({"model": model.state_dict(), "opt": opt.state_dict(), "step": step}, ckpt + ".tmp")
            os.replace(ckpt + ".tmp", ckpt)
            print("checkpoint saved at step %d (SIGTERM)" % step, flush=True)
        sys.exit(143)

h = hashlib.sha256()
for p in model.parameters():
    h.update(p.detach().cpu().numpy().tobytes())
ok = "none"
if ballast is not None:
    ok = "ok" if checksum(ballast) == ballast_sum else "BAD"
print("done steps %d loss %.6f params %s ballast %s" % (step, loss.item(), h.hexdigest()[:16], ok),
      flush=True)
