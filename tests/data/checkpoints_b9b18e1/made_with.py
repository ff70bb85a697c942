import json, sys, hashlib
import numpy as np, torch
from relayrl import PPOConfig, DQNConfig
out = sys.argv[1]
def digest(algo):
    h = hashlib.sha256()
    for k, v in sorted(algo.learner_group.get_module("default_policy").state_dict().items()):
        h.update(k.encode()); h.update(v.detach().numpy().tobytes())
    return h.hexdigest()
expect = {}
ppo = (PPOConfig().environment("CartPole-v1").env_runners(num_envs_per_env_runner=2)
       .training(train_batch_size=256, minibatch_size=64, num_epochs=2)
       .debugging(seed=3, logger_config={"type": "none"}))
algo = ppo.build_algo(); algo.train(); algo.save(f"{out}/ppo_cartpole")
r = algo.train(); expect["ppo_cartpole"] = {"weights_sha256_after_one_more_train": digest(algo),
   "num_env_steps_sampled_lifetime": r["num_env_steps_sampled_lifetime"], "training_iteration": r["training_iteration"]}
algo.stop()
dqn = (DQNConfig().environment("CartPole-v1").training(num_steps_sampled_before_learning_starts=100, train_batch_size=32, replay_buffer_config={"capacity": 1000})
       .rl_module(model_config={"fcnet_hiddens": [32]})
       .reporting(min_sample_timesteps_per_iteration=200)
       .debugging(seed=3, logger_config={"type": "none"}))
algo = dqn.build_algo(); algo.train(); algo.save(f"{out}/dqn_cartpole")
r = algo.train(); expect["dqn_cartpole"] = {"weights_sha256_after_one_more_train": digest(algo),
   "num_env_steps_sampled_lifetime": r["num_env_steps_sampled_lifetime"], "training_iteration": r["training_iteration"]}
algo.stop()
json.dump(expect, open(f"{out}/expected.json", "w"), indent=1)
