#!/usr/bin/env python3
"""A user's inference script, recorded by `tracegate record` with no change to it (issue 5's GPU
points): torchvision ResNet-50 with random weights, eager or torch.compile, timed with
torch.cuda.synchronize() the way the seed's PyTorch case does it. Optionally under torch.profiler
(CUDA activities only) for the overhead comparison.

  python3 tests/gpu/resnet50_infer.py --batch 1 [--compile] [--iters 50] [--rounds 1] [--torch-profiler OUT.json]
  python3 tests/gpu/resnet50_infer.py --tiny 20000 [--torch-profiler OUT.json]   # launch-bound loop

Prints one line per round: "resnet50 eager batch 32: 50 iterations in 0.270 s, 5.400 ms/iter",
the figure tests/gpu/overhead.sh compares (in-process: Python's and CUDA's start-up, ~10 s, are
not in it); with --iter-times also "resnet50 eager batch 32 iteration ms: 5.41 5.38 ..." per round
(each iteration timed on its own, for the median, p90 and outliers).
"""
import argparse
import time

import torch
import torchvision


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--iters", type=int, default=50)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--compile", action="store_true")
    ap.add_argument("--rounds", type=int, default=1, help="time the iterations this many times, one line each")
    ap.add_argument("--torch-profiler", metavar="OUT_JSON")
    ap.add_argument("--iter-times", action="store_true", help="also print every iteration's time, per round")
    ap.add_argument("--tiny", type=int, metavar="N",
                    help="instead of ResNet-50: N launch-bound iterations of one tiny in-place add")
    args = ap.parse_args()

    if args.tiny:
        y = torch.zeros(32, device="cuda")
        model = lambda _: y.add_(1.0)  # noqa: E731 - one tiny kernel per call
        args.iters, args.warmup = args.tiny, 100
    else:
        model = torchvision.models.resnet50(weights=None).cuda().eval()
        if args.compile:
            model = torch.compile(model)
    x = torch.randn(args.batch, 3, 224, 224, device="cuda")

    times = []

    def run(n):
        times.clear()
        with torch.inference_mode():
            for i in range(n):
                t0 = time.perf_counter()
                with torch.autograd.profiler.record_function(f"iteration {i}"):
                    torch.cuda.nvtx.range_push(f"iteration {i}")
                    model(x)
                    torch.cuda.synchronize()
                    torch.cuda.nvtx.range_pop()
                times.append(time.perf_counter() - t0)

    run(args.warmup)
    # The timed iterations sit in an NVTX range "profiled", so a recording of this script can be
    # compared with torch.profiler's trace of another run (tests/gpu/compare_profilers.py). Each
    # round is timed on its own, inside the profiler when there is one (its start and its trace
    # processing at the end are not per-iteration costs); the trace written is the last round's.
    mode = "tiny" if args.tiny else "compile" if args.compile else "eager"
    prof = None
    for r in range(args.rounds):
        torch.cuda.nvtx.range_push("profiled")
        if args.torch_profiler:
            from torch.profiler import ProfilerActivity, profile
            with profile(activities=[ProfilerActivity.CUDA]) as prof:
                start = time.perf_counter()
                run(args.iters)
                elapsed = time.perf_counter() - start
        else:
            start = time.perf_counter()
            run(args.iters)
            elapsed = time.perf_counter() - start
        torch.cuda.nvtx.range_pop()
        print(f"resnet50 {mode} batch {args.batch}: {args.iters} iterations in {elapsed:.3f} s, "
              f"{elapsed / args.iters * 1e3:.3f} ms/iter" + (f" (round {r + 1} of {args.rounds})" if args.rounds > 1 else ""),
              flush=True)
        if args.iter_times:
            print(f"resnet50 {mode} batch {args.batch} iteration ms: " + " ".join(f"{t * 1e3:.3f}" for t in times),
                  flush=True)
    if prof is not None:
        prof.export_chrome_trace(args.torch_profiler)

if __name__ == "__main__":
    main()
