"""python -m profiling ... == cudamaster profile ..."""

from .cli import app

app(prog_name="python -m profiling")
