"""Off-policy estimates of a policy's episode return from logged episodes (`config.evaluation(
offline_evaluation_type="is" | "pdis")`, RLlib 2.60's offline evaluation types; docs/offline.md#offline-evaluation).

For each complete episode of the evaluation data, with ratio_t = pi(a_t|s_t) / mu(a_t|s_t) (pi: the module's
action distribution, the stochastic one it trains; mu: the behaviour policy's `action_logp` column, which relayrl's
and RLlib's recorders write):
- "is" (importance sampling): (prod_t ratio_t) * sum_t r_t;
- "pdis" (per-decision importance sampling): sum_t (prod_{k<=t} ratio_k) * r_t: a reward is weighted only by the
  decisions before it, so the estimate varies less.
Returns are undiscounted, as an env evaluation reports them. Ratios are multiplied in log space. RLlib 2.60 uses the
logp of an action sampled from pi instead of the logged one, and per-step ratios without the product for "pdis";
relayrl computes the textbook estimators, so its numbers can differ from RLlib's.

Episodes are read whole and in file order (no shuffling): episode rows, or transition rows grouped by their
`eps_id` (consecutive rows of one episode, as recorded), each ending at a terminated or truncated row; an episode
that continues past one read is completed by the next.
"""
from typing import Any, Dict, List, Optional, Tuple

import numpy as np
import torch

from relayrl.core.columns import Columns
from relayrl.offline.reader import OfflineDataError, RowBatch, RowStream, concatenate

ESTIMATORS = ("is", "pdis")
_SINGLE_AGENT_ID = "default_agent"  # RLlib's DEFAULT_AGENT_ID: the agent of single-agent data
_FIX = ("record the data with relayrl's or RLlib's recorder (config.offline_data(output=...)), which writes it, or "
        "evaluate with offline_evaluation_type='eval_loss'")


def check_estimable(config, module) -> None:
    """Raise ValueError where an estimate cannot be computed for this config and module."""
    kind = config.offline_evaluation_type
    if module.is_stateful():
        raise ValueError(f"offline_evaluation_type={kind!r} evaluates a stateless module; this one is recurrent: use "
                         "offline_evaluation_type='eval_loss'.")
    if config.observation_filter not in (None, "NoFilter"):
        raise ValueError(f"offline_evaluation_type={kind!r} feeds the logged observations to the module as they are; "
                         f"observation_filter={config.observation_filter!r} would change them: use "
                         "offline_evaluation_type='eval_loss', or observation_filter='NoFilter'.")


class EpisodeReturns:
    """Reads whole logged episodes from `reader` (a RowStream) and estimates `module`'s return on each."""

    def __init__(self, config, reader: RowStream, row_handler, module):
        check_estimable(config, module)
        self.kind = config.offline_evaluation_type
        self.episode_rows = bool(config.input_read_episodes)
        self.reader = RowStream(reader.source)  # file order: the rows of an episode stay together
        self.rows = row_handler
        self.module = module
        self._carry: Optional[RowBatch] = None  # the rows of an episode the last read left unfinished

    def estimate(self, num_rows: int) -> Tuple[List[float], List[int]]:
        """Read `num_rows` rows (episodes, or timesteps of transitions); (estimated return, length) per episode
        completed."""
        episodes = self._episodes_from_items(num_rows) if self.episode_rows else self._episodes_from_rows(num_rows)
        if not episodes:
            return [], []
        estimates = self._estimates(episodes)
        return estimates, [len(rewards) for _, _, rewards, _ in episodes]

    # -- reading -----------------------------------------------------------------------------------
    def _episodes_from_items(self, num_rows: int) -> list:
        episodes = []
        for episode in self.rows.episodes(self.reader.next_batch(num_rows)):
            if Columns.ACTION_LOGP not in episode.extra_model_outputs:
                raise OfflineDataError(f"offline evaluation ({self.kind!r}): the logged episodes have no "
                                       f"'{Columns.ACTION_LOGP}' (the behaviour policy's log-probabilities): {_FIX}.")
            episodes.append((np.asarray(episode.get_observations())[:len(episode)], np.asarray(episode.get_actions()),
                             np.asarray(episode.get_rewards(), np.float64),
                             np.asarray(episode.get_extra_model_outputs(Columns.ACTION_LOGP), np.float64)))
        return episodes

    def _episodes_from_rows(self, num_rows: int) -> list:
        rows = self.reader.next_batch(num_rows)
        columns = rows.columns
        if Columns.ACTION_LOGP not in columns:
            raise OfflineDataError(f"offline evaluation ({self.kind!r}): {rows.where(0)}: no column "
                                   f"'{Columns.ACTION_LOGP}' (the behaviour policy's log-probabilities): {_FIX}.")
        self.rows.checked_columns(rows)  # the training path's checks: decompression, spaces, flags
        if self._carry is not None:
            rows, self._carry = concatenate([self._carry, rows]), None
        columns = rows.columns
        done = np.asarray(columns[Columns.TERMINATEDS], bool) | np.asarray(columns[Columns.TRUNCATEDS], bool)
        ends = _episode_ends(columns.get(Columns.EPS_ID), done)
        starts = [0] + [end + 1 for end in ends[:-1]]
        last = ends[-1] + 1 if ends else 0
        if last < len(rows):
            self._carry = rows.take(slice(last, None))
        return [(columns[Columns.OBS][s:e + 1], columns[Columns.ACTIONS][s:e + 1],
                 np.asarray(columns[Columns.REWARDS][s:e + 1], np.float64),
                 np.asarray(columns[Columns.ACTION_LOGP][s:e + 1], np.float64)) for s, e in zip(starts, ends)]

    # -- the estimators ----------------------------------------------------------------------------
    def _estimates(self, episodes: list) -> List[float]:
        """One forward pass over all episodes' observations; the estimate per episode."""
        obs = torch.as_tensor(np.concatenate([e[0] for e in episodes]), dtype=torch.float32)
        actions = torch.as_tensor(np.concatenate([e[1] for e in episodes]))
        with torch.no_grad():
            dist_inputs = self.module.forward_inference({Columns.OBS: obs})[Columns.ACTION_DIST_INPUTS]
            logp = self.module.get_train_action_dist_cls().from_logits(dist_inputs).logp(actions)
        logp = logp.double().numpy()
        estimates, start = [], 0
        for _, _, rewards, behaviour_logp in episodes:
            log_ratios = logp[start:start + len(rewards)] - behaviour_logp
            start += len(rewards)
            if self.kind == "is":
                estimates.append(float(np.exp(log_ratios.sum()) * rewards.sum()))
            else:
                estimates.append(float(np.dot(np.exp(np.cumsum(log_ratios)), rewards)))
        return estimates


def _episode_ends(eps_ids, done: np.ndarray) -> List[int]:
    """Indices of the last row of each complete episode: a done row, or (with eps_id) a row whose successor starts
    another episode; a done row inside an episode's eps_id run also ends it."""
    ends = set(np.flatnonzero(done).tolist())
    if eps_ids is not None:
        eps_ids = np.asarray(eps_ids)
        ends |= set(np.flatnonzero(eps_ids[1:] != eps_ids[:-1]).tolist())
    return sorted(ends)


def return_metrics(returns: List[float], lengths: List[int], module_id: str) -> Dict[str, Any]:
    """RLlib's episode metrics of an offline evaluation, under its keys for them (no episode: none)."""
    if not returns:
        return {}
    mean = float(np.mean(returns))
    return {"episode_return_mean": mean, "episode_return_min": float(np.min(returns)),
            "episode_return_max": float(np.max(returns)), "episode_len_mean": float(np.mean(lengths)),
            "episode_len_min": int(np.min(lengths)), "episode_len_max": int(np.max(lengths)),
            "num_episodes": len(returns), "module_episode_return_mean": {module_id: mean},
            "agent_episode_return_mean": {_SINGLE_AGENT_ID: mean}}


__all__ = ["ESTIMATORS", "EpisodeReturns", "check_estimable", "return_metrics"]
