"""IMPALA's Learner: V-trace targets and the policy-gradient, value and entropy loss.

The train batch keeps each episode chunk's artificial last step (`loss_mask` False, added by
`AddOneTsToEpisodesAndTruncate`): its value is the chunk's bootstrap value for V-trace. Minibatches
(`minibatch_size`, a multiple of `rollout_fragment_length`) hold whole chunks.
"""
from typing import Any, Dict, Iterator, Optional

import torch

from relayrl.connectors.learner.add_one_ts_to_episodes_and_truncate import AddOneTsToEpisodesAndTruncate
from relayrl.core.columns import Columns
from relayrl.core.schedules import Scheduler
from relayrl.learner.learner import Learner, possibly_masked_mean
from relayrl.ops.vtrace import vtrace_on_chunks

WEIGHTS_SEQ_NO = "weights_seq_no"  # the column (and counter) that measures the policy lag


def build_impala_learner_pipeline(config, observation_space, action_space, device=None):
    """The default Learner pipeline with `AddOneTsToEpisodesAndTruncate` first: each chunk gets the artificial
    step that carries its bootstrap value. EnvRunners run it too (without NumpyToTensor), so only compact
    columns cross the object store."""
    pipeline = config.build_learner_connector(observation_space, action_space, device=device)
    if config.add_default_connectors_to_learner_pipeline:
        pipeline.prepend(AddOneTsToEpisodesAndTruncate())
    return pipeline


class IMPALALearner(Learner):
    KEEPS_ROWS_OUTSIDE_LOSS = True  # V-trace reads the bootstrap values on the artificial rows
    # V-trace loops over time steps in numpy and the masks select rows by value: torch.compile would recompile
    # the loss for every batch (measured: 3 iterations took 419 s instead of 12). Only forward_train compiles.
    LOSS_COMPILES = False

    def build(self) -> None:
        super().build()
        if self.config.add_default_connectors_to_learner_pipeline:  # as build_impala_learner_pipeline
            self._learner_connector.prepend(AddOneTsToEpisodesAndTruncate())
        self._set_entropy_coeff(self.config.entropy_coeff, 0)
        self.when_config_changes("entropy_coeff", self._set_entropy_coeff)
        self.weights_seq_no = 0  # updates so far: the version of the weights the EnvRunners get

    # The update count is checkpointed: restored runners carry the algorithm's restored count in their samples,
    # and a Learner counting from 0 again reported a negative policy lag (diff_num_grad_updates_vs_sampler_policy).
    def get_state(self, components=None, *, not_components=None, **kwargs) -> Dict[str, Any]:
        from relayrl.checkpoints.checkpointable import selected

        state = super().get_state(components, not_components=not_components, **kwargs)
        if selected(WEIGHTS_SEQ_NO, components, not_components):
            state[WEIGHTS_SEQ_NO] = self.weights_seq_no
        return state

    def check_state(self, state: Dict[str, Any], where) -> None:
        from relayrl.checkpoints.state_checks import check_int

        if isinstance(state, dict) and WEIGHTS_SEQ_NO in state:
            check_int(state[WEIGHTS_SEQ_NO], where / WEIGHTS_SEQ_NO, low=0)
            state = {k: v for k, v in state.items() if k != WEIGHTS_SEQ_NO}
        super().check_state(state, where)

    def set_state(self, state: Dict[str, Any]) -> None:
        super().set_state(state)
        if WEIGHTS_SEQ_NO in state:  # (checkpoints written before it was stored leave it as it is)
            self.weights_seq_no = int(state[WEIGHTS_SEQ_NO])

    def _set_entropy_coeff(self, entropy_coeff, timestep: int) -> None:
        self.entropy_coeff_scheduler = Scheduler(entropy_coeff)
        self._entropy_coeff = self.entropy_coeff_scheduler.get(timestep)

    def before_gradient_based_update(self, *, timesteps: Dict[str, Any]) -> None:
        super().before_gradient_based_update(timesteps=timesteps)
        self._entropy_coeff = self.entropy_coeff_scheduler.get(timesteps.get("num_env_steps_sampled_lifetime", 0))

    def after_gradient_based_update(self, *, timesteps: Dict[str, Any]) -> None:
        super().after_gradient_based_update(timesteps=timesteps)
        self.weights_seq_no += 1

    def compute_loss_for_module(self, *, module_id, config, batch, fwd_out):
        module = self.module[module_id]
        mask = batch[Columns.LOSS_MASK].bool()
        masked_mean = possibly_masked_mean(batch)  # the loss's rows only (artificial rows may hold anything)

        dist = module.get_train_action_dist_cls().from_logits(fwd_out[Columns.ACTION_DIST_INPUTS])
        target_logp = dist.logp(batch[Columns.ACTIONS])
        values = module.compute_values(batch, embeddings=fwd_out.get(Columns.EMBEDDINGS))
        vs, pg_advantages = vtrace_on_chunks(
            batch[Columns.ACTION_LOGP], target_logp, batch[Columns.REWARDS], values, batch[Columns.TERMINATEDS],
            mask, gamma=config.gamma, clip_rho_threshold=config.vtrace_clip_rho_threshold,
            clip_pg_rho_threshold=config.vtrace_clip_pg_rho_threshold)

        pi_loss = masked_mean(-target_logp * pg_advantages)
        vf_loss = masked_mean(0.5 * torch.pow(values - vs, 2.0))
        entropy = masked_mean(dist.entropy())
        total_loss = pi_loss + config.vf_loss_coeff * vf_loss - self._entropy_coeff * entropy

        stats = {"pi_loss": pi_loss, "vf_loss": vf_loss, "entropy": entropy, "total_loss": total_loss,
                 "curr_entropy_coeff": self._entropy_coeff}
        if WEIGHTS_SEQ_NO in batch:  # how many updates behind the learner the samples' policy was
            stats["diff_num_grad_updates_vs_sampler_policy"] = masked_mean(
                self.weights_seq_no - batch[WEIGHTS_SEQ_NO].to(values.dtype))
        self.log_stats(module_id, stats)
        return total_loss

    def iterate_minibatches(self, batch: Dict[str, Dict[str, Any]], *, num_epochs: int,
                            minibatch_size: Optional[int], shuffle: bool) -> Iterator[Dict[str, Dict[str, Any]]]:
        """Whole batches, or minibatches of whole chunks (cut after the first artificial row past each
        multiple of minibatch_size); batches stay in order (V-trace needs no shuffling)."""
        for _ in range(num_epochs):
            if not minibatch_size:
                yield batch
                continue
            cuts = {mid: _chunk_cuts(module_batch[Columns.LOSS_MASK], minibatch_size)
                    for mid, module_batch in batch.items()}
            for i in range(max(len(c) for c in cuts.values()) - 1):
                yield {mid: _rows(module_batch, *cuts[mid][i:i + 2]) for mid, module_batch in batch.items()
                       if i + 1 < len(cuts[mid])}


def _chunk_cuts(loss_mask: torch.Tensor, size: int) -> list:
    if loss_mask.dim() == 2:  # recurrent (sequences, max_seq_len): a chunk ends in a sequence whose last step
        # is padding or its artificial step; cut between sequences there, `size` counting steps
        ends = (torch.nonzero(~loss_mask[:, -1].bool()).reshape(-1) + 1).tolist()
        size = max(1, size // loss_mask.shape[1])
    else:
        ends = (torch.nonzero(~loss_mask.bool()).reshape(-1) + 1).tolist()  # row after each artificial step
    cuts, next_cut = [0], size
    for end in ends:
        if end >= next_cut or end == ends[-1]:
            cuts.append(end)
            next_cut = end + size
    return cuts


def _rows(module_batch: Dict[str, Any], start: int, stop: int) -> Dict[str, Any]:
    def cut(v):  # (a recurrent module's state_in is a dict of tensors)
        if isinstance(v, dict):
            return {k: cut(x) for k, x in v.items()}
        return v[start:stop] if isinstance(v, torch.Tensor) else v

    return {k: cut(v) for k, v in module_batch.items()}


IMPALATorchLearner = IMPALALearner  # RLlib's torch class name (relayrl's Learners are torch)

__all__ = ["IMPALATorchLearner", "IMPALALearner", "WEIGHTS_SEQ_NO", "build_impala_learner_pipeline"]
