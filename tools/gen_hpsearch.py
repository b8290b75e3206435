#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Write a hyper-parameter-search burst in gsched's native trace format (docs/gandiva.md).

128 one-GPU jobs of one model family (ResNet-18 on CIFAR-10, four batch sizes: the
searched hyper-parameter) submitted within one minute, as an AutoML sweep does.
Durations are deterministic and spread from 10 to 100 minutes (configurations that
converge at different speeds).  usage: tools/gen_hpsearch.py > data/examples/hpsearch.csv
"""
print("id,submit,duration,gpus,model,user,name")
bs = [16, 32, 64, 128]
for i in range(128):
    submit = i * 0.5                      # one job every half second
    minutes = 10 + (i * 37) % 91          # 10..100 minutes, a fixed permutation
    print(f"{i},{submit:g},{minutes * 60},1,resnet18-bs{bs[i % 4]},alice,hp-{i:03d}")
