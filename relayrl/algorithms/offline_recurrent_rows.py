"""A recurrent module (`use_lstm=True`, or a custom stateful RLModule) learns from sequences of consecutive steps.

Transition rows become one-step episodes, so every sequence the Learner would see is one step long and starts
from the initial state: the module would never learn to use its memory, which evaluation then relies on. Such a
config is refused when the algorithm is built, naming episode rows (which the Learner pipeline cuts into
`max_seq_len` sequences) as the fix.
"""


def check_recurrent_module_reads_episodes(config, learner_group, algorithm_name: str) -> None:
    """Raise ValueError when the Learners' module is stateful and the data is read as transition rows."""
    if config.input_read_episodes:
        return
    stateful = learner_group.foreach_learner(lambda learner: bool(learner.module.is_stateful()))[0]
    if not stateful:
        return
    problem = (f"{algorithm_name}'s module is recurrent (use_lstm=True or a stateful RLModule): it learns from "
               "sequences of consecutive steps, but transition rows are single steps, so every sequence would be "
               "one step from the initial state.")
    if _holds_only_transitions(config):
        raise ValueError(f"{problem} Minari datasets and RLlib's old-stack JSON are read as transition rows only: "
                         "use a stateless module (model_config use_lstm=False).")
    raise ValueError(
        f"{problem} Record episode rows (config.offline_data(output_write_episodes=True), the default) and read "
        "them with config.offline_data(input_read_episodes=True), or use a stateless module (model_config "
        "use_lstm=False).")


def _holds_only_transitions(config) -> bool:
    """Minari datasets and old-stack SampleBatch JSON, which have no episode-row form."""
    from relayrl.offline.minari_bridge import MINARI_PREFIX
    from relayrl.offline.sample_batch_json import is_json_file

    inputs = [config.input_] if isinstance(config.input_, str) else list(config.input_)
    named = any(i.startswith(MINARI_PREFIX) or is_json_file(i) for i in inputs)  # (as the reader tells JSON)
    return named or config.input_read_method == "read_json" or bool(config.input_read_sample_batches)


__all__ = ["check_recurrent_module_reads_episodes"]
