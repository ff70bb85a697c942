"""Piecewise-linear schedules over the lifetime env-step count (`lr=[[0, 1e-3], [1e6, 1e-4]]`)."""
from typing import List, Sequence, Union

Schedule = Union[float, int, Sequence[Sequence[float]]]


class Scheduler:
    """A fixed value, or a list of [timestep, value] points interpolated linearly (held after the last)."""

    def __init__(self, value_or_schedule: Schedule):
        if isinstance(value_or_schedule, (int, float)):
            self._points: List = []
            self._fixed = float(value_or_schedule)
            return
        points = [(float(t), float(v)) for t, v in value_or_schedule]
        if not points or points[0][0] != 0:
            raise ValueError(f"A schedule must start at timestep 0, got {value_or_schedule!r}.")
        if any(b[0] <= a[0] for a, b in zip(points, points[1:])):
            raise ValueError(f"Schedule timesteps must increase, got {value_or_schedule!r}.")
        self._points, self._fixed = points, None

    @property
    def is_fixed(self) -> bool:
        return self._fixed is not None

    def get(self, timestep: float) -> float:
        if self._fixed is not None:
            return self._fixed
        points = self._points
        if timestep >= points[-1][0]:
            return points[-1][1]
        for (t0, v0), (t1, v1) in zip(points, points[1:]):
            if t0 <= timestep < t1:
                return v0 + (v1 - v0) * (timestep - t0) / (t1 - t0)
        return points[0][1]

    def initial(self) -> float:
        return self.get(0)
