"""`ModelCatalog`: the old API stack's registry of custom models and action distributions."""

import gymnasium as gym

from relayrl.policy.models.torch_action_dist import default_dist_class

MODEL_DEFAULTS = {
    "fcnet_hiddens": [256, 256],
    "fcnet_activation": "tanh",
    "vf_share_layers": False,
    "free_log_std": False,
    "use_lstm": False,
    "max_seq_len": 20,
    "lstm_cell_size": 256,
    "lstm_use_prev_action": False,
    "lstm_use_prev_reward": False,
    "custom_model": None,
    "custom_model_config": {},
    "custom_action_dist": None,
    "use_attention": False,  # (RLlib's attention nets: refused when True)
}


class ModelCatalog:
    """`register_custom_model(name, cls)`; then `"model": {"custom_model": name, "custom_model_config": {...}}`."""

    _custom_models: dict[str, type] = {}
    _custom_action_dists: dict[str, type] = {}

    @staticmethod
    def register_custom_model(model_name: str, model_class: type) -> None:
        ModelCatalog._custom_models[model_name] = model_class

    @staticmethod
    def register_custom_action_dist(action_dist_name: str, action_dist_class: type) -> None:
        ModelCatalog._custom_action_dists[action_dist_name] = action_dist_class

    @staticmethod
    def registrations(names=None) -> dict[str, dict[str, type]]:
        """What this process registered (only `names`, if given); the worker set ships the names its policies'
        configs use to its Ray actors (RLlib shares them through Ray's registry), so `custom_model="name"`
        resolves in remote runners too. (Only those: another registered class may not unpickle there.)"""
        def chosen(registry):
            return {k: v for k, v in registry.items() if names is None or k in names}

        return {"models": chosen(ModelCatalog._custom_models),
                "action_dists": chosen(ModelCatalog._custom_action_dists)}

    @staticmethod
    def add_registrations(registrations: dict[str, dict[str, type]]) -> None:
        """Register what `registrations()` returned in another process (names registered here stay)."""
        for name, cls in (registrations or {}).get("models", {}).items():
            ModelCatalog._custom_models.setdefault(name, cls)
        for name, cls in (registrations or {}).get("action_dists", {}).items():
            ModelCatalog._custom_action_dists.setdefault(name, cls)

    @staticmethod
    def get_action_dist(action_space: gym.Space, config: dict, dist_type=None, framework: str = "torch",
                        **kwargs) -> tuple[type, int]:
        """(dist class, number of model outputs it needs) for `action_space`."""
        config = config or {}
        custom = config.get("custom_action_dist")
        if custom is not None:
            dist = ModelCatalog._custom_action_dists.get(custom, custom)
            if isinstance(dist, str):
                raise ValueError(f"custom_action_dist={custom!r} is not registered: call "
                                 "ModelCatalog.register_custom_action_dist(name, cls) first.")
        else:
            dist = dist_type or _default_dist(action_space, framework)
        return dist, dist.required_model_output_shape(action_space, config)

    @staticmethod
    def get_model_v2(obs_space: gym.Space, action_space: gym.Space, num_outputs: int, model_config: dict,
                     framework: str = "torch", name: str = "default_model", model_interface=None,
                     default_model=None, **model_kwargs):
        """The custom model named by `model_config["custom_model"]` (a registered name or a class), else the
        default fully connected network, followed by an LSTM with `use_lstm` (torch)."""
        model_config = {**MODEL_DEFAULTS, **(model_config or {})}
        custom = model_config.get("custom_model")
        if custom is not None:
            if model_config.get("use_lstm"):
                raise ValueError(f"model use_lstm=True with custom_model={custom!r}: relayrl wraps only the default "
                                 "model in an LSTM; give the custom model its own recurrent layer and "
                                 "get_initial_state(), or drop custom_model.")
            cls = ModelCatalog._custom_models.get(custom, custom) if isinstance(custom, str) else custom
            if isinstance(cls, str):
                known = sorted(ModelCatalog._custom_models)
                raise ValueError(f"model custom_model={custom!r} is not registered (known: {known}): call "
                                 f"ModelCatalog.register_custom_model({custom!r}, MyModel) before building.")
            kwargs = {**(model_config.get("custom_model_config") or {}), **model_kwargs}
            return cls(obs_space, action_space, num_outputs, model_config, name, **kwargs)
        if model_config.get("use_attention"):
            raise ValueError("model use_attention: the Policy API's default models are an MLP and, with use_lstm, "
                             "an LSTM; for attention register a custom TorchModelV2, or use the RLModule stack.")
        if model_config.get("use_lstm"):
            return _lstm_model(obs_space, action_space, num_outputs, model_config, framework, name)
        if is_tf(framework):
            from relayrl.policy.models.tf_fully_connected import TFFullyConnectedNetwork as FullyConnectedNetwork
        elif framework in ("torch", None):
            from relayrl.policy.models.fully_connected import FullyConnectedNetwork
        else:
            raise ValueError(f"framework={framework!r}: relayrl's Policy models are 'torch' or 'tf2' (TensorFlow, "
                             "eager; 'tf' runs as 'tf2').")
        return (default_model or FullyConnectedNetwork)(obs_space, action_space, num_outputs, model_config, name)


def _lstm_model(obs_space, action_space, num_outputs, model_config, framework, name):
    """The default FC model followed by an LSTM: lstm_wrapper.py (torch) or tf_lstm_wrapper.py (TF)."""
    from relayrl.policy.rnn_sequencing import check_max_seq_len

    check_max_seq_len(model_config.get("max_seq_len"))
    if is_tf(framework):
        from relayrl.policy.models.tf_lstm_wrapper import TFLSTMWrapper as LSTMWrapper
    elif framework in ("torch", None):
        from relayrl.policy.models.lstm_wrapper import LSTMWrapper
    else:
        raise ValueError(f"model use_lstm=True with framework={framework!r}: the LSTM default model is 'torch' or "
                         "'tf2' (TensorFlow).")
    return LSTMWrapper(obs_space, action_space, num_outputs, model_config, name)


def is_tf(framework) -> bool:
    return framework in ("tf", "tf2", "tfe")


def _default_dist(action_space: gym.Space, framework) -> type:
    if is_tf(framework):
        from relayrl.policy.models.tf_action_dist import default_tf_dist_class

        return default_tf_dist_class(action_space)
    return default_dist_class(action_space)


__all__ = ["MODEL_DEFAULTS", "ModelCatalog", "is_tf"]
