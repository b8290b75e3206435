# SPDX-License-Identifier: GPL-2.0-or-later
"""Make a PyTorch DDP script elastic under gsched (docs/elastic.md, contrib/elastic/README.md).

gsched rescales an elastic job by draining it: it writes the target size to $GSCHED_CONTROL,
sends SIGTERM to every task, and once every task has exited 143 it launches the next
generation at the new size (new WORLD_SIZE, RANK, MASTER_PORT, GSCHED_GENERATION).  This
helper does the worker's part:
  - reads the environment and joins the process group (gloo on CPU, nccl on GPUs);
  - restore(): loads the newest checkpoint of $GSCHED_CHECKPOINT_DIR (model, optimizer, step,
    and whatever the script keeps in 'extra', e.g. its data position);
  - SIGTERM only sets a flag; boundary() checks it at an iteration boundary, all-reduced so
    that every rank stops after the same step; then rank 0 saves (write + rename) and every
    rank exits 143 at once ("checkpointed": gsched counts no lost work);
  - hint(): rank 0 appends a JSON line (step, samples, step_time, local_bsz, ckpt_step, ...)
    to $GSCHED_HINTS at most every `hint_secs` seconds or `hint_steps` steps.
Nothing else of the training loop changes.  Typical use (train_ddp.py is a complete example):
    el = Elastic(); model = DDP(net.to(el.device)) if el.world > 1 else net
    step, extra = el.restore(model, opt)
    while step < steps: ...train one step...; step += 1
        el.hint(step, samples, step_time, local_bsz); el.boundary(model, opt, step, extra)
"""
import glob, json, os, re, signal, sys, time

import torch
import torch.distributed as dist


class Elastic:
    def __init__(self, device=None, hint_secs=30.0, hint_steps=50):
        e = os.environ
        self.rank, self.world = int(e.get("RANK", "0")), int(e.get("WORLD_SIZE", "1"))
        self.local_rank = int(e.get("LOCAL_RANK", "0"))
        self.generation = int(e.get("GSCHED_GENERATION", "1"))
        self.ckdir = e.get("GSCHED_CHECKPOINT_DIR") or os.path.join(e.get("GSCHED_JOB_DIR", "."), "checkpoint")
        self.hints, self.control = e.get("GSCHED_HINTS"), e.get("GSCHED_CONTROL")
        if device is None:
            device = f"cuda:{self.local_rank}" if torch.cuda.is_available() else "cpu"
        self.device = torch.device(device)
        self.hint_secs, self.hint_steps, self.last_hint, self.ckpt_step = hint_secs, hint_steps, (0.0, 0), -1
        self.stop, self.exit_delay = False, 0.0  # exit_delay: tests (a slow exit after the save)
        signal.signal(signal.SIGTERM, lambda signum, frame: setattr(self, "stop", True))
        if self.world > 1:  # env:// rendezvous on MASTER_ADDR/MASTER_PORT
            dist.init_process_group("nccl" if self.device.type == "cuda" else "gloo")

    def restore(self, model, opt):
        """Load the newest checkpoint, if any: returns (step, extra); (0, {}) when none."""
        ckpts = sorted(glob.glob(os.path.join(self.ckdir, "ckpt-*.pt")), key=lambda p: int(re.findall(r"\d+", os.path.basename(p))[0]))
        if not ckpts:
            return 0, {}
        state = torch.load(ckpts[-1], map_location=self.device)
        getattr(model, "module", model).load_state_dict(state["model"])
        opt.load_state_dict(state["opt"])
        self.ckpt_step = state["step"]
        return state["step"], state.get("extra", {})

    def boundary(self, model, opt, step, extra=None):
        """Call after each step: when a drain was asked (on any rank), checkpoint and exit 143."""
        flag = torch.tensor([1.0 if self.stop else 0.0], device=self.device)
        if self.world > 1:
            dist.all_reduce(flag, op=dist.ReduceOp.MAX)
        if flag.item() == 0:
            return
        if self.rank == 0:
            os.makedirs(self.ckdir, exist_ok=True)
            path = os.path.join(self.ckdir, f"ckpt-{step}.pt")
            torch.save({"model": getattr(model, "module", model).state_dict(), "opt": opt.state_dict(),
                        "step": step, "extra": extra or {}}, path + ".tmp")
            os.replace(path + ".tmp", path)  # a kill during the save leaves the previous checkpoint
            for old in glob.glob(os.path.join(self.ckdir, "ckpt-*.pt")):
                if old != path:
                    os.remove(old)
            self.ckpt_step = step
            self._append(dict(step=step, ckpt_step=step, world=self.world, generation=self.generation))
            try:  # the daemon's control file: {"generation", "target_gpus", "deadline"}
                why = "gsched asks for %d GPU(s)" % json.load(open(self.control))["target_gpus"]
            except (TypeError, OSError, ValueError, KeyError):
                why = "SIGTERM"
            print(f"gsched_elastic: checkpoint at step {step}, exiting 143 ({why})", flush=True)
        if self.world > 1:
            dist.barrier()  # no rank leaves before the checkpoint is on disk
            dist.destroy_process_group()
        time.sleep(self.exit_delay)
        sys.stdout.flush(), sys.stderr.flush()
        os._exit(143)  # at once: the interpreter's teardown with torch loaded takes a second

    def hint(self, step, samples, step_time, local_bsz, **more):
        """Rank 0: append a hint line every hint_secs seconds or hint_steps steps."""
        now = time.monotonic()
        if self.rank != 0 or not self.hints or (now - self.last_hint[0] < self.hint_secs and step - self.last_hint[1] < self.hint_steps):
            return
        self.last_hint = (now, step)
        self._append(dict(step=step, samples=samples, step_time=step_time, local_bsz=local_bsz, world=self.world,
                          generation=self.generation, ckpt_step=self.ckpt_step, **more))

    def _append(self, line):
        if not self.hints:
            return
        fd = os.open(self.hints, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, (json.dumps(line) + "\n").encode())  # one write: lines never interleave
        finally:
            os.close(fd)
