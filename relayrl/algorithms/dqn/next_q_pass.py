"""How forward_train gets double Q's online Q(new_obs): in the same pass as Q(obs), or in its own no-grad pass.

Q(new_obs) only picks the bootstrap action (argmax, under no_grad), so its rows get a zero gradient.
One pass over torch.cat([obs, new_obs]) halves the kernel launches, which is what counts on a GPU; but
backward then runs every layer over twice the rows. On the CPU the matmuls dominate: a separate no-grad
pass lets backward skip the new_obs rows (DQN CartPole defaults, [256] net, batch 64: forward + backward
~2.27 ms -> ~1.87 ms per update, 1 thread). Both give the same Q-values and gradients (up to float
summation order in the weight gradients' matmul; bit-identical weights after 40 updates on the CI machine),
as long as the forward pass is deterministic: DQN's default module has no dropout or noisy layers (RLlib's
`noisy` is refused by DQNConfig), so two passes see the same network as one. Not measured on a GPU yet: the
joint pass stays there because launches, not rows, set the cost of a small net's update.
"""
import torch


def separate_next_q_pass(obs: torch.Tensor) -> bool:
    """True: run Q(new_obs) in its own no-grad pass (CPU tensors); False: one pass over obs and new_obs."""
    return obs.device.type == "cpu"
