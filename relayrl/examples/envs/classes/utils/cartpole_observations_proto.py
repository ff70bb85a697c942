"""The protobuf message `CartPoleObservation` (CartPole's four state variables as doubles), for the example of an
env whose observations are serialized protobuf messages.

Built from its descriptor at import, so no protoc-generated file is needed. Its fields are proto2 `optional`:
a value set to 0.0 is still written, so every message serializes to the same length (the env's Box needs that).
"""
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

FIELDS = ("x_pos", "x_veloc", "angle_pos", "angle_veloc")


def _message_class():
    file_proto = descriptor_pb2.FileDescriptorProto(name="relayrl_cartpole_observations.proto",
                                                    package="relayrl.examples", syntax="proto2")
    message = file_proto.message_type.add(name="CartPoleObservation")
    for number, name in enumerate(FIELDS, start=1):
        message.field.add(name=name, number=number, type=descriptor_pb2.FieldDescriptorProto.TYPE_DOUBLE,
                          label=descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL)
    pool = descriptor_pool.DescriptorPool()  # a pool of its own: importing twice never clashes in the default one
    pool.Add(file_proto)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("relayrl.examples.CartPoleObservation"))


CartPoleObservation = _message_class()
