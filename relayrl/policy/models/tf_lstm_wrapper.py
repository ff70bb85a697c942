"""`TFLSTMWrapper`: `"use_lstm": True` for TF template policies (build_tf_policy), the torch LSTMWrapper's
architecture and layouts (lstm_wrapper.py) in TensorFlow.

Plain `tf.Variable`s and ops, as TFFullyConnectedNetwork (Keras adds milliseconds per eager call): the FC
hidden layers, the previous action / reward if asked, one LSTM cell unrolled with `tf.scan` over [T, B]
(a step past a sequence's length keeps the state, so the returned state is the one after its last real
step), linear logits and value heads. Rows come unpadded (sum(seq_lens) rows, what the policy trains on;
traced steps always see this layout) or, eagerly, padded to B * T rows; outputs go out in the same layout.
"""
import gymnasium as gym
import numpy as np
import tensorflow as tf

from relayrl.policy.models.lstm_wrapper import _positive_int, _required, prev_action_size
from relayrl.policy.models.modelv2 import flat_obs_size
from relayrl.policy.models.tf_fully_connected import _dense, _mlp, hidden_layers_config
from relayrl.policy.models.tf_modelv2 import TFModelV2
from relayrl.policy.sample_batch import SampleBatch


class TFLSTMWrapper(TFModelV2):
    """model_config: lstm_cell_size, lstm_use_prev_action, lstm_use_prev_reward, fcnet_hiddens, fcnet_activation."""

    trains_on_sequences = True  # the policy trains it on max_seq_len sequences (rnn_sequencing.add_seq_lens)

    def __init__(self, obs_space, action_space, num_outputs, model_config, name):
        TFModelV2.__init__(self, obs_space, action_space, num_outputs, model_config, name)
        self.cell_size = _positive_int(model_config.get("lstm_cell_size", 256), "lstm_cell_size")
        self.use_prev_action = bool(model_config.get("lstm_use_prev_action", False))
        self.use_prev_reward = bool(model_config.get("lstm_use_prev_reward", False))
        hiddens, self.activation = hidden_layers_config(model_config)
        in_size = flat_obs_size(obs_space)
        self.hidden = _mlp(in_size, hiddens, "fc")
        self.action_dim = prev_action_size(action_space) if self.use_prev_action else 0
        lstm_in = (hiddens[-1] if hiddens else in_size) + self.action_dim + int(self.use_prev_reward)
        cell = self.cell_size
        # gates i, f, g, o side by side; the forget gate's bias starts at 1 (Keras' unit_forget_bias)
        self.lstm = _dense(lstm_in + cell, 4 * cell, 1.0, "lstm")
        self.lstm[1].assign(np.concatenate([np.zeros(cell), np.ones(cell), np.zeros(2 * cell)]).astype(np.float32))
        self.logits = _dense(cell, num_outputs, 0.01, "logits")
        self.value_head = _dense(cell, 1, 0.01, "value_out")
        self._features = None

    def get_initial_state(self) -> list:
        return [np.zeros(self.cell_size, np.float32), np.zeros(self.cell_size, np.float32)]

    def forward(self, input_dict, state, seq_lens):
        if len(state) != 2:
            raise ValueError(f"the LSTM model needs its state [h, c] (state_in_0, state_in_1), got {len(state)} "
                             "state inputs: start from policy.get_initial_state() and pass each step's state_out.")
        x = input_dict["obs_flat"]
        for w, b in self.hidden:
            x = tf.matmul(x, w) + b
            if self.activation is not None:
                x = self.activation(x)
        extra = self._previous_inputs(input_dict, tf.shape(x)[0])
        if extra:
            x = tf.concat([x, *extra], axis=1)
        h, c = (tf.reshape(tf.cast(s, tf.float32), [-1, self.cell_size]) for s in state)
        self._features, (h, c) = self._unroll(x, h, c, seq_lens)
        return tf.matmul(self._features, self.logits[0]) + self.logits[1], [h, c]

    def value_function(self):
        if self._features is None:
            raise RuntimeError("value_function() before the model ran forward: call model(input_dict) first.")
        return tf.reshape(tf.matmul(self._features, self.value_head[0]) + self.value_head[1], [-1])

    def _cell(self, x, h, c):
        gates = tf.matmul(tf.concat([x, h], axis=1), self.lstm[0]) + self.lstm[1]
        i, f, g, o = tf.split(gates, 4, axis=1)
        c = tf.sigmoid(f) * c + tf.sigmoid(i) * tf.tanh(g)
        return tf.sigmoid(o) * tf.tanh(c), c

    def _unroll(self, rows, h, c, seq_lens):
        """(outputs per row, (h, c) per sequence) for rows laid out as the module docstring says."""
        rows_n, states_n = rows.shape[0], h.shape[0]
        if seq_lens is None or (rows_n is not None and rows_n == states_n):  # single steps (acting)
            h, c = self._cell(rows, h, c)
            return h, (h, c)
        seq_lens = tf.cast(tf.reshape(seq_lens, [-1]), tf.int32)
        num_sequences = tf.shape(seq_lens)[0]
        padded = rows_n is not None and int(np.sum(seq_lens.numpy())) != rows_n if tf.executing_eagerly() else False
        if padded:
            steps = rows_n // int(num_sequences)
            mask = tf.sequence_mask(seq_lens, steps)
            x = tf.reshape(rows, [num_sequences, steps, -1])
        else:
            steps = tf.reduce_max(seq_lens)
            mask = tf.sequence_mask(seq_lens, steps)
            indices = tf.cast(tf.where(mask), tf.int32)  # [N, 2] (sequence, step), row-major: the rows in order
            x = tf.scatter_nd(indices, rows, tf.stack([num_sequences, steps, tf.shape(rows)[1]]))

        def step(carry, inputs):
            (h, c), (x_t, real) = carry, inputs
            h_next, c_next = self._cell(x_t, h, c)
            real = real[:, None]
            return tf.where(real, h_next, h), tf.where(real, c_next, c)

        hs, cs = tf.scan(step, (tf.transpose(x, [1, 0, 2]), tf.transpose(mask)), initializer=(h, c))
        outputs = tf.transpose(hs, [1, 0, 2])  # [B, T, cell]; at real steps the cell's output
        outputs = tf.reshape(outputs, [-1, self.cell_size]) if padded else tf.gather_nd(outputs, indices)
        return outputs, (hs[-1], cs[-1])

    def _previous_inputs(self, input_dict, rows) -> list:
        extra = []
        if self.use_prev_action:
            actions = tf.convert_to_tensor(_required(input_dict, SampleBatch.PREV_ACTIONS, "lstm_use_prev_action"))
            extra.append(_encode_prev_actions(self.action_space, actions, rows))
        if self.use_prev_reward:
            rewards = _required(input_dict, SampleBatch.PREV_REWARDS, "lstm_use_prev_reward")
            extra.append(tf.reshape(tf.cast(rewards, tf.float32), [rows, 1]))
        return extra


def _encode_prev_actions(space: gym.Space, actions, rows) -> tf.Tensor:
    if isinstance(space, gym.spaces.Discrete):
        return tf.one_hot(tf.reshape(tf.cast(actions, tf.int32), [rows]), int(space.n))
    if isinstance(space, gym.spaces.MultiDiscrete):
        actions = tf.reshape(tf.cast(actions, tf.int32), [rows, -1])
        return tf.concat([tf.one_hot(actions[:, i], int(n)) for i, n in enumerate(np.ravel(space.nvec))], axis=1)
    return tf.reshape(tf.cast(actions, tf.float32), [rows, -1])


LSTMWrapper = TFLSTMWrapper  # RLlib's name in models/tf/recurrent_net.py

__all__ = ["LSTMWrapper", "TFLSTMWrapper"]
