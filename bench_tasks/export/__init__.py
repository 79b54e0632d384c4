"""Export a kernel as a bundle a team can build, test, benchmark and call from PyTorch (issue 41).

Generated from the task's data (bench_tasks/spec.py: prototype, arguments and their draws, sizes, tolerance,
cost) with templates shipped in this package; the service (app/services/export.py) supplies the attempt's
source and what it measured."""

from .render import ExportInput, MeasuredRow, bundle_files, write_directory, zip_bytes

__all__ = ["ExportInput", "MeasuredRow", "bundle_files", "write_directory", "zip_bytes"]
