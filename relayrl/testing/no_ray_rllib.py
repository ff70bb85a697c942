"""An import guard for porting tests: RLlib users' code runs with `ray.rllib` replaced by `relayrl`, and
`ray.rllib` (installed with ray) must then be unimportable, so that a pass shows the code ran on relayrl alone.

In the test process: `with no_ray_rllib(): ...`. In a child process (a script, and Ray's workers it starts):
`env_without_ray_rllib(folder, pythonpath)` puts a `sitecustomize.py` holding this file first on PYTHONPATH.
This file imports only `contextlib`, `os` and `sys`, since every such process runs it at start-up."""
import contextlib
import os
import sys

MESSAGE = "ported code must run without ray.rllib"


def _is_ray_rllib(name: str) -> bool:
    return name == "ray.rllib" or name.startswith("ray.rllib.")


class NoRayRLlib:
    """A meta path finder that refuses `ray.rllib` and its submodules."""

    def find_spec(self, name, path=None, target=None):
        if _is_ray_rllib(name):
            raise ImportError(f"{name}: {MESSAGE}")
        return None


@contextlib.contextmanager
def no_ray_rllib():
    """Refuse `ray.rllib` imports inside the block; fails at once if it was imported before (a cached module
    would slip past the guard)."""
    loaded = sorted(name for name in sys.modules if _is_ray_rllib(name))
    if loaded:
        raise AssertionError(f"ray.rllib is already imported in this process ({loaded[:3]}): the guard cannot "
                             "stop cached modules; find the test that imported it")
    guard = NoRayRLlib()
    sys.meta_path.insert(0, guard)
    try:
        yield
    finally:
        sys.meta_path.remove(guard)


def env_without_ray_rllib(folder, pythonpath: str) -> dict:
    """os.environ for a child process that refuses `ray.rllib` (the guard as `sitecustomize` in `folder`, first on
    PYTHONPATH, then `pythonpath`); RAY_ADDRESS=local so that a plain ray.init() starts its own instance."""
    os.makedirs(folder, exist_ok=True)
    with open(__file__) as f:
        source = f.read()
    with open(os.path.join(folder, "sitecustomize.py"), "w") as f:
        f.write(source + "\n\nsys.meta_path.insert(0, NoRayRLlib())\n")
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(folder), pythonpath]), "RAY_ADDRESS": "local"}
