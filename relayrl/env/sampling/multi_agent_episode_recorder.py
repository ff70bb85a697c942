"""Multi-agent recorder: each env's step goes into its MultiAgentEpisode (`add_env_step` with agent dicts)."""
from typing import List, Tuple

from relayrl.core.columns import Columns

_NOT_EXTRA = (Columns.ACTIONS, Columns.ACTIONS_FOR_ENV)


class MultiAgentEpisodeRecorder:
    """`record(to_env, observations, rewards, terminateds, truncateds, infos, resets)` -> (the envs whose
    episode ended, the number of agents that acted); `drop_pending()` and `finish()` as EpisodeRecorder's.
    The module's other outputs (`action_logp`, ...) become each acting agent's extra model outputs."""

    def __init__(self, runner):
        self.runner = runner

    def record(self, to_env, observations, rewards, terminateds, truncateds, infos, resets) -> Tuple[List[int], int]:
        actions = to_env[Columns.ACTIONS]
        extra_columns = [(column, values) for column, values in to_env.items() if column not in _NOT_EXTRA]
        finished, acted = [], 0
        for i, episode in enumerate(self.runner._episodes):
            env_actions = actions[i]
            acted += len(env_actions)
            # an agent has the columns its module gave (a stateless module beside an LSTM: no state_out)
            extras = {aid: {column: values[i][aid] for column, values in extra_columns if aid in values[i]}
                      for aid in env_actions} if extra_columns else None
            episode.add_env_step(observations[i], env_actions, rewards[i], infos[i], terminateds=terminateds[i],
                                 truncateds=truncateds[i], extra_model_outputs=extras)
            if episode.is_done:
                finished.append(i)
        return finished, acted

    def drop_pending(self) -> None:
        pass

    def finish(self) -> None:
        pass
