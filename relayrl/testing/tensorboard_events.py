"""Read back what a run wrote to TensorBoard (tests): the events of its TFRecord event files."""
import os
import struct
from typing import Iterator


def tensorboard_events(logdir: str) -> Iterator:
    """Every `Event` proto of the `events.out.tfevents*` files in `logdir`, in file order, parsed with
    tensorboardX's protos (TFRecord framing: 8-byte length, 4-byte length CRC, data, 4-byte data CRC)."""
    from tensorboardX.proto import event_pb2

    for name in sorted(os.listdir(logdir)):
        if not name.startswith("events.out.tfevents"):
            continue
        with open(os.path.join(logdir, name), "rb") as f:
            data = f.read()
        pos = 0
        while pos + 12 <= len(data):
            (length,) = struct.unpack("<Q", data[pos:pos + 8])
            yield event_pb2.Event.FromString(data[pos + 12:pos + 12 + length])
            pos += 12 + length + 4
