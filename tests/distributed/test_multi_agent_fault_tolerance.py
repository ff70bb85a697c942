"""A crashing remote MultiAgentEnvRunner is replaced, as a single-agent one is: training goes on, the new
runner is a MultiAgentEnvRunner with every module's current weights."""
import pytest
import torch

from relayrl import PPOConfig
from relayrl.env.multi_agent_env import make_multi_agent
from relayrl.testing.faulty_envs import FaultyEnv

# Two FaultyEnvs side by side; the first sub-env (of any runner) to reach its 7th step fails, once (marker file).
MultiAgentFaultyEnv = make_multi_agent(lambda config: FaultyEnv(config))


def by_id(agent_id, episode, **kwargs):
    return f"p{agent_id}"


# ~20 s each after Ray's start (~20 s per module) on a loaded 2-core machine; the dying process is the slow variant.
@pytest.mark.parametrize("failure", ["raise", pytest.param("exit", marks=pytest.mark.slow)])
def test_crashed_multi_agent_runner_is_replaced_and_training_goes_on(tmp_path, failure):
    env_config = {"num_agents": 2, "episode_len": 5, "marker": str(tmp_path / "failed"), "failure": failure,
                  "fail_on_worker": None, "fail_at_step": 7}
    config = (PPOConfig().environment(MultiAgentFaultyEnv, env_config=env_config)
              .env_runners(num_env_runners=2, num_envs_per_env_runner=1, num_cpus_per_env_runner=0.5,
                           sample_timeout_s=10.0)
              .fault_tolerance(delay_between_env_runner_restarts_s=0.0)
              .training(train_batch_size=40, minibatch_size=20, num_epochs=1)
              .multi_agent(policies={"p0", "p1"}, policy_mapping_fn=by_id)
              .debugging(seed=0, logger_config={"type": "none"}))
    algo = config.build_algo()
    try:
        results = [algo.train() for _ in range(3)]
        assert (tmp_path / "failed").exists()  # the failure did happen
        last = results[-1]
        assert last["num_healthy_env_runners"] == 2 and last["num_env_runner_restarts"] == 1
        assert sum(r["num_env_steps_lost"] for r in results) > 0
        kinds = algo.env_runner_group.foreach_env_runner(lambda runner: type(runner).__name__, local_env_runner=False)
        assert all("MultiAgentEnvRunner" in kind for kind in kinds), kinds
        for module_id in ("p0", "p1"):
            learner = algo.learner_group.get_module(module_id).state_dict()
            remote = algo.env_runner_group.foreach_env_runner(
                lambda runner, m=module_id: {k: v.clone() for k, v in runner.module[m].state_dict().items()},
                local_env_runner=False)
            for state in remote:
                assert all(torch.equal(v, learner[k]) for k, v in state.items()), module_id
    finally:
        algo.stop()
