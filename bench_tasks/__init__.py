"""MSKernelBench: CUDA operator tasks as data (task.toml), a baseline .cu and a float64 reference."""

from .spec import PRECISIONS, Task, TaskError, Variant, all_tasks, load_task, task_names

__all__ = ["PRECISIONS", "Task", "TaskError", "Variant", "all_tasks", "load_task", "task_names"]
