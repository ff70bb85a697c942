"""`Algorithm.reset_config` for Policy-based algorithms (Tune's PBT and reuse_actors): new hyper-parameters in place.

The options declared mutable (relayrl/tune/reset_config.py decides which changed and whether a rebuild is
needed) are written into every runner's config and every policy's config dict (old key names, as the policy
was built with); a new `lr` also goes into the policies' optimizer param groups and `cur_lr`, unless the
policy follows an `lr_schedule` (the schedule sets lr from then on). Options that remake envs need a rebuild
here: reset_config returns False for them.
"""


def needs_rebuild(config, changed) -> bool:
    table = type(config)._option_table
    return any(table[name].remakes_env for name in changed)


def set_policy_lr(policy, lr) -> None:
    """`lr` into the policy's optimizers and cur_lr, unless an lr_schedule sets them."""
    if getattr(policy, "_lr_schedule", None):
        return
    if hasattr(getattr(policy, "cur_lr", None), "assign"):  # a tf.Variable (TF mixins): traced steps read it
        policy.cur_lr.assign(lr)
    else:
        policy.cur_lr = lr
    for optimizer in getattr(policy, "_optimizers", []):
        if hasattr(optimizer, "param_groups"):  # torch
            for group in optimizer.param_groups:
                group["lr"] = lr
        else:  # a Keras optimizer keeps its learning rate in a variable
            optimizer.learning_rate = lr


def _update_policy(policy, values: dict) -> None:
    policy.config.update(values)
    if "lr" in values:
        set_policy_lr(policy, values["lr"])


def apply_policy_hyperparameters(algo, config, changed) -> None:
    table = type(config)._option_table
    options = {name: config._values[name] for name in changed}
    # lr always (as the Learners' apply_hyperparameters): a state just loaded may have put the saved lr back
    values = {"lr": config.lr, **{table[name].dict_key: value for name, value in options.items()}}

    def update(runner):
        if options and runner.config is not config:
            runner.config = runner.config.copy(copy_frozen=False)
            runner.config._set_options(options)
        for policy in runner.policy_map.values():
            _update_policy(policy, values)

    algo.config = config
    algo.env_runner_group.config = config
    algo.env_runner_group.foreach_worker(update)
    group = algo.eval_env_runner_group
    if group is not None:
        group.config = config.get_evaluation_config_object()
        group.foreach_worker(update)
