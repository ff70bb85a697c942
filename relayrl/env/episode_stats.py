"""Per-episode statistics an EnvRunner logs: return and length over all chunks of an episode."""
from relayrl.metrics.metrics_logger import MetricsLogger


class EpisodeStats:
    """Remembers return/length of episodes cut into chunks, so finished episodes report their totals."""

    def __init__(self, metrics: MetricsLogger, smoothing_window: int):
        self.metrics = metrics
        self.window = smoothing_window
        self._carried = {}  # episode id -> (return, length) of chunks already handed out

    def on_chunk_cut(self, episode) -> None:
        ret, length = self._carried.get(episode.id_, (0.0, 0))
        self._carried[episode.id_] = (ret + float(episode.get_return()), length + len(episode))

    def forget(self, episode) -> None:
        """Drop what is remembered of an episode that will never finish (e.g. discarded by a reset)."""
        self._carried.pop(episode.id_, None)

    def on_episode_done(self, episode) -> None:
        ret, length = self._carried.pop(episode.id_, (0.0, 0))
        ret += float(episode.get_return())
        length += len(episode)
        log, w = self.metrics.log_value, self.window
        log("episode_return_mean", ret, reduce="mean", window=w)
        log("episode_return_min", ret, reduce="min", window=w)
        log("episode_return_max", ret, reduce="max", window=w)
        log("episode_len_mean", length, reduce="mean", window=w)
        log("episode_len_min", length, reduce="min", window=w)
        log("episode_len_max", length, reduce="max", window=w)
        log("episode_duration_sec_mean", episode.get_duration_s(), reduce="mean", window=w)
        log("num_episodes", 1, reduce="sum", clear_on_reduce=True)
        log("num_episodes_lifetime", 1, reduce="sum")
        for name, value in episode.custom_metrics.items():  # the seeds' older style, aggregated like RLlib's
            log(("custom_metrics", f"{name}_mean"), value, reduce="mean", window=w)
            log(("custom_metrics", f"{name}_min"), value, reduce="min", window=w)
            log(("custom_metrics", f"{name}_max"), value, reduce="max", window=w)

    def on_steps(self, n: int) -> None:
        self.metrics.log_value("num_env_steps_sampled", n, reduce="sum", clear_on_reduce=True)
        self.metrics.log_value("num_env_steps_sampled_lifetime", n, reduce="sum")
