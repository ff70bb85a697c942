"""The old stack's policy mixins (RLlib's `policy/torch_mixins.py`): lr and entropy coefficient schedules,
PPO's adaptive KL coefficient, and the value network helpers GAE postprocessing needs. Initialise them in
`before_loss_init`."""
import numpy as np
import torch

from relayrl.policy.sample_batch import SampleBatch


def _config_of(args) -> dict:
    """The config among (config) or (obs_space, action_space, config): the TF and torch spellings."""
    return args[-1] if args else {}


class LearningRateSchedule:
    """`cur_lr` follows `lr_schedule` ([[timestep, lr], ...], linear in between) on global var updates."""

    def __init__(self, lr, lr_schedule=None):
        self.cur_lr = lr
        self._lr_schedule = [tuple(p) for p in lr_schedule] if lr_schedule else None

    def on_global_var_update(self, global_vars):
        super().on_global_var_update(global_vars)
        if self._lr_schedule:
            steps, values = zip(*self._lr_schedule)
            self._set_lr(float(np.interp(global_vars["timestep"], steps, values)))

    def _set_lr(self, lr: float) -> None:
        self.cur_lr = lr
        for optimizer in getattr(self, "_optimizers", []):
            for group in optimizer.param_groups:
                group["lr"] = lr


class EntropyCoeffSchedule:
    """`entropy_coeff` follows `entropy_coeff_schedule` ([[timestep, coeff], ...], linear in between, the last
    value after the last point) on global var updates; without a schedule it stays `entropy_coeff`."""

    def __init__(self, entropy_coeff, entropy_coeff_schedule=None):
        if entropy_coeff_schedule is not None and not isinstance(entropy_coeff_schedule, (list, tuple)):
            raise ValueError("entropy_coeff_schedule must be [[timestep, coeff], ...] (RLlib's older single "
                             f"number form is not supported), got {entropy_coeff_schedule!r}")
        self._entropy_coeff_schedule = [tuple(p) for p in entropy_coeff_schedule or []] or None
        self._set_entropy_coeff(self._entropy_at(0) if self._entropy_coeff_schedule else entropy_coeff)

    def on_global_var_update(self, global_vars):
        super().on_global_var_update(global_vars)
        if self._entropy_coeff_schedule:
            self._set_entropy_coeff(self._entropy_at(global_vars["timestep"]))

    def _entropy_at(self, timestep) -> float:
        steps, values = zip(*self._entropy_coeff_schedule)
        return float(np.interp(timestep, steps, values))

    def _set_entropy_coeff(self, value: float) -> None:
        self.entropy_coeff = float(value)


class KLCoeffMixin:
    """`kl_coeff` grows x1.5 when the sampled KL is above 2x `kl_target`, halves when below half of it."""

    def __init__(self, config):
        self.kl_coeff = config.get("kl_coeff", 0.2)
        self.kl_target = config.get("kl_target", 0.01)

    def update_kl(self, sampled_kl):
        if sampled_kl is None:
            return self.kl_coeff
        if sampled_kl > 2.0 * self.kl_target:
            self.kl_coeff *= 1.5
        elif sampled_kl < 0.5 * self.kl_target:
            self.kl_coeff *= 0.5
        return self.kl_coeff

    def get_state(self):
        state = super().get_state()
        state["current_kl_coeff"] = self.kl_coeff
        return state

    def set_state(self, state):
        self.kl_coeff = state.pop("current_kl_coeff", self.kl_coeff)
        super().set_state(state)


class ValueNetworkMixin:
    """`_value(**input_dict)` for bootstrapping (compute_gae_for_sample_batch) and `vf_preds` as an extra
    action output."""

    def __init__(self, *args):
        config = _config_of(args)
        self._use_critic = config.get("use_gae", True) or config.get("use_critic", True)

    def _value(self, **input_dict):
        if not self._use_critic:
            return 0.0
        with torch.no_grad():
            tensors = {k: torch.as_tensor(np.asarray(v)) for k, v in input_dict.items() if k != SampleBatch.INFOS}
            self.model(tensors)
            return self.model.value_function()[0].item()

    def extra_action_out(self, input_dict, state_batches, model, action_dist):
        extra = super().extra_action_out(input_dict, state_batches, model, action_dist)
        if self._use_critic:
            extra[SampleBatch.VF_PREDS] = model.value_function()
        return extra


__all__ = ["EntropyCoeffSchedule", "KLCoeffMixin", "LearningRateSchedule", "ValueNetworkMixin"]
