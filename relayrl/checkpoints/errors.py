"""`CheckpointError`: a checkpoint that cannot be read or written, naming the file and what is wrong."""


class CheckpointError(ValueError):
    """A missing, truncated, tampered, unsupported or unstorable checkpoint (a ValueError)."""
