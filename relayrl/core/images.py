"""RLlib's image helpers (`ray.rllib.utils.images`), on OpenCV (`pip install opencv-python-headless`, in relayrl's
atari extra): resize, grayscale, read and write."""
import numpy as np


def _cv2():
    try:
        import cv2
    except ImportError:
        raise ImportError("relayrl's image helpers need OpenCV: pip install opencv-python-headless (or "
                          "\"relayrl[atari]\")") from None
    return cv2


def resize(img: np.ndarray, height: int, width: int) -> np.ndarray:
    """`img` (H, W[, C]) resized to (height, width[, C]) with area interpolation (no aliasing when shrinking)."""
    return _cv2().resize(img, (width, height), interpolation=_cv2().INTER_AREA)


def rgb2gray(img: np.ndarray) -> np.ndarray:
    """An (H, W, 3) RGB image as (H, W) grayscale."""
    return _cv2().cvtColor(img, _cv2().COLOR_RGB2GRAY)


def imread(path: str) -> np.ndarray:
    """The image file at `path` as an RGB array (OpenCV reads BGR)."""
    img = _cv2().imread(path)
    if img is None:
        raise FileNotFoundError(f"No readable image at {path!r}.")
    return _cv2().cvtColor(img, _cv2().COLOR_BGR2RGB)


def imwrite(path: str, img: np.ndarray) -> None:
    """Write an RGB array as an image file (the format from the file name's suffix)."""
    if not _cv2().imwrite(path, _cv2().cvtColor(img, _cv2().COLOR_RGB2BGR)):
        raise OSError(f"Could not write an image to {path!r}.")


__all__ = ["imread", "imwrite", "resize", "rgb2gray"]
