"""`SequenceLayout`: how a recurrent model's N input rows map onto B sequences of at most T steps.

Two layouts come in, and the outputs go out in the same one:
- rows (what TorchPolicy trains on, rnn_sequencing.add_seq_lens): sum(seq_lens) == N, the sequences' rows one
  after the other, no padding. Acting is this layout with seq_lens all 1.
- padded (RLlib's, rnn_sequencing.chop_into_sequences): N == B * T, each sequence right-zero-padded to T.
The model runs its RNN on [B, T, ...]; steps past a sequence's length are padding, and the returned state
is the one after each sequence's last real step.
"""
import torch
from torch import nn


class SequenceLayout:
    def __init__(self, num_rows: int, seq_lens, num_states: int):
        if seq_lens is None and num_states != num_rows:
            raise ValueError(f"a recurrent model got {num_rows} rows and {num_states} states but no seq_lens: "
                             "give seq_lens (one length per state row) or one state per row.")
        if seq_lens is None or len(seq_lens) == num_rows == num_states:
            # one sequence per row, each at least one step long: single steps (acting, a value bootstrap)
            self.padded, self.steps, self.full, self.num_sequences = False, 1, True, num_rows
            self.seq_lens = self._real = None
            return
        seq_lens = torch.as_tensor(seq_lens).to("cpu", torch.int64).reshape(-1)
        if len(seq_lens) != num_states:
            raise ValueError(f"a recurrent model got {len(seq_lens)} seq_lens but {num_states} state rows: give one "
                             "state per sequence (the state_in_i of its first step).")
        total, longest = int(seq_lens.sum()), int(seq_lens.max()) if len(seq_lens) else 0
        if total == num_rows:
            self.padded, self.steps = False, longest
        elif len(seq_lens) and num_rows % len(seq_lens) == 0 and num_rows // len(seq_lens) >= longest:
            self.padded, self.steps = True, num_rows // len(seq_lens)
        else:
            raise ValueError(f"a recurrent model got {num_rows} rows for seq_lens summing to {total} over "
                             f"{len(seq_lens)} sequences: give the rows unpadded (sum(seq_lens) rows) or padded "
                             "to B * T rows.")
        self.seq_lens, self.num_sequences = seq_lens, len(seq_lens)
        self.full = bool((seq_lens == self.steps).all())  # no padding anywhere: a reshape is the whole layout
        self._real = None

    def _real_steps(self, device) -> torch.Tensor:
        """[B, T] True at real steps; its True cells, row-major, are the unpadded rows in order."""
        if self._real is None or self._real.device != device:
            steps = torch.arange(self.steps, device=device)
            self._real = steps[None, :] < self.seq_lens.to(device)[:, None]
        return self._real

    def to_sequences(self, rows: torch.Tensor) -> torch.Tensor:
        """[N, ...] -> [B, T, ...] (padding zeros)."""
        if self.full or self.padded:
            return rows.reshape(self.num_sequences, self.steps, *rows.shape[1:])
        out = rows.new_zeros(self.num_sequences, self.steps, *rows.shape[1:])
        out[self._real_steps(rows.device)] = rows
        return out

    def to_rows(self, sequences: torch.Tensor) -> torch.Tensor:
        """[B, T, ...] -> [N, ...] in the layout the rows came in."""
        if self.full or self.padded:
            return sequences.reshape(-1, *sequences.shape[2:])
        return sequences[self._real_steps(sequences.device)]

    def run_lstm(self, lstm: nn.LSTM, rows: torch.Tensor, h: torch.Tensor, c: torch.Tensor):
        """(outputs [N, cell], (h, c) [B, cell] after each sequence's last real step) of a batch_first LSTM."""
        if self.steps == 1 and lstm.num_layers == 1 and lstm.bias and not lstm.bidirectional:
            # single steps (acting): the same cell without nn.LSTM's per-call setup (~3x less time per step)
            h, c = torch.lstm_cell(rows, (h, c), lstm.weight_ih_l0, lstm.weight_hh_l0, lstm.bias_ih_l0,
                                   lstm.bias_hh_l0)
            return h, (h, c)
        x = self.to_sequences(rows)
        state = (h.unsqueeze(0), c.unsqueeze(0))
        if self.full:
            out, (h, c) = lstm(x, state)
        else:  # packed, so the returned state is not run through the padding
            packed = nn.utils.rnn.pack_padded_sequence(x, self.seq_lens, batch_first=True, enforce_sorted=False)
            out, (h, c) = lstm(packed, state)
            out, _ = nn.utils.rnn.pad_packed_sequence(out, batch_first=True, total_length=self.steps)
        return self.to_rows(out), (h.squeeze(0), c.squeeze(0))


__all__ = ["SequenceLayout"]
