"""Ray-backed pieces (the only package that imports ray, and only when a remote actor is needed).

* `ray_setup`: `ray.init()` on first need, respecting a cluster the user already connected to.
* `remote_env_runner`: the same EnvRunner class wrapped with `ray.remote` and the config's resources.
* `env_runner_actors`: the remote EnvRunners of one group: calls with timeouts, health, restarts.
* `connector_states`: merging connector states (MeanStdFilter statistics) from several runners.

Nothing here is imported by `import relayrl`; EnvRunnerGroup imports it when num_env_runners > 0.
"""
