"""Names of the columns in episodes and batches (RLlib's `Columns`)."""


class Columns:
    """Keys under which data lives in connector batches and RLModule in/outputs."""

    OBS = "obs"
    INFOS = "infos"
    ACTIONS = "actions"
    ACTIONS_FOR_ENV = "actions_for_env"
    REWARDS = "rewards"
    TERMINATEDS = "terminateds"
    TRUNCATEDS = "truncateds"
    NEXT_OBS = "new_obs"
    EPS_ID = "eps_id"
    AGENT_ID = "agent_id"
    MODULE_ID = "module_id"
    SEQ_LENS = "seq_lens"
    T = "t"
    STATE_IN = "state_in"
    STATE_OUT = "state_out"
    FEATURES = "features"
    EMBEDDINGS = "embeddings"
    ACTION_DIST_INPUTS = "action_dist_inputs"
    ACTION_PROB = "action_prob"
    ACTION_LOGP = "action_logp"
    VF_PREDS = "vf_preds"
    VALUES_BOOTSTRAPPED = "values_bootstrapped"
    ADVANTAGES = "advantages"
    RETURNS_TO_GO = "returns_to_go"
    VALUE_TARGETS = "value_targets"
    INTRINSIC_REWARDS = "intrinsic_rewards"
    LOSS_MASK = "loss_mask"


DEFAULT_MODULE_ID = "default_policy"
DEFAULT_POLICY_ID = DEFAULT_MODULE_ID
ALL_MODULES = "__all_modules__"
