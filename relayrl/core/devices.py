"""Which torch device a `num_gpus_per_*` option asks for: cuda:0 for any GPU share, never a silent CPU run.

In the driver cuda:0 is the first GPU torch sees; in a Ray actor Ray sets CUDA_VISIBLE_DEVICES to the GPU
it assigned, so cuda:0 is that one. Fractions (0.5) share a GPU.
"""
import torch


def device_for(option: str, gpus) -> torch.device:
    if not gpus:
        return torch.device("cpu")
    if not torch.cuda.is_available():
        raise ValueError(f"{option}={gpus} asks for a GPU, but torch sees no CUDA device on this machine "
                         f"(torch.cuda.is_available() is False): set {option}=0 to run on the CPU, or run "
                         "where torch has CUDA.")
    return torch.device("cuda", 0)
