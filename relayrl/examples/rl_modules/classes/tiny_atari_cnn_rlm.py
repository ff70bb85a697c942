"""`TinyAtariCNN` (RLlib's example class): a small CNN module for Atari frames of 42x42 (e.g.
`wrap_atari_for_new_api_stack(env, dim=42, framestack=4)`), with a policy and a value output and target copies
(TargetNetworkAPI) so that APPO can use it too.

The conv stack comes from `model_config["conv_filters"]`: `[out_channels, kernel, stride, padding]` per layer,
padding "same" (TensorFlow's: the output size is ceil(input / stride)) or "valid"; by default 16x4/2 and 32x4/2
"same", then 256x11/1 "valid", which leaves 1x1 maps for 42x42 inputs. A last 1x1 convolution gives one map per
action: its 1x1 outputs are the logits. The value head reads the 256 features. uint8 frames (relayrl's Atari
wrapper keeps them uint8) are scaled to [0, 1] first.
"""
import math
from typing import Any, Dict, Optional, Sequence

import torch
from torch import nn

from relayrl.core.columns import Columns
from relayrl.modules.rl_module import TorchRLModule, ValueFunctionAPI
from relayrl.modules.target_network_api import (
    TARGET_NETWORK_ACTION_DIST_INPUTS,
    TargetNetworkAPI,
    make_target_network,
)

DEFAULT_CONV_FILTERS = [[16, 4, 2, "same"], [32, 4, 2, "same"], [256, 11, 1, "valid"]]


def same_padding(size: Sequence[int], kernel: int, stride: int):
    """(ZeroPad2d's (left, right, top, bottom), output size) for "same" padding of a (width, height) input."""
    pads, out = [], []
    for n in size:
        out_n = math.ceil(n / stride)
        total = max((out_n - 1) * stride + kernel - n, 0)
        pads.append((total // 2, total - total // 2))
        out.append(out_n)
    (left, right), (top, bottom) = pads[1], pads[0]
    return (left, right, top, bottom), out


class TinyAtariCNN(TorchRLModule, ValueFunctionAPI, TargetNetworkAPI):
    def setup(self):
        height, width, channels = self.observation_space.shape
        size, layers = [height, width], []
        for spec in self.model_config.get("conv_filters") or DEFAULT_CONV_FILTERS:
            out_channels, kernel, stride = spec[:3]
            padding = spec[3] if len(spec) > 3 else "same"
            if padding == "same":
                pad, size = same_padding(size, kernel, stride)
                layers.append(nn.ZeroPad2d(pad))
            else:
                size = [(n - kernel) // stride + 1 for n in size]
            layers += [_xavier(nn.Conv2d(channels, out_channels, kernel, stride)), nn.ReLU()]
            channels = out_channels
        if size != [1, 1]:
            raise ValueError(f"TinyAtariCNN's conv stack must end in 1x1 maps, got {size} for observations of shape "
                             f"{self.observation_space.shape}; change model_config['conv_filters'] or the frame size.")
        self._base_cnn_stack = nn.Sequential(*layers)
        self._logits = _xavier(nn.Conv2d(channels, self.action_space.n, 1, 1))
        self._values = nn.Linear(channels, 1)
        nn.init.normal_(self._values.weight, std=0.01)
        nn.init.zeros_(self._values.bias)

    def _forward(self, batch, **kwargs):
        _, logits = self._embeddings_and_logits(batch, self._base_cnn_stack, self._logits)
        return {Columns.ACTION_DIST_INPUTS: logits}

    def _forward_train(self, batch, **kwargs):
        embeddings, logits = self._embeddings_and_logits(batch, self._base_cnn_stack, self._logits)
        return {Columns.ACTION_DIST_INPUTS: logits, Columns.EMBEDDINGS: embeddings}

    def compute_values(self, batch: Dict[str, Any], embeddings: Optional[Any] = None):
        if embeddings is None:
            embeddings = self._base_cnn_stack(_channels_first(batch)).flatten(1)
        return self._values(embeddings).squeeze(-1)

    def make_target_networks(self) -> None:
        self._target_base_cnn_stack = make_target_network(self._base_cnn_stack)
        self._target_logits = make_target_network(self._logits)

    def get_target_network_pairs(self):
        return [(self._base_cnn_stack, self._target_base_cnn_stack), (self._logits, self._target_logits)]

    def forward_target(self, batch, **kwargs):
        _, logits = self._embeddings_and_logits(batch, self._target_base_cnn_stack, self._target_logits)
        return {TARGET_NETWORK_ACTION_DIST_INPUTS: logits}

    @staticmethod
    def _embeddings_and_logits(batch, cnn_stack, logits_layer):
        maps = cnn_stack(_channels_first(batch))  # (B, channels, 1, 1)
        return maps.flatten(1), logits_layer(maps).flatten(1)


def _channels_first(batch) -> torch.Tensor:
    """(B, H, W, C) frames -> (B, C, H, W) floats for Conv2d; relayrl's Atari frames are uint8, scaled to [0, 1]."""
    obs = batch[Columns.OBS]
    if obs.dtype == torch.uint8:
        obs = obs.float() / 255.0
    return obs.permute(0, 3, 1, 2)


def _xavier(conv: nn.Conv2d) -> nn.Conv2d:
    nn.init.xavier_uniform_(conv.weight)
    nn.init.zeros_(conv.bias)
    return conv
