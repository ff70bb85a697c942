"""`ModelPolicy`: what TorchPolicy and EagerTFPolicy share (a Policy around a ModelV2, a dist class and a loss).

Everything here is the same idea in both frameworks: the template's hooks and their defaults, turning
`compute_actions` arguments into an input dict, sampling through `action_sampler_fn` /
`action_distribution_fn` / model + dist class. The subclasses convert tensors and learn.
"""
import contextlib
from typing import Any

from relayrl.policy.policy import Policy, _numbered
from relayrl.policy.rnn_sequencing import add_seq_lens
from relayrl.policy.sample_batch import SampleBatch

LEARNER_STATS_KEY = "learner_stats"


class ModelPolicy(Policy):
    """Acts with `model` + `dist_class`; `loss(model, dist_class, train_batch)` is the template's loss_fn."""

    def __init__(self, observation_space, action_space, config, *, model, loss=None,
                 action_distribution_class=None, action_sampler_fn=None, action_distribution_fn=None,
                 max_seq_len: int = 20, get_batch_divisibility_req=None):
        Policy.__init__(self, observation_space, action_space, config)
        self.model = model
        self.dist_class = action_distribution_class
        self._loss = loss
        self._action_sampler_fn = action_sampler_fn
        self._action_distribution_fn = action_distribution_fn
        self.max_seq_len = max_seq_len
        self.batch_divisibility_req = get_batch_divisibility_req(self) if callable(get_batch_divisibility_req) else 1
        self._state_inputs = model.get_initial_state() if model is not None else []

    # -- hooks the templates replace -----------------------------------------------------------------------
    def extra_action_out(self, input_dict, state_batches, model, action_dist) -> dict[str, Any]:
        return {}

    def extra_compute_grad_fetches(self) -> dict[str, Any]:
        return {LEARNER_STATS_KEY: {}}

    def stats_fn(self, train_batch) -> dict[str, Any]:
        return {}

    def loss(self, model, dist_class, train_batch):
        if self._loss is None:
            raise NotImplementedError(f"{type(self).__name__} has no loss_fn: give build_policy_class(loss_fn=...).")
        return self._loss(self, model, dist_class, train_batch)

    # -- acting ------------------------------------------------------------------------------------------
    def compute_actions(self, obs_batch, state_batches=None, prev_action_batch=None, prev_reward_batch=None,
                        info_batch=None, episodes=None, explore=None, timestep=None, **kwargs):
        input_dict = {SampleBatch.OBS: obs_batch}
        for i, state in enumerate(state_batches or []):
            input_dict[f"state_in_{i}"] = state
        if prev_action_batch is not None:
            input_dict[SampleBatch.PREV_ACTIONS] = prev_action_batch
        if prev_reward_batch is not None:
            input_dict[SampleBatch.PREV_REWARDS] = prev_reward_batch
        return self.compute_actions_from_input_dict(input_dict, explore=explore, timestep=timestep,
                                                    episodes=episodes, **kwargs)

    def compute_actions_from_input_dict(self, input_dict, explore=None, timestep=None, episodes=None, **kwargs):
        explore = self.config.get("explore", True) if explore is None else explore
        fast = self._numpy_forward()
        if fast is not None and not self.config.get("_disable_numpy_forward"):
            actions, extra = fast.compute(input_dict[SampleBatch.OBS], explore)
            self.global_timestep += len(actions)
            return actions, [], extra
        to_numpy = self._to_numpy
        with self._acting():
            tensors = {k: self._to_tensor(v) for k, v in input_dict.items() if k != SampleBatch.INFOS}
            state_batches = [tensors[k] for k in _numbered(tensors, "state_in_")]
            batch_size = int(tensors[SampleBatch.OBS].shape[0])
            seq_lens = self._ones_seq_lens(batch_size) if state_batches else None
            actions, logp, dist_inputs, dist, state_out = self._sample_actions(
                tensors, state_batches, seq_lens, explore, timestep)
            extra = {}
            if dist_inputs is not None:
                extra[SampleBatch.ACTION_DIST_INPUTS] = dist_inputs
            if logp is not None:
                extra[SampleBatch.ACTION_PROB] = self._probability(logp)
                extra[SampleBatch.ACTION_LOGP] = logp
            extra.update(self.extra_action_out(tensors, state_batches, self.model, dist))
        self.global_timestep += batch_size
        return to_numpy(actions), [to_numpy(s) for s in state_out], {k: to_numpy(v) for k, v in extra.items()}

    def _numpy_forward(self):
        """The numpy fast path (numpy_forward.py), planned once per policy; None where it does not apply."""
        if "_fast_forward" not in self.__dict__:
            self._fast_forward = self._plan_numpy_forward()
        return self._fast_forward

    # -- the framework's part of acting (TorchPolicy, EagerTFPolicy) -----------------------------------------
    def _plan_numpy_forward(self):
        return None

    def _acting(self):
        """The context the forward pass runs in (torch: no_grad)."""
        return contextlib.nullcontext()

    def _to_tensor(self, value):
        raise NotImplementedError

    def _to_numpy(self, value):
        raise NotImplementedError

    def _ones_seq_lens(self, batch_size: int):
        raise NotImplementedError

    def _probability(self, logp):
        raise NotImplementedError

    def _sample_actions(self, input_dict, state_batches, seq_lens, explore, timestep):
        """(actions, logp, dist_inputs, dist, state_out) in the framework's tensors."""
        if self._action_sampler_fn is not None:
            out = self._action_sampler_fn(self, self.model, input_dict, state_batches, explore=explore,
                                          timestep=timestep)
            if len(out) == 4:
                actions, logp, dist_inputs, state_out = out
            else:
                (actions, logp, state_out), dist_inputs = out, None
            return actions, logp, dist_inputs, None, list(state_out or [])
        if self._action_distribution_fn is not None:
            dist_inputs, dist_class, state_out = self._call_action_distribution_fn(
                input_dict, state_batches, seq_lens, explore, timestep)
        else:
            dist_class = self.dist_class
            dist_inputs, state_out = self.model(input_dict, state_batches, seq_lens)
        dist = dist_class(dist_inputs, self.model)
        actions = dist.sample() if explore else dist.deterministic_sample()
        return actions, dist.logp(actions), dist_inputs, dist, list(state_out)

    def _call_action_distribution_fn(self, input_dict, state_batches, seq_lens, explore, timestep):
        try:
            return self._action_distribution_fn(self, self.model, input_dict=input_dict, state_batches=state_batches,
                                                seq_lens=seq_lens, explore=explore, timestep=timestep,
                                                is_training=False)
        except TypeError as error:
            if "positional argument" not in str(error) and "keyword argument" not in str(error):
                raise  # the older signature is tried only when the call itself did not fit
            return self._action_distribution_fn(self, model=self.model, obs_batch=input_dict[SampleBatch.OBS],
                                                explore=explore, is_training=False)

    def _as_sequences(self, batch: SampleBatch) -> SampleBatch:
        """For a model that trains on sequences (the use_lstm models): the rows with `seq_lens` and one
        `state_in_*` per sequence (rnn_sequencing.add_seq_lens); other batches as they are."""
        if not getattr(self.model, "trains_on_sequences", False) or SampleBatch.SEQ_LENS in batch:
            return batch
        return add_seq_lens(batch, self.max_seq_len)

    def _learn_on_batch_result(self, fetches: dict, result: dict) -> dict[str, Any]:
        """learn_on_batch's return: the grad fetches, what on_learn_on_batch put in `result`, the counters."""
        fetches.update(result)
        fetches.update({"num_grad_updates": self.num_grad_updates, "diff_num_grad_updates_vs_sampler_policy": 0.0})
        return fetches


def as_list(value) -> list:
    if value is None:
        return []
    return list(value) if isinstance(value, (list, tuple)) else [value]


__all__ = ["LEARNER_STATS_KEY", "ModelPolicy", "as_list"]
