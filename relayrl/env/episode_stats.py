"""Per-episode statistics an EnvRunner logs: return and length over all chunks of an episode."""
from typing import Optional

from relayrl.metrics.metrics_logger import MetricsLogger


class EpisodeStats:
    """Remembers return/length of episodes cut into chunks, so finished episodes report their totals.

    Finished episodes' figures are kept and logged together at the end of each sampling run
    (`on_steps`): one `log_values` call per metric instead of nine `log_value` calls per episode.
    """

    def __init__(self, metrics: MetricsLogger, smoothing_window: int):
        self.metrics = metrics
        self.window = smoothing_window
        self._carried = {}  # episode id -> (return, length) of chunks already handed out
        self._done = []  # (return, length, duration, custom metrics) of episodes finished in this run

    def on_chunk_cut(self, episode) -> None:
        ret, length = self._carried.get(episode.id_, (0.0, 0))[:2]
        self._carried[episode.id_] = (ret + float(episode.get_return()), length + len(episode))

    def forget(self, episode) -> None:
        """Drop what is remembered of an episode that will never finish (e.g. discarded by a reset)."""
        self.forget_id(episode.id_)

    def forget_id(self, episode_id: str) -> None:
        self._carried.pop(episode_id, None)

    def on_episode_done(self, episode, score: Optional[float] = None) -> None:
        """`score`: the return to report when it is not the episode's own (clip_rewards: the unclipped one)."""
        ret, length = self._carried.pop(episode.id_, (0.0, 0))[:2]  # (subclasses carry more)
        ret = ret + float(episode.get_return()) if score is None else score
        self._done.append((ret, length + len(episode), episode.get_duration_s(), episode.custom_metrics))

    def on_steps(self, n: int) -> None:
        """The end of a sampling run: its `n` env steps and the episodes that finished in it."""
        self.metrics.log_value("num_env_steps_sampled", n, reduce="sum", clear_on_reduce=True)
        self.metrics.log_value("num_env_steps_sampled_lifetime", n, reduce="sum")
        if self._done:
            self._log_done()

    def _log_done(self) -> None:
        done, self._done = self._done, []
        returns, lengths, durations, custom = zip(*done)
        log, w = self.metrics.log_values, self.window
        log("episode_return_mean", returns, reduce="mean", window=w)
        log("episode_return_min", returns, reduce="min", window=w)
        log("episode_return_max", returns, reduce="max", window=w)
        log("episode_len_mean", lengths, reduce="mean", window=w)
        log("episode_len_min", lengths, reduce="min", window=w)
        log("episode_len_max", lengths, reduce="max", window=w)
        log("episode_duration_sec_mean", durations, reduce="mean", window=w)
        self.metrics.log_value("num_episodes", len(done), reduce="sum", clear_on_reduce=True)
        self.metrics.log_value("num_episodes_lifetime", len(done), reduce="sum")
        log_one = self.metrics.log_value
        for metrics in custom:  # the seeds' older style, aggregated like RLlib's
            for name, value in metrics.items():
                log_one(("custom_metrics", f"{name}_mean"), value, reduce="mean", window=w)
                log_one(("custom_metrics", f"{name}_min"), value, reduce="min", window=w)
                log_one(("custom_metrics", f"{name}_max"), value, reduce="max", window=w)
