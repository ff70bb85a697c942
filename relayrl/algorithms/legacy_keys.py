"""Old RLlib config-dict keys that have no option of their own: each says what replaced it.

Renamed options are `Option.aliases` (base_options.py: `num_workers`, `sample_batch_size`,
`min_iter_time_s`, `custom_eval_function`, ...). The keys here need more than a new name: they stand for
another option with a translated value (`model` -> `model_config`), have no effect with the value given
(`monitor=False`), or have no equivalent and are refused with a message saying what to do instead
(`model={"custom_model": ...}`, `opt_type="rmsprop"`). A key is consulted only when no
option of the config class has that name (DQN's `epsilon` is its own option). `builder` names the builder
method where RLlib still takes the old key as a keyword (`training(model=...)`).
"""
from typing import Any, Mapping

from relayrl.algorithms.options import LegacyKey

_RMSPROP = ("relayrl's Learners use Adam (config.training(lr=..., grad_clip=...)); for RMSProp, subclass the "
            "Learner, override configure_optimizers_for_module(module_id, config) to call self.register_optimizer("
            "module_id=module_id, optimizer=torch.optim.RMSprop(params, alpha=decay, momentum=momentum, eps=epsilon), "
            "params=params, lr_or_lr_schedule=config.lr), and pass it as config.learners(learner_class=...) "
            "(docs/porting.md)")

# Old model-dict keys with another name in DefaultModelConfig.
_MODEL_KEY_RENAMES = {"post_fcnet_hiddens": "head_fcnet_hiddens", "post_fcnet_activation": "head_fcnet_activation"}


def _model(value: Any) -> Mapping:
    if not isinstance(value, Mapping):
        raise ValueError(f"`model` must be a dict, got {value!r}")
    model = dict(value)
    if model.get("custom_model") is not None:
        raise ValueError(
            f"model={{'custom_model': {model['custom_model']!r}}} (a ModelCatalog model) has no equivalent: write the "
            "network as an RLModule and pass config.rl_module(rl_module_spec=RLModuleSpec(module_class=MyModule, "
            "model_config={...})) (docs/porting.md)")
    model.pop("custom_model", None)
    model_config = {_MODEL_KEY_RENAMES.get(key, key): v for key, v in model.items() if key != "custom_model_config"}
    model_config.update(model.get("custom_model_config") or {})
    return {"model_config": model_config}


# gym's Monitor (and RecordVideo) recorded episodes 0, 1, 8, 27, ..., 1000 and then every 1000th: relayrl records
# about every N-th episode of the run, so the old keys ask for every 1000th.
_OLD_VIDEO_EVERY = 1000


def _monitor(value: Any) -> Mapping:
    """`monitor=True`: videos (and gym's episode stats) in the log dir -> relayrl's videos in <logdir>/videos."""
    return {"record_video_every_n_episodes": _OLD_VIDEO_EVERY} if value else {}


def _record_env(value: Any) -> Mapping:
    """`record_env=True` (videos in the log dir) or a folder (videos there)."""
    if not value:
        return {}
    videos = {"record_video_every_n_episodes": _OLD_VIDEO_EVERY}
    if isinstance(value, str):
        videos["video_dir"] = value
    elif value is not True:
        raise ValueError(f"record_env must be True, False or a folder, got {value!r}")
    return videos


def _opt_type(value: Any) -> Mapping:
    if value == "adam":
        return {}
    raise ValueError(f"opt_type={value!r}: {_RMSPROP}")


def _always_attach_evaluation_results(value: Any) -> Mapping:
    if value:
        return {}  # what train() does anyway: iterations that do not evaluate carry the last evaluation's results
    raise ValueError("always_attach_evaluation_results=False cannot be had: as in RLlib 2.60, train()'s results "
                     "carry the last evaluation's results in iterations that do not evaluate; to tell a fresh "
                     "evaluation, use the on_evaluate_end callback (docs/evaluation.md). Remove the key.")


def _rmsprop_setting(value: Any) -> Mapping:
    return {}  # meaningful only with opt_type="rmsprop", which is refused; with Adam old RLlib ignored it too


# RLlib's update_from_dict takes the old `multiagent` sub-dict, passing these keys to config.multi_agent().
_MULTIAGENT_OPTIONS = ("policies", "policy_mapping_fn", "policies_to_train", "count_steps_by")
_MULTIAGENT_NO_EFFECT = ("policy_map_capacity", "policy_states_are_swappable")  # the old stack's policy cache


def _multiagent(value: Any) -> Mapping:
    if not isinstance(value, Mapping):
        raise ValueError(f"`multiagent` must be a dict of multi-agent settings, got {value!r}")
    out = {}
    for key, item in value.items():
        if key in _MULTIAGENT_OPTIONS:
            out[key] = item
        elif key == "observation_fn":
            raise ValueError("multiagent={'observation_fn': ...} (the old stack's rewrite of the agents' observations) "
                             "has no equivalent: rewrite them in an env-to-module connector piece "
                             "(config.env_runners(env_to_module_connector=...), docs/multi_agent.md)")
        elif key not in _MULTIAGENT_NO_EFFECT:
            raise ValueError(f"multiagent={{{key!r}: ...}} is not a multi-agent setting; relayrl takes "
                             f"{', '.join(_MULTIAGENT_OPTIONS)} (and {', '.join(_MULTIAGENT_NO_EFFECT)}, which "
                             "have no effect)")
    return out


BASE_LEGACY_KEYS = (
    LegacyKey("model", "its default-model keys are `model_config` (config.rl_module(model_config=...)).", _model,
              builder="training"),
    LegacyKey("monitor", "monitor=True is record_video_every_n_episodes=1000 (mp4s in <logdir>/videos; needs the "
              "video extra); monitor=False has no effect.", _monitor),
    LegacyKey("record_env", "record_env=True is record_video_every_n_episodes=1000 (a folder: also video_dir=it).",
              _record_env),
    LegacyKey("always_attach_evaluation_results", "it is always so now: iterations that do not evaluate carry the "
              "last evaluation's results under result['evaluation'] (RLlib 2.60 refuses the key; relayrl takes "
              "True).", _always_attach_evaluation_results, builder="evaluation"),
    LegacyKey("opt_type", "opt_type='adam' is what relayrl's Learners use anyway; it has no effect.", _opt_type),
    LegacyKey("multiagent", "its policies, policy_mapping_fn, policies_to_train and count_steps_by are set as "
              "config.multi_agent(...) options, as RLlib's update_from_dict does (policy_map_capacity and "
              "policy_states_are_swappable have no effect).", _multiagent),
    *(LegacyKey(key, f"`{key}` was an RMSProp setting of opt_type='rmsprop' (ignored with Adam, as in old "
                     f"RLlib); {_RMSPROP}.", _rmsprop_setting)
      for key in ("decay", "momentum", "epsilon")),
)
