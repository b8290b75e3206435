#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Derive gsched job profiles from Gavel's measured throughputs.

usage: tools/gen_profiles.py GAVEL/simulation_throughputs.json > data/profiles/gavel.csv

Input: stanford-futuredata/gavel @c4fa400 scheduler/simulation_throughputs.json (MIT):
per GPU type (k80, p100, v100) and job type ("ResNet-50 (batch size 64)", scale factor = GPUs),
the isolated throughput in steps/s ("null") and, for co-located pairs on the same GPUs,
[steps/s of this job, steps/s of the other].

Output: the profile file format of docs/gandiva.md ("Profiles"), four tables each introduced
by its header line.  How each column is derived (documented in docs/gandiva.md too):
  iter_time_s   1 / isolated throughput (the job's own GPUs, scale factor = gpus)
  rate_a/rate_b co-located throughput / isolated throughput of each job; 0 when Gavel measured
                0 (the pair could not run together: out of memory)
  gpu_util      1 - mean over partners of the partner's rate when packed with this job
                (how much of the GPU this job takes from others), clamped to [0.05, 1]
  gpu_mem_mb    a rough estimate, base + per-sample x batch size per model family (Gavel
                does not publish memory); only used for pairs without a measured rate
Model rows are written for 1, 2, 4 and 8 GPUs (the consolidated throughputs; the
multi-GPU rows only feed the speed of each GPU type, docs/heterogeneity.md).  Only 1-GPU
pairs are written: Gavel's co-location entries for multi-GPU jobs are all 0 (not measured),
so packs of n-GPU jobs use the 1-GPU pair rates (per-GPU interference).  Aliases map plain
family names (resnet50, lm, ...) to the middle measured batch size.  The 'default' row and
pair (used for models without a profile) are medians over the V100 1-GPU data; the P100 and
K80 'default' rows take the V100 one's iteration time divided by the median over models of
their throughput ratio to V100 (so jobs without a model slow down there too).
"""
import ast
import json
import re
import statistics
import sys

GPU_MEM = [("V100", 16384), ("P100", 16384), ("K80", 12288), ("T4", 15360), ("A100", 40960),
           ("H100", 81920), ("default", 16384)]
# family: (base MB, MB per sample)  -- rough estimates, see docstring
MEM = {"resnet18": (600, 12), "resnet50": (1200, 105), "transformer": (1000, 40),
       "lm": (800, 60), "recommendation": (800, 1), "a3c": (1000, 0), "cyclegan": (6000, 0)}
ALIAS = {"resnet18": "resnet18-bs64", "resnet50": "resnet50-bs64",
         "transformer": "transformer-bs64", "lm": "lm-bs20",
         "recommendation": "recommendation-bs2048"}


def name_of(jt):
    m = re.match(r"(.*?) \(batch size (\d+)\)", jt)
    fam, bs = (m.group(1), int(m.group(2))) if m else (jt, 0)
    fam = re.sub(r"[^a-z0-9]", "", fam.lower())
    return fam, bs, (f"{fam}-bs{bs}" if bs else fam)


def main():
    d = json.load(open(sys.argv[1]))
    out = sys.stdout
    out.write("# gsched job profiles, derived from Gavel's measured throughputs (MIT) by\n"
              "# tools/gen_profiles.py; see docs/gandiva.md for every column.\n")
    out.write("model,gpu_type,gpus,iter_time_s,gpu_mem_mb,gpu_util\n")
    pairs = []
    dflt = {}
    info = {}  # (type, job type) -> (gpu_mem_mb, gpu_util) of its 1-GPU row
    for typ in ("v100", "p100", "k80"):
        t = d[typ]
        keys = {ast.literal_eval(k): k for k in t}
        rates_with = {}  # partner rates when packed with job x
        for (jt, sf), k in sorted(keys.items(), key=lambda x: (x[0][1], x[0][0])):
            for other, v in t[k].items():
                if other == "null":
                    continue
                ojt, osf = ast.literal_eval(other)
                # Gavel's pairs of multi-GPU jobs are all 0 (not measured): 1-GPU pairs only
                if sf != 1 or osf != 1 or (ojt, osf) not in keys:
                    continue
                iso_a = t[k]["null"]
                iso_b = t[keys[(ojt, osf)]]["null"]
                ra = v[0] / iso_a if iso_a > 0 else 0
                rb = v[1] / iso_b if iso_b > 0 else 0
                if ra > 0 and rb > 0:
                    rates_with.setdefault((jt, sf), []).append(rb)
                if name_of(jt)[2] <= name_of(ojt)[2]:
                    pairs.append((name_of(jt)[2], name_of(ojt)[2], typ.upper(), sf,
                                  min(ra, 1.0), min(rb, 1.0)))
        for (jt, sf), k in sorted(keys.items(), key=lambda x: (name_of(x[0][0])[2], x[0][1])):
            if sf != 1:
                continue
            fam, bs, nm = name_of(jt)
            tput = t[k]["null"]
            if tput <= 0:
                continue
            base, per = MEM.get(fam, (2000, 0))
            mem = base + per * bs
            rw = rates_with.get((jt, sf), [])
            util = 1.0 - (sum(rw) / len(rw)) if rw else 0.5
            util = min(1.0, max(0.05, util))
            info[(typ, jt)] = (mem, util)
            out.write(f"{nm},{typ.upper()},{sf},{1.0 / tput:.6f},{mem},{util:.3f}\n")
            if typ == "v100":
                dflt.setdefault("iter", []).append(1.0 / tput)
                dflt.setdefault("mem", []).append(mem)
                dflt.setdefault("util", []).append(util)
    med = statistics.median
    dl = f"{int(med(dflt['mem']))},{med(dflt['util']):.3f}"
    out.write(f"default,any,1,{med(dflt['iter']):.6f},{dl}\n")
    # per-type 'default' rows: models without rows of their own progress on P100 / K80 at the
    # median over Gavel's models of their throughput there relative to V100 (1 GPU)
    for typ in ("p100", "k80"):
        ratios = []
        for k, v in d[typ].items():
            jt, sf = ast.literal_eval(k)
            ref = d["v100"].get(k)
            if sf == 1 and ref and v["null"] > 0 and ref["null"] > 0:
                ratios.append(v["null"] / ref["null"])
        out.write(f"default,{typ.upper()},1,{med(dflt['iter']) / med(ratios):.6f},{dl}\n")
    # multi-GPU rows (Gavel's consolidated throughputs: all GPUs of a job on one server): the
    # throughput of the whole job at that scale factor; memory and utilisation are the 1-GPU
    # row's.  Measured zeros are left out (the 1-GPU ratio stands in for them).
    def tput(typ, jt, sf):
        v = d[typ].get(str((jt, sf)))
        return v["null"] if v and v["null"] > 0 else 0

    models = sorted({ast.literal_eval(k)[0] for k in d["v100"]}, key=lambda jt: name_of(jt)[2])
    for typ in ("v100", "p100", "k80"):
        for jt in models:
            for sf in (2, 4, 8):
                x = tput(typ, jt, sf)
                if x > 0 and (typ, jt) in info:
                    mem, util = info[(typ, jt)]
                    out.write(f"{name_of(jt)[2]},{typ.upper()},{sf},{1.0 / x:.9g},{mem},{util:.3f}\n")
    # 'default' rows at 2, 4 and 8 GPUs: V100 ('any') the 1-GPU one sped up by the median
    # scaling of Gavel's models on V100; P100 / K80 slowed down from it by the median ratio
    for sf in (2, 4, 8):
        scale = [tput("v100", jt, sf) / tput("v100", jt, 1) for jt in models
                 if tput("v100", jt, sf) > 0 and tput("v100", jt, 1) > 0]
        ref_iter = med(dflt['iter']) / med(scale)
        out.write(f"default,any,{sf},{ref_iter:.9g},{dl}\n")
        for typ in ("p100", "k80"):
            ratios = [tput(typ, jt, sf) / tput("v100", jt, sf) for jt in models
                      if tput(typ, jt, sf) > 0 and tput("v100", jt, sf) > 0]
            out.write(f"default,{typ.upper()},{sf},{ref_iter / med(ratios):.9g},{dl}\n")
    out.write("model_a,model_b,gpu_type,gpus,rate_a,rate_b\n")
    seen = set()
    v1 = []
    for a, b, typ, sf, ra, rb in sorted(pairs):
        key = (a, b, typ, sf)
        if key in seen:
            continue
        seen.add(key)
        out.write(f"{a},{b},{typ},{sf},{ra:.4f},{rb:.4f}\n")
        if typ == "V100" and sf == 1 and ra > 0 and rb > 0:
            v1 += [ra, rb]
    r = med(v1)
    out.write(f"default,default,any,1,{r:.4f},{r:.4f}\n")
    out.write("alias,model\n")
    for k in sorted(ALIAS):
        out.write(f"{k},{ALIAS[k]}\n")
    out.write("gpu_type,gpu_mem_mb\n")
    for k, v in GPU_MEM:
        out.write(f"{k},{v}\n")


if __name__ == "__main__":
    main()
