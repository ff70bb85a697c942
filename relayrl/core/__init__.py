"""Framework-free basics shared by every layer: column names, schedules, space helpers."""
