"""Old-API-stack models for Policies: ModelV2 / TorchModelV2, the default MLP, action distributions, ModelCatalog."""
from relayrl.policy.models.catalog import MODEL_DEFAULTS, ModelCatalog
from relayrl.policy.models.modelv2 import ModelV2, TorchModelV2

__all__ = ["MODEL_DEFAULTS", "ModelCatalog", "ModelV2", "TorchModelV2"]
