"""Train batches of columns ({module_id: {column: rows}}) that runners built, joined into one (IMPALA's packer,
PPO's remote sampling)."""
from typing import List

import numpy as np

from relayrl.core.tree import map_structure


def concatenate_train_batches(batches: List[dict]) -> dict:
    """{module_id: {column: rows}} batches as one. A module may be missing from some (multi-agent: a fragment in
    which none of its agents acted); its rows come from the batches that have it."""
    if len(batches) == 1:
        return batches[0]
    module_ids = list(dict.fromkeys(mid for batch in batches for mid in batch))
    out = {}
    for mid in module_ids:
        parts = [batch[mid] for batch in batches if mid in batch]
        # map_structure: a recurrent module's state_in column is a dict of arrays ({"h", "c"}).
        out[mid] = {col: map_structure(lambda *rows: np.concatenate(rows), *[part[col] for part in parts])
                    for col in parts[0]}
    return out
