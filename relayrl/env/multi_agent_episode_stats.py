"""Per-episode statistics of a MultiAgentEnvRunner: the env's figures plus each agent's and module's returns.

RLlib's keys: `episode_return_mean/min/max` sums every agent's rewards, `episode_len_*` counts env
steps, `agent_episode_returns_mean/<agent_id>` and `module_episode_returns_mean/<module_id>` average
the returns of each agent and of the agents each module acted for (summed within an episode),
`num_agent_steps_sampled(_lifetime)/<agent_id>` and `num_module_steps_sampled(_lifetime)/<module_id>`
count the steps the returned episode chunks hold. Chunks of one episode add up, as in EpisodeStats.
"""
from typing import Optional

from relayrl.env.episode_stats import EpisodeStats


class MultiAgentEpisodeStats(EpisodeStats):
    """`_carried[episode id]` also holds the agents' and modules' returns of the chunks handed out (as
    [id, return] pairs, so a checkpoint stores them as plain data)."""

    def __init__(self, metrics, smoothing_window: int):
        super().__init__(metrics, smoothing_window)
        self._done_agents = []  # ({agent: return}, {module: return}) per episode finished in this run

    def on_chunk_cut(self, episode) -> None:
        carried = self._carried.get(episode.id_)
        super().on_chunk_cut(episode)
        agents, modules = self._add_returns(episode, carried)
        self._carried[episode.id_] = self._carried[episode.id_][:2] + (
            [[a, r] for a, r in agents.items()], [[m, r] for m, r in modules.items()])
        self.count_agent_steps(episode)

    def on_episode_done(self, episode, score: Optional[float] = None) -> None:
        carried = self._carried.get(episode.id_)
        super().on_episode_done(episode, score=score)
        self._done_agents.append(self._add_returns(episode, carried))
        self.count_agent_steps(episode)

    @staticmethod
    def _add_returns(episode, carried) -> tuple:
        agents, modules = {}, {}
        if carried is not None and len(carried) == 4:
            agents, modules = {a: r for a, r in carried[2]}, {m: r for m, r in carried[3]}
        for agent_id, agent_episode in episode.agent_episodes.items():
            ret = float(agent_episode.get_return())
            agents[agent_id] = agents.get(agent_id, 0.0) + ret
            module_id = agent_episode.module_id
            modules[module_id] = modules.get(module_id, 0.0) + ret
        return agents, modules

    def count_agent_steps(self, episode) -> None:
        log = self.metrics.log_value
        for agent_id, agent_episode in episode.agent_episodes.items():
            n = len(agent_episode)
            log(("num_agent_steps_sampled", str(agent_id)), n, reduce="sum", clear_on_reduce=True)
            log(("num_agent_steps_sampled_lifetime", str(agent_id)), n, reduce="sum")
            log(("num_module_steps_sampled", agent_episode.module_id), n, reduce="sum", clear_on_reduce=True)
            log(("num_module_steps_sampled_lifetime", agent_episode.module_id), n, reduce="sum")

    def _log_done(self) -> None:
        done_agents, self._done_agents = self._done_agents, []
        super()._log_done()
        log, w = self.metrics.log_value, self.window
        for agents, modules in done_agents:
            for agent_id, ret in agents.items():
                log(("agent_episode_returns_mean", str(agent_id)), ret, reduce="mean", window=w)
            for module_id, ret in modules.items():
                log(("module_episode_returns_mean", module_id), ret, reduce="mean", window=w)
