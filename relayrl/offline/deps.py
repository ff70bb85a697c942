"""The optional packages offline data needs, imported on first use with the install command in the error."""
import importlib
import sys

_EXTRA = 'pip install "relayrl[offline]"'


def require(module: str, what: str):
    """Import `module` (e.g. "pyarrow.parquet"); ImportError naming `what` needs it and how to install it."""
    loaded = sys.modules.get(module)  # the reader asks per column and batch: import_module costs ~20 us a call
    if loaded is not None:
        return loaded
    try:
        return importlib.import_module(module)
    except ImportError:
        raise ImportError(f"{what} needs {module.split('.')[0]}: {_EXTRA}") from None
