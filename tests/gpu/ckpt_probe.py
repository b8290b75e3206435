#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""ckpt_probe.py - measure the CUDA driver's process checkpoint API on a real GPU,
independently of gsched (ctypes on libcuda.so.1), as a cross-check of docs/gpu.md.

For each size it starts a PyTorch process holding SIZE GiB of device memory that keeps
computing, then from this process: lock, checkpoint (GPU memory must drop), restore,
unlock (memory back, the child's checksum unchanged and it keeps stepping).  Also tries a
restore with a GPU pair mapping GPU 0 onto itself (the remap path of newer drivers) and a
restore of a SIGSTOPped process (in a watchdog'd subprocess: it may hang).
Usage: python3 ckpt_probe.py [SIZE_GIB...]   (default 1 4 16 64)
"""
import ctypes, json, os, signal, subprocess, sys, time

CHILD = r'''
import os, sys, time, torch
gib = float(sys.argv[1])
n = int(gib * (1 << 30) / 4)
x = torch.arange(n, dtype=torch.float32, device="cuda") % 1000
ref = float(x.sum().item())
a = torch.randn(2048, 2048, device="cuda")
print("ready", ref, flush=True)
step = 0
while True:
    a = torch.tanh(a @ a * 1e-3)
    torch.cuda.synchronize()
    step += 1
    if step % 50 == 0:
        s = float(x.sum().item())
        print("step", step, "ok" if s == ref else "BAD %r != %r" % (s, ref), flush=True)
'''

def smi_used():
    out = subprocess.run(["nvidia-smi", "--query-gpu=memory.used", "--format=csv,noheader,nounits"],
                         capture_output=True, text=True).stdout.split()
    return int(out[0]) if out else -1

cu = ctypes.CDLL("libcuda.so.1")
def chk(name, rc):
    if rc != 0:
        s = ctypes.c_char_p()
        cu.cuGetErrorString(rc, ctypes.byref(s))
        raise RuntimeError("%s: %d %s" % (name, rc, s.value.decode() if s.value else "?"))

class Args(ctypes.Structure):
    _fields_ = [("b", ctypes.c_ubyte * 64)]

def lock_args(ms):
    a = Args(); ctypes.memmove(ctypes.addressof(a), ctypes.byref(ctypes.c_uint(ms)), 4); return a

class Uuid(ctypes.Structure):
    _fields_ = [("b", ctypes.c_ubyte * 16)]
class Pair(ctypes.Structure):
    _fields_ = [("old", Uuid), ("new", Uuid)]
class RestoreArgs(ctypes.Structure):
    _fields_ = [("pairs", ctypes.POINTER(Pair)), ("count", ctypes.c_uint), ("pad", ctypes.c_ubyte * 52)]

chk("cuInit", cu.cuInit(0))
ver = ctypes.c_int(); chk("cuDriverGetVersion", cu.cuDriverGetVersion(ctypes.byref(ver)))
dev = ctypes.c_int(); chk("cuDeviceGet", cu.cuDeviceGet(ctypes.byref(dev), 0))
uuid = Uuid(); chk("cuDeviceGetUuid", cu.cuDeviceGetUuid_v2(ctypes.byref(uuid), dev))

def state(pid):
    s = ctypes.c_int(); rc = cu.cuCheckpointProcessGetState(pid, ctypes.byref(s))
    return s.value if rc == 0 else "err%d" % rc

def start(gib):
    p = subprocess.Popen([sys.executable, "-c", CHILD, str(gib)], stdout=subprocess.PIPE, text=True)
    line = p.stdout.readline()
    assert line.startswith("ready"), line
    return p

def wait_step(p, tmo=60):
    t0 = time.time()
    while time.time() - t0 < tmo:
        line = p.stdout.readline()
        if line.startswith("step"):
            return line.strip()
    return "no step"

res = {"driver": ver.value, "runs": []}
sizes = [float(s) for s in sys.argv[1:]] or [1, 4, 16, 64]
for gib in sizes:
    p = start(gib)
    wait_step(p)
    r = {"gib": gib, "used_before_mib": smi_used(), "state_running": state(p.pid)}
    t = time.time(); chk("lock", cu.cuCheckpointProcessLock(p.pid, ctypes.byref(lock_args(10000)))); r["lock_ms"] = (time.time() - t) * 1e3
    t = time.time(); chk("checkpoint", cu.cuCheckpointProcessCheckpoint(p.pid, ctypes.byref(Args()))); r["checkpoint_ms"] = (time.time() - t) * 1e3
    r["state_ckpt"] = state(p.pid); r["used_ckpt_mib"] = smi_used()
    ra = RestoreArgs()
    if gib == sizes[0]:
        pair = Pair(uuid, uuid); ra.pairs = ctypes.pointer(pair); ra.count = 1; r["remap_same_gpu"] = True
    t = time.time(); rc = cu.cuCheckpointProcessRestore(p.pid, ctypes.byref(ra)); r["restore_ms"] = (time.time() - t) * 1e3
    if rc != 0 and ra.count:
        r["remap_rc"] = rc; ra = RestoreArgs()
        t = time.time(); chk("restore", cu.cuCheckpointProcessRestore(p.pid, ctypes.byref(ra))); r["restore_ms"] = (time.time() - t) * 1e3
    elif rc != 0:
        chk("restore", rc)
    t = time.time(); chk("unlock", cu.cuCheckpointProcessUnlock(p.pid, ctypes.byref(Args()))); r["unlock_ms"] = (time.time() - t) * 1e3
    r["used_after_mib"] = smi_used(); r["after"] = wait_step(p)
    r["gb_per_s_ckpt"] = gib * 1.073741824 / (r["checkpoint_ms"] / 1e3)
    r["gb_per_s_restore"] = gib * 1.073741824 / (r["restore_ms"] / 1e3)
    p.kill(); p.wait()
    print(json.dumps(r), flush=True); res["runs"].append(r)

# restore of a stopped process (watchdog: this process may hang in the driver)
p = start(1); wait_step(p)
chk("lock", cu.cuCheckpointProcessLock(p.pid, ctypes.byref(lock_args(10000))))
chk("checkpoint", cu.cuCheckpointProcessCheckpoint(p.pid, ctypes.byref(Args())))
os.kill(p.pid, signal.SIGSTOP)
helper = r'''
import ctypes, sys
cu = ctypes.CDLL("libcuda.so.1"); cu.cuInit(0)
buf = (ctypes.c_ubyte * 64)()
print(cu.cuCheckpointProcessRestore(int(sys.argv[1]), buf), flush=True)
'''
try:
    t = time.time()
    o = subprocess.run([sys.executable, "-c", helper, str(p.pid)], capture_output=True, text=True, timeout=30)
    res["restore_while_stopped"] = {"rc": o.stdout.strip(), "ms": (time.time() - t) * 1e3}
except subprocess.TimeoutExpired:
    res["restore_while_stopped"] = "hung > 30 s"
os.kill(p.pid, signal.SIGCONT)
if state(p.pid) == 2:
    cu.cuCheckpointProcessRestore(p.pid, ctypes.byref(Args()))
cu.cuCheckpointProcessUnlock(p.pid, ctypes.byref(Args()))
res["stopped_case_after"] = wait_step(p, 30)
p.kill(); p.wait()
print(json.dumps({k: v for k, v in res.items() if k != "runs"}), flush=True)
