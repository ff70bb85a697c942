"""Where a Learner trains: `num_gpus_per_learner > 0` puts it on `cuda:0`, never a silent CPU run.

In the driver (num_learners=0) cuda:0 is the first GPU torch sees; in a Learner actor Ray sets
CUDA_VISIBLE_DEVICES to the GPU it assigned, so cuda:0 is that one. Fractions (0.5) share a GPU.
"""
import torch


def learner_device(config) -> torch.device:
    gpus = getattr(config, "num_gpus_per_learner", 0) or 0
    if not gpus:
        return torch.device("cpu")
    if not torch.cuda.is_available():
        raise ValueError(f"num_gpus_per_learner={gpus} asks for a GPU, but torch sees no CUDA device on this machine "
                         "(torch.cuda.is_available() is False): set num_gpus_per_learner=0 to train on the CPU, or run "
                         "where torch has CUDA.")
    return torch.device("cuda", 0)
