"""A fast path for `PolicyRunner._step`: one sub-env, a stateless policy acting through its numpy forward pass.

The general step builds input dicts, state and prev-action batches, a row dict per sub-env and loops over
callbacks; with one sub-env and a policy whose `compute_actions` is ModelPolicy's numpy fast path
(numpy_forward.py), most of that is per-step bookkeeping around two calls (the forward pass and the env's
step). This step calls those two directly and appends the row's values to the trajectory's columns in the
general step's column order. It gives the same rows, episodes, counters and policy timestep (the tests
compare sampled batches and weights with the general step).

It applies when (checked per `sample()` call, and the numpy switch per step):
- the runner has one sub-env stepped by OneEnvSyncVectorEnv (one_env_vector.py) and a Discrete action space;
- the policy keeps ModelPolicy's `compute_actions` / `compute_actions_from_input_dict`, has no RNN state and
  its numpy forward pass applies (`_disable_numpy_forward` not set; a fast path with `extra_columns`, PPO's
  `vf_preds`, adds them last, as the general step orders them);
- no callbacks object defines `on_episode_step`;
- rewards are not clipped and failed sub-envs are not restarted (the general step asks the EnvStepper);
- an observation filter (observation_filters.py) only where observations are not preprocessed: this step
  filters the next observation, then an episode's final one, as the general step does.
"""
import gymnasium as gym
import numpy as np

from relayrl.env.vector_env import infos_per_env
from relayrl.policy.model_policy import ModelPolicy
from relayrl.policy.rollout.episode import SINGLE_AGENT_ID
from relayrl.policy.rollout.one_env_vector import OneEnvSyncVectorEnv
from relayrl.policy.sample_batch import SampleBatch

# the general step's row order: its own columns, then the forward pass's extra outputs in their dict order
_FORWARD_OUTPUTS = (SampleBatch.ACTION_DIST_INPUTS, SampleBatch.ACTION_PROB, SampleBatch.ACTION_LOGP)
_ROW = (SampleBatch.OBS, SampleBatch.ACTIONS, SampleBatch.REWARDS, SampleBatch.PREV_ACTIONS,
        SampleBatch.PREV_REWARDS, SampleBatch.NEXT_OBS, SampleBatch.TERMINATEDS, SampleBatch.TRUNCATEDS,
        SampleBatch.INFOS) + _FORWARD_OUTPUTS
_ROWS_WITH = {}  # a fast path's extra columns -> _ROW plus them


class OneEnvNumpyStep:
    @staticmethod
    def applies(runner) -> bool:
        policy = runner.policy
        kind = type(policy)
        return (runner.num_envs == 1 and type(runner.env) is OneEnvSyncVectorEnv
                and isinstance(runner.env.single_action_space, gym.spaces.Discrete)
                and not runner.callbacks.episode_step and isinstance(policy, ModelPolicy)
                and (not runner.filters or runner.preprocessors[runner.policy_id] is None)
                and not runner._stepper.reward_clipping.active
                and not runner.config.restart_failed_sub_environments
                and kind.compute_actions is ModelPolicy.compute_actions
                and kind.compute_actions_from_input_dict is ModelPolicy.compute_actions_from_input_dict
                and not policy._state_inputs and not runner._episodes[0].user_state
                and policy._numpy_forward() is not None and not policy.config.get("_disable_numpy_forward"))

    @staticmethod
    def step(runner, explore: bool) -> int:
        """One env step, as PolicyRunner._step does it for n == 1 (see the module docstring); returns 1."""
        policy = runner.policy
        if policy.config.get("_disable_numpy_forward"):  # switched off mid-fragment (by a callback)
            return runner._step(explore)
        episode, obs = runner._episodes[0], runner._obs
        fast = policy._fast_forward
        fast._refresh()
        flat = np.asarray(obs, dtype=np.float32).reshape(-1)  # one row: flat
        action, logits, probability, logp = fast.sample_row(flat, explore)
        policy.global_timestep += 1
        action = np.int64(action)  # the general step's actions[0]
        next_obs, reward, terminated, truncated, infos, final_obs = runner.env.step_one(action)
        obs_filter = runner.filters.get(runner.policy_id)
        if obs_filter is not None:  # the general step's order: the next (reset) observation, then the final one
            next_obs = obs_filter(next_obs)
            if final_obs is not None:
                final_obs = obs_filter(np.asarray(final_obs)[None])[0]
        info = infos_per_env(infos, 1)[0] if infos else {}  # {}: what infos_per_env gives for no infos
        row = (obs[0], action, reward, episode.prev_action, episode.prev_reward,
               next_obs[0] if final_obs is None else final_obs, terminated, truncated, info,
               logits, np.float32(probability), np.float32(logp))
        columns = _ROW
        if fast.extra_columns:  # PPO's vf_preds (numpy_value_forward.py): last, as in the general step
            columns = _ROWS_WITH.setdefault(fast.extra_columns, _ROW + fast.extra_columns)  # one tuple: cached lists
            row = row + fast.extra_row(flat)
        for column, value in zip(episode.trajectory.column_lists(columns), row):
            column.append(value)
        episode.length += 1
        episode.add_step(SINGLE_AGENT_ID, runner.policy_id, reward, info)
        if terminated or truncated:
            runner._finish(0)
        else:
            episode.prev_action, episode.prev_reward = action, reward
        runner._obs, runner._infos = next_obs, [info]
        runner.global_vars["timestep"] += 1
        return 1


__all__ = ["OneEnvNumpyStep"]
