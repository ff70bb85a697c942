"""The Ray Tune side of `run_rllib_example_script_experiment` (relayrl/testing/example_script.py)."""
import os


def run_tune_experiment(config, args, *, stop, trainable=None, tune_callbacks=None, keep_ray_up=False,
                        scheduler=None, progress_reporter=None):
    """`tune.Tuner(...).fit()` for the example flags (RLlib's choices); returns the ResultGrid.

    Tune writes under $RELAYRL_RESULTS_DIR when it is set (else Tune's default, ~/ray_results). A trial that
    failed raises its error here (RLlib returns the ResultGrid and leaves the check to the script).
    """
    import ray
    from ray import tune

    ray.init(num_cpus=args.num_cpus or None, include_dashboard=False, ignore_reinit_error=True)
    try:
        run_config = tune.RunConfig(
            stop=stop, verbose=args.verbose, callbacks=tune_callbacks or None, progress_reporter=progress_reporter,
            storage_path=os.environ.get("RELAYRL_RESULTS_DIR") or None,
            checkpoint_config=tune.CheckpointConfig(checkpoint_frequency=args.checkpoint_freq,
                                                    checkpoint_at_end=args.checkpoint_at_end))
        tune_config = tune.TuneConfig(num_samples=args.num_samples, max_concurrent_trials=args.max_concurrent_trials,
                                      scheduler=scheduler)
        results = tune.Tuner(trainable or config.algo_class, param_space=config, run_config=run_config,
                             tune_config=tune_config).fit()
    finally:
        if not keep_ray_up:
            ray.shutdown()
    if results.errors:
        raise RuntimeError(f"{len(results.errors)} of {len(results)} Tune trials failed; the first: "
                           f"{results.errors[0]!r}") from results.errors[0]
    return results
