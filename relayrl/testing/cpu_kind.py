"""The kind of CPU that decides torch's float rounding, for tests whose reference numbers are exact bits."""
import pathlib

import torch


def this_cpu() -> str:
    """The CPU's vendor and the instruction set torch's kernels use (MKL and ATen pick kernels by both)."""
    vendor = "unknown vendor"
    try:
        for line in pathlib.Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("vendor_id"):
                vendor = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{vendor} {torch.backends.cpu.get_cpu_capability()}"
