"""RLlib 1.x's names, from before `Trainer` became `Algorithm`: `Trainer` and `<Algo>Trainer` (e.g. seed 003's
`ImpalaTrainer`) are today's classes under their old names, at their old paths (`ray.rllib.agents.trainer`,
`ray.rllib.agents.impala`, ...), so old code and `tune.run(ImpalaTrainer, config={...})` keep working."""
from relayrl.algorithms.algorithm import Algorithm as Trainer
from relayrl.algorithms.appo import APPO as APPOTrainer
from relayrl.algorithms.dqn import DQN as DQNTrainer
from relayrl.algorithms.impala import IMPALA as ImpalaTrainer
from relayrl.algorithms.ppo import PPO as PPOTrainer
from relayrl.algorithms.sac import SAC as SACTrainer

__all__ = ["APPOTrainer", "DQNTrainer", "ImpalaTrainer", "PPOTrainer", "SACTrainer", "Trainer"]
