"""`ModelV2ToRLModule` (RLlib's example class): an old-stack ModelV2 (relayrl/policy/models/) inside an RLModule, to
move a model from the old API stack to the new one, trained or not, without rewriting it.

The ModelV2 comes from (model_config keys):
- `policy_checkpoint_dir`: a Policy checkpoint (`policy.export_checkpoint(dir)`, or an old-stack algorithm
  checkpoint's `policies/<policy_id>` folder), with its trained weights;
- `algo_checkpoint_dir` (+ `policy_id`, default "default_policy"): that algorithm checkpoint's policy;
- `old_api_stack_algo_config` (+ `policy_id`): an old-stack AlgorithmConfig, whose Policy class builds a new one
  from the config's old model dict (`model={...}`).

The module's action logits are the ModelV2's outputs and its values the ModelV2's `value_function()`; a recurrent
ModelV2 (`use_lstm`) makes it stateful: its state is the ModelV2's (`{0: h, 1: c}`), and the ModelV2 gets the
batch's sequences as old-stack models take them (flat rows plus `seq_lens`).
"""
import pathlib
from typing import Any, Dict, Optional

import torch

from relayrl.core.columns import DEFAULT_POLICY_ID, Columns
from relayrl.core.policy_spec import PolicySpec
from relayrl.modules.rl_module import TorchRLModule, ValueFunctionAPI


class ModelV2ToRLModule(TorchRLModule, ValueFunctionAPI):
    def setup(self):
        self._model_v2 = _policy_from(self.model_config, self.observation_space, self.action_space).model
        self._recurrent = bool(self._model_v2.get_initial_state())

    def get_initial_state(self) -> Dict[int, Any]:
        return {i: s.detach().cpu().numpy() for i, s in enumerate(self._model_v2.get_initial_state())}

    def _forward(self, batch, **kwargs):
        logits, state_out = self._model_pass(batch)
        out = {Columns.ACTION_DIST_INPUTS: logits}
        if self._recurrent:
            out[Columns.STATE_OUT] = dict(enumerate(state_out))
        return out

    def _forward_train(self, batch, **kwargs):
        out = self._forward(batch)
        # The ModelV2's values come from the forward pass just made; handed on as the "embeddings" compute_values
        # takes, they spare the loss a second pass.
        out[Columns.EMBEDDINGS] = self._model_v2.value_function().reshape(out[Columns.ACTION_DIST_INPUTS].shape[:-1])
        return out

    def compute_values(self, batch: Dict[str, Any], embeddings: Optional[Any] = None):
        if embeddings is not None:  # this batch's values, from _forward_train
            return embeddings
        logits, _ = self._model_pass(batch)  # value_function() reads the features of the last forward pass
        return self._model_v2.value_function().reshape(logits.shape[:-1])

    def _model_pass(self, batch):
        """(logits shaped like the batch's rows, state_out list): the ModelV2 on flat rows, as the old stack ran it."""
        obs = batch[Columns.OBS]
        if not self._recurrent:
            logits, _ = self._model_v2({"obs": obs}, [], None)
            return logits, []
        state_in = batch[Columns.STATE_IN]
        state = [state_in[i] for i in sorted(state_in)]
        rows, steps = obs.shape[:2]  # (B, T, ...): B sequences of T steps
        seq_lens = batch.get(Columns.SEQ_LENS)
        if seq_lens is None:  # acting: every sequence is one step long
            seq_lens = torch.full((rows,), steps, dtype=torch.int64)
        logits, state_out = self._model_v2({"obs": obs.reshape(rows * steps, *obs.shape[2:])}, state, seq_lens)
        return logits.reshape(rows, steps, -1), state_out


def _policy_from(model_config: Dict[str, Any], observation_space, action_space):
    from relayrl.policy.policy import Policy

    policy_id = model_config.get("policy_id", DEFAULT_POLICY_ID)
    checkpoint = model_config.get("policy_checkpoint_dir")
    if model_config.get("algo_checkpoint_dir"):
        checkpoint = pathlib.Path(model_config["algo_checkpoint_dir"]) / "policies" / policy_id
    if checkpoint is not None:
        if not pathlib.Path(checkpoint).is_dir():
            raise ValueError(f"ModelV2ToRLModule: {checkpoint} is not a Policy checkpoint folder; give an old-stack "
                             "algorithm checkpoint's policies/<policy_id> folder as model_config['policy_checkpoint_dir'] "
                             "(or its root as 'algo_checkpoint_dir').")
        return Policy.from_checkpoint(str(checkpoint))
    config = model_config.get("old_api_stack_algo_config")
    if config is None:
        raise ValueError("ModelV2ToRLModule needs model_config['policy_checkpoint_dir'], ['algo_checkpoint_dir'] or "
                         "['old_api_stack_algo_config'] (an AlgorithmConfig with api_stack(False, False)).")
    from relayrl.policy.rollout.policy_map import policy_config

    policy_class = config.algo_class.get_default_policy_class(config)
    if policy_class is None:
        raise ValueError(f"ModelV2ToRLModule: {type(config).__name__}'s algorithm has no old-stack Policy class for "
                         "this config; call config.api_stack(enable_rl_module_and_learner=False, "
                         "enable_env_runner_and_connector_v2=False) on it.")
    return policy_class(observation_space, action_space, policy_config(config, PolicySpec()))
