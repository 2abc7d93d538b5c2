"""A small CPU workload profiled with torch.profiler and a schedule, for the Python tests and for
tests/fixtures/kineto/legacy_autograd_profiler.json (Debian's torch 1.13, built without Kineto,
writes the legacy Chrome trace: a bare array of 'X' events, no "cat", pid "CPU functions").

    /usr/bin/python3 tests/python/torch_workload.py OUT.json    # one cycle: wait 1, warmup 1, active 3
"""

import sys
import time


def run(on_trace_ready, *, steps=12, wait=1, warmup=1, active=3, repeat=2, sleep_s=0.0, features=16):
    """Profiles `steps` forward passes of a tiny MLP on the CPU with schedule(wait, warmup, active,
    repeat); `sleep_s` added inside each step makes every step that much slower."""
    import torch
    from torch.profiler import ProfilerActivity, profile, schedule

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(features, features), torch.nn.ReLU(), torch.nn.Linear(features, 4))
    x = torch.randn(8, features)
    with profile(activities=[ProfilerActivity.CPU],
                 schedule=schedule(wait=wait, warmup=warmup, active=active, repeat=repeat),
                 on_trace_ready=on_trace_ready) as prof:
        for _ in range(steps):
            with torch.no_grad():
                model(x)
            if sleep_s:
                time.sleep(sleep_s)
            prof.step()


if __name__ == "__main__":
    out = sys.argv[1]
    done = []

    def write(prof):
        if not done:
            prof.export_chrome_trace(out)
        done.append(1)

    run(write, steps=6, repeat=1)
