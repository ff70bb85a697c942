"""The general recorder: every sub-env's step goes into its episode as it happens (`add_env_step`)."""
from typing import List

from relayrl.episodes.infinite_lookback_buffer import unbatch_items
from relayrl.env.vector_env import in_space_dtype, info_at, infos_per_env, unbatch


class EpisodeRecorder:
    """A recorder: `recorder.record(...)` puts one vector step into the runner's ongoing episodes and
    returns the sub-envs whose episode just ended (their episodes hold everything, final observation
    included). The protocol every recorder follows (the EnvRunner's loop calls nothing else):
    `record(actions, extra_model_outputs, observations, rewards, terminateds, truncateds, infos)`,
    `rows_skipped` (how many of the step's rows were no env step, after `record`),
    `next_episode(env_index, observation, info)` (the episode that follows one that ended: started
    from the auto-reset observation), `drop_pending()` (the envs were rebuilt and the ongoing episodes
    dropped) and `finish()` (the sample() call ends: the ongoing episodes must hold all their steps).
    `record` takes `reset_rows` from NextStepRecorder (next_step_recorder.py): sub-envs whose row is
    an auto-reset, not recorded.

    This one runs once per env per step, so every column is split into per-env items once per step
    (`list()` / `tolist()` in C) instead of being indexed per env.
    """

    rows_skipped = 0  # every row of a same-step autoreset env is a step

    def __init__(self, runner):
        self.runner = runner

    def next_episode(self, env_index: int, observation, info):
        return self.runner._new_episode(observation, info, env_index)

    def record(self, actions, extra_model_outputs, observations, rewards, terminateds, truncateds,
               infos, reset_rows=()) -> List[int]:
        runner = self.runner
        n = runner.num_envs
        keys = list(extra_model_outputs)
        extras = zip(*[unbatch_items(values) for values in extra_model_outputs.values()]) if keys else [()] * n
        observations = unbatch(runner.env.observation_space, observations)
        rewards, terms, truncs = rewards.tolist(), terminateds.tolist(), truncateds.tolist()
        rows = zip(runner._episodes, unbatch_items(observations), unbatch_items(actions), rewards, terms, truncs,
                   infos_per_env(infos, n), extras)
        finished, space = [], runner.env.single_observation_space
        for i, (episode, obs, action, reward, term, trunc, info, extra) in enumerate(rows):
            if reset_rows and i in reset_rows:
                continue
            extra = dict(zip(keys, extra))
            if term or trunc:
                final_obs = in_space_dtype(space, infos["final_obs"][i])  # (the env's own: cast as the others)
                episode.add_env_step(final_obs, action, reward, info_at(infos.get("final_info", {}), i),
                                     terminated=term, truncated=trunc, extra_model_outputs=extra)
                finished.append(i)
            else:
                episode.add_env_step(obs, action, reward, info, extra_model_outputs=extra)
        return finished

    def drop_pending(self) -> None:
        pass  # nothing is kept outside the episodes

    def finish(self, to_numpy: bool = False) -> None:
        pass
