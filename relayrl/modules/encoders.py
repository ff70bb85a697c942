"""The default modules' encoders: an MLP for 1-D Box observations, a CNN for images (3-D Box, channels last).

`make_encoder(observation_space, model_config, module_name)` returns (layers, output size); the default
PPO (IMPALA, APPO) and DQN modules build every encoder they need with it, SAC's its CNNs. Images arrive as gymnasium
gives them, (H, W, C), and as the env's dtype (uint8 images stay uint8 in episodes, batches and replay
buffers); the first layer puts channels first and scales uint8 to [0, 1] inside the module.
"""
import math
from typing import List, Sequence, Tuple

import gymnasium as gym
import numpy as np
import torch
from torch import nn

from relayrl.modules.mlp import activation_class, init_linear, mlp, output_dim
from relayrl.modules.space_checks import flat_obs_dim

# RLlib's default filters by image size (rllib/models/utils.py::get_filter_config): [out_channels, kernel, stride
# (, padding)], padding "same" unless given. The 84 and 42 sets end with a "valid" layer that covers the
# remaining 11x11 map, so the encoder gives 256 features (the classic Atari network's output).
DEFAULT_CONV_FILTERS = {
    96: [[16, [8, 8], 4], [32, [4, 4], 2], [256, [11, 11], 2]],
    84: [[16, [8, 8], 4], [32, [4, 4], 2], [256, [11, 11], 1, "valid"]],
    64: [[16, [4, 4], 2], [32, [4, 4], 2], [64, [4, 4], 2], [128, [4, 4], 2]],
    42: [[16, [4, 4], 2], [32, [4, 4], 2], [256, [11, 11], 1, "valid"]],
    10: [[16, [5, 5], 2], [32, [5, 5], 2]],
}


def is_image_space(space) -> bool:
    return isinstance(space, gym.spaces.Box) and len(space.shape) == 3


def default_conv_filters(shape: Sequence[int], module_name: str) -> list:
    """RLlib's default filters for an (H, W, C) image whose H == W is one of 96, 84, 64, 42, 10."""
    height, width = shape[0], shape[1]
    if height == width and height in DEFAULT_CONV_FILTERS:
        return DEFAULT_CONV_FILTERS[height]
    hint = " (Atari frames: use the standard preprocessing, 84x84 grayscale)" if tuple(shape[:2]) == (210, 160) else ""
    raise ValueError(
        f"{module_name} has no default conv_filters for images of shape {tuple(shape)}: defaults exist for "
        f"{sorted(DEFAULT_CONV_FILTERS)} square images{hint}. Fix: resize the images, or set "
        "model_config conv_filters=[[out_channels, kernel, stride(, 'same'|'valid')], ...].")


class ChannelsFirst(nn.Module):
    """(B, H, W, C) -> (B, C, H, W) as float; uint8 scaled to [0, 1] (images travel as uint8).

    The result is a permuted view of the (B, H, W, C) float data, i.e. channels_last memory: the conversion
    is one dense pass, and torch's CPU convolutions run fastest on that layout (a contiguous NCHW copy made
    the default 84x84 encoder ~2x slower on the CPU)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.dtype == torch.uint8:
            x = x.float().div_(255.0)  # a new tensor: scaling it in place touches no caller's data
        else:
            x = x.float()
        return x.permute(0, 3, 1, 2)


class PadBottomRight(nn.Module):
    """The odd pixel of TensorFlow's (and RLlib's) "same" padding, which goes at the bottom and right; the
    convolution after it pads the symmetric part itself (a separate zero-padded copy of the whole map cost as
    much as the convolution on the CPU)."""

    def __init__(self, extra_h: int, extra_w: int):
        super().__init__()
        self.extra_h, self.extra_w = extra_h, extra_w

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return nn.functional.pad(x, (0, self.extra_w, 0, self.extra_h)) if self.extra_h or self.extra_w else x

    def extra_repr(self) -> str:
        return f"extra_h={self.extra_h}, extra_w={self.extra_w}"


class FullMapConv2d(nn.Conv2d):
    """A "valid" convolution whose kernel covers its whole input map (RLlib's last 84x84 and 42x42 layer): a
    matrix product, run as one (torch's convolution was 3.6x slower for it on 256 rows on the CPU, 6x on the
    8 rows of an acting step). Same parameters, names and output shape (B, out, 1, 1) as nn.Conv2d."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if tuple(x.shape[-2:]) != tuple(self.kernel_size) or self.padding != (0, 0):
            return super().forward(x)
        flat = nn.functional.linear(x.reshape(x.shape[0], -1), self.weight.reshape(self.out_channels, -1), self.bias)
        return flat[:, :, None, None]


def _pair(value) -> Tuple[int, int]:
    return (int(value), int(value)) if np.isscalar(value) else (int(value[0]), int(value[1]))


def cnn(shape: Sequence[int], filters: List[list], activation: str) -> Tuple[nn.Sequential, int]:
    """Conv layers for an (H, W, C) image (padding "same" or "valid" per filter), then flatten."""
    act = activation_class(activation)
    layers: List[nn.Module] = [ChannelsFirst()]
    height, width, channels = int(shape[0]), int(shape[1]), int(shape[2])
    for spec in filters:
        out_channels, kernel, stride = int(spec[0]), _pair(spec[1]), _pair(spec[2])
        padding = spec[3] if len(spec) > 3 else "same"
        symmetric, padded = (0, 0), False
        if padding == "same":  # output = ceil(input / stride), as TensorFlow and RLlib pad
            out_h, out_w = math.ceil(height / stride[0]), math.ceil(width / stride[1])
            pad_h = max((out_h - 1) * stride[0] + kernel[0] - height, 0)
            pad_w = max((out_w - 1) * stride[1] + kernel[1] - width, 0)
            if pad_h or pad_w:  # a layer (even a no-op) wherever a pad was, so parameter names stay put
                symmetric, padded = (pad_h // 2, pad_w // 2), True
                layers.append(PadBottomRight(pad_h % 2, pad_w % 2))
        elif padding == "valid":
            out_h, out_w = (height - kernel[0]) // stride[0] + 1, (width - kernel[1]) // stride[1] + 1
        else:
            raise ValueError(f"conv_filters padding must be 'same' or 'valid', got {padding!r}.")
        if out_h < 1 or out_w < 1:
            raise ValueError(f"conv_filters {filters}: the layer {spec} gets a {height}x{width} map and would output "
                             "nothing; use smaller kernels or strides, or 'same' padding.")
        full_map = not padded and kernel == (height, width)
        layers.append((FullMapConv2d if full_map else nn.Conv2d)(channels, out_channels, kernel, stride,
                                                                  padding=symmetric))
        if act is not None:
            layers.append(act())
        height, width, channels = out_h, out_w, out_channels
    layers.append(nn.Flatten())
    return nn.Sequential(*layers), height * width * channels


def make_encoder(observation_space, cfg, module_name: str) -> Tuple[nn.Sequential, int]:
    """(encoder, output size) for the observation space: a CNN for images, else an MLP of fcnet_hiddens."""
    if is_image_space(observation_space):
        filters = cfg.conv_filters or default_conv_filters(observation_space.shape, module_name)
        return cnn(observation_space.shape, filters, cfg.conv_activation)
    obs_dim = flat_obs_dim(observation_space, module_name)
    init = dict(kernel_initializer=cfg.fcnet_kernel_initializer,
                kernel_initializer_kwargs=cfg.fcnet_kernel_initializer_kwargs,
                bias_initializer=cfg.fcnet_bias_initializer, bias_initializer_kwargs=cfg.fcnet_bias_initializer_kwargs)
    return mlp(obs_dim, cfg.fcnet_hiddens, cfg.fcnet_activation, **init), output_dim(cfg.fcnet_hiddens, obs_dim)


__all__ = ["make_encoder", "cnn", "default_conv_filters", "is_image_space", "ChannelsFirst", "PadBottomRight",
           "FullMapConv2d", "DEFAULT_CONV_FILTERS", "init_linear"]
