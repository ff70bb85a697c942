"""A ReLU MLP over many rows on the CPU (CQL's critics rating `3 * num_actions` sampled actions per state), run
forward and backward in row chunks that stay in the CPU's cache: the same values and gradients as `run_layers`
(up to float summation order), ~20% less CPU time and more under memory-bandwidth contention.

Run whole, each layer's activations (7680 rows x 256 units: 7.5 MiB) pass through main memory several times
between the matrix products: bias copies, ReLU, ReLU's backward, the bias gradients. In 512-row chunks they stay
in cache. The first layer's weight gradient is also computed as (x^T g)^T: torch's own g^T x on [rows, units]^T x
[rows, few inputs] takes MKL's slow path (6.2 against 0.5 ms of CPU for 7680 rows of 4 inputs into 256 units).
Measured on one thread, Pendulum's two 256-unit layers: one critic's forward and backward on 7680 rows 62-68 ->
50 ms of CPU (the three big matrix products alone are ~40). In a Learner on several cores, blocks of whole chunks
run on Python threads (relayrl/modules/row_threads.py): CQL on 2 cores, 15.9 -> 25.9 updates/s (docs/offline.md).

`run_layers_chunked` takes this path only where it applies: CPU tensors, 2-D inputs that need no gradient, more
rows than one chunk, eager mode (not inside torch.compile), and Sequentials of plain Linear layers (with biases)
separated by nn.ReLU; anything else goes through `run_layers`.
"""
import torch
from torch import nn

from relayrl.modules.mlp import run_layers
from relayrl.modules.row_threads import row_blocks, row_threads, run_blocks

_CHUNK = 512  # rows: 512 x 256 float32 activations are 0.5 MiB, within a core's L2 cache


class _ChunkedReluMLP(torch.autograd.Function):
    """x -> Linear, ReLU, ..., Linear; its inputs after x are each Linear's weight and bias. Blocks of whole
    chunks run on relayrl/modules/row_threads.py's threads (one block, on this thread, outside a Learner)."""

    @staticmethod
    def forward(ctx, x, *weights_and_biases):
        weights, biases = weights_and_biases[0::2], weights_and_biases[1::2]
        rows, last = x.shape[0], len(weights) - 1
        outputs = [x.new_empty(rows, w.shape[0]) for w in weights]

        def forward_rows(begin, end):
            for start in range(begin, end, _CHUNK):
                stop = min(end, start + _CHUNK)
                h = x[start:stop]
                for i, (weight, bias) in enumerate(zip(weights, biases)):
                    h = torch.addmm(bias, h, weight.t(), out=outputs[i][start:stop])
                    if i < last:
                        h.relu_()

        blocks = row_blocks(rows, _CHUNK, row_threads())
        run_blocks(forward_rows, blocks)
        ctx.save_for_backward(x, *weights, *outputs[:-1])
        ctx.num_layers, ctx.blocks = len(weights), blocks
        return outputs[-1]

    @staticmethod
    def backward(ctx, grad_out):
        n = ctx.num_layers
        saved = ctx.saved_tensors
        inputs, weights = (saved[0], *saved[n + 1:]), saved[1:n + 1]  # inputs[i]: layer i's input (post-ReLU)

        def backward_rows(begin, end):
            """This block's weight (transposed) and bias gradients."""
            grad_weights_t = [w.new_zeros(w.shape[1], w.shape[0]) for w in weights]
            grad_biases = [w.new_zeros(w.shape[0]) for w in weights]
            for start in range(begin, end, _CHUNK):
                stop = min(end, start + _CHUNK)
                grad = grad_out[start:stop]
                for i in reversed(range(n)):
                    layer_input = inputs[i][start:stop]
                    grad_weights_t[i].addmm_(layer_input.t(), grad)
                    grad_biases[i] += grad.sum(0)
                    if i:
                        grad = torch.ops.aten.threshold_backward(grad @ weights[i], layer_input, 0.0)
            return grad_weights_t, grad_biases

        per_block = run_blocks(backward_rows, ctx.blocks)
        grads = [None]
        for i in range(n):  # the blocks' sums, added in block order: the same result on every run
            grad_weight_t, grad_bias = per_block[0][0][i], per_block[0][1][i]
            for block_weights_t, block_biases in per_block[1:]:
                grad_weight_t += block_weights_t[i]
                grad_bias += block_biases[i]
            grads += [grad_weight_t.t().contiguous(), grad_bias]
        return tuple(grads)


def _relu_mlp_linears(sequentials):
    """The Linear layers if the Sequentials are exactly Linear, ReLU, ..., Linear (with biases); else None."""
    layers = [layer for sequential in sequentials for layer in sequential]
    linears, relus = layers[0::2], layers[1::2]
    if (not linears or any(type(layer) is not nn.Linear or layer.bias is None for layer in linears)
            or any(type(layer) is not nn.ReLU for layer in relus) or len(linears) != len(relus) + 1):
        return None
    return linears


def run_layers_chunked(x, *sequentials: nn.Sequential):
    """`run_layers(x, *sequentials)`, chunked on the CPU where the layers and `x` allow (see the module doc)."""
    linears = None
    if (x.device.type == "cpu" and x.dim() == 2 and not x.requires_grad and x.shape[0] > _CHUNK
            and not torch.compiler.is_compiling()):  # (torch.compile fuses the plain layers its own way)
        linears = _relu_mlp_linears(sequentials)
    if linears is None:
        return run_layers(x, *sequentials)
    return _ChunkedReluMLP.apply(x, *[p for linear in linears for p in (linear.weight, linear.bias)])


__all__ = ["run_layers_chunked"]
