"""relayrl's own figures for the speed table, each measured in this process on this machine."""
import copy
import json
import subprocess
import sys
import time

import gymnasium as gym
import numpy as np
import torch

HERE = __file__.rsplit("/", 1)[0]


def raw_limits(seconds: float = 2.0) -> dict:
    """Raw gymnasium CartPole stepping (single env, sync vector env of 8) and a 64x64 MLP forward."""
    env = gym.make("CartPole-v1")
    env.reset(seed=0)
    n, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        for i in range(1000):
            _, _, term, trunc, _ = env.step(i & 1)
            if term or trunc:
                env.reset()
        n += 1000
    single = n / (time.perf_counter() - start)
    venv = gym.make_vec("CartPole-v1", num_envs=8, vectorization_mode="sync")
    venv.reset(seed=0)
    actions = np.zeros(8, dtype=np.int64)
    n, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        for _ in range(200):
            venv.step(actions ^ (np.random.rand(8) < 0.5))
        n += 1600
    vec8 = n / (time.perf_counter() - start)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    net = torch.nn.Sequential(torch.nn.Linear(4, 64), torch.nn.Tanh(), torch.nn.Linear(64, 64), torch.nn.Tanh(),
                              torch.nn.Linear(64, 2))
    x = torch.zeros(8, 4)
    with torch.inference_mode():
        start = time.perf_counter()
        for _ in range(20000):
            net(x)
        fwd = 20000 / (time.perf_counter() - start)
    torch.set_num_threads(threads)
    return {"single_env_sps": single, "vec8_sps": vec8, "mlp_fwd_per_s": fwd}


def sampler_sps(seconds: float = 3.0, custom_piece: bool = False) -> float:
    """EnvRunner env steps/s on CartPole-v1, 8 envs, the default PPO module, explore on."""
    from relayrl import PPOConfig
    from relayrl.env.env_runner import EnvRunner

    config = PPOConfig().environment("CartPole-v1").env_runners(num_envs_per_env_runner=8)
    if custom_piece:
        config.env_runners(env_to_module_connector=lambda env, spaces, device: PassThrough())
    torch.set_num_threads(1)
    runner = EnvRunner(config=config)
    runner.sample(num_timesteps=2000)
    n, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        n += sum(len(e) for e in runner.sample(num_timesteps=4000))
    runner.stop()
    return n / (time.perf_counter() - start)


def _pass_through_class():
    from relayrl import ConnectorV2

    class PassThrough(ConnectorV2):
        """A custom piece that only reads each episode's last observation: the general path's cost."""

        def __call__(self, *, rl_module, batch, episodes, **kwargs):
            for episode in self.single_agent_episode_iterator(episodes):
                episode.get_observations(-1)
            return batch

    return PassThrough


def __getattr__(name):
    if name == "PassThrough":
        return _pass_through_class()
    raise AttributeError(name)


PassThrough = None  # resolved lazily (keeps `import measure` free of relayrl imports)


def startup_s(repeats: int = 3) -> float:
    """Seconds from `import relayrl` to the first train() result with the default PPO config (best of N)."""
    code = (
        "import time; t=time.perf_counter(); import relayrl; "
        "algo = relayrl.PPOConfig().environment('CartPole-v1').build_algo(); algo.train(); "
        "print(time.perf_counter()-t)"
    )
    times = []
    for _ in range(repeats):
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
        times.append(float(out.strip().splitlines()[-1]))
    return min(times)


def solve_cartpole(seed: int = 0) -> dict:
    """PPO CartPole-v1 to mean return 450, timed from interpreter start (a fresh subprocess)."""
    start = time.perf_counter()
    out = subprocess.run([sys.executable, f"{HERE}/solve_cartpole.py", str(seed)], capture_output=True, text=True,
                         check=True).stdout
    wall = time.perf_counter() - start
    result = json.loads(out.split("RESULT ", 1)[1])
    result["wall_s"] = wall
    return result


__all__ = ["raw_limits", "sampler_sps", "startup_s", "solve_cartpole", "copy"]
