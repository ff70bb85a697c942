"""How to run V-trace's backward recursion a_t = delta_t + w_t a_{t+1} fastest on CPU (T=50, B=64..512).

Times, per call, in microseconds (median of several repeats, one torch thread):
- the recursion alone: a reverse loop over T in numpy (what `vtrace` uses on CPU), in torch on
  time-major (T, B) rows, in torch on batch-major (B, T) columns, and a loop-free scan that builds
  the (T, T, B) products prod_{i=s}^{t-1} w_i with cumprod and sums them with einsum;
- the whole `vtrace` call with the numpy loop and with the torch loop.
Prints one `RESULT {json}` line.

    python benchmarks/vtrace_speed.py [--T 50] [--batch 64 128 256 512] [--repeats 7]
"""
import argparse
import json
import statistics
import time

import torch

import relayrl.ops.vtrace as vt


def torch_loop_batch_major(deltas_bt: torch.Tensor, weights_bt: torch.Tensor) -> torch.Tensor:
    out = deltas_bt.clone()
    for t in range(out.shape[1] - 2, -1, -1):
        out[:, t].addcmul_(weights_bt[:, t], out[:, t + 1])
    return out


def cumprod_scan(deltas: torch.Tensor, weights: torch.Tensor) -> torch.Tensor:
    """a_s = sum_{t>=s} (prod_{i=s}^{t-1} w_i) delta_t, with no loop: O(T^2 B) work."""
    T = deltas.shape[0]
    steps = torch.arange(T)
    shifted = torch.cat([torch.ones_like(weights[:1]), weights[:-1]])  # shifted[t] = w_{t-1}
    factors = torch.where((steps[None, :] > steps[:, None])[:, :, None], shifted[None], torch.ones(()))
    products = torch.cumprod(factors, dim=1) * (steps[None, :] >= steps[:, None])[:, :, None]
    return torch.einsum("stb,tb->sb", products, deltas)


def per_call_us(fns: dict, repeats: int, min_time_s: float = 0.05) -> dict:
    """Median microseconds per call of each function; the functions take turns within every repeat, so
    load from other processes on a shared machine hits them alike."""
    calls = {}
    for name, fn in fns.items():
        fn()
        calls[name] = 1
        while True:  # calls per repeat so that one repeat lasts >= min_time_s
            begin = time.perf_counter()
            for _ in range(calls[name]):
                fn()
            if time.perf_counter() - begin >= min_time_s:
                break
            calls[name] *= 2
    samples = {name: [] for name in fns}
    for _ in range(repeats):
        for name, fn in fns.items():
            begin = time.perf_counter()
            for _ in range(calls[name]):
                fn()
            samples[name].append((time.perf_counter() - begin) / calls[name] * 1e6)
    return {name: round(statistics.median(s), 1) for name, s in samples.items()}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--T", type=int, default=50)
    parser.add_argument("--batch", type=int, nargs="+", default=[64, 128, 256, 512])
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    torch.set_num_threads(1)
    generator = torch.Generator().manual_seed(0)
    rows = []
    for B in args.batch:
        shape = (args.T, B)
        b_logp, t_logp, rewards, values = (torch.randn(shape, generator=generator) for _ in range(4))
        discounts = 0.99 * (torch.rand(shape, generator=generator) > 0.02).float()
        bootstrap = torch.randn(B, generator=generator)
        deltas, weights = torch.randn(shape, generator=generator), discounts * torch.rand(shape, generator=generator)
        deltas_bt, weights_bt = deltas.t().contiguous(), weights.t().contiguous()
        expected = vt._reverse_discounted_sum_torch(deltas.clone(), weights)
        assert torch.allclose(cumprod_scan(deltas, weights), expected, atol=1e-4)
        assert torch.allclose(torch_loop_batch_major(deltas_bt, weights_bt).t(), expected, atol=1e-5)
        recursion = per_call_us({
            "numpy_loop_time_major": lambda: vt._reverse_discounted_sum_numpy(deltas.clone(), weights),
            "torch_loop_time_major": lambda: vt._reverse_discounted_sum_torch(deltas.clone(), weights),
            "torch_loop_batch_major": lambda: torch_loop_batch_major(deltas_bt, weights_bt),
            "cumprod_scan": lambda: cumprod_scan(deltas, weights),
        }, args.repeats)
        inputs = (b_logp, t_logp, rewards, discounts, values, bootstrap)
        dispatch = vt._reverse_discounted_sum

        def with_torch_loop():
            vt._reverse_discounted_sum = vt._reverse_discounted_sum_torch
            try:
                return vt.vtrace(*inputs)
            finally:
                vt._reverse_discounted_sum = dispatch

        full = per_call_us({"numpy_loop": lambda: vt.vtrace(*inputs), "torch_loop": with_torch_loop}, args.repeats)
        row = {"T": args.T, "B": B, "recursion_us": recursion, "vtrace_us": full}
        rows.append(row)
        print(json.dumps(row), flush=True)
    print("RESULT " + json.dumps({"torch_threads": 1, "dtype": "float32", "rows": rows}))


if __name__ == "__main__":
    main()
