"""The default 84x84 CNN encoder against the same network as plain layers, on the CPU (one torch thread).

    .venv/bin/python benchmarks/cnn_encoder_speed.py [--rows 8 256 1032] [--repeats 5]

"plain": what the encoder computed before (and what most code writes): a contiguous NCHW float copy of the
uint8 frames divided by 255, TensorFlow's "same" padding as a separate zero pad, nn.Conv2d everywhere.
"relayrl": `relayrl.modules.encoders.cnn` (channels_last float scaled in place, padding inside the
convolutions, the last whole-map convolution as one matmul). Both use the same weights; prints ms per
forward (no grad) and per forward + backward for each batch size, and one `RESULT {json}` line.
"""
import argparse
import json
import time

import torch
import torch.nn.functional as F

from relayrl.modules.encoders import cnn, default_conv_filters

SHAPE = (84, 84, 4)


def plain_forward(layers, filters, images):
    x = images.permute(0, 3, 1, 2).contiguous().float() / 255.0
    for conv, spec in zip([m for m in layers if isinstance(m, torch.nn.Conv2d)], filters):
        if (spec[3] if len(spec) > 3 else "same") == "same":
            (kh, kw), (sh, sw), (h, w) = conv.kernel_size, conv.stride, x.shape[-2:]
            pad_h, pad_w = max((-(-h // sh) - 1) * sh + kh - h, 0), max((-(-w // sw) - 1) * sw + kw - w, 0)
            x = F.pad(x, (pad_w // 2, pad_w - pad_w // 2, pad_h // 2, pad_h - pad_h // 2))
        x = torch.relu(F.conv2d(x, conv.weight, conv.bias, conv.stride))
    return x.flatten(1)


def _ms(fn, repeats: int) -> float:
    fn()
    start = time.perf_counter()
    for _ in range(repeats):
        fn()
    return (time.perf_counter() - start) / repeats * 1e3


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, nargs="+", default=[8, 256, 1032])
    parser.add_argument("--repeats", type=int, default=5, help="calls per timing (at least 1000 / rows)")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    filters = default_conv_filters(SHAPE, "bench")
    layers, _ = cnn(SHAPE, filters, "relu")
    sides = {"plain": lambda x: plain_forward(layers, filters, x), "relayrl": layers}
    out = {}
    for rows in args.rows:
        images = torch.randint(0, 256, (rows, *SHAPE), dtype=torch.uint8)
        repeats = max(args.repeats, 1000 // rows)  # small batches: enough calls for a stable figure
        for name, forward in sides.items():
            with torch.no_grad():
                fwd = _ms(lambda: forward(images), repeats)
            both = _ms(lambda: forward(images).sum().backward(), repeats)
            out[f"{name}_{rows}"] = {"forward_ms": round(fwd, 2), "forward_backward_ms": round(both, 2)}
            print(f"{rows:5d} rows  {name:8s} forward {fwd:8.2f} ms   forward+backward {both:8.2f} ms", flush=True)
    print("RESULT " + json.dumps(out))


if __name__ == "__main__":
    main()
